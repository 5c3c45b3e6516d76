"""Batches without a server: safe ZIP reading, formula escaping, and the hook that hears a batch finish."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import cast

import pytest
from sqlmodel import Session, select

from quire.db import Database
from quire.documents.archive import ArchiveLimits, ArchiveRefused, Member, Refusal, is_archive, members
from quire.documents.storage import Storage
from quire.errors import StorageUnavailable
from quire.jobs import batches, service
from quire.jobs.batches import BatchCompletion, Part, submit_batch
from quire.jobs.export import escape_formula
from quire.jobs.models import Artifact, Batch, Job, Upload, utcnow
from quire.jobs.results import NO_RESULT, ResultCache
from quire.jobs.store import UploadActivity
from quire.queue.dispatch import Dispatcher, InMemoryQueue
from quire.settings import Settings

LIMITS = ArchiveLimits(max_files=5, max_total_bytes=10_000_000, max_file_bytes=3_000_000, max_ratio=100)


def zip_bytes(entries: dict[str, bytes]) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    out.seek(0)
    return out


def read(entries: dict[str, bytes], limits: ArchiveLimits = LIMITS) -> dict[str, str | None]:
    """Each entry's name, and its refusal's reason (None: it is read)."""
    with zipfile.ZipFile(zip_bytes(entries)) as archive:
        return {e.name: None if isinstance(e, Member) else e.reason for e in members(archive, limits)}


def test_documents_are_read_and_litter_is_skipped() -> None:
    found = read({"a.pdf": b"%PDF-", "sub/b.txt": b"text", "__MACOSX/._a.pdf": b"x", "sub/.DS_Store": b"x"})
    assert found == {"a.pdf": None, "sub/b.txt": None}


@pytest.mark.parametrize("name", ["../up.txt", "a/../../up.txt", "/etc/passwd", "C:/boot.ini", "..\\win.txt"])
def test_names_that_leave_the_archive_are_refused(name: str) -> None:
    reason = read({name: b"x"})[name]
    assert reason is not None
    assert "leaves the archive" in reason


def test_a_highly_compressed_entry_is_refused_as_a_bomb() -> None:
    reason = read({"zeros.txt": bytes(2_000_000)})["zeros.txt"]
    assert reason is not None
    assert "ZIP bomb" in reason


def test_an_entry_over_the_upload_limit_is_refused() -> None:
    reason = read({"big.bin": bytes(3_000_001)})["big.bin"]
    assert reason is not None
    assert "larger than" in reason


def test_an_archive_over_the_limits_is_refused_whole_before_anything_is_read() -> None:
    with pytest.raises(ArchiveRefused, match="holds 6 files"):
        read({f"{i}.txt": b"x" for i in range(6)})
    small = ArchiveLimits(max_files=5, max_total_bytes=1000, max_file_bytes=3_000_000, max_ratio=100)
    with pytest.raises(ArchiveRefused, match="unpacks to"):
        read({"a.txt": b"x" * 600, "b.txt": b"y" * 600}, small)


def test_an_encrypted_entry_is_refused() -> None:
    data = zip_bytes({"secret.txt": b"x"}).getvalue()
    # Set the "encrypted" flag bit in the local and central headers, as an encrypting zipper does.
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    patched = bytearray(data)
    patched[local + 6] |= 0x1
    patched[central + 8] |= 0x1
    with zipfile.ZipFile(io.BytesIO(bytes(patched))) as archive:
        [entry] = list(members(archive, LIMITS))
    assert isinstance(entry, Refusal)
    assert "encrypted" in entry.reason


def test_the_default_upload_limits_admit_one_batch_of_the_largest_size() -> None:
    settings = Settings()
    now = utcnow()
    # Given a person who has just sent every file but the last of a full-size batch
    sent = UploadActivity(count=settings.batch_max_files - 1, size=settings.batch_max_bytes - 1, first_at=now)
    # Then its last file is still within the per-minute limits (no 429)
    assert service._room(settings, sent, stored=0, size=1, now=now) >= 1
    # And one more file after it is refused until the minute has passed
    full = UploadActivity(count=settings.uploads_per_minute, size=0, first_at=now)
    with pytest.raises(service.UploadRejected) as refused:
        service._room(settings, full, stored=0, size=1, now=now)
    assert refused.value.status == 429


def test_a_word_document_is_not_an_archive() -> None:
    docx = zip_bytes({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document/>"})
    assert not is_archive(docx)
    assert is_archive(zip_bytes({"a.pdf": b"%PDF-"}))
    assert not is_archive(io.BytesIO(b"%PDF-1.7"))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("=1+2", "'=1+2"),
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+49 30 1234", "'+49 30 1234"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("-12.50", "-12.50"),  # a credit note's amount is a number, not a formula
        ("ACME GmbH", "ACME GmbH"),
        ("", ""),
    ],
)
def test_formula_escaping(text: str, shown: str) -> None:
    assert escape_formula(text) == shown


def _batch_of(settings: Settings, db: Database, dispatcher: Dispatcher, count: int) -> tuple[str, list[str]]:
    batch = Batch(owner_id="owner", workflow="document_summary", sealed_at=utcnow())
    with db.session() as session:
        session.add(batch)
    jobs = []
    for i in range(count):
        upload = Upload(owner_id="owner", filename=f"{i}.txt", size=1, sha256="0" * 64, content_type="text/plain")
        jobs.append(
            service.submit(
                settings, db, dispatcher, "document_summary", upload, service.Limits(), batch_id=batch.id
            ).job.id
        )
    return batch.id, jobs


def _listening(db: Database) -> tuple[Dispatcher, BatchCompletion, list[str]]:
    """A dispatcher whose after-commit hook checks batches, and the ids of the batches heard finishing."""
    dispatcher = Dispatcher(InMemoryQueue())
    completion = BatchCompletion(db)
    dispatcher.on_commit(completion)
    heard: list[str] = []
    completion.on_completed(lambda _session, batch: heard.append(batch.id))
    return dispatcher, completion, heard


def test_a_batch_finishing_is_heard_once_and_again_after_a_replay(settings: Settings, db: Database) -> None:
    # Given a sealed batch of two jobs, and a listener on the dispatcher's after-commit hook
    dispatcher, completion, heard = _listening(db)
    batch_id, (first, second) = _batch_of(settings, db, dispatcher, 2)
    # When the first job ends, the batch is not finished
    service.cancel(settings, db, dispatcher, first)
    assert heard == []
    # When the last one ends, the listener hears it once
    service.cancel(settings, db, dispatcher, second)
    assert heard == [batch_id]
    assert completion.check(batch_id) is False
    # When a job is replayed and ends again, the batch finishes a second time
    service.replay(settings, db, dispatcher, first)
    service.cancel(settings, db, dispatcher, first)
    assert heard == [batch_id, batch_id]


def test_the_list_of_someones_batches_counts_each_from_its_jobs(settings: Settings, db: Database) -> None:
    # Someone with no batches gets an empty list
    assert batches.owner_batches(db, "owner") == []
    # Given two batches: one with a job done and one queued, one with both jobs done
    dispatcher = Dispatcher(InMemoryQueue())
    running, (done, _queued) = _batch_of(settings, db, dispatcher, 2)
    service.cancel(settings, db, dispatcher, done)
    finished, jobs = _batch_of(settings, db, dispatcher, 2)
    for job_id in jobs:
        service.cancel(settings, db, dispatcher, job_id)
    # Then each is counted from its own jobs, newest first, on SQLite and PostgreSQL alike
    listed = {b.batch_id: b for b in batches.owner_batches(db, "owner")}
    assert [b.batch_id for b in batches.owner_batches(db, "owner")] == [finished, running]
    assert (listed[running].status, listed[running].done, listed[running].total) == ("running", 1, 2)
    assert (listed[finished].status, listed[finished].done, listed[finished].total) == ("completed", 2, 2)
    assert batches.owner_batches(db, "someone else") == []


def test_deleting_a_batchs_last_active_job_finishes_the_batch_at_once(
    settings: Settings, db: Database, storage: Storage
) -> None:
    dispatcher, _completion, heard = _listening(db)
    batch_id, (first, second) = _batch_of(settings, db, dispatcher, 2)
    service.cancel(settings, db, dispatcher, first)
    # When the other, still queued, is deleted, the batch is finished then, not at the next recovery pass
    assert service.delete(settings, storage, db, dispatcher, second)
    assert heard == [batch_id]


def test_a_batch_is_not_finished_while_it_is_still_being_admitted(settings: Settings, db: Database) -> None:
    dispatcher, completion, heard = _listening(db)
    batch_id, (job,) = _batch_of(settings, db, dispatcher, 1)
    with db.session() as session:
        session.get_one(Batch, batch_id).sealed_at = None
    service.cancel(settings, db, dispatcher, job)
    assert heard == []
    with db.session() as session:
        session.get_one(Batch, batch_id).sealed_at = utcnow()
    assert completion.check(batch_id) is True
    assert heard == [batch_id]


def test_a_listener_that_fails_leaves_the_batch_unmarked_for_recovery(settings: Settings, db: Database) -> None:
    # Given a batch whose completion listener fails the first time it is called
    dispatcher = Dispatcher(InMemoryQueue())
    completion = BatchCompletion(db)
    dispatcher.on_commit(completion)
    calls: list[str] = []
    after_commit: list[str] = []

    def listener(session: Session, batch: Batch) -> Callable[[], object]:
        calls.append(batch.id)
        session.add(
            Upload(owner_id="owner", filename="written-with-it.txt", size=1, sha256="1" * 64, content_type="text/plain")
        )
        if len(calls) == 1:
            raise RuntimeError("the outbox is unreachable")
        return lambda: after_commit.append(batch.id)

    completion.on_completed(listener)
    batch_id, (job,) = _batch_of(settings, db, dispatcher, 1)
    # When its last job ends, the failure undoes the mark and what the listener wrote with it
    service.cancel(settings, db, dispatcher, job)
    with db.session() as session:
        assert session.get_one(Batch, batch_id).completed_at is None
        assert session.exec(select(Upload).where(Upload.filename == "written-with-it.txt")).all() == []
    assert after_commit == []
    # Then recovery marks it, with what the listener records, and runs its after-commit step once
    assert completion.finish_unmarked() == 1
    assert completion.finish_unmarked() == 0
    with db.session() as session:
        assert session.get_one(Batch, batch_id).completed_at is not None
        assert len(session.exec(select(Upload).where(Upload.filename == "written-with-it.txt")).all()) == 1
    assert after_commit == [batch_id]


def test_recovery_marks_a_batch_whose_last_job_ended_in_a_process_that_died(settings: Settings, db: Database) -> None:
    # Given a batch whose last job ended without the after-commit hook (its process died)
    completion = BatchCompletion(db)
    heard: list[str] = []
    completion.on_completed(lambda _session, batch: heard.append(batch.id))
    batch_id, (job,) = _batch_of(settings, db, Dispatcher(InMemoryQueue()), 1)
    service.cancel(settings, db, Dispatcher(InMemoryQueue()), job)
    assert heard == []
    # Then the recovery pass marks it once; a batch still running is left alone
    _running, _ = _batch_of(settings, db, Dispatcher(InMemoryQueue()), 1)
    assert completion.finish_unmarked() == 1
    assert heard == [batch_id]
    assert completion.finish_unmarked() == 0


def _documents(count: int) -> list[Part]:
    return [Part(f"{i}.txt", io.BytesIO(f"Document {i}. It has a sentence.".encode())) for i in range(count)]


@pytest.mark.parametrize("fails_at", [1, 3])
def test_a_batch_whose_storage_fails_partway_is_sealed_with_what_it_admitted(
    settings: Settings, db: Database, storage: Storage, monkeypatch: pytest.MonkeyPatch, fails_at: int
) -> None:
    # Given storage that fails on the `fails_at`th document, admitted one chunk per document
    monkeypatch.setattr(batches, "CHUNK_DOCUMENTS", 1)
    monkeypatch.setattr(batches, "STORE_THREADS", 1)
    stored: list[int] = []
    store_reserved = service.store_reserved

    def failing(storage: Storage, upload: Upload, stream: io.BytesIO) -> None:
        stored.append(1)
        if len(stored) == fails_at:
            raise StorageUnavailable("the bucket went away")
        store_reserved(storage, upload, stream)

    monkeypatch.setattr(service, "store_reserved", failing)
    dispatcher = Dispatcher(InMemoryQueue())
    completion = BatchCompletion(db)
    dispatcher.on_commit(completion)
    # When a batch of four is submitted, the caller hears of the failure
    with pytest.raises(StorageUnavailable):
        submit_batch(settings, storage, db, dispatcher, completion, "document_summary", _documents(4), "owner")
    with db.session() as session:
        kept = session.exec(select(Batch)).all()
        jobs = session.exec(select(Job)).all()
    # Then the documents admitted before it run in a sealed batch, which can complete
    assert len(jobs) == fails_at - 1
    if not jobs:
        assert kept == []  # nothing was admitted: no batch is kept
        return
    [batch] = kept
    assert batch.sealed_at is not None
    assert {job.batch_id for job in jobs} == {batch.id}
    for job in jobs:
        service.cancel(settings, db, dispatcher, job.id)
    with db.session() as session:
        assert session.get_one(Batch, batch.id).completed_at is not None


def test_an_invoice_result_storage_could_not_give_is_tried_again_not_remembered_as_none() -> None:
    # Given an invoice result whose storage is down at the first read
    body = b'{"result": {"vendor": "Acme Ltd", "total": "10.00", "needs_review": ["tax"]}}'
    reads: list[str] = []

    class Flaky:
        def read_bytes(self, key: str) -> bytes:
            reads.append(key)
            if len(reads) == 1:
                raise StorageUnavailable("the bucket cannot be reached")
            return body

    artifact = Artifact(job_id="j", name="invoice_summary.json", storage_key="artifacts/j/invoice_summary.json",
                        size=len(body), sha256="1" * 64, content_type="application/json", primary=True)  # fmt: skip
    cache = ResultCache(cast(Storage, Flaky()))
    # Then the first read says nothing, and the next one, storage back, reads it and keeps it
    assert cache.result(artifact) == NO_RESULT
    assert cache.result(artifact).needs_review == ("tax",)
    assert cache.result(artifact).values["vendor"] == "Acme Ltd"
    assert len(reads) == 2
