"""Reading job records, and the public view of one: the five questions answered from the record."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import msgspec
from sqlalchemy import Select as SaSelect
from sqlalchemy import String, bindparam, delete, func, literal, text, update
from sqlalchemy import insert as sa_insert
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from quire.accounts.service import Principal
from quire.db import Database
from quire.documents.extract import ProgressView
from quire.errors import ERROR_MESSAGES, ErrorCode
from quire.jobs.line import QueuePlace, RecentBasis, place_in_line
from quire.jobs.models import Artifact, EventType, Job, JobEvent, JobStatus, Upload, utcnow
from quire.jobs.paging import NEWEST_FIRST, encode_cursor, older_than
from quire.jobs.results import confirmed_among, reviewed_fields, signed_fields
from quire.settings import Settings
from quire.views import View
from quire.webhooks.models import WebhookDelivery


def iso(value: datetime | None) -> str | None:
    """UTC timestamp as ISO 8601 with a Z."""
    if value is None:
        return None
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def get_job(db: Database, job_id: str, session: Session | None = None) -> Job | None:
    if session is not None:
        return session.get(Job, job_id)
    with db.session() as own:
        return own.get(Job, job_id)


def get_upload(db: Database, upload_id: str) -> Upload | None:
    with db.session() as session:
        return session.get(Upload, upload_id)


def save_upload(db: Database, upload: Upload) -> Upload:
    with db.session() as session:
        session.add(upload)
    return upload


def find_by_idempotency_key(db: Database, scoped_key: str) -> Job | None:
    with db.session() as session:
        return session.exec(select(Job).where(Job.idempotency_key == scoped_key)).first()


def get_artifact(db: Database, job_id: str, name: str, operator: bool = False) -> Artifact | None:
    """A job's file by name: a result file, or with `operator` an operator-only one (evidence)."""
    with db.session() as session:
        artifact = session.get(Artifact, (job_id, name))
    return artifact if artifact is not None and artifact.operator_only == operator else None


def evidence_of(db: Database, job_id: str) -> list[ArtifactView]:
    """A job's operator-only files (the raw answers of its malformed attempts), oldest first."""
    with db.session() as session:
        rows = session.exec(
            select(Artifact)
            .where(Artifact.job_id == job_id, col(Artifact.operator_only))
            .order_by(col(Artifact.created_at), col(Artifact.name))
        ).all()
    return [artifact_view(a) for a in rows]


class InputView(View, frozen=True):
    filename: str
    size: int
    sha256: str


class ArtifactView(View, frozen=True):
    """A result file as the record knows it; the web layer adds where to download it."""

    name: str
    size: int
    sha256: str
    content_type: str
    # Set once retention has deleted the file; the record keeps its size and checksum.
    deleted_at: str | None


class JobError(View, frozen=True):
    code: str
    message: str


class AttemptError(View, frozen=True):
    attempt: int
    code: str | None
    at: str | None


class EventView(View, frozen=True):
    """An event as its owner sees it; `error` and `detail` are left out of the JSON when empty."""

    type: str
    at: str | None
    attempt: int
    error: str | msgspec.UnsetType = msgspec.UNSET
    detail: str | msgspec.UnsetType = msgspec.UNSET


class ReviewView(View, frozen=True):
    """A person's review of an invoice result (jobs/review.py): the values they saved, who, when."""

    fields: dict[str, Any]
    by: str | None
    at: str | None
    # The amounts in `fields` that are the machine's with their sign turned to the reviewed kind of document:
    # values in effect, not values the person set or confirmed.
    signed: list[str] = []

    def confirmed(self) -> list[str]:
        """The fields the person set or confirmed."""
        return confirmed_among(self.fields, self.signed)


class JobView(View, frozen=True):
    """The stable status shape (docs/api.md), without URLs; every key present even when null.
    The web layer's `JobOut` is this view with each artifact's download link."""

    job_id: str
    workflow: str
    workflow_version: str
    status: str
    attempt: int
    max_attempts: int
    input: InputView
    artifact: ArtifactView | None
    artifacts: tuple[ArtifactView, ...]
    error: JobError | None
    errors: tuple[AttemptError, ...]
    events: tuple[EventView, ...]
    created_at: str | None
    updated_at: str | None
    deadline_at: str | None
    next_attempt_at: str | None
    # How far the running attempt has read; None before it reports any.
    progress: ProgressView | None
    # While queued: the place in line and the estimated seconds until the result (jobs/line.py).
    queue: QueuePlace | None
    review: ReviewView | None


