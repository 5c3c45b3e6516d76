"""Unit-test fixtures: a fresh, migrated database, and the handles the code is given to reach it
and the files (`db`, `storage`), as the bootstrap would build them."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from backend.tests.conftest import ScratchDatabase
from quire.db import Database
from quire.documents.storage import Storage, configured_storage
from quire.settings import Settings


@pytest.fixture
def settings() -> Settings:
    """The settings the test environment gives (see the root conftest)."""
    return Settings()


@pytest.fixture
def migrated(database: ScratchDatabase) -> Iterator[ScratchDatabase]:
    from quire.migrations import upgrade

    # For a bootstrap in a test, which reads the settings from the environment.
    os.environ["QUIRE_DATABASE_URL"] = database.url
    upgrade(database.url)
    yield database
    os.environ.pop("QUIRE_DATABASE_URL", None)


@pytest.fixture
def db(migrated: ScratchDatabase) -> Iterator[Database]:
    opened = Database(migrated.url)
    yield opened
    opened.dispose()


@pytest.fixture
def storage(settings: Settings) -> Storage:
    return configured_storage(settings)
