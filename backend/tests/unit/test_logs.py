"""uvicorn's access log is on or off as uvicorn was told, and its lines go through Quire's pipeline."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from uvicorn.config import LOGGING_CONFIG, Config

from quire.logs import configure_logging
from quire.settings import Settings


@pytest.fixture
def access() -> Iterator[logging.Logger]:
    logger, root = logging.getLogger("uvicorn.access"), logging.getLogger()
    handlers, propagate, root_handlers, root_level = logger.handlers[:], logger.propagate, root.handlers[:], root.level
    yield logger
    logger.handlers, logger.propagate, root.handlers, root.level = handlers, propagate, root_handlers, root_level


def test_off_as_quire_web_asks_by_default(settings: Settings, access: logging.Logger) -> None:
    # Given uvicorn told to keep no access log, as `quire web` does by default
    Config("quire.app:create_app", log_config=None, access_log=False)
    # When Quire's logging is set up in the web process
    configure_logging(settings)
    # Then no access line reaches a handler
    assert not access.hasHandlers()


def test_on_when_asked_for(settings: Settings, access: logging.Logger) -> None:
    Config("quire.app:create_app", log_config=None, access_log=True)
    configure_logging(settings)
    assert access.hasHandlers()
    assert access.handlers == []  # the root's: Quire's pipeline


def test_uvicorn_run_with_its_own_logging_config_logs_through_quire(settings: Settings, access: logging.Logger) -> None:
    # Given uvicorn's own logging config, which gives the access log a handler of its own
    Config("quire.app:create_app", log_config=LOGGING_CONFIG)
    assert access.handlers
    # When Quire's logging is set up
    configure_logging(settings)
    # Then its lines go to Quire's handler on the root
    assert access.handlers == []
    assert access.propagate
