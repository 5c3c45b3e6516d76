"""Liveness and readiness: is the process up, and can it reach what it needs."""

from __future__ import annotations

import secrets
from typing import Any

from litestar import Request, Response, get
from litestar.exceptions import NotAuthorizedException, NotFoundException
from sqlalchemy import text

from quire.db import Database
from quire.jobs.operations import overview
from quire.metrics import CONTENT_TYPE, JobRecordCollector
from quire.queue.broker import RedisBroker
from quire.settings import Settings
from quire.views import View
from quire.web.deps import QuireDep


def _database_ok(db: Database) -> bool:
    try:
        with db.session() as session:
            session.execute(text("SELECT 1"))
    except Exception:
        return False
    return True


def _redis_ok(broker: RedisBroker) -> bool:
    try:
        return bool(broker.client.ping())
    except Exception:
        return False


class Health(View, frozen=True):
    status: str


_UP = Health(status="ok")


class Readiness(View, frozen=True):
    status: str
    checks: dict[str, bool]


@get("/healthz", sync_to_thread=False, include_in_schema=True, tags=["health"])
def healthz() -> Health:
    return _UP


@get("/readyz", sync_to_thread=True, tags=["health"])
def readyz(quire: QuireDep) -> Response[Readiness]:
    checks = {
        "database": _database_ok(quire.db),
        "redis": _redis_ok(quire.broker),
        "storage": quire.storage.reachable(),
    }
    ready = all(checks.values())
    return Response(
        Readiness(status="ready" if ready else "unavailable", checks=checks), status_code=200 if ready else 503
    )


def _require_metrics_token(settings: Settings, request: Request[Any, Any, Any]) -> None:
    """With QUIRE_METRICS_TOKEN set, the scraper sends it as a bearer token. Without one the
    endpoint is open in development and absent in production, where queue figures, error counts
    and worker names are nobody else's business."""
    # An empty value (QUIRE_METRICS_TOKEN= in a compose file) counts as unset, never as a token
    # that an empty bearer header would match.
    token = settings.metrics_token.get_secret_value() if settings.metrics_token else ""
    if not token:
        if settings.production:
            raise NotFoundException()
        return
    expected = f"Bearer {token}"
    if not secrets.compare_digest(request.headers.get("authorization", "").encode(), expected.encode()):
        raise NotAuthorizedException("Send the metrics token as `Authorization: Bearer <token>`.")


@get("/metrics", sync_to_thread=True, include_in_schema=False)
def metrics_endpoint(request: Request[Any, Any, Any], quire: QuireDep) -> Response[bytes]:
    """Prometheus exposition of every Quire process sharing this metrics directory."""
    _require_metrics_token(quire.settings, request)
    return Response(
        quire.metrics.render(
            [JobRecordCollector(lambda: overview(quire.db, heartbeat_window_s=quire.settings.lease_seconds))]
        ),
        media_type=CONTENT_TYPE,
    )
