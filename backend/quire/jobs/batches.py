"""Batches: many documents with one workflow, each admitted as an ordinary job, watched together.

Each file (or each document inside a ZIP archive) gets the checks of the single-job path: type
by content, size, the storage quota and the per-minute upload limits, in order, as if uploaded
one after the other. They are made in bulk (`_Admission`): a chunk of documents has its uploads
reserved in one transaction, its bytes stored, then its jobs and their first events created in
one more, and its messages published in one Redis pipeline after that commit; a publish that
fails leaves the recorded message ids for recovery to republish, as for a single job. A file
refused is listed in `rejected` with the reason; it never sinks the others. With an
Idempotency-Key a repeated request answers with the same batch.

A batch's end is observable: `BatchCompletion` is a dispatcher after-commit hook that notices
when the last active job of a sealed batch finishes and tells its listeners (once per finish:
a replay reopens the batch). Webhooks attach there.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, BinaryIO, cast

from sqlalchemy import and_, delete, exists, func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from quire.db import Database
from quire.documents.archive import (
    ArchiveLimits,
    ArchiveRefused,
    Member,
    display_name,
    is_archive,
    members,
    open_member,
)
from quire.documents.einvoice import HEAD_BYTES
from quire.documents.storage import Storage, TooLarge
from quire.jobs import service, store
from quire.jobs.models import Batch, Job, JobRemoved, JobStatus, Upload, utcnow
from quire.jobs.results import DocumentType, InvoiceRow, ResultCache, invoice_rows
from quire.jobs.states import TERMINAL
from quire.queue.dispatch import Dispatcher
from quire.settings import Settings
from quire.views import View

log = logging.getLogger(__name__)
ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


@dataclass(frozen=True)
class Rejected:
    filename: str
    reason: str
    status: int = 422
    retry_after_s: int | None = None


@dataclass(frozen=True)
class AcceptedJob:
    job_id: str
    filename: str
    status: str


@dataclass(frozen=True)
class BatchSubmitted:
    batch: Batch
    jobs: list[AcceptedJob]
    rejected: list[Rejected]
    created: bool


class NothingAccepted(Exception):
    """No file of the request became a job; `rejected` says why for each."""

    def __init__(self, rejected: list[Rejected]) -> None:
        super().__init__("No document in this request could be accepted.")
        self.rejected = rejected


@dataclass(frozen=True)
class Part:
    """One `file` field of the request: a document, or a ZIP archive of documents."""

    filename: str
    stream: BinaryIO


def _fingerprint(workflow: str, callback_url: str | None, parts: Sequence[Part], limits: service.Limits) -> str:
    digest = hashlib.sha256(f"{workflow}\0{callback_url or ''}\0{limits.model_dump_json()}".encode())
    for part in parts:
        part_digest = hashlib.sha256()
        while chunk := part.stream.read(1 << 16):
            part_digest.update(chunk)
        part.stream.seek(0)
        digest.update(f"\0{part.filename}\0{part_digest.hexdigest()}".encode())
    return digest.hexdigest()


# Documents are admitted in chunks of this many: each chunk's uploads are reserved in one
# transaction, and its jobs created (and their messages published) in another.
CHUNK_DOCUMENTS = 200
# Documents stored at once: writes wait on the disk (fsync) or the network, not on Python.
STORE_THREADS = 8
DAMAGED_MEMBER = "This file is damaged inside the archive and cannot be read."


Opener = Callable[[], AbstractContextManager[BinaryIO]]


@dataclass(frozen=True)
class _Document:
    """A document of the batch that passed the checks its first bytes allow, waiting for its chunk."""

    upload: Upload
    shown: str
    open: Opener


@contextlib.contextmanager
def _from_start(stream: BinaryIO) -> Iterator[BinaryIO]:
    stream.seek(0)
    yield stream


@dataclass
class _Admission:
    """One batch's admission in progress: its jobs, its refusals, the documents waiting and the room left.

    Each document is checked from its first bytes (empty, type, size) as it is read from the
    request, then waits; a full chunk (or a full batch) goes through `flush`: its uploads reserved
    against the person's limits in one transaction (the same checks, in the same order, as one
    upload at a time), their bytes stored, then their jobs created in one transaction and their
    messages published together. Archives stay open until their documents are stored.
    """

    db: Database
    storage: Storage
    settings: Settings
    dispatcher: Dispatcher
    batch: Batch
    limits: service.Limits
    language: str | None
    jobs: list[AcceptedJob] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    unpacked: int = 0
    waiting: list[_Document] = field(default_factory=list)

    def document(self, filename: str, stream: BinaryIO) -> None:
        """A `file` part of the request that is a document."""
        if self._room_left(filename):
            head = stream.read(HEAD_BYTES)
            self._checked(filename, head, service.stream_size(stream), filename, partial(_from_start, stream))

    def _room_left(self, shown: str) -> bool:
        """Whether the batch may take one more document; admits what waits when that decides it."""
        most = self.settings.batch_max_files
        if len(self.jobs) + len(self.waiting) >= most:
            self.flush()
        if len(self.jobs) >= most:
            self.rejected.append(Rejected(shown, self._full()))
            return False
        return True

    def _checked(self, filename: str, head: bytes, size: int | None, shown: str, opener: Opener) -> None:
        try:
            upload = service.check_head(self.settings, filename, head, size)
        except service.UploadRejected as exc:
            self.rejected.append(Rejected(shown, exc.message, exc.status, exc.retry_after_s))
            return
        if size is None:
            upload.size = self.settings.max_upload_bytes  # held until the stored size is known
        self.waiting.append(_Document(upload, shown, opener))
        if len(self.waiting) >= CHUNK_DOCUMENTS:
            self.flush()

    def archive(self, part: Part) -> None:
        limits = ArchiveLimits(
            max_files=self.settings.batch_max_files,
            max_total_bytes=self.settings.batch_max_bytes - self.unpacked,
            max_file_bytes=self.settings.max_upload_bytes,
            max_ratio=self.settings.archive_max_ratio,
        )
        try:
            archive = zipfile.ZipFile(part.stream)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            self.rejected.append(Rejected(part.filename, "The archive is damaged and cannot be read."))
            return
        # Only opening the archive can find it damaged (a damaged entry is refused on its own):
        # a failure to store its documents is the service's, and reaches the caller as such.
        with archive:
            try:
                for entry in members(archive, limits):
                    name = display_name(part.filename, entry.name)
                    if isinstance(entry, Member):
                        self._member(archive, entry, name)
                    else:
                        self.rejected.append(Rejected(name, entry.reason))
            except ArchiveRefused as exc:
                self.rejected.append(Rejected(part.filename, str(exc)))
            finally:
                self.flush()  # its documents are read from it

    def _member(self, archive: zipfile.ZipFile, member: Member, name: str) -> None:
        if not self._room_left(name):
            return
        try:
            with archive.open(member.info) as source:
                head = source.read(HEAD_BYTES)
            nested = head.startswith(b"PK\x03\x04") and _is_archive_member(archive, member)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
            self.rejected.append(Rejected(name, DAMAGED_MEMBER))
            return
        self.unpacked += member.info.file_size
        if nested:
            reason = "An archive inside an archive is not opened. Add its files to the batch instead."
            self.rejected.append(Rejected(name, reason))
            return
        filename = member.name.rsplit("/", 1)[-1]
        self._checked(filename, head, member.info.file_size, name, partial(_member_stream, archive, member))

    def flush(self) -> None:
        """Admit the waiting documents: reserve, store, then create their jobs and publish them."""
        documents, self.waiting = self.waiting, []
        if not documents:
            return
        refusals = service.reserve_uploads(self.settings, self.db, [d.upload for d in documents], self.batch.owner_id)
        reserved = [d for d, refusal in zip(documents, refusals, strict=True) if refusal is None]
        for document, refusal in zip(documents, refusals, strict=True):
            if refusal is not None:
                self.rejected.append(Rejected(document.shown, refusal.message, refusal.status, refusal.retry_after_s))
        stored: list[_Document] = []
        try:
            # A few at a time: each local file waits for its fsync, each object in a bucket for its PUT.
            with ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="batch-store") as pool:
                outcomes = list(pool.map(partial(_store, self.storage), reserved))
            for document, whole in zip(reserved, outcomes, strict=True):
                if whole:
                    stored.append(document)
                else:
                    self.rejected.append(Rejected(document.shown, DAMAGED_MEMBER))
                    store.delete_upload(self.db, document.upload.id)
            jobs = service.submit_many(
                self.settings,
                self.db,
                self.dispatcher,
                self.batch.workflow,
                [d.upload for d in stored],
                self.limits,
                self.batch.owner_id,
                language=self.language,
                batch_id=self.batch.id,
            )
        except BaseException:
            # Storage or the database failed: the uploads no job took go now (or, when storage
            # cannot be reached, with the expiry of unused uploads).
            for document in reserved:
                service.discard_upload(self.storage, self.db, document.upload)
            raise
        self.jobs.extend(AcceptedJob(job.id, job.input_filename, job.status) for job in jobs)

    def _full(self) -> str:
        return f"A batch takes at most {self.settings.batch_max_files:,} documents; this one is full."


@contextlib.contextmanager
def _member_stream(archive: zipfile.ZipFile, member: Member) -> Iterator[BinaryIO]:
    """The entry's bytes as they are decompressed; reading past a damaged end raises BadZipFile."""
    with archive.open(member.info) as stream:
        yield cast(BinaryIO, stream)


