"""Running Quire: `quire dev` (everything on one machine), `web`, `worker` and `migrate`."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time

import click
import uvicorn

from quire.accounts import service as accounts
from quire.migrations import upgrade
from quire.queue.embedded_redis import EmbeddedRedis
from quire.queue.worker import run_worker_process, supervise
from quire.settings import get_settings
from quire.web.server import HeaderDeadlineProtocol

DEV_ADMIN = "admin@localhost"


@click.command()
def migrate() -> None:
    """Create or upgrade the database schema."""
    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.resolved_database_url)
    click.echo("database is up to date")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--workers", default=None, type=click.IntRange(1, 64), help="processes on the port [default: QUIRE_WEB_WORKERS]"
)
def web(host: str, port: int, workers: int | None) -> None:
    """Serve the web app and JSON API."""
    settings = get_settings()
    proxies = settings.forwarded_allow_ips.strip()
    uvicorn.run(
        "quire.app:create_app",
        factory=True,
        host=host,
        port=port,
        # uvicorn's own multi-process mode: one socket, bound here, shared by `workers` processes it
        # starts and restarts. Sessions, rate limits, live updates and metrics all live in Redis or
        # the shared metrics directory, so any process can answer any request.
        workers=workers or settings.web_workers or default_web_workers(),
        log_config=None,  # uvicorn's lines go through Quire's logging pipeline like every other
        access_log=False,
        http=HeaderDeadlineProtocol,
        timeout_keep_alive=settings.keep_alive_s,
        # uvicorn trusts X-Forwarded-For from loopback unless told otherwise; a client on the same
        # host could then pick its own address. Only the proxies named in the setting are believed.
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or "",
    )


def default_web_workers() -> int:
    """One web process per CPU this process may use, at most 8: a request spends most of its time
    in Python, so one process keeps about one core busy."""
    return max(1, min(8, len(os.sched_getaffinity(0))))


@click.command()
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--threads", default=None, type=click.IntRange(1, 64), help="[default: QUIRE_WORKER_THREADS]")
@click.option("--child", is_flag=True, hidden=True)
def worker(processes: int, threads: int | None, child: bool) -> None:
    """Run worker processes that execute jobs (restarted if one dies)."""
    threads = threads or get_settings().worker_threads
    sys.exit(run_worker_process(threads) if child else supervise(processes, threads))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
def dev(host: str, port: int) -> None:
    """Run everything on this machine: Redis (embedded if QUIRE_REDIS_URL is unset), migrations,
    web and one worker."""
    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
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
        _first_admin()
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


def _first_admin() -> None:
    """On a fresh install, make a local admin so a newcomer can sign in straight away."""
    if accounts.count_users() > 0:
        return
    password = secrets.token_urlsafe(12)
    accounts.create_user(DEV_ADMIN, password, is_admin=True)
    click.secho(f"Created the first account. Sign in with:  {DEV_ADMIN}  /  {password}", bold=True)
    click.echo("(change the password under Settings; this is shown only once)")
