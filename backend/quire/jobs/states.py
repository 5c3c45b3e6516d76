"""The job state machine: the only code that writes a job's status.

Each transition is one function and one transaction: a conditional UPDATE that names the states
the job may be in (and, for a worker's writes, the attempt and lease owner), plus one event row.
When the UPDATE matches no row someone else already moved the job; the transition changes
nothing, logs it and returns None.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, update
from sqlmodel import Session, col, select

from quire import metrics
from quire.db import session_scope
from quire.errors import ErrorCode
from quire.jobs.models import Artifact, EventType, Job, JobEvent, JobStatus, utcnow

log = logging.getLogger(__name__)

S = JobStatus
# DESIGN section 3: the only moves a job can make.
ALLOWED: dict[JobStatus, frozenset[JobStatus]] = {
    S.QUEUED: frozenset({S.RUNNING, S.CANCELLED, S.DEAD_LETTER}),
    S.RUNNING: frozenset({S.COMPLETED, S.QUEUED, S.DEAD_LETTER, S.CANCELLED}),
    S.COMPLETED: frozenset(),
    S.DEAD_LETTER: frozenset({S.QUEUED}),
    S.CANCELLED: frozenset({S.QUEUED}),
}
TERMINAL: frozenset[JobStatus] = frozenset({S.COMPLETED, S.DEAD_LETTER, S.CANCELLED})


class IllegalTransition(Exception):
    """Raised at import time if a transition below names a move the table does not allow."""


@dataclass(frozen=True)
class AttemptRef:
    """Names one attempt. Every write a worker makes is fenced by it."""

    job_id: str
    attempt: int
    worker_id: str


def _check(sources: Iterable[JobStatus], target: JobStatus) -> tuple[JobStatus, ...]:
    sources = tuple(sources)
    for source in sources:
        if target not in ALLOWED[source]:
            raise IllegalTransition(f"{source} -> {target}")
    return sources


def _move(
    session: Session,
    job_id: str,
    *,
    sources: Sequence[JobStatus],
    target: JobStatus,
    event: EventType,
    guard: Sequence[ColumnElement[bool]] = (),
    values: dict[str, Any] | None = None,
    event_attempt: int | None = None,
    error: ErrorCode | None = None,
    detail: str | None = None,
    operator_detail: str | None = None,
    now: datetime | None = None,
) -> Job | None:
    """Conditionally move one job and append its event; None when the job was not where expected."""
    now = now or utcnow()
    changes = {"status": target, "updated_at": now, **(values or {})}
    if error is not None:
        changes["error_code"] = error
    stmt = (
        update(Job)
        .where(col(Job.id) == job_id, col(Job.status).in_(sources), *guard)
        .values(**changes)
        .returning(Job)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    job = session.scalars(stmt).one_or_none()
    if job is None:
        log.info("job %s: %s skipped, the job is no longer %s", job_id, event, "/".join(sources))
        return None
    metrics.TRANSITIONS.labels(event.value).inc()
    if target == S.DEAD_LETTER:
        metrics.DEAD_LETTERS.labels(error or "unknown", job.workflow).inc()
    elif target == S.QUEUED and event == EventType.QUEUED and error is not None:
        metrics.RETRIES.labels(error).inc()
    session.add(
        JobEvent(
            job_id=job_id,
            type=event,
            at=now,
            attempt=job.attempt if event_attempt is None else event_attempt,
            error=error,
            detail=detail,
            operator_detail=operator_detail[:2000] if operator_detail else None,
        )
    )
    return job


def _fence(ref: AttemptRef) -> list[ColumnElement[bool]]:
    return [col(Job.attempt) == ref.attempt, col(Job.worker_id) == ref.worker_id]


_QUEUED = _check([S.RUNNING], S.QUEUED)
_CLAIM = _check([S.QUEUED], S.RUNNING)
_COMPLETE = _check([S.RUNNING], S.COMPLETED)
_DEAD_FROM_ATTEMPT = _check([S.RUNNING], S.DEAD_LETTER)
_DEAD_WHILE_QUEUED = _check([S.QUEUED], S.DEAD_LETTER)
_CANCEL = _check([S.QUEUED, S.RUNNING], S.CANCELLED)
_REPLAY = _check([S.DEAD_LETTER, S.CANCELLED], S.QUEUED)


def accept(job: Job, message_id: str | None) -> Job:
    """Record a new job as queued, with its first event."""
    now = utcnow()
    job.status = S.QUEUED
    job.attempt = 0
    job.message_id = message_id
    job.created_at = job.updated_at = job.available_at = now
    with session_scope() as session:
        session.add(job)
        session.add(JobEvent(job_id=job.id, type=EventType.QUEUED, at=now, attempt=0))
    metrics.TRANSITIONS.labels(EventType.QUEUED.value).inc()
    return job


def claim(job_id: str, worker_id: str, lease_s: float) -> Job | None:
    """Start the next attempt: queued -> running under a lease held by `worker_id`."""
    now = utcnow()
    with session_scope() as session:
        return _move(
            session,
            job_id,
            sources=_CLAIM,
            target=S.RUNNING,
            event=EventType.RUNNING,
            guard=[col(Job.available_at) <= now, col(Job.deadline_at) > now],
            values={
                "attempt": Job.attempt + 1,
                "worker_id": worker_id,
                "lease_until": now + timedelta(seconds=lease_s),
                "message_id": None,
            },
            now=now,
        )


def complete(ref: AttemptRef, artifacts: Sequence[Artifact], provenance: dict[str, str]) -> Job | None:
    """Publish the attempt's staged artifacts and mark the job completed, if the attempt still owns it."""
    with session_scope() as session:
        job = _move(
            session,
            ref.job_id,
            sources=_COMPLETE,
            target=S.COMPLETED,
            event=EventType.COMPLETED,
            guard=_fence(ref),
            values={"lease_until": None, "error_code": None, **provenance},
        )
        if job is not None:
            session.add_all(artifacts)
        return job