@dataclass(frozen=True)
class Page:
    items: list[JobView]
    next_cursor: str | None


def list_jobs(
    settings: Settings,
    db: Database,
    owner_id: str | None,
    *,
    every_owner: bool = False,
    status: JobStatus | None = None,
    workflow: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> Page:
    """Newest first, keyset-paginated on (created_at, id) so deep pages stay fast; InvalidCursor
    for a cursor Quire did not make."""
    stmt = select(Job)
    if not every_owner:
        stmt = stmt.where(Job.owner_id == owner_id if owner_id is not None else col(Job.owner_id).is_(None))
    if status is not None:
        stmt = stmt.where(Job.status == status)
    if workflow is not None:
        stmt = stmt.where(Job.workflow == workflow)
    if cursor:
        stmt = stmt.where(older_than(cursor))
    stmt = stmt.order_by(*NEWEST_FIRST).limit(limit + 1)
    with db.session() as session:
        jobs = list(session.exec(stmt).all())
        more = len(jobs) > limit
        jobs = jobs[:limit]
        basis = RecentBasis(max_age_s=math.inf)  # the page's queued jobs rest on one read of the basis
        views = [job_view(settings, session, job, basis) for job in jobs]
    return Page(views, encode_cursor(jobs[-1]) if more and jobs else None)


def unfinished_jobs(settings: Settings, db: Database, owner_id: str, limit: int) -> list[JobView]:
    """The owner's queued and running jobs, newest first (what a list stream starts with)."""
    stmt = (
        select(Job)
        .where(Job.owner_id == owner_id, col(Job.status).in_([JobStatus.QUEUED, JobStatus.RUNNING]))
        .order_by(*NEWEST_FIRST)
        .limit(limit)
    )
    with db.session() as session:
        basis = RecentBasis(max_age_s=math.inf)
        return [job_view(settings, session, job, basis) for job in session.exec(stmt).all()]


def artifact_view(artifact: Artifact) -> ArtifactView:
    return ArtifactView(
        name=artifact.name,
        size=artifact.size,
        sha256=artifact.sha256,
        content_type=artifact.content_type,
        deleted_at=iso(artifact.deleted_at),
    )


def _event_view(event: JobEvent) -> EventView:
    return EventView(
        type=event.type,
        at=iso(event.at),
        attempt=event.attempt,
        error=event.error or msgspec.UNSET,
        detail=event.detail or msgspec.UNSET,
    )


def job_view(settings: Settings, session: Session, job: Job, basis: RecentBasis | None = None) -> JobView:
    """The stable status shape (docs/api.md); every key present even when null. A queued job's
    estimate rests on `basis` when given."""
    events: Sequence[JobEvent] = session.exec(
        select(JobEvent).where(JobEvent.job_id == job.id).order_by(col(JobEvent.id))
    ).all()
    artifacts: Sequence[Artifact] = session.exec(
        select(Artifact).where(Artifact.job_id == job.id, ~col(Artifact.operator_only)).order_by(col(Artifact.name))
    ).all()
    failures = [e for e in events if e.error and e.error != ErrorCode.CANCELLED]
    error: JobError | None = None
    if job.status != JobStatus.COMPLETED:
        # The error that explains where the job is now: the latest one since the last replay.
        since_replay = [e for e in events if e.type == EventType.REPLAYED]
        last = next((e for e in reversed(events) if e.error), None)
        if last is not None and last.error and (not since_replay or (last.id or 0) > (since_replay[-1].id or 0)):
            code = ErrorCode(last.error)
            error = JobError(code=code.value, message=ERROR_MESSAGES[code])
    primary = next((a for a in artifacts if a.primary), None)
    return JobView(
        job_id=job.id,
        workflow=job.workflow,
        workflow_version=job.workflow_version,
        status=job.status,
        attempt=job.attempt,
        max_attempts=job.max_attempts,
        input=InputView(filename=job.input_filename, size=job.input_size, sha256=job.input_sha256),
        artifact=artifact_view(primary) if primary else None,
        artifacts=tuple(artifact_view(a) for a in artifacts),
        error=error,
        errors=tuple(AttemptError(attempt=e.attempt, code=e.error, at=iso(e.at)) for e in failures),
        events=tuple(_event_view(e) for e in events),
        created_at=iso(job.created_at),
        updated_at=iso(job.updated_at),
        deadline_at=iso(job.deadline_at),
        next_attempt_at=iso(job.available_at) if job.status == JobStatus.QUEUED else None,
        # A queued job's recorded progress is an earlier attempt's (cancelled, or failed and waiting to retry).
        progress=_progress(job.progress) if job.status != JobStatus.QUEUED else None,
        queue=place_in_line(settings, session, job, basis) if job.status == JobStatus.QUEUED else None,
        review=_review_view(job),
    )


def _progress(recorded: dict[str, Any] | None) -> ProgressView | None:
    """The recorded progress as the view shows it; none for a row of another shape than `Progress.as_record`'s."""
    try:
        return msgspec.convert(recorded, ProgressView) if recorded else None
    except msgspec.ValidationError:
        return None


def _review_view(job: Job) -> ReviewView | None:
    if job.reviewed_at is None:
        return None
    return ReviewView(
        fields=reviewed_fields(job), by=job.reviewed_by, at=iso(job.reviewed_at), signed=signed_fields(job)
    )


class RecentViews:
    """Views built lately, reused while their job's row is unchanged.

    Polling asks for the same few jobs every few seconds, and most polls find nothing new. Every
    change a view shows moves the row's `updated_at` (each transition sets it; artifacts arrive
    with the completing one) except retention deleting files, which sets `files_deleted_at`; that
    pair is the version. Reading it is one indexed row; rebuilding a view is three queries.
    A queued job's place is read on every poll, its estimate on the `basis` these polls share.
    """

    def __init__(self, size: int = 2048) -> None:
        self._views: OrderedDict[str, tuple[tuple[Any, ...], JobView]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self.basis = RecentBasis()

    def get(self, job_id: str, version: tuple[Any, ...]) -> JobView | None:
        with self._lock:
            found = self._views.get(job_id)
            if found is None or found[0] != version:
                return None
            self._views.move_to_end(job_id)
            return found[1]  # views are immutable: shared, never copied

    def put(self, job_id: str, version: tuple[Any, ...], view: JobView) -> None:
        with self._lock:
            self._views[job_id] = (version, view)
            self._views.move_to_end(job_id)
            while len(self._views) > self._size:
                self._views.popitem(last=False)


def view_of(
    settings: Settings,
    db: Database,
    job_id: str,
    viewer: Principal | None = None,
    recent: RecentViews | None = None,
    session: Session | None = None,
) -> JobView | None:
    """The job's public view; None when it does not exist or, given a viewer, when that viewer
    may not see it. With `recent` (one per web process, from the bootstrap), an unchanged job's
    view is reused. Read in `session` when given."""
    if session is None:
        with db.session() as own:
            return view_of(settings, db, job_id, viewer, recent, own)
    head = session.connection().execute(_view_head(), {"job_id": job_id}).first()
    if head is None or (viewer is not None and not _may_see(head.owner_id, viewer)):
        return None
    if recent is not None and (cached := recent.get(job_id, (head.updated_at, head.files_deleted_at))) is not None:
        # The place in line moves while the job's row stays as it was.
        place = place_in_line(settings, session, head, recent.basis) if head.status == JobStatus.QUEUED else None
        return msgspec.structs.replace(cached, queue=place)
    job = session.get(Job, job_id)
    if job is None:
        return None
    view = job_view(settings, session, job, recent.basis if recent is not None else None)
    # Filed under the version of the row it was built from: the events and artifacts read after it
    # are at least as new, and a newer row version makes the next read rebuild.
    if recent is not None:
        recent.put(job_id, (job.updated_at, job.files_deleted_at), view)
    return view


@cache
def _view_head() -> SaSelect[str | None, datetime, datetime | None, JobStatus, str, datetime, datetime, str]:
    """A polled job's version, owner and place in the line: one indexed row, read on every poll,
    so the statement is built once per process."""
    return sa_select(
        col(Job.owner_id),
        col(Job.updated_at),
        col(Job.files_deleted_at),
        col(Job.status),
        col(Job.id),
        col(Job.available_at),
        col(Job.created_at),
        col(Job.workflow),
    ).where(col(Job.id) == bindparam("job_id", type_=String()))


def delete_job(db: Database, job_id: str) -> Job | None:
    """Remove the record, its events, artifact rows and webhook deliveries; the caller removes the files."""
    with db.session() as session:
        job = session.get(Job, job_id)
        if job is None:
            return None
        # A delivery not yet sent goes too: its body would be the view of a job that is gone.
        session.execute(delete(WebhookDelivery).where(col(WebhookDelivery.subject_id) == job_id))
        session.execute(delete(JobEvent).where(col(JobEvent.job_id) == job_id))
        session.execute(delete(Artifact).where(col(Artifact.job_id) == job_id))
        session.delete(job)
        return job


@dataclass(frozen=True)
class UploadActivity:
    """One person's uploads since a moment: how many, how many bytes, and when the first came."""

    count: int
    size: int
    first_at: datetime | None


def reserve_upload(db: Database, upload: Upload, since: datetime, check: Callable[[UploadActivity, int], None]) -> None:
    """Insert an upload's row (its `size` the most it may take) unless `check` refuses it.

    `check` sees the owner's other uploads since `since` and all their stored bytes, and raises
    to refuse; the row is then not kept. One owner's reservations take turns, so parallel
    uploads cannot all read the same counts and all pass: on PostgreSQL under an advisory lock
    per owner; on SQLite the insert comes first and holds the database's write lock until the
    end of the transaction.
    """
    owner = upload.owner_id
    with db.session() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"upload:{owner}"})
        session.add(upload)
        session.flush()
        check(*_usage(session, owner, since, leave_out=upload.id))


