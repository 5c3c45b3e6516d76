"""The job state machine: the only code that writes a job's status.

Each transition is one function and one transaction: a conditional UPDATE that names the states
the job may be in (and, for a worker's writes, the attempt and lease owner), plus one event row.
When the UPDATE matches no row someone else already moved the job; the transition changes
nothing, logs it and returns None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, Connection, Executable, Table, bindparam, case, insert, update
from sqlmodel import Session, SQLModel, col, select

from quire.db import Database
from quire.errors import ErrorCode
from quire.jobs.models import Artifact, EventType, Job, JobEvent, JobStatus, utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.metrics import get_metrics
from quire.settings import Settings
from quire.webhooks.deliveries import record_job_event

log = logging.getLogger(__name__)

S = JobStatus
# The only moves a job can make (docs/architecture.md, "The state machine").
ALLOWED: dict[JobStatus, frozenset[JobStatus]] = {
    S.QUEUED: frozenset({S.RUNNING, S.CANCELLED, S.DEAD_LETTER}),
    S.RUNNING: frozenset({S.COMPLETED, S.QUEUED, S.DEAD_LETTER, S.CANCELLED}),
    S.COMPLETED: frozenset(),
    S.DEAD_LETTER: frozenset({S.QUEUED}),
    S.CANCELLED: frozenset({S.QUEUED}),
}
TERMINAL: frozenset[JobStatus] = frozenset({S.COMPLETED, S.DEAD_LETTER, S.CANCELLED})
# The ends a job's webhook reports (job.completed, job.dead_letter); a cancel was asked for.
_WEBHOOK_TARGETS: frozenset[JobStatus] = frozenset({S.COMPLETED, S.DEAD_LETTER})


JOB: Table = Job.__table__  # type: ignore[attr-defined]
EVENT: Table = JobEvent.__table__  # type: ignore[attr-defined]


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
    settings: Settings,
    session: Session,
    job_id: str,
    *,
    sources: Sequence[JobStatus],
    target: JobStatus,
    event: EventType,
    guard: Sequence[ColumnElement[bool]] = (),
    values: dict[str, Any] | None = None,
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
    stmt = update(JOB).where(JOB.c.id == job_id, _status_in(sources), *guard).values(**changes).returning(*JOB.c)
    return _apply(settings, session, stmt, {}, job_id, sources, target, event, now, error, detail, operator_detail)


def _apply(
    settings: Settings,
    session: Session | Connection,
    stmt: Executable,
    params: dict[str, Any],
    job_id: str,
    sources: Sequence[JobStatus],
    target: JobStatus,
    event: EventType,
    now: datetime,
    error: ErrorCode | None = None,
    detail: str | None = None,
    operator_detail: str | None = None,
) -> Job | None:
    """Run one conditional UPDATE ... RETURNING and, when it matched, append the event.

    SQLAlchemy Core on the session's connection: these statements run twice per job, and the
    ORM's bulk-update and flush machinery cost more than the statements themselves.
    """
    connection = session.connection() if isinstance(session, Session) else session
    row = connection.execute(stmt, params).one_or_none()
    if row is None:
        log.info("job %s: %s skipped, the job is no longer %s", job_id, event, "/".join(sources))
        return None
    # A snapshot of the row as this transition left it; model_construct skips validation and the
    # ORM's per-attribute instrumentation, which cost more than the UPDATE itself.
    job = Job.model_construct(**row._mapping)
    instruments = get_metrics()
    instruments.transitions.labels(event.value).inc()
    if target == S.DEAD_LETTER:
        instruments.dead_letters.labels(error or "unknown", job.workflow).inc()
    elif target == S.QUEUED and event == EventType.QUEUED and error is not None:
        instruments.retries.labels(error).inc()
    event_row = {
        "job_id": job_id,
        "type": event,
        "at": now,
        "attempt": job.attempt,
        "error": error,
        "detail": detail,
        "operator_detail": operator_detail[:2000] if operator_detail else None,
    }
    connection.execute(_INSERT_EVENT, event_row)
    if job.callback_url and target in _WEBHOOK_TARGETS:
        # In this transaction, so a webhook is recorded exactly when the job ends, even if the
        # process dies right after; the dispatcher's after-commit hook sends it.
        record_job_event(settings, connection, job, now)
    return job


def _status_in(sources: Sequence[JobStatus]) -> ColumnElement[bool]:
    # Most moves have one source state; an equality needs no per-call expansion of an IN list.
    return JOB.c.status == sources[0] if len(sources) == 1 else JOB.c.status.in_(sources)


def _insert(session: Session | Connection, rows: Sequence[SQLModel]) -> None:
    """Insert new rows in one statement, without the ORM's unit-of-work flush."""
    table: Table = type(rows[0]).__table__  # type: ignore[attr-defined]
    connection = session.connection() if isinstance(session, Session) else session
    connection.execute(insert(table), [{c.name: getattr(row, c.name) for c in table.columns} for row in rows])


