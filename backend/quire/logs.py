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

from quire.settings import get_settings


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
    # uvicorn's access log stays as `quire web` set it: off (`access_log=False` stops its
    # propagation). A line for every request cost about a fourteenth of a poll; the proxy in front
    # keeps the access log.
    logging.getLogger("uvicorn.access").handlers = []
    # Dramatiq's worker logs every consumer restart at INFO; keep its warnings and errors.
    logging.getLogger("dramatiq").setLevel(logging.WARNING)