def reserve_uploads(
    db: Database, uploads: Sequence[Upload], since: datetime, choose: Callable[[UploadActivity, int], Sequence[bool]]
) -> None:
    """`reserve_upload` for many uploads of one owner in one transaction.

    `choose` sees the owner's other uploads (not these) and says which of these to keep; the rest
    are not kept. The rows go in first, so the turn is held as `reserve_upload` holds it.
    """
    if not uploads:
        return
    owner = uploads[0].owner_id
    table = Upload.__table__  # type: ignore[attr-defined]
    ids = [upload.id for upload in uploads]
    with db.session() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"upload:{owner}"})
        session.connection().execute(
            sa_insert(table), [{c.name: getattr(upload, c.name) for c in table.columns} for upload in uploads]
        )
        keep = choose(*_usage(session, owner, since, leave_out=ids))
        refused = [upload.id for upload, kept in zip(uploads, keep, strict=True) if not kept]
        if refused:
            session.execute(delete(Upload).where(col(Upload.id).in_(refused)))


def finish_uploads(session: Session, uploads: Sequence[Upload]) -> None:
    """`finish_upload` for many uploads, inside the caller's transaction."""
    if uploads:
        statement = (
            update(Upload.__table__)  # type: ignore[attr-defined]
            .where(Upload.__table__.c.id == bindparam("p_id"))  # type: ignore[attr-defined]
            .values(size=bindparam("p_size"), sha256=bindparam("p_sha256"))
        )
        session.connection().execute(
            statement, [{"p_id": u.id, "p_size": u.size, "p_sha256": u.sha256} for u in uploads]
        )


