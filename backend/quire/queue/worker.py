"""Worker processes: one Dramatiq worker per process, plus heartbeat and recovery threads,
and the supervisor behind `quire worker --processes N` that restarts a process that dies."""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
from functools import partial

import dramatiq

from quire.bootstrap import Quire, batch_body, bootstrap
from quire.db import Database
from quire.jobs.models import WorkerProcess, utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.jobs.states import extend_leases
from quire.jobs.store import view_of
from quire.processors import pin
from quire.queue.actors import declare_process_job, declare_send_webhook
from quire.queue.broker import QUEUE, WEBHOOK_QUEUE
from quire.queue.execution import ExecutionControl
from quire.queue.recovery import run_recovery_loop
from quire.queue.replays import run_group_replays
from quire.queue.runner import Runner
from quire.queue.supervisor import StopRequest
from quire.settings import Settings
from quire.web.links import JobOut, with_links
from quire.webhooks.sender import RenderJob, WebhookSender

log = logging.getLogger(__name__)

# Threads besides the Dramatiq worker threads that use a database connection: the lease
# heartbeat, the recovery loop and the group replays.
SUPPORT_CONNECTIONS = 3


def _record_worker(db: Database, worker_id: str, threads: int, stopped: bool = False) -> None:
    """Upsert this process's row in worker_process: alive, with its last heartbeat."""
    now = utcnow()
    with db.session() as session:
        row = session.get(WorkerProcess, worker_id) or WorkerProcess(
            id=worker_id, hostname=socket.gethostname(), pid=os.getpid(), threads=threads, started_at=now
        )
        row.last_heartbeat_at = now
        row.stopped_at = now if stopped else None
        session.add(row)


def _heartbeat_loop(
    settings: Settings, db: Database, stop: threading.Event, threads: int, control: ExecutionControl
) -> None:
    # Only the `finish` policy lets a lease outlive the job's deadline.
    past_deadline = settings.deadline_policy is DeadlinePolicy.FINISH
    while not stop.wait(settings.lease_seconds / 3):
        try:
            extend_leases(db, control.worker_id, control.held_jobs(), settings.lease_seconds, past_deadline)
            _record_worker(db, control.worker_id, threads)
        except Exception:
            log.exception("lease heartbeat failed; will try again")


def _job_with_links(settings: Settings, db: Database, job_id: str) -> JobOut | None:
    """A webhook's body: the job's view as `GET /ai-jobs/{id}` answers it."""
    view = view_of(settings, db, job_id)
    return with_links(view) if view is not None else None


def worker_runner(quire: Quire) -> Runner:
    """The runner for a worker process, with `process_job` declared on the broker to call it."""
    control = ExecutionControl(max_abandoned=quire.settings.max_abandoned_attempts)
    runner = Runner(quire.db, quire.storage, quire.settings, quire.dispatcher, control)
    declare_process_job(quire.broker, runner.run_attempt)
    return runner


def webhook_sender(quire: Quire, render_job: RenderJob) -> WebhookSender:
    """The webhook sender for a worker process, with `send_webhook` declared on the broker to call it.

    `render_job` gives a job's view with its links: the web layer's shape, which the sender does
    not know.
    """
    sender = WebhookSender(
        quire.db, quire.settings, quire.webhooks, render_job, partial(batch_body, quire.db, quire.results)
    )
    declare_send_webhook(quire.broker, sender.send)
    return sender


