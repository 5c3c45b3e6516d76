"""The Litestar application factory."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from litestar import Litestar, Request, Response, Router
from litestar.config.csrf import CSRFConfig
from litestar.config.response_cache import ResponseCacheConfig
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.middleware.base import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.plugins.htmx import HTMXPlugin
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException, ProblemDetailsPlugin
from litestar.response import Redirect, Template
from litestar.static_files import create_static_files_router
from litestar.stores.base import Store
from litestar.stores.redis import RedisStore
from litestar.template.config import TemplateConfig
from redis.asyncio import Redis as AsyncRedis

from quire import __version__
from quire.bootstrap import Quire, bootstrap
from quire.documents.storage import StorageUnavailable
from quire.logs import configure_logging
from quire.processors import pin_among_siblings
from quire.queue.broker import DEFAULT_REDIS_URL
from quire.settings import Settings
from quire.web.account import AccountController
from quire.web.admin import AdminController
from quire.web.api import JobsController, max_request_bytes
from quire.web.auth import PUBLIC_PATHS, QuireAuthentication, add_security_headers, session_middleware
from quire.web.batches import BatchesController, BatchPagesController, JobExportController
from quire.web.csrf import CSRF_HEADER, SessionCSRFMiddleware
from quire.web.deps import quire_of
from quire.web.health import healthz, metrics_endpoint, readyz
from quire.web.limits import LoginThrottle, RateLimitStore
from quire.web.live import LiveHub, read_places
from quire.web.page_streams import PageStreamsController
from quire.web.pages import PagesController
from quire.web.presenters import ERROR_LABELS, about, artifact_label, language_name, ordinal, workflow_title
from quire.web.problems import (
    explain_multipart_limit,
    http_exception_to_problem,
    storage_unavailable,
    storage_unavailable_to_problem,
    unexpected_to_problem,
)
from quire.web.request_ids import RequestIdMiddleware
from quire.web.server import BodyDeadlineMiddleware
from quire.web.streams import StreamsController
from quire.workflows.invoice_summary import CHECK_LABELS, CREDIT_NOTE, DOCUMENT_LABELS, FIELD_LABELS

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
STATIC = ROOT / "static"
API_PREFIXES = ("/ai-jobs", "/uploads", "/healthz", "/readyz", "/schema")


def filesize(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def _wants_html(request: Request[Any, Any, Any]) -> bool:
    return not request.url.path.startswith(API_PREFIXES) and "text/html" in request.headers.get("accept", "")


def on_http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    """Pages get an HTML error page (or the sign-in page); the API and programs get problem+json."""
    exc = explain_multipart_limit(request, exc)
    if exc.status_code == 401 and _wants_html(request):
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return Redirect(f"/login?{urlencode({'next': target})}", status_code=303)
    if _wants_html(request):
        title, detail = _error_words(request, exc)
        return Template(
            "pages/error.html",
            # An address no route answers (404, 405) is refused before authentication runs: the page
            # cannot tell whether someone is signed in, so it offers neither "Sign in" nor "Sign out".
            context={
                "title": title,
                "detail": detail,
                "status": exc.status_code,
                "viewer_unknown": exc.status_code in (404, 405) and "auth" not in request.scope,
            },
            status_code=exc.status_code,
            headers=dict(exc.headers or {}),  # Retry-After on a 429 page too
        )
    return http_exception_to_problem(request, exc)


# Litestar's own details are bare reason phrases ("Not Found"); people get a sentence instead.
_PLAIN_ERRORS: dict[int, tuple[str, str]] = {
    403: ("Not allowed", "You do not have access to this page."),
    404: ("Page not found", "There is nothing at this address: it may have been deleted, or the link is mistyped."),
    413: ("File too large", ""),  # filled in with the configured limit
    429: ("Too many requests", "Wait a moment, then try again."),
    500: ("Something went wrong", "Something went wrong on our side. Please try again in a moment."),
    503: ("Not available just now", "Please try again in a moment."),
}


def on_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """A failure of ours: logged with its traceback; a page says so in words, the API in problem+json."""
    if not _wants_html(request):
        return unexpected_to_problem(request, exc)
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return on_http_error(request, HTTPException(status_code=500))


def on_storage_unavailable(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Unreachable file storage: 503 with Retry-After, as a page or as problem+json."""
    if not _wants_html(request):
        return storage_unavailable_to_problem(request, exc)
    log.warning("storage unreachable on %s %s: %s", request.method, request.url.path, exc)
    return on_http_error(request, storage_unavailable())


def _error_words(request: Request[Any, Any, Any], exc: HTTPException) -> tuple[str, str]:
    title, fallback = _PLAIN_ERRORS.get(exc.status_code, ("That did not work", "Please go back and try again."))
    if exc.status_code >= 500 and not isinstance(exc, ProblemDetailsException):
        return title, fallback  # an exception's own words are for the log, not for the page
    if exc.status_code == 413:
        max_mb = quire_of(request).settings.max_upload_mb
        return title, f"Files can be up to {max_mb:g} MB. Choose a smaller file."
    try:
        reason = HTTPStatus(exc.status_code).phrase
    except ValueError:
        reason = ""
    detail = str(exc.detail or "")
    return title, fallback if not detail or detail == reason else detail


def _label(labels: dict[str, str]) -> Callable[[str], str]:
    return lambda name: labels.get(name, name.replace("_", " ").capitalize())