def upload_usage(db: Database, owner_id: str, since: datetime) -> tuple[UploadActivity, int]:
    """One person's uploads since `since`, and the bytes of all their stored uploads."""
    with db.session() as session:
        return _usage(session, owner_id, since)


def _usage(
    session: Session, owner: str | None, since: datetime, leave_out: str | Sequence[str] = ""
) -> tuple[UploadActivity, int]:
    left_out = [leave_out] if isinstance(leave_out, str) else list(leave_out)
    others = (col(Upload.owner_id) == owner) & col(Upload.id).not_in(left_out)
    count, size, first_at = session.exec(
        select(func.count(), func.coalesce(func.sum(Upload.size), 0), func.min(Upload.created_at)).where(
            others, Upload.created_at >= since
        )
    ).one()
    stored = session.exec(select(func.coalesce(func.sum(Upload.size), 0)).where(others)).one()
    return UploadActivity(int(count), int(size), first_at), int(stored)


def finish_upload(db: Database, upload: Upload) -> None:
    """Record a reserved upload's real size and digest once its file is stored."""
    with db.session() as session:
        session.execute(
            update(Upload).where(col(Upload.id) == upload.id).values(size=upload.size, sha256=upload.sha256)
        )


def used_by_a_job() -> Any:
    """A condition on Upload: some job names it as its input."""
    return sa_select(col(Job.id)).where(col(Job.input_ref) == literal("uploads/") + col(Upload.id)).exists()