def retry(
    ref: AttemptRef, code: ErrorCode, delay_s: float, message_id: str, detail: str, operator_detail: str | None = None
) -> Job | None:
    """Put a failed attempt's job back in the queue, available again after `delay_s`."""
    now = utcnow()
    with session_scope() as session:
        return _move(
            session,
            ref.job_id,
            sources=_QUEUED,
            target=S.QUEUED,
            event=EventType.QUEUED,
            guard=_fence(ref),
            values={
                "available_at": now + timedelta(seconds=delay_s),
                "lease_until": None,
                "message_id": message_id,
            },
            error=code,
            detail=detail,
            operator_detail=operator_detail,
            now=now,
        )


def dead_letter(ref: AttemptRef, code: ErrorCode, detail: str, operator_detail: str | None = None) -> Job | None:
    """End a running attempt's job with no further automatic retry."""
    with session_scope() as session:
        return _move(
            session,
            ref.job_id,
            sources=_DEAD_FROM_ATTEMPT,
            target=S.DEAD_LETTER,
            event=EventType.DEAD_LETTER,
            guard=_fence(ref),
            values={"lease_until": None},
            error=code,
            detail=detail,
            operator_detail=operator_detail,
        )


def expire_deadline(job_id: str) -> Job | None:
    """Dead-letter a queued job whose deadline has passed before an attempt could start."""
    now = utcnow()
    with session_scope() as session:
        return _move(
            session,
            job_id,
            sources=_DEAD_WHILE_QUEUED,
            target=S.DEAD_LETTER,
            event=EventType.DEAD_LETTER,
            guard=[col(Job.deadline_at) <= now],
            values={"message_id": None},
            error=ErrorCode.DEADLINE_EXCEEDED,
            detail="The job was not finished before its deadline.",
            now=now,
        )


