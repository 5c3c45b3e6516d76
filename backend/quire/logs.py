"""Logging for every Quire process: one structlog pipeline for our lines and for Litestar's,
Dramatiq's and uvicorn's; JSON outside development, readable lines in development.

Context bound with `structlog.contextvars` (a job's id, attempt, worker and workflow; a web
request's id) appears on every line logged while it is bound, whichever logger wrote it.
"""

from __future__ import annotations

import logging
import re
import sys
import uuid

import structlog
from litestar.datastructures import MutableScopeHeaders
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from quire.settings import get_settings

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


def configure_logging() -> None:
    settings = get_settings()
    level = logging.getLevelNamesMapping()[settings.log_level.upper()]
    json_logs = settings.log_json if settings.log_json is not None else settings.env == "production"
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.PositionalArgumentsFormatter(),
        structlog.processors.format_exc_info,
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer(colors=False)
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "litestar", "dramatiq"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
    # Dramatiq's worker logs every consumer restart at INFO; keep its warnings and errors.
    logging.getLogger("dramatiq").setLevel(logging.WARNING)


class RequestIdMiddleware(ASGIMiddleware):
    """Give every web request an id (or keep a sane X-Request-ID), bind it to every log line the
    request produces, and send it back in the response."""

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex

        async def with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableScopeHeaders.from_message(message)["x-request-id"] = request_id
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            await next_app(scope, receive, with_id)
