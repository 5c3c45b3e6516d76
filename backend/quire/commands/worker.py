"""`quire worker`: the supervisor of the processes that run jobs, and (hidden) one such process."""

from __future__ import annotations

import sys

import click

from quire.queue.supervisor import supervise
from quire.settings import Settings


@click.command()
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--threads", default=None, type=click.IntRange(1, 64), help="[default: QUIRE_WORKER_THREADS]")
@click.pass_obj
def worker(settings: Settings, processes: int, threads: int | None) -> None:
    """Run worker processes that execute jobs (restarted if one dies)."""
    sys.exit(supervise(settings, processes, threads or settings.worker_threads))
