"""Unit-test fixtures: the process's own engine pointed at a fresh, migrated database."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from backend.tests.conftest import Database


@pytest.fixture
def migrated(database: Database) -> Iterator[Database]:
    from quire.db import dispose_engine
    from quire.migrations import upgrade
    from quire.settings import get_settings

    os.environ["QUIRE_DATABASE_URL"] = database.url
    get_settings.cache_clear()
    dispose_engine()
    upgrade(database.url)
    yield database
    dispose_engine()
    os.environ.pop("QUIRE_DATABASE_URL", None)
    get_settings.cache_clear()
