"""The job record: SQLModel tables for uploads, jobs, their events and their artifacts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Index, String, false
from sqlmodel import Field, SQLModel

# Re-exported: the job record's ids and timestamps, named where the records are.
from quire.db import new_id as new_id
from quire.db import utcnow as utcnow


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    DEAD_LETTER = "dead_letter"
    CANCELLED = "cancelled"


class EventType(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    DEAD_LETTER = "dead_letter"
    CANCELLED = "cancelled"
    REQUEUED_AFTER_RESTART = "requeued_after_restart"
    REPLAYED = "replayed"
    # Not a transition: the deadline passed while an attempt ran; its detail names the policy applied.
    DEADLINE_PASSED = "deadline_passed"


class Upload(SQLModel, table=True):
    """A stored input document. `input_ref` is `uploads/<id>`."""

    # Per-person quotas read recent uploads by owner; expiry reads old ones by age.
    __table_args__ = (
        Index("ix_upload_owner_created", "owner_id", "created_at"),
        Index("ix_upload_created", "created_at"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str | None = Field(default=None, index=True, max_length=64)
    filename: str = Field(max_length=255)
    size: int
    sha256: str = Field(max_length=64)
    content_type: str = Field(max_length=128)
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def input_ref(self) -> str:
        return f"uploads/{self.id}"


class Job(SQLModel, table=True):
    """One requested piece of work and everything that happened to it."""

    __table_args__ = (
        Index("ix_job_status_available_at", "status", "available_at"),
        Index("ix_job_owner_created", "owner_id", "created_at", "id"),
        Index("ix_job_input_ref", "input_ref"),  # is an upload still used by a job
        Index("ix_job_worker_status", "worker_id", "status"),
        # Keyset paging of every job, newest first, for operators (optionally by state).
        Index("ix_job_created", "created_at", "id"),
        Index("ix_job_status_created", "status", "created_at", "id"),
        Index("ix_job_status_error", "status", "error_code", "workflow", "workflow_version"),
        # A batch's counts by state, and whether any of its jobs is still active.
        Index("ix_job_batch_status", "batch_id", "status"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str | None = Field(default=None, max_length=64)
    workflow: str = Field(max_length=64)
    workflow_version: str = Field(max_length=16)
    input_ref: str = Field(max_length=128)
    input_filename: str = Field(max_length=255)
    input_size: int
    input_sha256: str = Field(max_length=64)
    input_content_type: str = Field(max_length=128)

    status: JobStatus = Field(sa_column=Column(String(16), nullable=False))
    attempt: int = 0
    # Attempts made before the latest replay: the budget counts attempts since then.
    attempt_floor: int = 0
    max_attempts: int
    timeout_s: float
    deadline_s: float
    deadline_at: datetime
    # The earliest time the next attempt may start (later than now while a retry backs off).
    available_at: datetime = Field(default_factory=utcnow)

    worker_id: str | None = Field(default=None, max_length=128)
    lease_until: datetime | None = None
    # The Dramatiq message that should deliver the next attempt; the recovery loop republishes
    # a queued job whose message is no longer in Redis.
    message_id: str | None = Field(default=None, max_length=64)

    # The document's language as the submitter named it (Tesseract's code, e.g. `deu`), for OCR;
    # None: OCR tries the configured languages.
    language: str | None = Field(default=None, max_length=32)
    # How far the running attempt has read: {"done", "total", "unit", "message"}. Written by the
    # attempt together with its lease and fenced by attempt; a new attempt starts without one.
    progress: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))

    # Where the job's webhooks go: its own `callback_url`, else its account's default when it was
    # submitted (None: no webhooks).
    callback_url: str | None = Field(default=None, max_length=2048)

    idempotency_key: str | None = Field(default=None, max_length=300, unique=True)
    request_fingerprint: str | None = Field(default=None, max_length=64)
    # The batch this job was submitted in, if any (jobs/batches.py).
    batch_id: str | None = Field(default=None, max_length=32)

    # A person's review of an invoice result (jobs/review.py): the values they saved, by field.
    # The machine's artifact is never changed; these win wherever values are shown or exported.
    review: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    reviewed_by: str | None = Field(default=None, max_length=255)
    reviewed_at: datetime | None = None

    # The error behind the current state (a retry waiting, a dead letter): the dead-letter
    # fingerprint is (error_code, workflow, workflow_version). Written by the transitions.
    error_code: str | None = Field(default=None, max_length=32)
    # Retention: when the input and artifact files were deleted (the record keeps their checksums).
    files_deleted_at: datetime | None = None

    provider: str | None = Field(default=None, max_length=32)
    model_name: str | None = Field(default=None, max_length=128)
    prompt_version: str | None = Field(default=None, max_length=16)

    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


@dataclass(frozen=True)
class JobRemoved:
    """What the after-commit hooks are told when a job's record is deleted: it is gone for good, so
    its open streams end (the owner's list streams drop it), and its batch may have finished."""

    owner_id: str | None
    batch_id: str | None = None


@dataclass(frozen=True)
class JobReviewed:
    """What the after-commit hooks are told when a person saved a review of a job's result: its status is
    unchanged, but every view of it (its card, its row in its owner's list, its batch's card) changes."""

    owner_id: str | None


class Batch(SQLModel, table=True):
    """Many documents submitted together with one workflow; each became an ordinary job.

    A batch has no status of its own: its counts are its jobs'. `sealed_at` is set once every
    job of the batch is recorded, so a batch is never reported finished while it is still being
    admitted; `completed_at` is set when its last job finishes (and cleared by a replay).
    """

    __table_args__ = (Index("ix_batch_owner_created", "owner_id", "created_at"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str | None = Field(default=None, max_length=64)
    workflow: str = Field(max_length=64)
    # Where to announce the batch's end (signed webhooks); stored as given, delivered elsewhere.
    callback_url: str | None = Field(default=None, max_length=2048)
    # Files refused at admission: [{"filename", "reason"}], answered again to a repeated request.
    rejected: list[dict[str, str]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    idempotency_key: str | None = Field(default=None, max_length=300, unique=True)
    request_fingerprint: str | None = Field(default=None, max_length=64)
    created_at: datetime = Field(default_factory=utcnow)
    sealed_at: datetime | None = None
    completed_at: datetime | None = None


class JobEvent(SQLModel, table=True):
    """One transition of a job, appended in the same transaction as the change it records."""

    __tablename__ = "job_event"

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = Field(
        sa_column=Column(String(32), ForeignKey("job.id", ondelete="CASCADE"), nullable=False, index=True)
    )
    type: EventType = Field(sa_column=Column(String(32), nullable=False))
    at: datetime = Field(default_factory=utcnow)
    attempt: int
    error: str | None = Field(default=None, max_length=32)
    detail: str | None = Field(default=None, max_length=500)
    # For operators only (admin pages, never the public payload): exception type and message,
    # the provider's status code.
    operator_detail: str | None = Field(default=None, max_length=2000)


def artifacts_prefix(job_id: str) -> str:
    """Where every file of a job's results is stored: removing this tree removes them all."""
    return f"artifacts/{job_id}"


def attempt_prefix(job_id: str, attempt: int, worker_id: str) -> str:
    """Where one attempt stages its files: its own keys, so a fenced-out attempt never overwrites another's."""
    return f"{artifacts_prefix(job_id)}/attempt-{attempt}-{worker_id.replace(':', '_')}"


def preview_key(job_id: str, name: str) -> str:
    """Where a rendered preview of the job's document is kept: with its results, deleted with them."""
    return f"{artifacts_prefix(job_id)}/preview/{name}"


class Artifact(SQLModel, table=True):
    """A file of a job: a completed attempt's results, published by the completing transition, or
    the evidence of a failed one, published by the transition that records the failure."""

    job_id: str = Field(sa_column=Column(String(32), ForeignKey("job.id", ondelete="CASCADE"), primary_key=True))
    name: str = Field(primary_key=True, max_length=128)
    storage_key: str = Field(max_length=255)
    size: int
    sha256: str = Field(max_length=64)
    content_type: str = Field(max_length=128)
    primary: bool = False
    # Evidence for operators (a malformed answer as the model gave it): never in the owner's view,
    # never downloadable from the owner's routes. Retention deletes it with the job's other files.
    operator_only: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    created_at: datetime = Field(default_factory=utcnow)
    deleted_at: datetime | None = None


class WorkerProcess(SQLModel, table=True):
    """A worker process and its last heartbeat, for the operator overview."""

    __tablename__ = "worker_process"

    id: str = Field(primary_key=True, max_length=128)
    hostname: str = Field(max_length=255)
    pid: int
    threads: int
    started_at: datetime = Field(default_factory=utcnow)
    last_heartbeat_at: datetime = Field(default_factory=utcnow, index=True)
    stopped_at: datetime | None = None


class AlertState(SQLModel, table=True):
    """Whether the dead-letter alert of a fingerprint (error code x workflow version) is raised."""

    __tablename__ = "alert_state"

    fingerprint: str = Field(primary_key=True, max_length=100)
    raised_at: datetime = Field(default_factory=utcnow)
    count: int


class ReplayState(StrEnum):
    RUNNING = "running"
    DONE = "done"
    STOPPED = "stopped"


class GroupReplay(SQLModel, table=True):
    """A dead-letter group being replayed at a rate, carried out by workers (jobs/replays.py).

    The group is fixed when the replay starts: the dead letters with its error code (and workflow,
    version) last changed no later than `cutoff_at`, taken in (updated_at, id) order. The cursor
    is the last job taken; a job that fails again after its replay changes after the cutoff and is
    never taken twice. Whoever carries the replay out holds a lease on it, as an attempt does.
    """

    __tablename__ = "group_replay"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    error: str = Field(max_length=32)
    workflow: str | None = Field(default=None, max_length=64)
    workflow_version: str | None = Field(default=None, max_length=16)
    rate: float
    state: ReplayState = Field(sa_column=Column(String(16), nullable=False, index=True))
    total: int
    replayed: int = 0
    skipped: int = 0
    cutoff_at: datetime
    cursor_at: datetime | None = None
    cursor_id: str | None = Field(default=None, max_length=32)
    owner: str | None = Field(default=None, max_length=128)
    lease_until: datetime | None = None
    created_by: str | None = Field(default=None, max_length=320)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