def _fence(ref: AttemptRef) -> list[ColumnElement[bool]]:
    return [JOB.c.attempt == ref.attempt, JOB.c.worker_id == ref.worker_id]


_QUEUED = _check([S.RUNNING], S.QUEUED)
_CLAIM = _check([S.QUEUED], S.RUNNING)
_COMPLETE = _check([S.RUNNING], S.COMPLETED)
_DEAD_FROM_ATTEMPT = _check([S.RUNNING], S.DEAD_LETTER)
_DEAD_WHILE_QUEUED = _check([S.QUEUED], S.DEAD_LETTER)
_CANCEL = _check([S.QUEUED, S.RUNNING], S.CANCELLED)
_REPLAY = _check([S.DEAD_LETTER, S.CANCELLED], S.QUEUED)

# The two moves every job makes, built once with bound parameters, so that their SQL and cache key
# are computed a single time rather than on each call.
_INSERT_EVENT = insert(EVENT)


def _param(name: str, column: str) -> BindParameter[Any]:
    return bindparam(name, type_=JOB.c[column].type)


def _lease_until(lease: BindParameter[Any], capped: bool) -> ColumnElement[Any]:
    """A new lease end; `capped` never lets it run past the job's deadline."""
    return case((JOB.c.deadline_at < lease, JOB.c.deadline_at), else_=lease) if capped else lease


def _claim_statement(capped: bool) -> Executable:
    return (
        update(JOB)
        .where(
            JOB.c.id == _param("p_job", "id"),
            _status_in(_CLAIM),
            JOB.c.available_at <= _param("p_now", "available_at"),
            JOB.c.deadline_at > _param("p_now", "deadline_at"),
        )
        .values(
            status=S.RUNNING,
            updated_at=_param("p_now", "updated_at"),
            attempt=JOB.c.attempt + 1,
            worker_id=_param("p_worker", "worker_id"),
            lease_until=_lease_until(_param("p_lease", "lease_until"), capped),
            message_id=None,
            progress=None,
        )
        .returning(*JOB.c)
    )


_CLAIM_STMTS = {capped: _claim_statement(capped) for capped in (False, True)}


def _complete_statement(with_progress: bool) -> Executable:
    values: dict[str, Any] = {
        "status": S.COMPLETED,
        "updated_at": _param("p_now", "updated_at"),
        "lease_until": None,
        "error_code": None,
        "provider": _param("p_provider", "provider"),
        "model_name": _param("p_model", "model_name"),
        "prompt_version": _param("p_prompt", "prompt_version"),
    }
    if with_progress:
        values["progress"] = _param("p_progress", "progress")
    return (
        update(JOB)
        .where(
            JOB.c.id == _param("p_job", "id"),
            _status_in(_COMPLETE),
            JOB.c.attempt == _param("p_attempt", "attempt"),
            JOB.c.worker_id == _param("p_worker", "worker_id"),
        )
        .values(**values)
        .returning(*JOB.c)
    )


_COMPLETE_STMT = _complete_statement(with_progress=False)
# The attempt's last progress, when it finished too soon for that progress to be written on its own.
_COMPLETE_WITH_PROGRESS_STMT = _complete_statement(with_progress=True)


def accept(db: Database, job: Job, message_id: str | None, before: Callable[[Session], None] | None = None) -> Job:
    """Record a new job as queued, with its first event; `before(session)` runs first in the same
    session (`submit` reads the account's default webhook URL there: one session a job)."""
    now = utcnow()
    job.status = S.QUEUED
    job.attempt = 0
    job.message_id = message_id
    job.created_at = job.updated_at = job.available_at = now
    with db.session() as session:
        if before is not None:
            before(session)
        _insert(session, [job])
        session.connection().execute(
            _INSERT_EVENT, {"job_id": job.id, "type": EventType.QUEUED, "at": now, "attempt": 0}
        )
    get_metrics().transitions.labels(EventType.QUEUED.value).inc()
    return job


