"""Fixtures shared by every test: environment first, then the real services.

The environment is set before anything imports `quire`, so every module reads test settings.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="quire-tests-"))
os.environ.update(
    {
        "QUIRE_ENV": "test",
        "QUIRE_DATA_DIR": str(_SESSION_DIR / "unit"),
        # Nothing in the unit tests talks to Redis; integration stacks bring their own.
        "QUIRE_REDIS_URL": "redis://127.0.0.1:1/0",
        "QUIRE_MODEL_PROVIDER": "fake",
    }
)
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


POSTGRES_UNAVAILABLE = _postgres_reason()


def pytest_report_header() -> str:
    if POSTGRES_UNAVAILABLE:
        return f"!!! POSTGRESQL TESTS WILL BE SKIPPED: {POSTGRES_UNAVAILABLE} (set QUIRE_TEST_DATABASE_URL)"
    return f"PostgreSQL tests run against {postgres_admin_url()}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if POSTGRES_UNAVAILABLE:
        terminalreporter.write_sep("!", "PostgreSQL tests were SKIPPED", red=True, bold=True)
        terminalreporter.write_line(f"  {POSTGRES_UNAVAILABLE}. Start PostgreSQL or set QUIRE_TEST_DATABASE_URL.")


class Database:
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


def make_database(backend: str, directory: Path) -> Database:
    if backend == "postgresql" and POSTGRES_UNAVAILABLE:
        pytest.skip(POSTGRES_UNAVAILABLE)
    return Database(backend, directory)


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_DIR


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = make_database(request.param, tmp_path)
    yield db
    db.drop()