def _store(storage: Storage, document: _Document) -> bool:
    """Store a reserved document's bytes; False when it turns out damaged as it is read (an archive's entry)."""
    try:
        with document.open() as stream:
            service.store_reserved(storage, document.upload, stream)
    except (TooLarge, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError):
        return False
    return True


def _is_archive_member(archive: zipfile.ZipFile, member: Member) -> bool:
    with contextlib.closing(open_member(archive, member)) as stream:
        return is_archive(stream)


def submit_batch(
    settings: Settings,
    storage: Storage,
    db: Database,
    dispatcher: Dispatcher,
    completion: BatchCompletion,
    workflow: str,
    parts: Sequence[Part],
    owner_id: str | None,
    *,
    idempotency_key: str | None = None,
    callback_url: str | None = None,
    limits: service.Limits | None = None,
    language: str | None = None,
) -> BatchSubmitted:
    """Admit every document of the request as a job of one new batch (or answer a repeat with the old one).

    Raises service.IdempotencyConflict for a reused key with a different request, and
    NothingAccepted (the batch is then not kept) when no document could be admitted.
    """
    limits = limits or service.Limits()
    scoped_key = f"{owner_id or '-'}:{idempotency_key}" if idempotency_key else None
    fingerprint = _fingerprint(workflow, callback_url, parts, limits) if scoped_key else None
    if scoped_key is not None:
        existing = _existing(db, scoped_key, fingerprint)
        if existing is not None:
            return existing
    batch = Batch(
        owner_id=owner_id,
        workflow=workflow,
        callback_url=callback_url,
        idempotency_key=scoped_key,
        request_fingerprint=fingerprint,
    )
    try:
        with db.session() as session:
            session.add(batch)
    except IntegrityError:
        # A concurrent request with the same key won: answer with its batch as it stands.
        found = _existing(db, scoped_key, fingerprint) if scoped_key else None
        if found is None:
            raise
        return found
    admission = _Admission(db, storage, settings, dispatcher, batch, limits, language)
    try:
        for part in parts:
            if is_archive(part.stream):
                admission.archive(part)
            else:
                admission.document(part.filename, part.stream)
        admission.flush()
    except BaseException:
        # Storage or the database failed partway: the jobs admitted so far run as any job does, so
        # their batch is sealed (or it would read "running" forever and never complete); a batch
        # that admitted nothing is not kept. The caller answers with the failure.
        _seal(db, batch, admission, completion)
        raise
    if not _seal(db, batch, admission, completion):
        raise NothingAccepted(admission.rejected)
    return BatchSubmitted(batch, admission.jobs, admission.rejected, created=True)