def release_expired_lease(job_id: str, message_id: str, budget_left: bool, refund: bool = False) -> Job | None:
    """Recover a running job whose worker stopped renewing its lease.

    The lost attempt counts against the budget as `worker_lost`: the job is requeued when budget
    remains, and dead-lettered otherwise, so a job that kills every worker still ends. With
    `refund` (the attempt ran in a process of its own, so the job did not kill the worker) the
    loss is not counted: the budget window moves up by one.
    """
    now = utcnow()
    expired = [col(Job.lease_until) < now]
    detail = "The worker stopped before finishing the attempt."
    with session_scope() as session:
        if refund:
            return _move(
                session,
                job_id,
                sources=_QUEUED,
                target=S.QUEUED,
                event=EventType.REQUEUED_AFTER_RESTART,
                guard=expired,
                values={
                    "lease_until": None,
                    "available_at": now,
                    "message_id": message_id,
                    "attempt_floor": Job.attempt_floor + 1,
                },
                error=ErrorCode.WORKER_LOST,
                detail="The worker running this job's isolated attempt stopped; the loss is not counted.",
                now=now,
            )
        if budget_left:
            return _move(
                session,
                job_id,
                sources=_QUEUED,
                target=S.QUEUED,
                event=EventType.REQUEUED_AFTER_RESTART,
                guard=expired,
                values={"lease_until": None, "available_at": now, "message_id": message_id},
                error=ErrorCode.WORKER_LOST,
                detail=detail,
                now=now,
            )
        return _move(
            session,
            job_id,
            sources=_DEAD_FROM_ATTEMPT,
            target=S.DEAD_LETTER,
            event=EventType.DEAD_LETTER,
            guard=expired,
            values={"lease_until": None},
            error=ErrorCode.WORKER_LOST,
            detail=detail,
            now=now,
        )


def release(ref: AttemptRef, message_id: str) -> Job | None:
    """Hand a running attempt back to the queue at once because its worker is shutting down."""
    now = utcnow()
    with session_scope() as session:
        return _move(
            session,
            ref.job_id,
            sources=_QUEUED,
            target=S.QUEUED,
            event=EventType.REQUEUED_AFTER_RESTART,
            guard=_fence(ref),
            values={"lease_until": None, "available_at": now, "message_id": message_id},
            detail="The worker shut down before finishing; another worker continues the job.",
            now=now,
        )


def cancel(job_id: str, detail: str = "Cancelled on request.") -> Job | None:
    """Stop a queued or running job; a running attempt's later writes are fenced out."""
    with session_scope() as session:
        return _move(
            session,
            job_id,
            sources=_CANCEL,
            target=S.CANCELLED,
            event=EventType.CANCELLED,
            values={"lease_until": None, "message_id": None},
            error=ErrorCode.CANCELLED,
            detail=detail,
        )


def replay(job_id: str, message_id: str) -> Job | None:
    """Queue a dead-lettered or cancelled job again with a fresh attempt budget and deadline."""
    now = utcnow()
    with session_scope() as session:
        current = session.get(Job, job_id)
        if current is None:
            return None
        return _move(
            session,
            job_id,
            sources=_REPLAY,
            target=S.QUEUED,
            event=EventType.REPLAYED,
            values={
                "attempt_floor": Job.attempt,
                "available_at": now,
                "deadline_at": now + timedelta(seconds=current.deadline_s),
                "worker_id": None,
                "lease_until": None,
                "message_id": message_id,
                "error_code": None,
            },
            now=now,
        )


def extend_leases(worker_id: str, job_ids: Sequence[str], lease_s: float) -> int:
    """Heartbeat: push out the lease of every job this worker holds. Not a transition."""
    if not job_ids:
        return 0
    with session_scope() as session:
        result = session.execute(
            update(Job)
            .where(
                col(Job.id).in_(job_ids),
                col(Job.worker_id) == worker_id,
                col(Job.status) == S.RUNNING,
            )
            .values(lease_until=utcnow() + timedelta(seconds=lease_s))
            .execution_options(synchronize_session=False)
        )
        return int(getattr(result, "rowcount", 0))


def republish(job_id: str, old_message_id: str | None, message_id: str) -> bool:
    """Record a new message for a queued job whose message was lost. Not a transition."""
    with session_scope() as session:
        stmt = (
            update(Job)
            .where(
                col(Job.id) == job_id,
                col(Job.status) == S.QUEUED,
                col(Job.message_id) == old_message_id if old_message_id is not None else col(Job.message_id).is_(None),
            )
            .values(message_id=message_id)
            .execution_options(synchronize_session=False)
        )
        return int(getattr(session.execute(stmt), "rowcount", 0)) == 1


def events_of(session: Session, job_id: str) -> list[JobEvent]:
    return list(session.exec(select(JobEvent).where(JobEvent.job_id == job_id).order_by(col(JobEvent.id))).all())