def accept_many(
    db: Database,
    jobs: Sequence[Mapping[str, Any]],
    message_ids: Sequence[str],
    before: Callable[[Session], None] | None = None,
) -> list[Job]:
    """`accept` for many new jobs, given as their fields, in one transaction: each queued with its
    message id and its first event.

    `before(session)` runs first in the same transaction (the batch's uploads take their stored
    size and digest there, so a job never names an upload that is not whole). The jobs are built
    without validation or ORM instrumentation, which would cost more than the rest of a batch's
    admission: their fields come from `jobs.service`, and the rows go in by one INSERT.
    """
    start = utcnow()
    accepted = []
    for i, (fields, message_id) in enumerate(zip(jobs, message_ids, strict=True)):
        # A microsecond apart, so that (created_at, id) still lists them in the order given.
        at = start + timedelta(microseconds=i)
        accepted.append(
            Job.model_construct(
                **{
                    **fields,
                    "status": S.QUEUED,
                    "attempt": 0,
                    "message_id": message_id,
                    "created_at": at,
                    "updated_at": at,
                    "available_at": at,
                }
            )
        )
    if not accepted:
        return []
    with db.session() as session:
        if before is not None:
            before(session)
        _insert(session, accepted)
        session.connection().execute(
            _INSERT_EVENT,
            [{"job_id": job.id, "type": EventType.QUEUED, "at": job.created_at, "attempt": 0} for job in accepted],
        )
    get_metrics().transitions.labels(EventType.QUEUED.value).inc(len(accepted))
    return accepted


def claim(
    settings: Settings, db: Database, job_id: str, worker_id: str, lease_s: float, lease_past_deadline: bool = False
) -> Job | None:
    """Start the next attempt: queued -> running under a lease held by `worker_id`.

    The lease ends at the job's deadline at the latest, unless `lease_past_deadline` (policy finish).
    """
    now = utcnow()
    params = {"p_job": job_id, "p_now": now, "p_worker": worker_id, "p_lease": now + timedelta(seconds=lease_s)}
    stmt = _CLAIM_STMTS[not lease_past_deadline]
    with db.connection() as connection:
        return _apply(settings, connection, stmt, params, job_id, _CLAIM, S.RUNNING, EventType.RUNNING, now)


def complete(
    settings: Settings,
    db: Database,
    ref: AttemptRef,
    artifacts: Sequence[Artifact],
    provenance: dict[str, str],
    progress: Mapping[str, object] | None = None,
) -> Job | None:
    """Publish the attempt's staged artifacts and mark the job completed, if the attempt still owns
    it; with `progress`, the attempt's last progress is recorded by the same write."""
    now = utcnow()
    params: dict[str, Any] = {
        "p_job": ref.job_id,
        "p_now": now,
        "p_attempt": ref.attempt,
        "p_worker": ref.worker_id,
        "p_provider": provenance.get("provider"),
        "p_model": provenance.get("model_name"),
        "p_prompt": provenance.get("prompt_version"),
    }
    with db.connection() as connection:
        stmt = _COMPLETE_STMT
        if progress is not None:
            stmt, params["p_progress"] = _COMPLETE_WITH_PROGRESS_STMT, dict(progress)
        job = _apply(settings, connection, stmt, params, ref.job_id, _COMPLETE, S.COMPLETED, EventType.COMPLETED, now)
        _publish(connection, job, artifacts)
        return job


def _publish(session: Session | Connection, job: Job | None, artifacts: Sequence[Artifact]) -> None:
    """Record an attempt's staged files with the transition that ended it, if that transition moved
    the job: a fenced-out attempt's files are never published."""
    if job is not None and artifacts:
        _insert(session, artifacts)


