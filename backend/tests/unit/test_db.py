"""The database handle: pooled PostgreSQL connections that the server closed are replaced before use."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import text

import quire.db
from backend.tests.conftest import make_database
from quire.db import Database


@pytest.mark.postgres
def test_a_connection_the_server_closed_while_idle_is_replaced_before_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(quire.db, "PING_AFTER_IDLE_S", 0.2)
    scratch = make_database("postgresql", tmp_path)
    db = Database(scratch.url, pool_size=1)
    try:
        # Given the pool's one connection, used a moment ago, then closed by the server (as a restart does)
        with db.connection() as connection:
            first = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
        scratch._admin(f"SELECT pg_terminate_backend({first})")
        # When it has been idle longer than a busy worker's connections ever are, and is taken again
        time.sleep(0.3)
        with db.connection() as connection:
            second = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
        # Then a ping found it closed, and the statement ran on a new connection instead of failing
        assert second != first
    finally:
        db.dispose()
        scratch.drop()


@pytest.mark.postgres
def test_only_a_connection_idle_longer_than_a_moment_is_pinged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quire.db, "PING_AFTER_IDLE_S", 0.2)
    scratch = make_database("postgresql", tmp_path)
    db = Database(scratch.url, pool_size=1)
    pings: list[object] = []
    ping = db.engine.dialect.do_ping
    monkeypatch.setattr(db.engine.dialect, "do_ping", lambda connection: pings.append(connection) or ping(connection))
    try:
        for _ in range(3):  # a new connection, then the same one taken again at once, as a busy worker does
            with db.connection() as connection:
                connection.execute(text("SELECT 1"))
        assert pings == []
        time.sleep(0.3)
        with db.connection() as connection:
            connection.execute(text("SELECT 1"))
        assert len(pings) == 1
    finally:
        db.dispose()
        scratch.drop()