def run_worker_process(settings: Settings, threads: int, processor: int | None = None) -> int:
    """Run one worker process until SIGTERM or SIGINT, on `processor` alone when given."""
    if processor is not None:
        pin(processor)  # first: every thread it starts inherits it
    # The concurrency limit: each Dramatiq thread holds at most one connection, and the pool has
    # exactly enough for them and the support threads, so nothing waits on or overflows it.
    # Webhook threads hold a connection too, but only between their HTTP calls, never during one.
    quire = bootstrap(settings, pool_size=threads + settings.webhook_threads + SUPPORT_CONNECTIONS)
    runner = worker_runner(quire)
    webhook_sender(quire, partial(_job_with_links, settings, quire.db))
    control = runner.control

    signals = StopRequest()
    stop = threading.Event()  # set by the main thread only; the support threads wait on it
    # The heartbeat goes on through the graceful shutdown, until every attempt still held is handed
    # back: stopped with the rest, a lease would run out while attempts finish, and another
    # worker's recovery would take them as lost (worker_lost) instead of as handed over.
    handed_back = threading.Event()
    supervisor = os.getppid()

    worker = dramatiq.Worker(
        quire.broker, queues={QUEUE}, worker_threads=threads, worker_timeout=settings.worker_idle_poll_ms
    )
    # Dramatiq's default prefetch (twice the threads) keeps a message ready for each thread as it
    # finishes; with only one per thread, the consumer backs off while all threads are busy and
    # a thread that finishes waits for its next message (measured: 125-160 vs 205-260 jobs/s).

    # Webhooks get threads of their own: a receiver that hangs until the timeout holds one of
    # these, never a thread a job could run on.
    webhook_worker = dramatiq.Worker(
        quire.broker,
        queues={WEBHOOK_QUEUE},
        worker_threads=settings.webhook_threads,
        worker_timeout=max(settings.worker_idle_poll_ms, 100),
    )
    # Each target is a partial, so that the type checker sees its arguments (a thread's `args` it does not).
    heartbeat = threading.Thread(
        target=partial(_heartbeat_loop, settings, quire.db, handed_back, threads, control),
        name="lease-heartbeat",
        daemon=True,
    )
    replaying = threading.Thread(
        target=partial(run_group_replays, settings, quire.db, stop, quire.dispatcher, control.worker_id),
        name="group-replays",
        daemon=True,
    )
    recovery = partial(
        run_recovery_loop,
        settings,
        quire.db,
        quire.storage,
        stop,
        quire.dispatcher,
        quire.webhooks,
        quire.broker.client,
        quire.batches.finish_unmarked,
    )
    support = [heartbeat, threading.Thread(target=recovery, name="recovery", daemon=True), replaying]
    # Recorded before the heartbeat thread starts: the two would otherwise race to insert the row.
    _record_worker(quire.db, control.worker_id, threads)
    for thread in support:
        thread.start()
    worker.start()
    webhook_worker.start()
    log.info("worker %s ready with %d threads", control.worker_id, threads)
    # One write call, so lines from sibling processes sharing a log never interleave.
    sys.stdout.write(f"quire worker {control.worker_id} ready\n")
    sys.stdout.flush()
    while not signals.sleep(0.5):
        # A worker process belongs to its supervisor: if the supervisor is gone (killed, or stopped
        # before this process finished stopping), stop too rather than run on unwatched.
        if os.getppid() != supervisor:
            log.warning("the supervisor (pid %d) is gone; stopping this worker process", supervisor)
            break
    stop.set()
    # Graceful shutdown: take no new messages, let running attempts finish within the grace
    # period, then hand whatever is still running back to the queue for another worker.
    log.info(
        "worker %s stopping; waiting up to %g s for running attempts", control.worker_id, settings.shutdown_grace_s
    )
    quire.broker.stop_waiting(len(worker.consumers) + len(webhook_worker.consumers))
    worker.stop(timeout=int(settings.shutdown_grace_s * 1000))
    # An attempt cut short here is sent again once its claim runs out.
    webhook_worker.stop(timeout=int(settings.webhook_timeout_s * 1000))
    released = runner.release_held_attempts()
    handed_back.set()
    # The group replay this process carries out, if any, is given up for another worker to go on
    # with; the heartbeat's last write comes before the row is marked stopped.
    for thread in (heartbeat, replaying):
        thread.join(timeout=5)
    if released:
        log.warning("worker %s released %d unfinished attempts to other workers", control.worker_id, released)
    _record_worker(quire.db, control.worker_id, threads, stopped=True)
    return 0
