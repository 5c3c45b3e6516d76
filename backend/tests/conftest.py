"""Fixtures shared by every test: environment first, then the real services.

The environment is set before anything imports `quire`, so every module reads test settings.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="quire-tests-"))
os.environ.update(
    {
        "QUIRE_ENV": "test",
        "QUIRE_DATA_DIR": str(_SESSION_DIR / "unit"),
        # Nothing in the unit tests talks to Redis; integration stacks bring their own.
        "QUIRE_REDIS_URL": "redis://127.0.0.1:1/0",
        "QUIRE_MODEL_PROVIDER": "fake",
        # The S3 tests' server (moto) takes any credentials; boto3 wants some, and a region.
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
)
for _name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
    os.environ.pop(_name, None)
os.environ.pop("QUIRE_DATABASE_URL", None)

DEFAULT_POSTGRES_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_admin_url() -> str:
    return os.environ.get("QUIRE_TEST_DATABASE_URL", DEFAULT_POSTGRES_ADMIN_URL)


def _postgres_reason() -> str | None:
    """None when PostgreSQL is reachable, else why not."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(postgres_admin_url()).set(drivername="postgresql")
    try:
        psycopg.connect(url.render_as_string(hide_password=False), connect_timeout=3).close()
    except psycopg.Error as exc:
        return f"PostgreSQL at {url.render_as_string()} is not reachable ({exc.__class__.__name__})"
    return None


# Asked once a run: the first process to import this (pytest-xdist's controller) answers for the processes it
# starts, which inherit its environment. Some tests are collected by the answer (ONE_DATABASE), and processes
# that collected different tests would stop the whole run.
_CHECKED = "QUIRE_TEST_POSTGRES_UNAVAILABLE"
if _CHECKED not in os.environ:
    os.environ[_CHECKED] = _postgres_reason() or ""
POSTGRES_UNAVAILABLE = os.environ[_CHECKED] or None
# For a test whose code does not depend on the database: the one production uses where a server is
# reachable, else SQLite (`@pytest.mark.parametrize("database", ONE_DATABASE, indirect=True)`).
ONE_DATABASE = ["sqlite"] if POSTGRES_UNAVAILABLE else [pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which turns the groups into node ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """How `make test` shares the tests among processes (pytest-xdist, `--dist loadgroup`).

    The browser tests form one group, so one process starts their stack and Chromium; every other
    file is a group of its own, so its module-scoped stacks start once. (Tests marked `serial` run
    in a second pass, alone.) xdist hands out the groups with the most tests first.

    Grouping fails silently when pytest and pytest-xdist disagree on node ids (pytest 9.2 with
    xdist 3.8: every process then ran every file's servers), so a process that finds its tests not
    grouped stops the run (`pytest_xdist_node_collection_finished`).
    """
    for item in items:
        path = Path(item.path)
        group = "e2e" if path.parent.name == "e2e" else f"{path.parent.name}/{path.name}"
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """In the process that shares the tests out: stop when a process's tests came back without their group."""
    if node.config.getoption("dist") == "loadgroup" and ids and "@" not in ids[0]:
        pytest.exit(
            f"pytest-xdist did not group the tests (pytest {pytest.__version__}; pytest-dev/pytest-xdist#1386)", 3
        )


def pytest_report_header() -> str:
    if POSTGRES_UNAVAILABLE:
        return f"!!! POSTGRESQL TESTS WILL BE SKIPPED: {POSTGRES_UNAVAILABLE} (set QUIRE_TEST_DATABASE_URL)"
    return f"PostgreSQL tests run against {postgres_admin_url()}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if POSTGRES_UNAVAILABLE:
        terminalreporter.write_sep("!", "PostgreSQL tests were SKIPPED", red=True, bold=True)
        terminalreporter.write_line(f"  {POSTGRES_UNAVAILABLE}. Start PostgreSQL or set QUIRE_TEST_DATABASE_URL.")


class ScratchDatabase:
    """A fresh, empty database on SQLite or PostgreSQL, dropped afterwards."""

    def __init__(self, backend: str, directory: Path) -> None:
        self.backend = backend
        self.name = f"quire_{uuid.uuid4().hex[:12]}"
        if backend == "sqlite":
            self.url = f"sqlite:///{directory / 'quire.db'}"
        else:
            from sqlalchemy.engine import make_url

            self.url = make_url(postgres_admin_url()).set(database=self.name).render_as_string(hide_password=False)
            self._admin(f'CREATE DATABASE "{self.name}"')

    def _admin(self, sql: str) -> None:
        import psycopg
        from sqlalchemy.engine import make_url

        url = make_url(postgres_admin_url()).set(drivername="postgresql")
        with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as conn:
            conn.execute(sql.encode())

    def drop(self) -> None:
        if self.backend == "postgresql":
            self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def make_database(backend: str, directory: Path) -> ScratchDatabase:
    if backend == "postgresql" and POSTGRES_UNAVAILABLE:
        pytest.skip(POSTGRES_UNAVAILABLE)
    return ScratchDatabase(backend, directory)


class S3Server:
    """A real S3-compatible server on 127.0.0.1 (moto's), with a fresh bucket for each user of it.

    It can be stopped and started again on the same port (a bucket that is briefly unreachable);
    moto keeps its objects in this process meanwhile.
    """

    def __init__(self) -> None:
        from quire.queue.embedded_redis import free_port

        self.port = free_port()
        self._server: Any = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint)

    def new_bucket(self) -> str:
        name = f"quire-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def env(self, bucket: str | None = None) -> dict[str, str]:
        """Settings that point Quire at a bucket of this server (a new one unless named)."""
        return {
            "QUIRE_STORAGE_URL": f"s3://{bucket or self.new_bucket()}/quire",
            "QUIRE_S3_ENDPOINT_URL": self.endpoint,
        }


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = S3Server().start()
    yield server
    server.stop()


def storage_env(kind: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """Settings for a stack on `kind` storage: `local` (the data directory) or `s3` (a new bucket)."""
    if kind == "s3":
        server: S3Server = request.getfixturevalue("s3_server")
        return server.env()
    return {}


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_DIR


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ScratchDatabase]:
    db = make_database(request.param, tmp_path)
    yield db
    db.drop()
