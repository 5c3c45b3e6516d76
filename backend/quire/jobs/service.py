"""Use cases that join the job record to storage and the queue: submit, cancel, replay, delete.

The web API and the CLI both call these, so a job is accepted, replayed or removed one way.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from quire.accounts.service import default_webhook_url
from quire.db import Database
from quire.documents.einvoice import HEAD_BYTES
from quire.documents.extract import UNSUPPORTED, UnsupportedType, detect_type
from quire.documents.storage import PendingObject, Storage, StorageUnavailable, TooLarge, file_chunks
from quire.jobs import review, states, store
from quire.jobs.models import Job, JobRemoved, JobReviewed, JobStatus, Upload, artifacts_prefix, new_id, utcnow
from quire.jobs.results import ResultCache
from quire.metrics import get_metrics
from quire.queue.dispatch import Dispatcher
from quire.settings import Settings
from quire.workflows.registry import get_workflow

log = logging.getLogger(__name__)


class Limits(BaseModel):
    """Per-job limits; each is optional and clamped to the configured maximum.

    Strict: `true`, `"30"`, `Infinity` and NaN are refused (422), not read as 1, 30 or the maximum.
    A form's text fields go through `model_validate_strings`, which parses numbers from text only.
    """

    model_config = ConfigDict(strict=True, allow_inf_nan=False)

    timeout_s: float | None = Field(default=None, gt=0)
    max_attempts: int | None = Field(default=None, ge=1)
    deadline_s: float | None = Field(default=None, gt=0)


# ISO 639-1 codes a submitter may use for a document's language, and Tesseract's names for them.
TESSERACT_LANGUAGES = {
    "en": "eng", "de": "deu", "fr": "fra", "nl": "nld", "es": "spa", "it": "ita", "pt": "por", "pl": "pol",
    "da": "dan", "sv": "swe", "nb": "nor", "fi": "fin", "cs": "ces",
}  # fmt: skip


class UnknownLanguage(Exception):
    """The submitter named a language OCR here cannot read."""


def ocr_language(settings: Settings, name: str | None) -> str | None:
    """Tesseract's name for the language a submitter named (`de` or `deu`), if it is one OCR reads here."""
    if not name or not name.strip():
        return None
    code = TESSERACT_LANGUAGES.get(name.strip().lower(), name.strip().lower())
    available = readable_languages(settings)
    if code not in available:
        known = ", ".join(k for k, v in TESSERACT_LANGUAGES.items() if v in available)
        raise UnknownLanguage(f"Quire cannot read {name.strip()[:20]!r} by OCR. Name one of: {known}.")
    return code


def readable_languages(settings: Settings) -> list[str]:
    """The configured OCR languages whose packs are installed here (all of them when Tesseract cannot be
    asked): a job may not name one its reader would fail on."""
    from quire.documents import ocr  # Pillow and Tesseract's list only when a language is named

    # None of them installed: all of them, as OCR then tries them all and Tesseract says which is missing.
    return ocr.installed(settings.ocr_languages).split("+")


def document_languages(settings: Settings) -> list[tuple[str, str]]:
    """(code, English name) of each language a submitter may name for OCR here, for a form's choices."""
    from babel import Locale

    available = readable_languages(settings)
    return [(k, Locale.parse(k).get_display_name("en") or k) for k, v in TESSERACT_LANGUAGES.items() if v in available]


