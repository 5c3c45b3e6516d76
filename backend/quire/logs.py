"""Logging for every Quire process: one format, one level, set once at process start."""

from __future__ import annotations

import logging


def configure_logging(level: int = logging.INFO) -> None:
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(processName)s[%(process)d] %(name)s: %(message)s",
    )
    # Dramatiq's worker logs every consumer restart at INFO; keep its warnings and errors.
    logging.getLogger("dramatiq").setLevel(logging.WARNING)