def _seal(db: Database, batch: Batch, admission: _Admission, completion: BatchCompletion) -> bool:
    """Close the batch to new documents with what it admitted; False (and the batch deleted) when that is nothing."""
    if not admission.jobs:
        with db.session() as session:
            session.execute(delete(Batch).where(col(Batch.id) == batch.id))
        return False
    rejected = [{"filename": r.filename, "reason": r.reason} for r in admission.rejected]
    with db.session() as session:
        session.execute(update(Batch).where(col(Batch.id) == batch.id).values(rejected=rejected, sealed_at=utcnow()))
    batch.rejected, batch.sealed_at = rejected, utcnow()
    completion.check(batch.id)  # every job may have finished while the others were admitted
    return True


def _existing(db: Database, scoped_key: str, fingerprint: str | None) -> BatchSubmitted | None:
    with db.session() as session:
        batch = session.exec(select(Batch).where(Batch.idempotency_key == scoped_key)).first()
        if batch is None:
            return None
        if batch.request_fingerprint != fingerprint:
            raise service.IdempotencyConflict
        jobs = session.exec(select(Job).where(Job.batch_id == batch.id).order_by(col(Job.created_at), col(Job.id)))
        accepted = [AcceptedJob(job.id, job.input_filename, job.status) for job in jobs]
    rejected = [Rejected(item["filename"], item["reason"]) for item in batch.rejected]
    return BatchSubmitted(batch, accepted, rejected, created=False)