class Overloaded(Exception):
    """The queue is too far behind to take more work now; try again after `retry_after_s`."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"The queue is backed up; try again in {retry_after_s} s.")
        self.retry_after_s = retry_after_s


ADMISSION_RECHECK_S = 1.0


@dataclass
class Admission:
    """Admission control: refuse new work while the oldest waiting job is older than the limit.

    One per web process (the bootstrap builds it). The oldest waiting job ages by at most the time
    that passed since it was last read, so while that bound stays under the limit the answer is
    known without a query; the age is read again at least once a second, and always before a refusal.
    """

    db: Database
    max_queue_age_s: float  # QUIRE_ADMISSION_MAX_QUEUE_AGE_S
    last_age: tuple[float, float] | None = None  # (monotonic time read, oldest queued age then)

    def admit(self) -> None:
        limit = self.max_queue_age_s
        now = time.monotonic()
        if self.last_age is not None:
            read_at, age = self.last_age
            elapsed = now - read_at
            if elapsed < ADMISSION_RECHECK_S and age + elapsed <= limit:
                return
        age = store.oldest_queued_age_s(self.db)
        self.last_age = (now, age)
        if age > limit:
            raise Overloaded(retry_after_s=max(1, min(300, int(age - limit) + 5)))


class IdempotencyConflict(Exception):
    """The Idempotency-Key was used before with a different request."""


class NotAllowed(Exception):
    """The job is not in a state that allows this action."""


@dataclass(frozen=True)
class Submitted:
    job: Job
    created: bool


def _effective(settings: Settings, limits: Limits) -> tuple[float, int, float]:
    s = settings
    timeout = min(limits.timeout_s or s.default_timeout_s, s.max_timeout_s)
    attempts = min(limits.max_attempts or s.default_max_attempts, s.max_max_attempts)
    deadline = min(limits.deadline_s or s.default_deadline_s, s.max_deadline_s)
    return timeout, attempts, deadline


def fingerprint(
    workflow: str, upload: Upload, limits: Limits, language: str | None = None, callback_url: str | None = None
) -> str:
    canonical = {"workflow": workflow, "input_sha256": upload.sha256, "limits": limits.model_dump()}
    if language is not None:
        canonical["language"] = language
    if callback_url is not None:
        canonical["callback_url"] = callback_url
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


def submit(
    settings: Settings,
    db: Database,
    dispatcher: Dispatcher,
    workflow_name: str,
    upload: Upload,
    limits: Limits,
    owner_id: str | None = None,
    idempotency_key: str | None = None,
    language: str | None = None,
    batch_id: str | None = None,
    callback_url: str | None = None,
) -> Submitted:
    """Record a job as queued, then publish its id. Accepted even when Redis is down.

    `language` is Tesseract's name of the document's language (see `ocr_language`), for OCR;
    `batch_id` the batch it belongs to (jobs/batches.py). `callback_url` (checked by
    `webhooks.targets.check_url`) receives the job's webhooks; without one, the account's default
    URL as it is now does.
    """
    get_workflow(workflow_name)  # an unknown workflow raises before anything is looked up
    scoped_key = f"{owner_id or '-'}:{idempotency_key}" if idempotency_key else None
    request_fingerprint = fingerprint(workflow_name, upload, limits, language, callback_url)
    if scoped_key is not None:
        existing = _existing(db, scoped_key, request_fingerprint)
        if existing is not None:
            return Submitted(existing, created=False)
    job = Job(
        **_job_values(settings, workflow_name, upload, limits, owner_id, language, batch_id, callback_url),
        idempotency_key=scoped_key,
        request_fingerprint=request_fingerprint if scoped_key else None,
    )

    def account_default(session: Session) -> None:
        if job.callback_url is None and owner_id is not None:
            job.callback_url = default_webhook_url(db, owner_id, session)

    try:
        dispatcher.move(job.id, lambda message_id: states.accept(db, job, message_id, account_default))
    except IntegrityError:
        # A concurrent request with the same Idempotency-Key won the insert.
        if scoped_key is None:
            raise
        existing = _existing(db, scoped_key, request_fingerprint)
        if existing is None:
            raise
        return Submitted(existing, created=False)
    return Submitted(job, created=True)


def _job_values(
    settings: Settings,
    workflow_name: str,
    upload: Upload,
    limits: Limits,
    owner_id: str | None,
    language: str | None,
    batch_id: str | None,
    callback_url: str | None,
) -> dict[str, Any]:
    """The fields of a job on `upload` as `submit` records it, not yet accepted."""
    workflow = get_workflow(workflow_name)
    timeout, attempts, deadline = _effective(settings, limits)
    now = utcnow()
    return {
        "id": new_id(),
        "created_at": now,
        "updated_at": now,
        "available_at": now,
        "owner_id": owner_id,
        "workflow": workflow.name,
        "workflow_version": workflow.version,
        "input_ref": upload.input_ref,
        "input_filename": upload.filename,
        "input_size": upload.size,
        "input_sha256": upload.sha256,
        "input_content_type": upload.content_type,
        "language": language,
        "callback_url": callback_url,
        "status": JobStatus.QUEUED,
        "max_attempts": attempts,
        "timeout_s": timeout,
        "deadline_s": deadline,
        "deadline_at": now + timedelta(seconds=deadline),
        "batch_id": batch_id,
    }


def submit_many(
    settings: Settings,
    db: Database,
    dispatcher: Dispatcher,
    workflow_name: str,
    uploads: Sequence[Upload],
    limits: Limits,
    owner_id: str | None,
    *,
    language: str | None = None,
    batch_id: str | None = None,
) -> list[Job]:
    """`submit` for many stored uploads at once (a batch's): their jobs and first events in one
    transaction, which also records the uploads' stored sizes and digests (`store_reserved`), then
    their messages in one go. Accepted even when Redis is down: recovery publishes what did not go.

    Each job takes its owner's default webhook URL, as `submit` gives one without `callback_url`.
    """
    if not uploads:
        return []
    callback_url = default_webhook_url(db, owner_id) if owner_id is not None else None
    jobs = [
        _job_values(settings, workflow_name, u, limits, owner_id, language, batch_id, callback_url) for u in uploads
    ]

    def finish(session: Session) -> None:
        store.finish_uploads(session, uploads)

    accepted = dispatcher.move_many(len(jobs), lambda message_ids: states.accept_many(db, jobs, message_ids, finish))
    return accepted.moved or []


def _existing(db: Database, scoped_key: str, request_fingerprint: str) -> Job | None:
    existing = store.find_by_idempotency_key(db, scoped_key)
    if existing is not None and existing.request_fingerprint != request_fingerprint:
        raise IdempotencyConflict
    return existing


def submit_document(
    settings: Settings,
    storage: Storage,
    db: Database,
    dispatcher: Dispatcher,
    workflow: str,
    filename: str | None,
    stream: BinaryIO,
    limits: Limits,
    owner_id: str | None,
    idempotency_key: str | None = None,
    language: str | None = None,
    callback_url: str | None = None,
) -> Submitted:
    """Store an uploaded document and submit a job on it: a form post with the file attached."""
    upload = store_upload(settings, storage, db, filename, stream, owner_id)
    return submit(
        settings,
        db,
        dispatcher,
        workflow,
        upload,
        limits,
        owner_id,
        idempotency_key,
        language,
        callback_url=callback_url,
    )


class UploadRejected(Exception):
    """The file cannot be accepted; `status` is the HTTP status that says why."""

    def __init__(self, status: int, message: str, code: str | None = None, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.retry_after_s = retry_after_s


def stream_size(stream: BinaryIO) -> int | None:
    """The stream's length when it can be known without reading it (a spooled form upload can)."""
    try:
        here = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(here)
    except (AttributeError, OSError, ValueError):
        return None
    return end


def _room(settings: Settings, recent: store.UploadActivity, stored: int, size: int | None, now: datetime) -> int:
    """The most bytes this person's next upload may take; refuses (429) past the per-minute count
    or bytes, and (413) when a file of `size` (if known) does not fit in their storage quota."""
    if recent.count >= settings.uploads_per_minute or recent.size >= settings.upload_bytes_per_minute:
        waited = (now - recent.first_at).total_seconds() if recent.first_at else 0.0
        retry = max(1, math.ceil(60 - waited))
        raise UploadRejected(
            429,
            f"You have uploaded {recent.count} files ({recent.size / 1_048_576:.0f} MB) in the last minute, "
            f"which is the most allowed. Try again in {retry} s.",
            code="rate_limited",
            retry_after_s=retry,
        )
    if size is not None and size > settings.max_upload_bytes:
        raise UploadRejected(413, f"The file is larger than {settings.max_upload_mb:g} MB.")
    room = min(settings.storage_quota_bytes - stored, settings.max_upload_bytes)
    if room <= 0 or (size is not None and size > room):
        raise UploadRejected(413, _over_quota(settings.storage_quota_mb), code="storage_quota_exceeded")
    return room


def refuse_early(settings: Settings, db: Database, owner_id: str, at_least_bytes: int) -> None:
    """Before a body is read: refuse when this person is already past a per-minute limit, or a
    file of `at_least_bytes` cannot fit in their quota. (Not a reservation: `store_upload` checks
    again, atomically, once the file is here.)"""
    now = utcnow()
    recent, stored = store.upload_usage(db, owner_id, now - timedelta(minutes=1))
    _room(settings, recent, stored, at_least_bytes, now)


def _reserve(settings: Settings, db: Database, upload: Upload, size: int | None, at_most: int | None) -> int:
    """Record the upload before its bytes are stored, so that parallel uploads count against each
    other. Returns the most bytes the file may take: its room under the limits, and never more
    than `at_most` (the request body's declared length, which the file cannot exceed)."""
    now = utcnow()
    room = 0

    def check(recent: store.UploadActivity, stored: int) -> None:
        nonlocal room
        room = _room(settings, recent, stored, size, now)
        if at_most is not None:
            room = min(room, at_most)
        # Held against the quota and the per-minute bytes until the real size is known: the
        # least that is sure to cover it, so that small parallel uploads do not shut each other out.
        upload.size = size if size is not None else room

    store.reserve_upload(db, upload, now - timedelta(minutes=1), check)
    return room


def check_head(settings: Settings, filename: str | None, head: bytes, size: int | None) -> Upload:
    """An upload not yet recorded, from a document's first bytes: refused (`UploadRejected`) when
    empty (422), of a type we do not read (415, decided by content) or larger than the limit (413)."""
    name = _safe_filename(filename)
    if not head:
        raise UploadRejected(422, "The file is empty. Choose a document with text in it.")
    try:
        content_type = detect_type(head, name)
    except UnsupportedType as exc:
        raise UploadRejected(415, UNSUPPORTED) from exc
    if size is not None and size > settings.max_upload_bytes:
        raise _too_large(settings, settings.max_upload_bytes)
    return Upload(filename=name, size=size or 0, sha256="", content_type=content_type)


def reserve_uploads(
    settings: Settings, db: Database, uploads: Sequence[Upload], owner_id: str | None
) -> list[UploadRejected | None]:
    """Record many uploads of one person at once, before their bytes are stored, each `size` being
    its file's exact length: what `begin_upload` checks file by file (the per-minute count and
    bytes, the storage quota), in order, in one transaction. For each upload: None when it was
    recorded, else why it was refused (its row is then not kept)."""
    for upload in uploads:
        upload.owner_id = owner_id
    if owner_id is None:
        store.reserve_uploads(db, uploads, utcnow(), lambda _recent, _stored: [True] * len(uploads))
        return [None] * len(uploads)
    now = utcnow()
    refusals: list[UploadRejected | None] = []

    def choose(recent: store.UploadActivity, stored: int) -> list[bool]:
        refusals.clear()
        for upload in uploads:
            try:
                _room(settings, recent, stored, upload.size, now)
            except UploadRejected as exc:
                refusals.append(exc)
                continue
            refusals.append(None)
            recent = store.UploadActivity(recent.count + 1, recent.size + upload.size, recent.first_at or now)
            stored += upload.size
        return [refusal is None for refusal in refusals]

    store.reserve_uploads(db, uploads, now - timedelta(minutes=1), choose)
    return refusals


def store_reserved(storage: Storage, upload: Upload, stream: BinaryIO) -> None:
    """Write a reserved upload's bytes to storage; it may take no more than its recorded size.

    Sets the upload's stored size and digest (`submit_many` records them with its job). Raises
    `TooLarge` past the size, `StorageUnavailable` when storage cannot be reached, and whatever
    reading the stream raises; nothing is stored then.
    """
    stored = storage.put_stream(upload.input_ref, file_chunks(stream), max_bytes=upload.size)
    upload.size, upload.sha256 = stored.size, stored.sha256
    get_metrics().upload_bytes.inc(stored.size)


def _over_quota(quota_mb: float) -> str:
    return (
        f"Your stored documents have reached your quota of {quota_mb:g} MB. "
        "Delete jobs you no longer need, or wait for unused uploads to expire."
    )


def _safe_filename(name: str | None) -> str:
    base = (name or "document").replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(ch for ch in base if ch.isprintable()).strip().lstrip(".")
    return cleaned[:200] or "document"


class UploadInProgress:
    """An upload whose bytes are arriving: recorded (counting against its owner's limits), its head
    checked, its bytes written to storage as they come. `finish` publishes it; `abort` leaves no
    row and no object behind."""

    def __init__(self, settings: Settings, db: Database, upload: Upload, pending: PendingObject, room: int) -> None:
        self.settings = settings
        self.db = db
        self.upload = upload
        self.pending = pending
        self.room = room

    def write(self, chunk: bytes) -> None:
        try:
            self.pending.write(chunk)
        except TooLarge as exc:
            raise _too_large(self.settings, self.room) from exc

    def finish(self) -> Upload:
        try:
            stored = self.pending.commit()
        except BaseException:
            self._forget()
            raise
        upload = self.upload
        upload.size, upload.sha256 = stored.size, stored.sha256
        get_metrics().upload_bytes.inc(stored.size)
        if upload.owner_id is None:
            return store.save_upload(self.db, upload)
        store.finish_upload(self.db, upload)
        return upload

    def abort(self) -> None:
        self.pending.abort()
        self._forget()

    def _forget(self) -> None:
        if self.upload.owner_id is not None:
            store.delete_upload(self.db, self.upload.id)


def _too_large(settings: Settings, room: int) -> UploadRejected:
    if room < settings.max_upload_bytes:
        return UploadRejected(413, _over_quota(settings.storage_quota_mb), code="storage_quota_exceeded")
    return UploadRejected(413, f"The file is larger than {settings.max_upload_mb:g} MB.")


def begin_upload(
    settings: Settings,
    storage: Storage,
    db: Database,
    filename: str | None,
    head: bytes,
    owner_id: str | None,
    size: int | None = None,
    at_most: int | None = None,
) -> UploadInProgress:
    """Start storing an upload from its first bytes (`HEAD_BYTES` of them, or all of a smaller file):
    refuse it when empty (422), of a type we do not read (415, decided by content), too large for
    the limit or its owner's quota (413) or past their per-minute limits (429). `size` is the file's
    length when known; `at_most` a bound on it when not (the length of the body that carries it)."""
    upload = check_head(settings, filename, head, size)
    upload.owner_id, upload.size = owner_id, 0
    room = _reserve(settings, db, upload, size, at_most) if owner_id is not None else settings.max_upload_bytes
    try:
        progress = UploadInProgress(settings, db, upload, storage.begin(upload.input_ref, max_bytes=room), room)
    except BaseException:
        if owner_id is not None:
            store.delete_upload(db, upload.id)
        raise
    try:
        progress.write(head)
    except BaseException:
        progress.abort()
        raise
    return progress


def store_upload(
    settings: Settings,
    storage: Storage,
    db: Database,
    filename: str | None,
    stream: BinaryIO,
    owner_id: str | None = None,
) -> Upload:
    """Store an uploaded file under a generated key, checking its size and its type by content."""
    head = stream.read(HEAD_BYTES)  # an e-invoice's root element may follow a long licence comment
    progress = begin_upload(settings, storage, db, filename, head, owner_id, stream_size(stream))
    try:
        for chunk in file_chunks(stream):
            progress.write(chunk)
    except BaseException:
        progress.abort()
        raise
    return progress.finish()


def discard_upload(storage: Storage, db: Database, upload: Upload) -> None:
    """Remove an upload no job uses (a form whose other fields were refused after its file was stored)."""
    remove_unused_upload(storage, db, upload.id)


def cancel(settings: Settings, db: Database, dispatcher: Dispatcher, job_id: str) -> Job:
    job = dispatcher.record(job_id, partial(states.cancel, settings, db, job_id))
    if job is None:
        raise NotAllowed("Only a queued or running job can be cancelled.")
    return job


def replay(settings: Settings, db: Database, dispatcher: Dispatcher, job_id: str) -> Job:
    job = dispatcher.move(job_id, lambda message_id: states.replay(settings, db, job_id, message_id)).moved
    if job is None:
        raise NotAllowed("Only a dead-lettered or cancelled job can be replayed.")
    return job


def save_review(
    db: Database, dispatcher: Dispatcher, results: ResultCache, job_id: str, fields: review.ReviewedFields, by: str
) -> Job:
    """Save a person's review of a completed invoice (`review.save_review`), then tell the after-commit
    hooks, so that the pages and streams open on the job, its owner's list and its batch show it at once.
    `review.NotReviewable` when the job is no completed invoice."""
    job = review.save_review(db, results, job_id, fields, by)
    dispatcher.committed(job_id, JobReviewed(job.owner_id))
    return job


def delete(settings: Settings, storage: Storage, db: Database, dispatcher: Dispatcher, job_id: str) -> bool:
    """Stop the job if it is active, then remove its artifacts, its record and (if unshared) its input.

    The files go first: when storage cannot be reached `StorageUnavailable` is raised and the
    record stays, so nothing is lost track of. An input whose object cannot be removed keeps its
    upload row, and the expiry of unused uploads removes both later. Once the record is gone the
    after-commit hooks hear `JobRemoved`, so the job's open streams say so and end.
    """
    states.cancel(settings, db, job_id, detail="Deleted on request.")  # the hooks hear of the removal instead
    job = store.get_job(db, job_id)
    if job is None:
        return False
    storage.delete_tree(artifacts_prefix(job_id))
    if store.delete_job(db, job_id) is None:
        return False
    dispatcher.committed(job_id, JobRemoved(job.owner_id, job.batch_id))
    remove_unused_upload(storage, db, job.input_ref.removeprefix("uploads/"))
    return True


def remove_unused_upload(storage: Storage, db: Database, upload_id: str) -> bool:
    """Remove an upload no job uses: its object, then its row (which keeps it on record for a later
    try while storage cannot be reached). True when both went."""
    if store.upload_in_use(db, upload_id):
        return False
    try:
        storage.delete_tree(f"uploads/{upload_id}")
    except StorageUnavailable:
        log.warning("storage unreachable: upload %s is kept on record for a later try", upload_id)
        return False
    return store.delete_upload(db, upload_id, unused_only=True)
