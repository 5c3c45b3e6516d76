"""The recovery loop: no accepted job is lost or silently stuck.

Runs in every worker process, at start and then every `QUIRE_RECOVERY_INTERVAL_SECONDS`. Every
action is a conditional update, so several workers running it at once is safe: one wins, the
others change nothing.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import timedelta

import redis

from quire import metrics
from quire.jobs import states
from quire.jobs.alerts import check_dead_letter_alerts
from quire.jobs.models import JobStatus, utcnow
from quire.jobs.operations import apply_retention, expire_unused_uploads
from quire.jobs.store import expired_leases, overdue_queued, waiting_messages
from quire.queue.actors import new_message, publish
from quire.queue.broker import broker
from quire.settings import get_settings

log = logging.getLogger(__name__)


@dataclass
class RecoveryReport:
    requeued: int = 0
    dead_lettered: int = 0
    republished: int = 0


def requeue_expired_leases(report: RecoveryReport) -> None:
    """Running jobs whose worker stopped renewing the lease go back to the queue (or dead letter).

    One whose deadline has passed too ends at once: no attempt could start any more.
    """
    for lease in expired_leases(utcnow()):
        if lease.past_deadline:
            if states.pass_deadline(lease.job_id, get_settings().deadline_policy) is not None:
                report.dead_lettered += 1
            continue
        message = new_message(lease.job_id)
        moved = states.release_expired_lease(lease.job_id, message.message_id, lease.budget_left, refund=lease.isolated)
        if moved is None:
            continue
        metrics.LEASE_RECOVERIES.inc()
        if moved.status == JobStatus.QUEUED:
            report.requeued += 1
            publish(message)
        else:
            report.dead_lettered += 1


def recover_once() -> RecoveryReport:
    """One pass: expired leases, deadlines passed in the queue, messages Redis lost."""
    settings = get_settings()
    report = RecoveryReport()
    requeue_expired_leases(report)
    now = utcnow()
    for job_id in overdue_queued(now):
        if states.expire_deadline(job_id) is not None:
            report.dead_lettered += 1
    waiting = waiting_messages(now, now - timedelta(seconds=settings.republish_after_seconds))
    if waiting:
        present = broker.messages_present([message_id or "" for _, message_id in waiting])
        for (job_id, message_id), is_present in zip(waiting, present, strict=True):
            if is_present:
                continue
            message = new_message(job_id)
            if states.republish(job_id, message_id, message.message_id) and publish(message):
                report.republished += 1
    if report.requeued or report.dead_lettered or report.republished:
        log.info("recovery: %s", report)
    return report


def housekeeping() -> None:
    """Retention, upload expiry and the dead-letter alert: slower duties that ride on the recovery loop."""
    settings = get_settings()
    apply_retention(settings.retention_days)
    expire_unused_uploads(settings.upload_expiry_hours)
    check_dead_letter_alerts(settings)


def run_recovery_loop(stop: threading.Event) -> None:
    """Recover at once, then every interval until `stop` is set. Survives Redis and DB outages."""
    interval = get_settings().recovery_interval_seconds
    while not stop.is_set():
        for duty in (recover_once, housekeeping):
            try:
                duty()
            except (redis.RedisError, OSError) as exc:
                log.warning("%s skipped, a service is unreachable: %s", duty.__name__, exc)
            except Exception:
                log.exception("%s failed; will try again", duty.__name__)
        stop.wait(interval)