# The read side.


class BatchCounts(View, frozen=True):
    queued: int
    running: int
    completed: int
    dead_letter: int
    cancelled: int

    def by_state(self) -> list[tuple[str, int]]:
        """(state, count) for each state, in this order: what the batch page lists."""
        return [(state, getattr(self, state)) for state in self.__struct_fields__]


class BatchItem(View, frozen=True):
    """One job of a batch: where it is, and for invoices the values (reviewed ones winning)."""

    job_id: str
    filename: str
    status: str
    error: str | None
    values: dict[str, str | None]
    reviewed: bool
    needs_review: list[str]
    # As the reader found; None without an invoice result (or one written before results said).
    document_type: DocumentType | None


class RejectedView(View, frozen=True):
    filename: str
    reason: str


class BatchView(View, frozen=True):
    """GET /batches/{id} without URLs (docs/api.md, "Batches"); the web layer's `BatchOut` is this
    view with each item's link and the spreadsheet downloads."""

    batch_id: str
    workflow: str
    status: str
    total: int
    done: int
    needs_attention: int
    counts: BatchCounts
    items: tuple[BatchItem, ...]
    rejected: tuple[RejectedView, ...]
    created_at: str | None
    updated_at: str | None


class BatchSummary(View, frozen=True):
    """A batch as the list of someone's batches shows it."""

    batch_id: str
    workflow: str
    status: str
    total: int
    done: int
    created_at: str | None


def _batch_status(batch: Batch, active: int) -> str:
    """A batch has no state of its own: it is completed once sealed with none of its jobs queued or running."""
    return "completed" if batch.sealed_at is not None and active == 0 else "running"


def owner_batches(db: Database, owner_id: str, limit: int = 50) -> list[BatchSummary]:
    """The owner's latest batches, newest first, each counted from its jobs in one grouped query."""
    with db.session() as session:
        found = session.exec(
            select(Batch).where(Batch.owner_id == owner_id).order_by(col(Batch.created_at).desc()).limit(limit)
        ).all()
        counted = (
            session.exec(
                select(Job.batch_id, Job.status, func.count())
                .where(col(Job.batch_id).in_([b.id for b in found]))
                .group_by(Job.batch_id, Job.status)
            ).all()
            if found
            else []
        )
    totals: dict[str, list[int]] = {}
    for batch_id, status, count in counted:
        totals.setdefault(batch_id or "", [0, 0])[0 if status in ACTIVE else 1] += int(count)
    summaries = []
    for batch in found:
        active, ended = totals.get(batch.id, [0, 0])
        summaries.append(
            BatchSummary(
                batch_id=batch.id,
                workflow=batch.workflow,
                status=_batch_status(batch, active),
                total=active + ended,
                done=ended,
                created_at=store.iso(batch.created_at),
            )
        )
    return summaries