@dataclass(frozen=True)
class ExpiredLease:
    """A running job whose lease ran out: what the recovery loop needs to decide where it goes."""

    job_id: str
    budget_left: bool
    isolated: bool
    past_deadline: bool


def expired_leases(db: Database, now: datetime, limit: int = 500) -> list[ExpiredLease]:
    """Running jobs whose worker stopped renewing the lease; each is re-checked by a conditional update."""
    with db.session() as session:
        rows = session.execute(
            sa_select(
                col(Job.id),
                col(Job.attempt),
                col(Job.attempt_floor),
                col(Job.max_attempts),
                col(Job.error_code),
                col(Job.deadline_at) <= now,
            )
            .where(col(Job.status) == JobStatus.RUNNING, col(Job.lease_until) < now)
            .limit(limit)
        ).all()
    # An attempt that ran isolated (the job's last loss was worker_lost) died with its worker,
    # not by its own hand: its own death is caught and charged by the worker itself.
    return [
        ExpiredLease(job_id, attempt - floor < max_attempts, error == ErrorCode.WORKER_LOST, bool(past_deadline))
        for job_id, attempt, floor, max_attempts, error, past_deadline in rows
    ]


def overdue_queued(db: Database, now: datetime, limit: int = 500) -> list[str]:
    """Ids of queued jobs whose deadline passed before an attempt could start."""
    with db.session() as session:
        return list(
            session.exec(
                select(Job.id).where(Job.status == JobStatus.QUEUED, col(Job.deadline_at) <= now).limit(limit)
            ).all()
        )


def waiting_messages(
    db: Database, now: datetime, grace_before: datetime, limit: int = 500
) -> list[tuple[str, str | None]]:
    """(job id, message id) of queued jobs waiting since before `grace_before`, oldest first."""
    with db.session() as session:
        rows = session.exec(
            select(Job.id, Job.message_id)
            .where(Job.status == JobStatus.QUEUED, col(Job.updated_at) < grace_before, col(Job.deadline_at) > now)
            .order_by(col(Job.updated_at))
            .limit(limit)
        ).all()
    return [(job_id, message_id) for job_id, message_id in rows]


def upload_in_use(db: Database, upload_id: str) -> bool:
    """Whether some job names the upload as its input."""
    with db.session() as session:
        return session.exec(select(Job.id).where(Job.input_ref == f"uploads/{upload_id}").limit(1)).first() is not None


def delete_upload(db: Database, upload_id: str, unused_only: bool = False) -> bool:
    """Delete an upload's row; with `unused_only`, only while no job names it (checked in the same
    statement, so a job submitted meanwhile keeps its input). True when the row went."""
    statement = delete(Upload).where(col(Upload.id) == upload_id)
    if unused_only:
        statement = statement.where(~used_by_a_job())
    with db.session() as session:
        return bool(getattr(session.execute(statement), "rowcount", 0))


def visible_job(db: Database, job_id: str, viewer: Principal) -> Job | None:
    """The job if `viewer` may see it (its owner, or an admin); None otherwise, as if it did not exist."""
    job = get_job(db, job_id)
    return job if job is not None and _may_see(job.owner_id, viewer) else None


def _may_see(owner_id: str | None, viewer: Principal) -> bool:
    return viewer.is_admin or owner_id == viewer.user_id


def owned_upload(db: Database, input_ref: str, viewer: Principal) -> Upload | None:
    """The caller's own upload named by `input_ref` (`uploads/<id>`), or None."""
    upload = get_upload(db, input_ref.removeprefix("uploads/"))
    if upload is None or upload.input_ref != input_ref or upload.owner_id != viewer.user_id:
        return None
    return upload


def oldest_queued_age_s(db: Database) -> float:
    """How long the oldest job ready to run has waited (0 when none waits)."""
    now = utcnow()
    with db.session() as session:
        oldest = session.exec(
            select(func.min(Job.available_at)).where(Job.status == JobStatus.QUEUED, Job.available_at <= now)
        ).one()
    return (now - oldest).total_seconds() if oldest else 0.0
