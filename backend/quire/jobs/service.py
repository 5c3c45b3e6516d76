"""Use cases that join the job record to storage and the queue: submit, cancel, replay, delete.

The web API and the CLI both call these, so a job is accepted, replayed or removed one way.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from itertools import chain
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import IntegrityError

from quire.documents.einvoice import HEAD_BYTES
from quire.documents.extract import UNSUPPORTED, UnsupportedType, detect_type
from quire.documents.storage import TooLarge, file_chunks, get_storage
from quire.jobs import states, store
from quire.jobs.models import Job, JobStatus, Upload, artifacts_prefix, utcnow
from quire.metrics import get_metrics
from quire.queue.dispatch import Dispatcher
from quire.settings import get_settings
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


def ocr_language(name: str | None) -> str | None:
    """Tesseract's name for the language a submitter named (`de` or `deu`), if it is one OCR reads here."""
    if not name or not name.strip():
        return None
    code = TESSERACT_LANGUAGES.get(name.strip().lower(), name.strip().lower())
    available = get_settings().ocr_languages.split("+")
    if code not in available:
        known = ", ".join(k for k, v in TESSERACT_LANGUAGES.items() if v in available)
        raise UnknownLanguage(f"Quire cannot read {name.strip()[:20]!r} by OCR. Name one of: {known}.")
    return code


def document_languages() -> list[tuple[str, str]]:
    """(code, English name) of each language a submitter may name for OCR here, for a form's choices."""
    from babel import Locale

    available = get_settings().ocr_languages.split("+")
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

    last_age: tuple[float, float] | None = None  # (monotonic time read, oldest queued age then)

    def admit(self) -> None:
        limit = get_settings().admission_max_queue_age_s
        now = time.monotonic()
        if self.last_age is not None:
            read_at, age = self.last_age
            elapsed = now - read_at
            if elapsed < ADMISSION_RECHECK_S and age + elapsed <= limit:
                return
        age = store.oldest_queued_age_s()
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


def _effective(limits: Limits) -> tuple[float, int, float]:
    s = get_settings()
    timeout = min(limits.timeout_s or s.default_timeout_s, s.max_timeout_s)
    attempts = min(limits.max_attempts or s.default_max_attempts, s.max_max_attempts)
    deadline = min(limits.deadline_s or s.default_deadline_s, s.max_deadline_s)
    return timeout, attempts, deadline


def fingerprint(workflow: str, upload: Upload, limits: Limits, language: str | None = None) -> str:
    canonical = {"workflow": workflow, "input_sha256": upload.sha256, "limits": limits.model_dump()}
    if language is not None:
        canonical["language"] = language
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


def submit(
    dispatcher: Dispatcher,
    workflow_name: str,
    upload: Upload,
    limits: Limits,
    owner_id: str | None = None,
    idempotency_key: str | None = None,
    language: str | None = None,
) -> Submitted:
    """Record a job as queued, then publish its id. Accepted even when Redis is down.

    `language` is Tesseract's name of the document's language (see `ocr_language`), for OCR.
    """
    workflow = get_workflow(workflow_name)
    scoped_key = f"{owner_id or '-'}:{idempotency_key}" if idempotency_key else None
    request_fingerprint = fingerprint(workflow_name, upload, limits, language)
    if scoped_key is not None:
        existing = _existing(scoped_key, request_fingerprint)
        if existing is not None:
            return Submitted(existing, created=False)
    timeout, attempts, deadline = _effective(limits)
    job = Job(
        owner_id=owner_id,
        workflow=workflow.name,
        workflow_version=workflow.version,
        input_ref=upload.input_ref,
        input_filename=upload.filename,
        input_size=upload.size,
        input_sha256=upload.sha256,
        input_content_type=upload.content_type,
        language=language,
        status=JobStatus.QUEUED,
        max_attempts=attempts,
        timeout_s=timeout,
        deadline_s=deadline,
        deadline_at=utcnow() + timedelta(seconds=deadline),
        idempotency_key=scoped_key,
        request_fingerprint=request_fingerprint if scoped_key else None,
    )
    try:
        dispatcher.move(job.id, lambda message_id: states.accept(job, message_id))
    except IntegrityError:
        # A concurrent request with the same Idempotency-Key won the insert.
        if scoped_key is None:
            raise
        existing = _existing(scoped_key, request_fingerprint)
        if existing is None:
            raise
        return Submitted(existing, created=False)
    return Submitted(job, created=True)


def _existing(scoped_key: str, request_fingerprint: str) -> Job | None:
    existing = store.find_by_idempotency_key(scoped_key)
    if existing is not None and existing.request_fingerprint != request_fingerprint:
        raise IdempotencyConflict
    return existing


def submit_document(
    dispatcher: Dispatcher,
    workflow: str,
    filename: str | None,
    stream: BinaryIO,
    limits: Limits,
    owner_id: str | None,
    idempotency_key: str | None = None,
    language: str | None = None,
) -> Submitted:
    """Store an uploaded document and submit a job on it: a form post with the file attached."""
    upload = store_upload(filename, stream, owner_id)
    return submit(dispatcher, workflow, upload, limits, owner_id, idempotency_key, language)