def get_batch(db: Database, batch_id: str) -> Batch | None:
    with db.session() as session:
        return session.get(Batch, batch_id)


def owned_batch(db: Database, batch_id: str, owner_id: str, is_admin: bool = False) -> Batch | None:
    """The batch if the viewer may see it (its owner, or an admin); None as if it did not exist."""
    batch = get_batch(db, batch_id)
    if batch is None or not (is_admin or batch.owner_id == owner_id):
        return None
    return batch


def batch_jobs(session: Session, batch_id: str) -> list[Job]:
    return list(session.exec(select(Job).where(Job.batch_id == batch_id).order_by(col(Job.created_at), col(Job.id))))


def needs_attention(row: InvoiceRow) -> bool:
    """A job a person should look at: it failed, or its values wait for a review."""
    return row.status == JobStatus.DEAD_LETTER or (row.status == JobStatus.COMPLETED and bool(row.needs_review))


def batch_view(
    db: Database, batch: Batch, cache: ResultCache, iso: Callable[[datetime | None], str | None]
) -> BatchView:
    with db.session() as session:
        jobs = batch_jobs(session, batch.id)
        rows = invoice_rows(session, jobs, cache)
    counts: dict[str, int] = dict.fromkeys(JobStatus, 0)
    for job in jobs:
        counts[job.status] += 1
    active = counts[JobStatus.QUEUED] + counts[JobStatus.RUNNING]
    updated = max((job.updated_at for job in jobs), default=batch.created_at)
    return BatchView(
        batch_id=batch.id,
        workflow=batch.workflow,
        status=_batch_status(batch, active),
        total=len(jobs),
        done=len(jobs) - active,
        needs_attention=sum(needs_attention(row) for row in rows),
        counts=BatchCounts(
            queued=counts[JobStatus.QUEUED],
            running=counts[JobStatus.RUNNING],
            completed=counts[JobStatus.COMPLETED],
            dead_letter=counts[JobStatus.DEAD_LETTER],
            cancelled=counts[JobStatus.CANCELLED],
        ),
        items=tuple(
            BatchItem(
                job_id=row.job_id,
                filename=row.filename,
                status=row.status,
                error=row.error_code,
                values=row.values,
                reviewed=row.reviewed,
                needs_review=list(row.needs_review),
                document_type=row.document_type,
            )
            for row in rows
        ),
        rejected=tuple(RejectedView(filename=item["filename"], reason=item["reason"]) for item in batch.rejected),
        created_at=iso(batch.created_at),
        updated_at=iso(max(updated, batch.created_at)),
    )


def rows_of(db: Database, batch_id: str, cache: ResultCache) -> list[InvoiceRow]:
    with db.session() as session:
        return invoice_rows(session, batch_jobs(session, batch_id), cache)


def jobs_in(db: Database, batch_id: str, statuses: Iterable[JobStatus]) -> list[str]:
    with db.session() as session:
        return list(
            session.exec(select(Job.id).where(Job.batch_id == batch_id, col(Job.status).in_(list(statuses)))).all()
        )


def retry_failed(settings: Settings, db: Database, dispatcher: Dispatcher, batch_id: str) -> int:
    """Replay every dead-lettered job of the batch (the single-job replay, one by one); how many moved."""
    moved = 0
    for job_id in jobs_in(db, batch_id, [JobStatus.DEAD_LETTER]):
        with contextlib.suppress(service.NotAllowed):
            service.replay(settings, db, dispatcher, job_id)
            moved += 1
    return moved


def cancel_rest(settings: Settings, db: Database, dispatcher: Dispatcher, batch_id: str) -> int:
    """Cancel every queued or running job of the batch; how many moved."""
    moved = 0
    for job_id in jobs_in(db, batch_id, ACTIVE):
        with contextlib.suppress(service.NotAllowed):
            service.cancel(settings, db, dispatcher, job_id)
            moved += 1
    return moved


# A batch's end.

# Called inside the transaction that marks the batch completed, so what it records there (a
# webhook delivery) commits with the completion or not at all; what it returns runs after the commit.
BatchListener = Callable[[Session, Batch], Callable[[], object] | None]