def _templates(engine: JinjaTemplateEngine, settings: Settings) -> None:
    engine.engine.filters["filesize"] = filesize
    engine.engine.filters["field_label"] = _label(FIELD_LABELS)
    engine.engine.filters["check_label"] = _label(CHECK_LABELS)
    engine.engine.filters["workflow_title"] = workflow_title
    engine.engine.filters["language_name"] = language_name
    engine.engine.filters["artifact_label"] = artifact_label
    engine.engine.filters["error_label"] = _label(ERROR_LABELS)
    engine.engine.filters["ordinal"] = ordinal
    engine.engine.filters["about"] = about
    engine.engine.globals["credit_note_notice"] = CREDIT_NOTE
    engine.engine.globals["document_labels"] = DOCUMENT_LABELS
    # The pages' script tells a stream the server ended at its lifetime from a broken one by its age.
    engine.engine.globals["stream_max_s"] = settings.stream_max_s


def _openapi(docs: bool) -> OpenAPIConfig:
    """The OpenAPI document at /schema (and /schema/openapi.json) always; the interactive pages
    (Swagger, ReDoc, ...) only when enabled, since they load scripts from a CDN and invite probing."""
    if docs:
        return OpenAPIConfig(title="Quire", version=__version__, path="/schema")
    return OpenAPIConfig(title="Quire", version=__version__, path="/schema", render_plugins=[JsonRenderPlugin()])


def create_app(quire: Quire | None = None) -> Litestar:
    """The web app on `quire` (by default, one bootstrapped from the settings the environment gives)."""
    settings = quire.settings if quire is not None else Settings()
    configure_logging(settings)
    if quire is None:  # a process `quire web` started: first, so that every thread it starts shares its processor
        pin_among_siblings(settings.web_pin_cpus)
    quire = quire or bootstrap(settings)
    redis_url = settings.redis_url or DEFAULT_REDIS_URL
    redis_client = AsyncRedis.from_url(redis_url, socket_connect_timeout=1, socket_timeout=2)
    stores: dict[str, Store] = {
        "sessions": RedisStore(redis_client, namespace="quire:sessions"),
        "rate_limit": RateLimitStore(redis_client, namespace="quire:rate-limit"),
    }
    csrf = CSRFConfig(
        secret=settings.secret_key,
        cookie_name="quire_csrf",
        cookie_secure=settings.env == "production",
        cookie_samesite="lax",
        header_name=CSRF_HEADER,
        # Sign-out must work when Redis (and so the session's CSRF key) cannot be reached. A
        # forged sign-out does nothing: the session cookie is SameSite=Lax, so another site's
        # POST arrives without it.
        exclude=["^/logout$"],
    )
    login_throttle = LoginThrottle(redis_client, settings.account_login_attempts_per_minute)
    live = LiveHub(redis_url, settings.live_max_watchers, partial(read_places, quire.settings, quire.db))

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if not (STATIC / "vendor" / "htmx.min.js").exists():
        log.warning("static assets are not built: run `make install` (npm ci and the frontend build)")
    STATIC.mkdir(exist_ok=True)
    return Litestar(
        route_handlers=[
            AccountController,
            AdminController,
            PagesController,
            JobExportController,
            JobsController,
            StreamsController,
            PageStreamsController,
            BatchPagesController,
            # A batch's body holds many documents: its own size limit, above a single upload's.
            Router("/", route_handlers=[BatchesController], request_max_body_size=settings.batch_max_bytes + 1024**2),
            healthz,
            readyz,
            metrics_endpoint,
            create_static_files_router(path="/static", directories=[STATIC], include_in_schema=False),
        ],
        # Handlers reach the database, storage and settings as `db`, `storage` and `settings`, and
        # the rest (the dispatcher, admission control, broker, metrics) through `quire`.
        dependencies={
            "quire": Provide(lambda: quire, sync_to_thread=False),
            "db": Provide(lambda: quire.db, sync_to_thread=False),
            "storage": Provide(lambda: quire.storage, sync_to_thread=False),
            "settings": Provide(lambda: quire.settings, sync_to_thread=False),
            "live": Provide(lambda: live, sync_to_thread=False),
        },
        on_startup=[live.start],
        on_shutdown=[live.stop],
        plugins=[HTMXPlugin(), ProblemDetailsPlugin(ProblemDetailsConfig())],
        stores=stores,
        # The same `quire` for the before-request hooks, which get no dependencies (web/batches.py).
        state=State({"login_throttle": login_throttle, "quire": quire}),
        middleware=[
            DefineMiddleware(BodyDeadlineMiddleware, settings=settings),
            RequestIdMiddleware(),
            session_middleware(quire.settings),
            DefineMiddleware(QuireAuthentication, exclude=PUBLIC_PATHS),
            DefineMiddleware(SessionCSRFMiddleware, config=csrf),
        ],
        before_send=[add_security_headers],
        template_config=TemplateConfig(
            directory=TEMPLATES,
            engine=JinjaTemplateEngine,
            engine_callback=partial(_templates, settings=quire.settings),
        ),
        exception_handlers={
            HTTPException: on_http_error,
            StorageUnavailable: on_storage_unavailable,
            Exception: on_unexpected,
        },
        openapi_config=_openapi(settings.api_docs_enabled),
        response_cache_config=ResponseCacheConfig(),
        request_max_body_size=max_request_bytes(quire.settings),
        # Room for a batch's files as separate parts (the form's other fields included).
        multipart_form_part_limit=settings.batch_max_files + 16,
        logging_config=None,  # Quire's own pipeline (quire.logs) handles every logger
        debug=False,
    )