def retry(
    settings: Settings,
    db: Database,
    ref: AttemptRef,
    code: ErrorCode,
    delay_s: float,
    message_id: str,
    detail: str,
    operator_detail: str | None = None,
    evidence: Sequence[Artifact] = (),
) -> Job | None:
    """Put a failed attempt's job back in the queue, available again after `delay_s`, publishing
    the `evidence` the attempt staged (operator-only files)."""
    now = utcnow()
    with db.session() as session:
        job = _move(
            settings,
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
        _publish(session, job, evidence)
        return job


def dead_letter(
    settings: Settings,
    db: Database,
    ref: AttemptRef,
    code: ErrorCode,
    detail: str,
    operator_detail: str | None = None,
    evidence: Sequence[Artifact] = (),
) -> Job | None:
    """End a running attempt's job with no further automatic retry, publishing the `evidence`
    the attempt staged (operator-only files)."""
    with db.session() as session:
        job = _move(
            settings,
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
        _publish(session, job, evidence)
        return job


def expire_deadline(settings: Settings, db: Database, job_id: str) -> Job | None:
    """Dead-letter a queued job whose deadline has passed before an attempt could start."""
    now = utcnow()
    with db.session() as session:
        return _move(
            settings,
            session,
            job_id,
            sources=_DEAD_WHILE_QUEUED,
            target=S.DEAD_LETTER,
            event=EventType.DEAD_LETTER,
            guard=[JOB.c.deadline_at <= now],
            values={"message_id": None},
            error=ErrorCode.DEADLINE_EXCEEDED,
            detail="The job was not finished before its deadline.",
            now=now,
        )


def pass_deadline(
    settings: Settings, db: Database, job_id: str, policy: DeadlinePolicy, ref: AttemptRef | None = None
) -> Job | None:
    """The job's deadline passed while it was running: record the moment and the policy applied.

    With `ref`, the attempt's own worker reports it: under `stop` the job is dead-lettered with
    `deadline_exceeded` (the attempt's later writes are fenced out), under `finish` it keeps
    running. Without `ref`, the recovery loop found the lease expired too: the attempt is gone,
    so whatever the policy the job ends, as there is no time left for another. One transaction:
    the `deadline_passed` event, then the `dead_letter` one when the job ends.
    """
    now = utcnow()
    guard = _fence(ref) if ref is not None else [JOB.c.lease_until < now]
    ends = ref is None or policy is DeadlinePolicy.STOP
    if ref is None:
        detail = f"The deadline passed after the attempt was lost with its worker (policy: {policy})."
    elif ends:
        detail = f"The deadline passed while attempt {ref.attempt} was running (policy: stop): the attempt is stopped."
    else:
        detail = f"The deadline passed while attempt {ref.attempt} was running (policy: finish): it may finish."
    with db.session() as session:
        stmt = (
            update(JOB)
            .where(JOB.c.id == job_id, JOB.c.status == S.RUNNING, JOB.c.deadline_at <= now, *guard)
            .values(updated_at=now)
            .returning(*JOB.c)
        )
        noted = _apply(
            settings, session, stmt, {}, job_id, [S.RUNNING], S.RUNNING, EventType.DEADLINE_PASSED, now, None, detail
        )
        if noted is None or not ends:
            return noted
        return _move(
            settings,
            session,
            job_id,
            sources=_DEAD_FROM_ATTEMPT,
            target=S.DEAD_LETTER,
            event=EventType.DEAD_LETTER,
            values={"lease_until": None},
            error=ErrorCode.DEADLINE_EXCEEDED,
            detail="The job was not finished before its deadline.",
            now=now,
        )


def release_expired_lease(
    settings: Settings, db: Database, job_id: str, message_id: str, budget_left: bool, refund: bool = False
) -> Job | None:
    """Recover a running job whose worker stopped renewing its lease.

    The lost attempt counts against the budget as `worker_lost`: the job is requeued when budget
    remains, and dead-lettered otherwise, so a job that kills every worker still ends. With
    `refund` (the attempt ran in a process of its own, so the job did not kill the worker) the
    loss is not counted: the budget window moves up by one.
    """
    now = utcnow()
    expired = [JOB.c.lease_until < now]
    detail = "The worker stopped before finishing the attempt."
    with db.session() as session:
        if refund or budget_left:
            values: dict[str, Any] = {"lease_until": None, "available_at": now, "message_id": message_id}
            if refund:
                values["attempt_floor"] = JOB.c.attempt_floor + 1
                detail = "The worker running this job's isolated attempt stopped; the loss is not counted."
            return _move(
                settings,
                session,
                job_id,
                sources=_QUEUED,
                target=S.QUEUED,
                event=EventType.REQUEUED_AFTER_RESTART,
                guard=expired,
                values=values,
                error=ErrorCode.WORKER_LOST,
                detail=detail,
                now=now,
            )
        return _move(
            settings,
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


def release(settings: Settings, db: Database, ref: AttemptRef, message_id: str) -> Job | None:
    """Hand a running attempt back to the queue at once because its worker is shutting down."""
    now = utcnow()
    with db.session() as session:
        return _move(
            settings,
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


def cancel(settings: Settings, db: Database, job_id: str, detail: str = "Cancelled on request.") -> Job | None:
    """Stop a queued or running job; a running attempt's later writes are fenced out."""
    with db.session() as session:
        return _move(
            settings,
            session,
            job_id,
            sources=_CANCEL,
            target=S.CANCELLED,
            event=EventType.CANCELLED,
            values={"lease_until": None, "message_id": None},
            error=ErrorCode.CANCELLED,
            detail=detail,
        )


def replay(settings: Settings, db: Database, job_id: str, message_id: str) -> Job | None:
    """Queue a dead-lettered or cancelled job again with a fresh attempt budget and deadline."""
    with db.session() as session:
        return replay_in(settings, session, job_id, message_id)


def replay_in(settings: Settings, session: Session, job_id: str, message_id: str) -> Job | None:
    """`replay` inside the caller's transaction (a group replay moves its cursor in the same one)."""
    now = utcnow()
    current = session.get(Job, job_id)
    if current is None:
        return None
    return _move(
        settings,
        session,
        job_id,
        sources=_REPLAY,
        target=S.QUEUED,
        event=EventType.REPLAYED,
        values={
            "attempt_floor": JOB.c.attempt,
            "available_at": now,
            "deadline_at": now + timedelta(seconds=current.deadline_s),
            "worker_id": None,
            "lease_until": None,
            "message_id": message_id,
            "error_code": None,
        },
        now=now,
    )


def extend_leases(
    db: Database, worker_id: str, job_ids: Sequence[str], lease_s: float, past_deadline: bool = False
) -> int:
    """Heartbeat: push out the lease of every job this worker holds. Not a transition.

    A lease never runs past the job's deadline unless `past_deadline` (policy finish) allows it.
    """
    if not job_ids:
        return 0
    with db.session() as session:
        result = session.execute(
            update(JOB)
            .where(
                JOB.c.id.in_(job_ids),
                JOB.c.worker_id == worker_id,
                JOB.c.status == S.RUNNING,
            )
            .values(lease_until=_lease_until(_param("p_lease", "lease_until"), not past_deadline))
            .execution_options(synchronize_session=False),
            {"p_lease": utcnow() + timedelta(seconds=lease_s)},
        )
        return int(getattr(result, "rowcount", 0))


def report_progress(db: Database, ref: AttemptRef, progress: Mapping[str, object], lease_s: float) -> bool:
    """Record how far an attempt has read, renewing its lease in the same write. Not a transition.

    Fenced by attempt like every worker write: a late or abandoned attempt changes nothing. The
    row's `updated_at` moves, so a cached job view is rebuilt with the new progress.
    """
    now = utcnow()
    with db.session() as session:
        stmt = (
            update(JOB)
            .where(JOB.c.id == ref.job_id, JOB.c.status == S.RUNNING, *_fence(ref))
            .values(progress=progress, lease_until=now + timedelta(seconds=lease_s), updated_at=now)
            .execution_options(synchronize_session=False)
        )
        return int(getattr(session.execute(stmt), "rowcount", 0)) == 1


def republish(db: Database, job_id: str, old_message_id: str | None, message_id: str) -> bool:
    """Record a new message for a queued job whose message was lost. Not a transition."""
    with db.session() as session:
        stmt = (
            update(JOB)
            .where(
                JOB.c.id == job_id,
                JOB.c.status == S.QUEUED,
                JOB.c.message_id == old_message_id if old_message_id is not None else JOB.c.message_id.is_(None),
            )
            .values(message_id=message_id)
            .execution_options(synchronize_session=False)
        )
        return int(getattr(session.execute(stmt), "rowcount", 0)) == 1


def events_of(session: Session, job_id: str) -> list[JobEvent]:
    return list(session.exec(select(JobEvent).where(JobEvent.job_id == job_id).order_by(col(JobEvent.id))).all())
