"""The database: one engine per process, one way to open a session, and the records' ids and clock."""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import InvalidatePoolError
from sqlalchemy.orm import configure_mappers
from sqlmodel import Session, create_engine

from quire.settings import Settings


def utcnow() -> datetime:
    """Now, timezone-aware in UTC: every timestamp column stores UTC."""
    return datetime.now(UTC)


def moment(text: str) -> datetime:
    """An ISO 8601 date or time as an aware UTC datetime, as the records' columns compare them; one
    without an offset is UTC. ValueError for anything else."""
    parsed = datetime.fromisoformat(text)
    try:
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except OverflowError as exc:  # "0001-01-01T00:00+01:00": before the first day there is
        raise ValueError(f"{text!r} is outside the calendar") from exc


def new_id() -> str:
    """An unguessable identifier, safe in URLs and on a command line (it never starts with `-`)."""
    return secrets.token_hex(16)


# A pooled connection used this recently is taken as alive without a ping: a busy worker takes a connection twice a
# job, and pinging each time was a round trip and a twentieth of its CPU. One idle longer is pinged first.
PING_AFTER_IDLE_S = 1.0


def _ping_when_idle(engine: Engine) -> None:
    """SQLAlchemy's pessimistic disconnect handling (what `pool_pre_ping` does on every checkout), for connections
    idle longer than `PING_AFTER_IDLE_S`: when the ping finds the server gone, the whole pool is renewed, as after a
    restart, before the statement runs. A new connection counts as just used."""

    @event.listens_for(engine, "connect")
    @event.listens_for(engine, "checkin")
    def used(_dbapi_connection: Any, record: Any) -> None:
        record.info["used_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if time.monotonic() - record.info.get("used_at", 0.0) < PING_AFTER_IDLE_S:
            return
        dialect = engine.dialect
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            if not dialect.is_disconnect(exc, dbapi_connection, None):
                raise
            raise InvalidatePoolError("the database closed the pooled connection") from exc


def _build_engine(url: str, pool_size: int | None) -> Engine:
    parsed = make_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    if pool_size is not None:
        kwargs.update(pool_size=pool_size, max_overflow=0, pool_timeout=60)
    engine = create_engine(url, **kwargs)
    # Transitions build Job snapshots with model_construct, which reads attributes through the ORM's
    # instrumentation: the mappers must be configured before the first of them, even in a process
    # that ran no query yet. Done with the engine, not on import, so importing a model does nothing.
    configure_mappers()
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        # A server connection can drop (a PostgreSQL restart); a SQLite file cannot, so it needs no ping.
        _ping_when_idle(engine)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers and one writer work at once across processes; the busy timeout makes a
    # writer wait for the lock instead of failing, which is what conditional updates rely on.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    # Each connection's page cache is capped at 512 KiB (SQLite's default is 2 MiB): a worker
    # holds a connection per thread, and their caches filling up over the first thousands of
    # jobs were most of its memory growth. Pages not cached are read from the OS's file cache.
    cursor.execute("PRAGMA cache_size=-512")
    cursor.close()


class Database:
    """The database a process works on: its engine, and the one way to open a session or a
    connection on it. Built by `quire.bootstrap` and handed to whatever reads or writes records.

    `pool_size` fixes the connection pool: a worker process sizes it to its thread count, so that
    threads never wait on, or overflow, the pool (the concurrency limit and the pool limit are the
    same number).
    """

    def __init__(self, url: str, pool_size: int | None = None) -> None:
        self.url = url
        self.engine = _build_engine(url, pool_size)
        # SQLite takes one writer at a time, and a connection that finds the database locked
        # sleeps in its busy handler (1 ms, then 2, 5, 10, ... up to 100 ms between tries). Threads
        # of one process therefore take turns on this lock, which wakes the next one the moment a
        # session ends; the busy handler is left for the rare contention between processes.
        self._turn: contextlib.AbstractContextManager[object] = (
            threading.RLock() if self.engine.dialect.name == "sqlite" else contextlib.nullcontext()
        )

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with self._turn, Session(self.engine, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A Core connection in a transaction that commits on success and rolls back on error: for
        the two statements every job runs (claim and complete), where an ORM session's own
        bookkeeping cost more than the statements."""
        with self._turn, self.engine.begin() as connection:
            yield connection

    def dispose(self) -> None:
        """Close the pool's connections (at shutdown, or in a forked child before its first use)."""
        self.engine.dispose()


def open_database(settings: Settings, pool_size: int | None = None) -> Database:
    """The database `settings` name; the data directory is made first, for a SQLite file in it."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return Database(settings.resolved_database_url, pool_size)
