"""The database: one engine per process, one way to open a session, and the records' ids and clock."""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.orm import configure_mappers
from sqlmodel import Session, create_engine

from quire.settings import get_settings

_engine: Engine | None = None
_engine_lock = threading.Lock()
_pool_size: int | None = None
# SQLite takes one writer at a time, and a connection that finds the database locked sleeps in its
# busy handler (1 ms, then 2, 5, 10, ... up to 100 ms between tries). Threads of one process
# therefore take turns on this lock, which wakes the next one the moment a session ends; the
# busy handler is left for the rare contention between processes.
_sqlite_turn: threading.RLock | None = None


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


def configure_pool(size: int) -> None:
    """Fix this process's connection pool size before the engine is first used.

    A worker process sizes its pool to its thread count so that threads never wait on, or
    overflow, the pool: the concurrency limit and the pool limit are the same number.
    """
    global _pool_size
    _pool_size = size


def _build_engine(url: str) -> Engine:
    parsed = make_url(url)
    # A server connection can drop (a PostgreSQL restart); a SQLite file cannot, so it skips the ping.
    kwargs: dict[str, Any] = {"pool_pre_ping": parsed.get_backend_name() != "sqlite"}
    if parsed.get_backend_name() == "sqlite":
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    if _pool_size is not None:
        kwargs.update(pool_size=_pool_size, max_overflow=0, pool_timeout=60)
    engine = create_engine(url, **kwargs)
    # Transitions build Job snapshots with model_construct, which reads attributes through the ORM's
    # instrumentation: the mappers must be configured before the first of them, even in a process
    # that ran no query yet. Done with the engine, not on import, so importing a model does nothing.
    configure_mappers()
    global _sqlite_turn
    _sqlite_turn = None
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
        _sqlite_turn = threading.RLock()
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


def get_engine() -> Engine:
    """The process-wide engine, created on first use from the settings."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                settings = get_settings()
                settings.data_dir.mkdir(parents=True, exist_ok=True)
                _engine = _build_engine(settings.resolved_database_url)
    return _engine


def dispose_engine() -> None:
    """Forget the engine (after a fork, or when settings change in tests)."""
    global _engine
    if _engine is not None:
        _engine.dispose()
        _engine = None


@contextmanager
def connection_scope() -> Iterator[Connection]:
    """A Core connection in a transaction that commits on success and rolls back on error: for the
    two statements every job runs (claim and complete), where an ORM session's own bookkeeping
    cost more than the statements."""
    engine = get_engine()
    with _sqlite_turn or contextlib.nullcontext(), engine.begin() as connection:
        yield connection


@contextmanager
def session_scope() -> Iterator[Session]:
    """A session that commits on success and rolls back on error."""
    engine = get_engine()
    with _sqlite_turn or contextlib.nullcontext(), Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
