"""What operators see and do: overview figures, dead-letter groups, job search, purge and
retention (group replays are jobs/replays.py). Every status change still goes through `states` (via `service`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, update
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from quire.accounts.models import User
from quire.db import Database
from quire.documents.storage import Storage, StorageUnavailable
from quire.jobs import service, store
from quire.jobs.models import (
    Artifact,
    EventType,
    Job,
    JobEvent,
    JobStatus,
    Upload,
    WorkerProcess,
    artifacts_prefix,
    utcnow,
)
from quire.jobs.paging import NEWEST_FIRST, encode_cursor, older_than
from quire.jobs.states import TERMINAL
from quire.jobs.store import iso
from quire.queue.dispatch import Dispatcher
from quire.settings import Settings
from quire.views import View

log = logging.getLogger(__name__)


# Overview -----------------------------------------------------------------------------------------


class WorkflowCount(View, frozen=True):
    workflow: str
    status: str
    count: int


class HeldAttempt(View, frozen=True):
    job_id: str
    lease_until: str | None
    attempt: int


class WorkerView(View, frozen=True):
    """A worker process alive within the heartbeat window, and the attempts it holds."""

    id: str
    hostname: str
    pid: int
    threads: int
    last_heartbeat_at: str | None
    jobs: list[HeldAttempt]


class Overview(View, frozen=True):
    by_state: dict[str, int]
    by_workflow: list[WorkflowCount]
    queue_depth: int
    oldest_queued_age_s: float
    jobs_per_minute: float
    workers: list[WorkerView]


def overview(db: Database, heartbeat_window_s: float) -> Overview:
    """Counts by state and workflow, the queue, throughput, and the workers alive."""
    now = utcnow()
    with db.session() as session:
        by_state = {str(s): int(n) for s, n in session.exec(select(Job.status, func.count()).group_by(Job.status))}
        by_workflow = [
            WorkflowCount(workflow=w, status=str(s), count=int(n))
            for w, s, n in session.exec(
                select(Job.workflow, Job.status, func.count()).group_by(Job.workflow, Job.status).order_by(Job.workflow)
            )
        ]
        oldest = session.exec(select(func.min(Job.available_at)).where(Job.status == JobStatus.QUEUED)).one()
        finished = session.exec(
            select(func.count())
            .select_from(JobEvent)
            .where(
                col(JobEvent.type).in_([EventType.COMPLETED, EventType.DEAD_LETTER]),
                JobEvent.at >= now - timedelta(minutes=5),
            )
        ).one()
        alive = session.exec(
            select(WorkerProcess)
            .where(
                WorkerProcess.last_heartbeat_at >= now - timedelta(seconds=heartbeat_window_s),
                col(WorkerProcess.stopped_at).is_(None),
            )
            .order_by(col(WorkerProcess.started_at))
        ).all()
        held = session.exec(
            select(Job.id, Job.worker_id, Job.lease_until, Job.attempt).where(Job.status == JobStatus.RUNNING)
        ).all()
    holdings: dict[str, list[HeldAttempt]] = {}
    for job_id, worker_id, lease_until, attempt in held:
        holdings.setdefault(worker_id or "", []).append(
            HeldAttempt(job_id=job_id, lease_until=iso(lease_until), attempt=attempt)
        )
    return Overview(
        by_state=by_state,
        by_workflow=by_workflow,
        queue_depth=by_state.get(JobStatus.QUEUED, 0),
        oldest_queued_age_s=round((now - oldest).total_seconds(), 1) if oldest else 0.0,
        jobs_per_minute=round(int(finished) / 5, 1),
        workers=[
            WorkerView(
                id=w.id,
                hostname=w.hostname,
                pid=w.pid,
                threads=w.threads,
                last_heartbeat_at=iso(w.last_heartbeat_at),
                jobs=holdings.get(w.id, []),
            )
            for w in alive
        ],
    )


# Dead letters -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fingerprint:
    error: str
    workflow: str
    workflow_version: str

    @property
    def key(self) -> str:
        return f"{self.error}:{self.workflow}@{self.workflow_version}"


class DeadLetterGroup(View, frozen=True):
    fingerprint: Fingerprint
    count: int
    newest: str | None


def dead_letter_groups(db: Database) -> list[DeadLetterGroup]:
    """Dead-lettered jobs grouped by fingerprint (error code x workflow version), newest first."""
    with db.session() as session:
        rows = session.execute(
            sa_select(
                col(Job.error_code),
                col(Job.workflow),
                col(Job.workflow_version),
                func.count(),
                func.max(Job.updated_at),
            )
            .where(col(Job.status) == JobStatus.DEAD_LETTER)
            .group_by(Job.error_code, Job.workflow, Job.workflow_version)
            .order_by(func.max(Job.updated_at).desc())
        ).all()
    return [
        DeadLetterGroup(fingerprint=Fingerprint(e or "unknown", w, v), count=int(n), newest=iso(newest))
        for e, w, v, n, newest in rows
    ]


# Search -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobFilter:
    job_id: str | None = None
    email: str | None = None
    workflow: str | None = None
    status: JobStatus | None = None
    error: str | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None


class SearchItem(View, frozen=True):
    """One job as the operator search lists it."""

    job_id: str
    owner: str | None
    workflow: str
    status: str
    error: str | None
    attempt: int
    filename: str
    created_at: str | None
    worker_id: str | None
    lease_until: str | None


def search(
    db: Database, flt: JobFilter, limit: int = 50, cursor: str | None = None
) -> tuple[list[SearchItem], str | None]:
    """Every job matching the filter, newest first, keyset-paginated on (created_at, id); InvalidCursor
    for a cursor Quire did not make."""
    stmt = select(Job, User.email).join(User, col(User.id) == col(Job.owner_id), isouter=True)
    if flt.job_id:
        stmt = stmt.where(Job.id == flt.job_id)
    if flt.email:
        stmt = stmt.where(User.email == flt.email.strip().lower())
    if flt.workflow:
        stmt = stmt.where(Job.workflow == flt.workflow)
    if flt.status:
        stmt = stmt.where(Job.status == flt.status)
    if flt.error:
        stmt = stmt.where(Job.error_code == flt.error)
    if flt.created_from:
        stmt = stmt.where(Job.created_at >= flt.created_from)
    if flt.created_to:
        stmt = stmt.where(Job.created_at < flt.created_to)
    if cursor:
        stmt = stmt.where(older_than(cursor))
    stmt = stmt.order_by(*NEWEST_FIRST).limit(limit + 1)
    with db.session() as session:
        rows = session.exec(stmt).all()
    more = len(rows) > limit
    rows = rows[:limit]
    items = [
        SearchItem(
            job_id=job.id,
            owner=email,
            workflow=f"{job.workflow}@{job.workflow_version}",
            status=job.status,
            error=job.error_code,
            attempt=job.attempt,
            filename=job.input_filename,
            created_at=iso(job.created_at),
            worker_id=job.worker_id,
            lease_until=iso(job.lease_until),
        )
        for job, email in rows
    ]
    return items, (encode_cursor(rows[-1][0]) if more and rows else None)


class HistoryEvent(View, frozen=True):
    """An event as operators see it: with the operator-only detail (exception, provider status,
    a malformed answer's validation problems)."""

    type: str
    at: str | None
    attempt: int
    error: str | None
    detail: str | None
    operator_detail: str | None


def history(db: Database, job_id: str) -> list[HistoryEvent]:
    """Every event of a job with the operator-only detail."""
    with db.session() as session:
        events = session.exec(select(JobEvent).where(JobEvent.job_id == job_id).order_by(col(JobEvent.id))).all()
    return [
        HistoryEvent(
            type=e.type,
            at=iso(e.at),
            attempt=e.attempt,
            error=e.error,
            detail=e.detail,
            operator_detail=e.operator_detail,
        )
        for e in events
    ]


# Purge and retention ------------------------------------------------------------------------------


def purge_older_than(settings: Settings, storage: Storage, db: Database, dispatcher: Dispatcher, age: timedelta) -> int:
    """Delete finished jobs (records and files) last changed before now - age."""
    cutoff = utcnow() - age
    with db.session() as session:
        ids = list(session.exec(select(Job.id).where(col(Job.status).in_(TERMINAL), Job.updated_at < cutoff)).all())
    return sum(1 for job_id in ids if service.delete(settings, storage, db, dispatcher, job_id))


def apply_retention(storage: Storage, db: Database, days: float, batch: int = 200) -> int:
    """Delete the input and artifact files of jobs finished more than `days` ago, keeping a
    tombstone in the record (sha256, size, deleted_at). Safe to run in several workers at once."""
    if days <= 0:
        return 0
    cutoff = utcnow() - timedelta(days=days)
    with db.session() as session:
        jobs = session.exec(
            select(Job)
            .where(col(Job.status).in_(TERMINAL), Job.updated_at < cutoff, col(Job.files_deleted_at).is_(None))
            .limit(batch)
        ).all()
    done = 0
    for job in jobs:
        with db.session() as session:
            still_needed = _input_still_needed(session, job.input_ref, cutoff, job.id)
        # The files go before the record says so: while storage cannot be reached the job stays
        # selected, and the next pass tries again. Deleting twice (two workers) is harmless.
        try:
            storage.delete_tree(artifacts_prefix(job.id))
            if not still_needed:
                storage.delete_tree(job.input_ref)
        except StorageUnavailable as exc:
            log.warning("retention: storage unreachable (%s); job %s is tried again on the next pass", exc, job.id)
            continue
        now = utcnow()
        with db.session() as session:
            claimed = session.execute(
                update(Job)
                .where(col(Job.id) == job.id, col(Job.files_deleted_at).is_(None), col(Job.status).in_(TERMINAL))
                .values(files_deleted_at=now)
                .execution_options(synchronize_session=False)
            )
            if not getattr(claimed, "rowcount", 0):
                continue
            session.execute(
                update(Artifact)
                .where(col(Artifact.job_id) == job.id)
                .values(deleted_at=now)
                .execution_options(synchronize_session=False)
            )
        if not still_needed:
            # The upload's row goes too, so it stops counting against its owner's storage quota.
            store.delete_upload(db, job.input_ref.removeprefix("uploads/"))
        done += 1
    if done:
        log.info("retention: deleted the files of %d jobs finished before %s", done, iso(cutoff))
    return done


def expire_unused_uploads(storage: Storage, db: Database, hours: float, batch: int = 500) -> int:
    """Delete uploads no job has used, older than `hours`: an upload that is never submitted must
    not keep its disk space (or its owner's quota) forever. Safe to run in several workers."""
    if hours <= 0:
        return 0
    cutoff = utcnow() - timedelta(hours=hours)
    with db.session() as session:
        ids = list(
            session.exec(select(Upload.id).where(Upload.created_at < cutoff, ~store.used_by_a_job()).limit(batch)).all()
        )
    expired = sum(1 for upload_id in ids if service.remove_unused_upload(storage, db, upload_id))
    if expired:
        log.info("retention: deleted %d uploads unused since %s", expired, iso(cutoff))
    return expired


def _input_still_needed(session: Session, input_ref: str, cutoff: datetime, job_id: str) -> bool:
    """Another job still inside retention, or unfinished, uses the same input."""
    return (
        session.exec(
            select(Job.id)
            .where(Job.input_ref == input_ref, Job.id != job_id, col(Job.files_deleted_at).is_(None))
            .where((col(Job.status).not_in(TERMINAL)) | (Job.updated_at >= cutoff))
            .limit(1)
        ).first()
        is not None
    )


class GroupCount(View, frozen=True):
    fingerprint: str
    count: int


class Stats(View, frozen=True):
    jobs: dict[str, int]
    total: int
    uploads: int
    dead_letter_groups: list[GroupCount]


def stats(db: Database) -> Stats:
    with db.session() as session:
        by_state = {str(s): int(n) for s, n in session.exec(select(Job.status, func.count()).group_by(Job.status))}
        uploads = int(session.exec(select(func.count()).select_from(Upload)).one())
    return Stats(
        jobs=by_state,
        total=sum(by_state.values()),
        uploads=uploads,
        dead_letter_groups=[GroupCount(fingerprint=g.fingerprint.key, count=g.count) for g in dead_letter_groups(db)],
    )