@dataclass
class BatchCompletion:
    """An after-commit hook (`Dispatcher.on_commit`) that tells listeners when a batch finishes.

    After a job of a batch reaches a terminal state, one conditional UPDATE marks the batch
    completed if it is sealed and none of its jobs is active; only the transition that makes it
    true sees one row changed, so each finish is announced once even with many workers. A job
    of a finished batch that is queued again (a replay) reopens it. Batches sealed with every
    job already finished are checked by `seal`'s caller through `check`.
    """

    db: Database
    listeners: list[BatchListener] = field(default_factory=list)

    def on_completed(self, listener: BatchListener) -> None:
        """Call `listener(session, batch)` once each time a batch's last active job finishes, in the
        transaction that records it."""
        self.listeners.append(listener)

    def __call__(self, job_id: str, moved: object) -> None:
        if isinstance(moved, JobRemoved) and moved.batch_id is not None:
            self.check(moved.batch_id)  # the batch's last active job may be the one deleted
            return
        if not isinstance(moved, Job) or moved.batch_id is None:
            return
        if moved.status in TERMINAL:
            self.check(moved.batch_id)
        elif moved.status == JobStatus.QUEUED:
            reopen = update(Batch).where(col(Batch.id) == moved.batch_id, col(Batch.completed_at).is_not(None))
            with self.db.session() as session:
                session.execute(reopen.values(completed_at=None))

    def many(self, moves: Sequence[tuple[str, object]]) -> None:
        """Many transitions that committed together: each batch they touch is reopened or checked once."""
        queued = {m.batch_id for _, m in moves if isinstance(m, Job) and m.batch_id and m.status == JobStatus.QUEUED}
        ended = {m.batch_id for _, m in moves if isinstance(m, Job) and m.batch_id and m.status in TERMINAL}
        if queued:
            reopen = update(Batch).where(col(Batch.id).in_(sorted(queued)), col(Batch.completed_at).is_not(None))
            with self.db.session() as session:
                session.execute(reopen.values(completed_at=None))
        for batch_id in sorted(ended):
            self.check(batch_id)

    def check(self, batch_id: str) -> bool:
        """Mark the batch completed if it just finished, telling the listeners in the same
        transaction; True if it did. A listener that fails undoes the mark, so the recovery loop's
        `finish_unmarked` tries again: a batch's end is never marked without what it must record."""
        still_active = exists().where(and_(col(Job.batch_id) == batch_id, col(Job.status).in_(ACTIVE)))
        try:
            with self.db.session() as session:
                result: Any = session.execute(
                    update(Batch)
                    .where(
                        col(Batch.id) == batch_id,
                        col(Batch.sealed_at).is_not(None),
                        col(Batch.completed_at).is_(None),
                        ~still_active,
                    )
                    .values(completed_at=utcnow())
                )
                if not result.rowcount:
                    return False
                batch = session.get(Batch, batch_id)
                assert batch is not None  # the UPDATE above just matched it
                afterwards = [listener(session, batch) for listener in self.listeners]
        except Exception:
            log.exception("batch %s finished but its completion could not be recorded; recovery tries again", batch_id)
            return False
        log.info("batch %s completed", batch_id)
        for after in afterwards:
            if after is None:
                continue
            try:
                after()
            except Exception:  # what it sends is recorded, and recovery sends it if this did not
                log.exception("an after-commit step of batch %s's completion failed", batch_id)
        return True

    def finish_unmarked(self, limit: int = 100) -> int:
        """Recovery: mark (and announce) the sealed batches all of whose jobs have finished but that
        are not marked completed: the process that finished the last job died before its check, or
        a listener failed. Returns how many it marked."""
        active = exists().where(and_(col(Job.batch_id) == Batch.id, col(Job.status).in_(ACTIVE)))
        with self.db.session() as session:
            unmarked = session.exec(
                select(Batch.id)
                .where(col(Batch.sealed_at).is_not(None), col(Batch.completed_at).is_(None), ~active)
                .order_by(col(Batch.sealed_at))
                .limit(limit)
            ).all()
        return sum(self.check(batch_id) for batch_id in unmarked)