class UploadRejected(Exception):
    """The file cannot be accepted; `status` is the HTTP status that says why."""

    def __init__(self, status: int, message: str, code: str | None = None, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.retry_after_s = retry_after_s


def _stream_size(stream: BinaryIO) -> int | None:
    """The stream's length when it can be known without reading it (a spooled form upload can)."""
    try:
        here = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(here)
    except (AttributeError, OSError, ValueError):
        return None
    return end


def _room(recent: store.UploadActivity, stored: int, size: int | None, now: datetime) -> int:
    """The most bytes this person's next upload may take; refuses (429) past the per-minute count
    or bytes, and (413) when a file of `size` (if known) does not fit in their storage quota."""
    settings = get_settings()
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


def refuse_early(owner_id: str, at_least_bytes: int) -> None:
    """Before a body is read: refuse when this person is already past a per-minute limit, or a
    file of `at_least_bytes` cannot fit in their quota. (Not a reservation: `store_upload` checks
    again, atomically, once the file is here.)"""
    now = utcnow()
    recent, stored = store.upload_usage(owner_id, now - timedelta(minutes=1))
    _room(recent, stored, at_least_bytes, now)


def _reserve(upload: Upload, size: int | None) -> int:
    """Record the upload before its bytes are stored, so that parallel uploads count against each
    other. Returns the most bytes the file may take."""
    now = utcnow()
    room = 0

    def check(recent: store.UploadActivity, stored: int) -> None:
        nonlocal room
        room = _room(recent, stored, size, now)
        # Held against the quota and the per-minute bytes until the real size is known.
        upload.size = size if size is not None else room

    store.reserve_upload(upload, now - timedelta(minutes=1), check)
    return room


def _over_quota(quota_mb: float) -> str:
    return (
        f"Your stored documents have reached your quota of {quota_mb:g} MB. "
        "Delete jobs you no longer need, or wait for unused uploads to expire."
    )


def _safe_filename(name: str | None) -> str:
    base = (name or "document").replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(ch for ch in base if ch.isprintable()).strip().lstrip(".")
    return cleaned[:200] or "document"


def store_upload(filename: str | None, stream: BinaryIO, owner_id: str | None = None) -> Upload:
    """Store an uploaded file under a generated key, checking its size and its type by content."""
    settings = get_settings()
    name = _safe_filename(filename)
    head = stream.read(HEAD_BYTES)  # an e-invoice's root element may follow a long licence comment
    if not head:
        raise UploadRejected(422, "The file is empty. Choose a document with text in it.")
    try:
        content_type = detect_type(head, name)
    except UnsupportedType as exc:
        raise UploadRejected(415, UNSUPPORTED) from exc
    upload = Upload(owner_id=owner_id, filename=name, size=0, sha256="", content_type=content_type)
    size = _stream_size(stream)
    if size is not None and size > settings.max_upload_bytes:
        raise UploadRejected(413, f"The file is larger than {settings.max_upload_mb:g} MB.")
    room = _reserve(upload, size) if owner_id is not None else settings.max_upload_bytes
    try:
        stored = get_storage().put_stream(upload.input_ref, chain([head], file_chunks(stream)), max_bytes=room)
    except BaseException as exc:
        if owner_id is not None:
            store.delete_upload(upload.id)
        if not isinstance(exc, TooLarge):
            raise
        if room < settings.max_upload_bytes:
            raise UploadRejected(413, _over_quota(settings.storage_quota_mb), code="storage_quota_exceeded") from exc
        raise UploadRejected(413, f"The file is larger than {settings.max_upload_mb:g} MB.") from exc
    upload.size, upload.sha256 = stored.size, stored.sha256
    get_metrics().upload_bytes.inc(stored.size)
    if owner_id is None:
        return store.save_upload(upload)
    store.finish_upload(upload)
    return upload


def cancel(dispatcher: Dispatcher, job_id: str) -> Job:
    job = dispatcher.record(job_id, partial(states.cancel, job_id))
    if job is None:
        raise NotAllowed("Only a queued or running job can be cancelled.")
    return job


def replay(dispatcher: Dispatcher, job_id: str) -> Job:
    job = dispatcher.move(job_id, lambda message_id: states.replay(job_id, message_id)).moved
    if job is None:
        raise NotAllowed("Only a dead-lettered or cancelled job can be replayed.")
    return job


def delete(job_id: str) -> bool:
    """Stop the job if it is active, then remove its record, artifacts and (if unshared) its input."""
    states.cancel(job_id, detail="Deleted on request.")
    job = store.delete_job(job_id)
    if job is None:
        return False
    storage = get_storage()
    storage.delete_tree(artifacts_prefix(job_id))
    if store.delete_upload(job.input_ref.removeprefix("uploads/"), unused_only=True):
        storage.delete_tree(job.input_ref)
    return True
