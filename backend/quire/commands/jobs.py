"""Job operations from the command line: `quire jobs list | show | replay | purge | stats | cancel`."""

from __future__ import annotations

import json
import os
import re
import socket
import threading
from datetime import timedelta
from typing import Any

import click

from quire.bootstrap import bootstrap
from quire.db import open_database
from quire.jobs import operations, replays, service
from quire.jobs.models import JobStatus
from quire.jobs.store import list_jobs, view_of
from quire.queue.replays import carry_out, lease_for
from quire.settings import Settings
from quire.views import plain
from quire.web.links import with_links


@click.group()
def jobs() -> None:
    """Inspect and operate on jobs."""


def _print(data: Any) -> None:
    click.echo(json.dumps(plain(data), indent=2))


@jobs.command("list")
@click.option("--status", type=click.Choice(["queued", "running", "completed", "dead_letter", "cancelled"]))
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.pass_obj
def jobs_list(settings: Settings, status: str | None, limit: int) -> None:
    """List jobs, newest first."""
    db = open_database(settings)
    page = list_jobs(settings, db, None, every_owner=True, status=JobStatus(status) if status else None, limit=limit)
    for row in page.items:
        click.echo(
            f"{row.job_id}  {row.status:<11}  attempt {row.attempt}/{row.max_attempts}  "
            f"{row.workflow}  {row.input.filename}  {row.created_at}"
        )


@jobs.command("show")
@click.argument("job_id")
@click.pass_obj
def jobs_show(settings: Settings, job_id: str) -> None:
    """Print a job's full record as JSON."""
    db = open_database(settings)
    view = view_of(settings, db, job_id)
    if view is None:
        raise click.ClickException(f"no job {job_id}")
    _print(with_links(view))


@jobs.command("replay")
@click.argument("job_id", required=False)
@click.option("--error", "error_code", help="Replay every dead letter with this error code.")
@click.option("--workflow", help="With --error: only this workflow.")
@click.option("--rate", default=1.0, show_default=True, type=click.FloatRange(0.01, 1000), help="Jobs per second.")
@click.pass_obj
def jobs_replay(
    settings: Settings, job_id: str | None, error_code: str | None, workflow: str | None, rate: float
) -> None:
    """Queue a dead-lettered or cancelled job again, or a whole dead-letter group at a rate."""
    quire = bootstrap(settings)
    dispatcher = quire.dispatcher
    if job_id and not error_code:
        try:
            job = service.replay(settings, quire.db, dispatcher, job_id)
        except service.NotAllowed as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"{job.id} queued again")
        return
    if not error_code:
        raise click.UsageError("give a JOB_ID, or --error CODE to replay a dead-letter group")
    # Recorded and taken on by this command, which carries it out in the foreground; if the command
    # is stopped, a worker goes on with the rest once its lease runs out.
    owner = f"cli:{socket.gethostname()}:{os.getpid()}"
    replay = replays.start(
        quire.db, error_code, workflow, None, rate, "cli", owner=owner, lease_s=lease_for(settings, rate)
    )
    click.echo(f"replaying {replay.total} jobs at {rate:g}/s")
    replayed: list[str] = []

    def queued_again(job_id: str) -> None:
        replayed.append(job_id)
        click.echo(f"{job_id} queued again")

    carry_out(settings, quire.db, replay, dispatcher, threading.Event(), on_replayed=queued_again)
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
@click.pass_obj
def jobs_purge(settings: Settings, older_than: str) -> None:
    """Delete finished jobs (records and files) older than the given age."""
    quire = bootstrap(settings)
    purged = operations.purge_older_than(settings, quire.storage, quire.db, quire.dispatcher, _age(older_than))
    click.echo(f"purged {purged} jobs")


@jobs.command("stats")
@click.pass_obj
def jobs_stats(settings: Settings) -> None:
    """Counts by state and the dead-letter groups, as JSON."""
    db = open_database(settings)
    _print(operations.stats(db))


@jobs.command("cancel")
@click.argument("job_id")
@click.pass_obj
def jobs_cancel(settings: Settings, job_id: str) -> None:
    """Cancel a queued or running job."""
    quire = bootstrap(settings)
    try:
        job = service.cancel(settings, quire.db, quire.dispatcher, job_id)
    except service.NotAllowed as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{job.id} cancelled")
