"""Sending one delivery: claim it, sign it, POST it to the checked address, record the answer.

Runs in the `send_webhook` actor on a queue of its own, served by threads of their own in each
worker process, so a slow or hanging receiver never holds a thread a job could use. Each attempt
is bounded by `QUIRE_WEBHOOK_TIMEOUT_S`; redirects are not followed (a 3xx is a failed attempt);
410 Gone ends the delivery, as the receiver asks for no more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit, urlunsplit

import httpx
import structlog

from quire import __version__
from quire.accounts.service import webhook_secret
from quire.db import Database, utcnow
from quire.jobs.store import iso
from quire.metrics import get_metrics
from quire.settings import Settings
from quire.views import View
from quire.webhooks import deliveries
from quire.webhooks.deliveries import Answer
from quire.webhooks.models import WebhookDelivery, WebhookEvent
from quire.webhooks.outbox import WebhookOutbox, event_body
from quire.webhooks.signing import signed_headers
from quire.webhooks.targets import Target, TargetRefused, TargetUnresolved, resolve

log = structlog.stdlib.get_logger(__name__)
USER_AGENT = f"Quire-Webhooks/{__version__}"
# Given to a claimed attempt before it counts as lost: connect, send and wait may each take the timeout.
LEASE_MARGIN_S = 5.0
# The job's view as the API shows it (with its links), or None when the job is gone; the same
# for a batch.
RenderJob = Callable[[str], View | None]
RenderBatch = Callable[[str], View | None]


@dataclass
class WebhookSender:
    """Makes the attempts of deliveries; one per worker process, declared as the actor's body."""

    db: Database
    settings: Settings
    outbox: WebhookOutbox
    render_job: RenderJob
    render_batch: RenderBatch

    def send(self, delivery_id: str) -> None:
        timeout = self.settings.webhook_timeout_s
        claimed = deliveries.claim(self.db, delivery_id, 3 * timeout + LEASE_MARGIN_S)
        if claimed is None:
            log.info("webhook message for %s did nothing: not due, or not pending", delivery_id)
            return
        with structlog.contextvars.bound_contextvars(delivery_id=delivery_id, attempt=claimed.attempts):
            answer = self.attempt(claimed, timeout)
            retry = deliveries.finish(self.settings, self.db, claimed, answer)
            outcome = "delivered" if answer.ok else "retry" if retry is not None else "failed"
            get_metrics().webhook_attempts.labels(outcome).inc()
            log.info("webhook attempt", status_code=answer.status_code, error=answer.error, outcome=outcome)
            if retry is not None:
                self.outbox.publish(retry, retry.delay_s)

    def attempt(self, claimed: WebhookDelivery, timeout_s: float) -> Answer:
        body = claimed.body
        if body is None:
            batch = claimed.event == WebhookEvent.BATCH_COMPLETED
            view = (self.render_batch if batch else self.render_job)(claimed.subject_id)
            if view is None:
                return Answer(error=f"The {'batch' if batch else 'job'} no longer exists.", final=True)
            body = event_body(WebhookEvent(claimed.event), iso(claimed.created_at) or "", view)
            deliveries.fix_body(self.db, claimed.id, body)
        secret = webhook_secret(self.db, claimed.owner_id) if claimed.owner_id else None
        if secret is None:
            return Answer(error="No account to sign this webhook with.", final=True)
        try:
            target = resolve(self.settings, claimed.url)
        except TargetUnresolved as exc:
            return Answer(error=str(exc))  # retried with backoff, like a connection that failed
        except TargetRefused as exc:
            return Answer(error=str(exc), final=True)
        return post(target, body, signed_headers(secret, claimed.id, utcnow(), body), timeout_s)


def post(target: Target, body: str, headers: Mapping[str, str], timeout_s: float) -> Answer:
    """POST to the target's checked address (never a second lookup), with the URL's own host name
    in `Host` and, for https, in TLS (SNI and certificate checks)."""
    parts = urlsplit(target.url)
    address = f"[{target.address}]" if target.address.version == 6 else str(target.address)
    pinned = urlunsplit((parts.scheme, f"{address}:{target.port}", parts.path or "/", parts.query, ""))
    # The URL's host as written (an IPv6 literal keeps its brackets); check_url refused user info.
    host = parts.netloc
    named = target.host != str(target.address)
    extensions = {"sni_hostname": target.host} if target.scheme == "https" and named else {}
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        # trust_env=False: no proxy from the environment, which would connect to a name of its own.
        with (
            httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=False) as client,
            client.stream(
                "POST",
                pinned,
                content=body.encode(),
                headers={
                    **headers,
                    "Host": host,
                    "Content-Type": "application/json",
                    "User-Agent": USER_AGENT,
                },
                extensions=extensions,
            ) as response,
        ):
            code = response.status_code
            retry_after = _retry_after(response.headers.get("retry-after"))
    except httpx.TimeoutException:
        return Answer(error=f"No answer within {timeout_s:g} s.", duration_ms=took())
    except httpx.HTTPError as exc:
        return Answer(error=f"Could not reach the receiver ({type(exc).__name__}).", duration_ms=took())
    error = None
    if 300 <= code < 400:
        error = f"HTTP {code}: redirects are not followed; give the final URL."
    return Answer(status_code=code, error=error, duration_ms=took(), retry_after_s=retry_after, final=code == 410)


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds or an HTTP date."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        return max(0.0, (parsedate_to_datetime(value) - utcnow()).total_seconds())
    except (TypeError, ValueError):
        return None
