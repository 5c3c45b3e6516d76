"""The migrations build exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, pool
from sqlmodel import SQLModel

import quire.accounts.models
import quire.jobs.models
import quire.webhooks.models  # noqa: F401
from backend.tests.conftest import ScratchDatabase
from quire.migrations import upgrade


def test_migrated_schema_matches_models(database: ScratchDatabase) -> None:
    # Given an empty database, when every migration is applied
    upgrade(database.url)
    engine = create_engine(database.url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        # Then autogenerate finds nothing to add, drop or alter
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, SQLModel.metadata) == []
        assert {"job", "job_event", "artifact", "upload"} <= set(inspect(connection).get_table_names())
    engine.dispose()


def test_upgrade_twice_is_harmless(database: ScratchDatabase) -> None:
    upgrade(database.url)
    upgrade(database.url)
