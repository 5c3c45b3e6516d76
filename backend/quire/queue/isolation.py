"""Process isolation: one attempt in a process of its own, and what crosses the pipe back.

A job whose last attempt was lost with its worker runs its next attempt this way. If it is the
poison that killed the worker, it now kills only that process and is charged for it; if it was
an innocent bystander, it completes. Either way no other job pays for it.

The processes come from a fork server that has imported the attempt's code once, so an isolated
attempt starts in milliseconds rather than paying a fresh interpreter's imports each time (seconds
on a busy machine, longer than some workers live while they are being killed and restarted).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from quire.db import open_database
from quire.documents.storage import configured_storage
from quire.errors import WorkerLost
from quire.jobs.models import Job
from quire.jobs.states import AttemptRef
from quire.processors import all_processors
from quire.queue.execution import AttemptLimits, AttemptProgress
from quire.queue.failures import AttemptFailure, FailedAttempt, classify
from quire.queue.results import Outcome, execute
from quire.settings import Settings

# What the fork server imports once, before it forks any attempt's process: the attempt's code and
# the libraries that read documents, which it imports when it first needs them (a missing one is skipped),
# and those that even a scan's background (about a second to import).
PRELOAD = ["quire.queue.isolation", "pypdf", "pypdfium2", "docx", "PIL.Image", "numpy", "scipy.ndimage"]

# What the attempt's process sends to the worker, in order: any number of OcrPages, then one
# Finished or Failed. A pipe closed without either means the process died.


@dataclass(frozen=True)
class OcrPages:
    """The reader found this many pages that need OCR: the worker gives the attempt their time."""

    pages: int


@dataclass(frozen=True)
class Finished:
    outcome: Outcome


@dataclass(frozen=True)
class Failed:
    failure: AttemptFailure


def _attempt_process(
    fields: dict[str, Any],
    worker_id: str,
    environ: dict[str, str],
    conn: Connection,
    lifeline: Connection,
) -> None:
    """The child process: run one attempt and send back its outcome or its failure.

    Progress is written under the parent's worker id, which holds the lease; the count of pages
    needing OCR goes to the parent, which keeps the time. The fork server's environment is the one
    it started with, so the worker's current one comes along and the settings are read from it.
    """
    os.environ.clear()
    os.environ.update(environ)
    settings = Settings()
    db, storage = open_database(settings), configured_storage(settings)
    threading.Thread(target=_exit_when_orphaned, args=(lifeline,), name="orphan-watch", daemon=True).start()
    job = Job(**fields)
    progress = AttemptProgress(
        db, AttemptRef(job.id, job.attempt, worker_id), settings.lease_seconds, lambda n: conn.send(OcrPages(n))
    )
    try:
        conn.send(Finished(execute(settings, storage, job, worker_id, progress)))
    except BaseException as exc:
        conn.send(Failed(classify(exc)))
    finally:
        conn.close()


def _exit_when_orphaned(lifeline: Connection) -> None:
    """End the attempt once its worker is gone (killed, say): nobody would read its outcome or stop
    it any more. The worker never writes to the lifeline; its end closes when the worker dies.
    (The fork server cannot tell: it lives on while any process it forked does.)"""
    with contextlib.suppress(EOFError, OSError):
        lifeline.recv()
    os._exit(1)


def call_isolated(job: Job, limits: AttemptLimits, worker_id: str) -> Outcome:
    """Run one attempt in a fresh process; kill it past `limits`; a dead process is worker_lost."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    receiver, sender = context.Pipe(duplex=False)
    lifeline, held = context.Pipe(duplex=False)  # `held` stays open in this process while it waits
    fields = {c: getattr(job, c) for c in Job.model_fields}
    process = context.Process(
        target=_attempt_process,
        args=(fields, worker_id, dict(os.environ), sender, lifeline),
        name=f"isolated-{job.id}",
        daemon=True,
    )
    # Started on every processor: the fork server, when this starts it, and so every isolated attempt's process.
    with all_processors():
        process.start()
    sender.close()
    lifeline.close()
    message: OcrPages | Finished | Failed | None = None
    try:
        while True:
            try:
                limits.wait(receiver.poll)
            except BaseException:
                process.kill()
                raise
            try:
                message = receiver.recv()
            except EOFError:
                message = None
            if not isinstance(message, OcrPages):
                break
            limits.allow_ocr_pages(message.pages)
    finally:
        process.join(5)
        receiver.close()
        held.close()
    if isinstance(message, Finished):
        return message.outcome
    if isinstance(message, Failed):
        raise FailedAttempt(message.failure)
    raise WorkerLost(f"The attempt's process stopped unexpectedly (exit code {process.exitcode}).")
