"""Running Quire on one machine: `quire dev` (Redis, migrations, web and worker) and `quire migrate`.

`quire web` and `quire worker` live in modules of their own, so that a command imports little
beyond what it runs: the worker does not load Litestar or uvicorn, and the other commands load
neither the web app nor the worker.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time

import click

from quire.accounts import service as accounts
from quire.db import Database, open_database
from quire.migrations import upgrade
from quire.queue.embedded_redis import EmbeddedRedis
from quire.settings import Settings

DEV_ADMIN = "admin@localhost"


@click.command()
@click.pass_obj
def migrate(settings: Settings) -> None:
    """Create or upgrade the database schema."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.resolved_database_url)
    click.echo("database is up to date")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.pass_obj
def dev(settings: Settings, host: str, port: int) -> None:
    """Run everything on this machine: Redis (embedded if QUIRE_REDIS_URL is unset), migrations,
    web and one worker."""
    db = open_database(settings)
    env = dict(os.environ)
    embedded = None
    if not settings.redis_url:
        embedded = EmbeddedRedis(settings.data_dir.resolve() / "redis").start()
        env["QUIRE_REDIS_URL"] = embedded.url
        click.echo(f"embedded Redis on {embedded.url}")
    quire = [sys.executable, "-m", "quire"]
    children: list[subprocess.Popen[bytes]] = []
    try:
        subprocess.run([*quire, "migrate"], env=env, check=True)
        _first_admin(db)
        children.append(subprocess.Popen([*quire, "web", "--host", host, "--port", str(port)], env=env))
        children.append(subprocess.Popen([*quire, "worker"], env=env))
        click.echo(f"Quire is running at http://{host}:{port}/  (Ctrl-C to stop)")
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
        click.echo("a Quire process exited; stopping", err=True)
    except KeyboardInterrupt:
        click.echo("stopping")
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
        if embedded is not None:
            embedded.stop()


def _first_admin(db: Database) -> None:
    """On a fresh install, make a local admin so a newcomer can sign in straight away."""
    if accounts.count_users(db) > 0:
        return
    password = secrets.token_urlsafe(12)
    accounts.create_user(db, DEV_ADMIN, password, is_admin=True)
    click.secho(f"Created the first account. Sign in with:  {DEV_ADMIN}  /  {password}", bold=True)
    click.echo("(change the password under Settings; this is shown only once)")
