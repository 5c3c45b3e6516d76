"""Alembic migrations for the job record. `quire migrate` applies them.

Alembic is imported when a migration runs, not with this module: the web app and the worker import
the CLI that offers `quire migrate`, and would otherwise pay a quarter of a second at each start
for a library they never call.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.config import Config

HERE = Path(__file__).parent


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(HERE))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(url), revision)
