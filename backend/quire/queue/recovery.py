"""The recovery loop: no accepted job is lost or silently stuck.

Runs in every worker process, at start and then every `QUIRE_RECOVERY_INTERVAL_SECONDS`. The
processes take turns through a lock in Redis that expires after one interval, so there is one pass
per interval however many worker processes there are. Every action is a conditional update, so
passes that do overlap (Redis unreachable, so no turns) are still safe: one wins, the others
change nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

import redis

from quire.db import Database
from quire.documents.storage import Storage
from quire.jobs import states
from quire.jobs.alerts import check_dead_letter_alerts
from quire.jobs.models import JobStatus, utcnow
from quire.jobs.operations import apply_retention, expire_unused_uploads
from quire.jobs.store import expired_leases, overdue_queued, waiting_messages
from quire.metrics import get_metrics
from quire.queue.dispatch import Dispatcher
from quire.settings import Settings
from quire.webhooks.outbox import WebhookOutbox

log = logging.getLogger(__name__)


@dataclass
class RecoveryReport:
    requeued: int = 0
    dead_lettered: int = 0
    republished: int = 0


def requeue_expired_leases(settings: Settings, db: Database, dispatcher: Dispatcher, report: RecoveryReport) -> None:
    """Running jobs whose worker stopped renewing the lease go back to the queue (or dead letter).

    One whose deadline has passed too ends at once: no attempt could start any more.
    """
    for lease in expired_leases(db, utcnow()):
        if lease.past_deadline:
            passed = partial(states.pass_deadline, settings, db, lease.job_id, settings.deadline_policy)
            if dispatcher.record(lease.job_id, passed) is not None:
                report.dead_lettered += 1
            continue
        release = partial(
            states.release_expired_lease,
            settings,
            db,
            lease.job_id,
            budget_left=lease.budget_left,
            refund=lease.isolated,
        )
        # Out of attempts, the job is dead-lettered instead and no message goes out.
        moved = dispatcher.move(lease.job_id, release, sends=lambda job: job.status == JobStatus.QUEUED).moved
        if moved is None:
            continue
        get_metrics().lease_recoveries.inc()
        if moved.status == JobStatus.QUEUED:
            report.requeued += 1
        else:
            report.dead_lettered += 1


def _republish(db: Database, job_id: str, old_message_id: str | None, message_id: str) -> bool | None:
    return states.republish(db, job_id, old_message_id, message_id) or None


def recover_once(settings: Settings, db: Database, dispatcher: Dispatcher, reclaim: bool = True) -> RecoveryReport:
    """One pass: expired leases, deadlines passed in the queue, messages Redis lost; with `reclaim`,
    messages that dead workers took, given back."""
    report = RecoveryReport()
    requeue_expired_leases(settings, db, dispatcher, report)
    now = utcnow()
    for job_id in overdue_queued(db, now):
        if dispatcher.record(job_id, partial(states.expire_deadline, settings, db, job_id)) is not None:
            report.dead_lettered += 1
    waiting = waiting_messages(db, now, now - timedelta(seconds=settings.republish_after_seconds))
    if waiting:
        present = dispatcher.held([message_id or "" for _, message_id in waiting])
        for (job_id, message_id), is_present in zip(waiting, present, strict=True):
            if is_present:
                continue
            republished = dispatcher.move(job_id, partial(_republish, db, job_id, message_id))
            if republished.sent:
                report.republished += 1
        if reclaim and any(present):
            # Overdue yet held: perhaps by a worker that died holding it. Have it given back.
            dispatcher.reclaim()
    if report.requeued or report.dead_lettered or report.republished:
        log.info("recovery: %s", report)
    return report


def housekeeping(settings: Settings, storage: Storage, db: Database) -> None:
    """Retention, upload expiry and the dead-letter alert: slower duties that ride on the recovery loop."""
    apply_retention(storage, db, settings.retention_days)
    expire_unused_uploads(storage, db, settings.upload_expiry_hours)
    check_dead_letter_alerts(db, settings)


TURN_KEY = "quire:recovery:turn"


def my_turn(client: redis.Redis[bytes] | None, interval: float, outage: Outage | None = None) -> bool:
    """Whether this process makes this interval's pass: it takes a lock that is never released but
    expires after the interval, so the next pass is due just as the next interval begins. Without
    Redis every process takes its turn (and `outage` hears of it)."""
    if client is None:
        return True
    try:
        return bool(client.lock(TURN_KEY, timeout=interval, blocking=False).acquire())
    except (redis.RedisError, OSError):
        if outage is not None:
            outage.seen()
        return True


@dataclass
class Outage:
    """When this loop last found Redis unreachable.

    Dramatiq takes a worker whose heartbeat is older than its timeout for dead. Right after an
    outage that long every worker looks dead, live ones included, until each fetches again; so
    recovery has nothing given back (`reclaim`) until Redis has been reachable that long.
    """

    heartbeat_timeout_s: float
    last_seen: float | None = None

    def seen(self) -> None:
        self.last_seen = time.monotonic()

    def over(self) -> bool:
        return self.last_seen is None or time.monotonic() - self.last_seen > self.heartbeat_timeout_s


def run_recovery_loop(
    settings: Settings,
    db: Database,
    storage: Storage,
    stop: threading.Event,
    dispatcher: Dispatcher,
    webhooks: WebhookOutbox | None = None,
    client: redis.Redis[bytes] | None = None,
    finish_batches: Callable[[], object] | None = None,
) -> None:
    """Recover at once, then every interval until `stop` is set, taking turns with the other
    worker processes through `client`. Survives Redis and DB outages."""
    interval = settings.recovery_interval_seconds
    outage = Outage(settings.broker_heartbeat_timeout_ms / 1000)
    while not stop.is_set():
        if not my_turn(client, interval, outage):
            stop.wait(interval)
            continue
        reclaim = outage.over()
        duties: list[tuple[str, Callable[[], object]]] = [
            ("recover_once", partial(recover_once, settings, db, dispatcher, reclaim)),
            ("housekeeping", partial(housekeeping, settings, storage, db)),
        ]
        if webhooks is not None:
            # Webhook deliveries recorded but never published (the process died after the commit),
            # or whose message Redis lost.
            duties.append(("webhooks", partial(webhooks.republish_lost, reclaim)))
        if finish_batches is not None:
            # Batches whose last job finished in a process that died before marking them completed.
            duties.append(("batches", finish_batches))
        for name, duty in duties:
            try:
                duty()
            except (redis.RedisError, OSError) as exc:
                outage.seen()
                log.warning("%s skipped, a service is unreachable: %s", name, exc)
            except Exception:
                log.exception("%s failed; will try again", name)
        stop.wait(interval)
