"""`quire worker`: the processes that run jobs."""

from __future__ import annotations

import sys

import click

from quire.queue.worker import run_worker_process, supervise
from quire.settings import get_settings


@click.command()
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--threads", default=None, type=click.IntRange(1, 64), help="[default: QUIRE_WORKER_THREADS]")
@click.option("--child", is_flag=True, hidden=True)
def worker(processes: int, threads: int | None, child: bool) -> None:
    """Run worker processes that execute jobs (restarted if one dies)."""
    threads = threads or get_settings().worker_threads
    sys.exit(run_worker_process(threads) if child else supervise(processes, threads))
