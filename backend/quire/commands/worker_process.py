"""`quire worker-process`: one worker process, as the `quire worker` supervisor starts it."""

from __future__ import annotations

import sys

import click

from quire.queue.worker import run_worker_process
from quire.settings import Settings


@click.command("worker-process", hidden=True)
@click.option("--threads", default=None, type=click.IntRange(1, 64), help="[default: QUIRE_WORKER_THREADS]")
@click.option("--processor", default=None, type=click.IntRange(0), help="run on this processor alone")
@click.pass_obj
def worker_process(settings: Settings, threads: int | None, processor: int | None) -> None:
    """Run one worker process until SIGTERM or SIGINT (`quire worker` starts and restarts these)."""
    sys.exit(run_worker_process(settings, threads or settings.worker_threads, processor))
