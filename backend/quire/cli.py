"""The `quire` command: dev, web, worker, migrate and job operations."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from typing import Any

import click
import uvicorn
from pydantic import ValidationError

from quire.accounts import service as accounts
from quire.bootstrap import bootstrap
from quire.jobs import operations, replays, service
from quire.jobs.models import JobStatus
from quire.jobs.store import list_jobs, view_of
from quire.logs import configure_logging
from quire.migrations import upgrade
from quire.queue.embedded_redis import EmbeddedRedis
from quire.queue.replays import carry_out, lease_for
from quire.queue.worker import run_worker_process, supervise
from quire.settings import get_settings
from quire.web.links import with_links
from quire.web.server import HeaderDeadlineProtocol

DEV_ADMIN = "admin@localhost"


@click.group()
def main() -> None:
    """Quire: queue-backed AI document workflows."""
    try:
        get_settings()
    except ValidationError as exc:
        # A settings mistake is the operator's to fix: say what is wrong, without a traceback.
        raise click.ClickException(
            "; ".join(str(error["msg"]).removeprefix("Value error, ") for error in exc.errors())
        ) from None
    configure_logging()


@main.command()
def migrate() -> None:
    """Create or upgrade the database schema."""
    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.resolved_database_url)
    click.echo("database is up to date")


@main.command()
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


@main.command()
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--threads", default=None, type=click.IntRange(1, 64), help="[default: QUIRE_WORKER_THREADS]")
@click.option("--child", is_flag=True, hidden=True)
def worker(processes: int, threads: int | None, child: bool) -> None:
    """Run worker processes that execute jobs (restarted if one dies)."""
    threads = threads or get_settings().worker_threads
    sys.exit(run_worker_process(threads) if child else supervise(processes, threads))


@main.command()
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


@main.group()
def users() -> None:
    """Manage accounts."""


@users.command("create")
@click.argument("email")
@click.option("--admin", is_flag=True, help="Give the account the admin role.")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def users_create(email: str, admin: bool, password_stdin: bool) -> None:
    """Create an account."""
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        principal = accounts.create_user(email, password, is_admin=admin)
    except accounts.AccountError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"created {principal.email}{' (admin)' if principal.is_admin else ''}")


@main.group()
def tokens() -> None:
    """Manage API tokens."""


@tokens.command("create")
@click.argument("email")
@click.option("--name", default="cli", show_default=True)
def tokens_create(email: str, name: str) -> None:
    """Create an API token for EMAIL and print it (shown once)."""
    principal = accounts.user_by_email(email)
    if principal is None:
        raise click.ClickException(f"no account {email}")
    _, secret = accounts.create_token(principal.user_id, name)
    click.echo(secret)


@main.group()
def jobs() -> None:
    """Inspect and operate on jobs."""


def _print(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


@jobs.command("list")
@click.option("--status", type=click.Choice(["queued", "running", "completed", "dead_letter", "cancelled"]))
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
def jobs_list(status: str | None, limit: int) -> None:
    """List jobs, newest first."""
    page = list_jobs(None, every_owner=True, status=JobStatus(status) if status else None, limit=limit)
    for row in page.items:
        click.echo(
            f"{row['job_id']}  {row['status']:<11}  attempt {row['attempt']}/{row['max_attempts']}  "
            f"{row['workflow']}  {row['input']['filename']}  {row['created_at']}"
        )


@jobs.command("show")
@click.argument("job_id")
def jobs_show(job_id: str) -> None:
    """Print a job's full record as JSON."""
    view = view_of(job_id)
    if view is None:
        raise click.ClickException(f"no job {job_id}")
    _print(with_links(view))


@jobs.command("replay")
@click.argument("job_id", required=False)
@click.option("--error", "error_code", help="Replay every dead letter with this error code.")
@click.option("--workflow", help="With --error: only this workflow.")
@click.option("--rate", default=1.0, show_default=True, type=click.FloatRange(0.01, 1000), help="Jobs per second.")
def jobs_replay(job_id: str | None, error_code: str | None, workflow: str | None, rate: float) -> None:
    """Queue a dead-lettered or cancelled job again, or a whole dead-letter group at a rate."""
    dispatcher = bootstrap().dispatcher
    if job_id and not error_code:
        try:
            job = service.replay(dispatcher, job_id)
        except service.NotAllowed as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"{job.id} queued again")
        return
    if not error_code:
        raise click.UsageError("give a JOB_ID, or --error CODE to replay a dead-letter group")
    # Recorded and taken on by this command, which carries it out in the foreground; if the command
    # is stopped, a worker goes on with the rest once its lease runs out.
    owner = f"cli:{socket.gethostname()}:{os.getpid()}"
    replay = replays.start(error_code, workflow, None, rate, "cli", owner=owner, lease_s=lease_for(rate))
    click.echo(f"replaying {replay.total} jobs at {rate:g}/s")
    replayed: list[str] = []

    def queued_again(job_id: str) -> None:
        replayed.append(job_id)
        click.echo(f"{job_id} queued again")

    carry_out(replay, dispatcher, threading.Event(), on_replayed=queued_again)
    click.echo(f"replayed {len(replayed)} jobs")


_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def _age(value: str) -> timedelta:
    match = _AGE.match(value.strip())
    if not match:
        raise click.BadParameter("use a number and a unit: 30d, 12h, 45m or 90s")
    amount, unit = float(match.group(1)), match.group(2)
    units = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
    return timedelta(**{units[unit]: amount})


@jobs.command("purge")
@click.option("--older-than", "older_than", required=True, help="Age such as 30d, 12h, 45m.")
def jobs_purge(older_than: str) -> None:
    """Delete finished jobs (records and files) older than the given age."""
    click.echo(f"purged {operations.purge_older_than(bootstrap().dispatcher, _age(older_than))} jobs")


@jobs.command("stats")
def jobs_stats() -> None:
    """Counts by state and the dead-letter groups, as JSON."""
    _print(operations.stats())


@jobs.command("cancel")
@click.argument("job_id")
def jobs_cancel(job_id: str) -> None:
    """Cancel a queued or running job."""
    try:
        job = service.cancel(bootstrap().dispatcher, job_id)
    except service.NotAllowed as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{job.id} cancelled")


@main.group()
def webhooks() -> None:
    """Webhook signing secrets."""


@webhooks.command("secret")
@click.argument("email")
def webhooks_secret(email: str) -> None:
    """Rotate EMAIL's webhook signing secret and print the new one (whsec_...).

    Deliveries attempted from now on are signed with the new secret alone.
    """
    principal = accounts.user_by_email(email)
    if principal is None:
        raise click.ClickException(f"no account {email}")
    click.echo(accounts.rotate_webhook_secret(principal.user_id))
