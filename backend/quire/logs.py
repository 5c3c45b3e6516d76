"""Logging for every Quire process: one structlog pipeline for our lines and for Litestar's,
Dramatiq's and uvicorn's; JSON outside development, readable lines in development.

Context bound with `structlog.contextvars` (a job's id, attempt, worker and workflow; a web
request's id, bound by `web/request_ids.py`) appears on every line logged while it is bound,
whichever logger wrote it.
"""

from __future__ import annotations

import logging
import sys

import structlog

from quire.settings import Settings


def configure_logging(settings: Settings) -> None:
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
        # Dropped first when the level is off, before the processors below format it for nothing.
        processors=[structlog.stdlib.filter_by_level, *shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
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
    for name in ("uvicorn", "uvicorn.error", "litestar", "dramatiq"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
    # uvicorn's access log is on or off as uvicorn was told (`quire web` passes QUIRE_ACCESS_LOG;
    # off, uvicorn stops its propagation, and it stays stopped). uvicorn run directly with its own
    # logging config gives it a handler of its own: its lines then come through this pipeline too.
    access = logging.getLogger("uvicorn.access")
    if access.handlers:
        access.handlers = []
        access.propagate = True
    # Dramatiq's worker logs every consumer restart at INFO; keep its warnings and errors.
    logging.getLogger("dramatiq").setLevel(logging.WARNING)
