"""A big batch admitted in bulk keeps the single-job path's guarantees, on SQLite and PostgreSQL
with a real Redis: the per-minute and quota limits hold across its chunks, nothing is lost while
Redis is down, and a retried request answers with the same batch without storing anything again.

The service is called in this process (bootstrapped as a web process is), so each test takes
seconds; the HTTP shape of `POST /batches` is covered by test_batches.py.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest
import redis
from sqlmodel import col, func, select

from backend.tests.conftest import ScratchDatabase
from backend.tests.integration.conftest import fresh_redis_url
from backend.tests.integration.stack import document
from quire.bootstrap import Quire, bootstrap
from quire.db import Database
from quire.jobs import batches, service
from quire.jobs.batches import Part
from quire.jobs.models import EventType, Job, JobEvent, JobStatus, Upload
from quire.migrations import upgrade
from quire.queue.broker import QUEUE
from quire.queue.embedded_redis import EmbeddedRedis
from quire.queue.recovery import recover_once
from quire.settings import Settings

OWNER = "bulk-owner"
# More than one chunk of the bulk path, so every guarantee is seen across a chunk's edge.
FILES = batches.CHUNK_DOCUMENTS + 40
# Recovery republishes one job at a time, so the Redis test takes smaller chunks, three and a bit.
SMALL_CHUNK = 20
ACROSS = 3 * SMALL_CHUNK + 5


class Configure(Protocol):
    def __call__(self, database: ScratchDatabase, redis_url: str, data_dir: Path, **env: str) -> Quire: ...


@pytest.fixture
def configured() -> Iterator[Configure]:
    """Bootstraps this process as a web process on a fresh database, data directory and Redis, with
    `env` on top; the environment is put back and the database closed after the test."""
    saved = dict(os.environ)
    made: list[Quire] = []

    def configure(database: ScratchDatabase, redis_url: str, data_dir: Path, **env: str) -> Quire:
        values = {
            "QUIRE_DATABASE_URL": database.url,
            "QUIRE_REDIS_URL": redis_url,
            "QUIRE_DATA_DIR": str(data_dir),
            "QUIRE_UPLOADS_PER_MINUTE": "100000",
            "QUIRE_UPLOAD_MB_PER_MINUTE": "100000",
            "QUIRE_STORAGE_QUOTA_MB": "100000",
            "QUIRE_BATCH_MAX_FILES": "1000",
            "QUIRE_REPUBLISH_AFTER_SECONDS": "0",
            **env,
        }
        os.environ.update(values)
        upgrade(database.url)
        made.append(bootstrap(Settings()))
        return made[-1]

    try:
        yield configure
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for quire in made:
            quire.db.dispose()
            quire.broker.client.close()


def parts(count: int, size: int = 0) -> list[Part]:
    """`count` distinct text documents, each padded to `size` bytes when given."""
    made = []
    for i in range(count):
        data = document()
        made.append(Part(f"doc-{i:04d}.txt", io.BytesIO(data + b"x" * max(0, size - len(data)))))
    return made


def submit(quire: Quire, files: list[Part], key: str | None = None) -> batches.BatchSubmitted:
    return batches.submit_batch(
        quire.settings,
        quire.storage,
        quire.db,
        quire.dispatcher,
        quire.batches,
        "document_summary",
        files,
        OWNER,
        idempotency_key=key,
    )


def upload_rows(db: Database) -> int:
    with db.session() as session:
        return session.exec(select(func.count()).select_from(Upload).where(Upload.owner_id == OWNER)).one()


def stored_objects(quire: Quire) -> int:
    """Uploaded files in the local storage (not counting temporary ones)."""
    uploads = quire.settings.data_dir / "files" / "uploads"
    return sum(1 for path in uploads.rglob("*") if path.is_file() and not path.name.startswith(".tmp-"))


@pytest.mark.parametrize(
    "limit",
    [
        {"QUIRE_UPLOADS_PER_MINUTE": "230"},
        {"QUIRE_UPLOAD_MB_PER_MINUTE": str(230_000 / 1_048_576)},
    ],
    ids=["files-per-minute", "bytes-per-minute"],
)
def test_the_per_minute_limits_hold_across_a_big_batch(
    database: ScratchDatabase,
    redis_server: EmbeddedRedis,
    tmp_path: Path,
    configured: Configure,
    limit: dict[str, str],
) -> None:
    # Given a person allowed 230 uploads (or 230,000 bytes) a minute, who has uploaded one file
    # of 1,000 bytes already
    quire = configured(database, fresh_redis_url(redis_server), tmp_path, **limit)
    service.store_upload(quire.settings, quire.storage, quire.db, "earlier.txt", parts(1, size=1000)[0].stream, OWNER)
    # When they send a batch of 240 documents of 1,000 bytes
    submitted = submit(quire, parts(FILES, size=1000))
    # Then 229 become jobs, and the rest are refused as over the per-minute limit, each named
    assert len(submitted.jobs) == 229
    assert len(submitted.rejected) == FILES - 229
    assert all(r.status == 429 and r.retry_after_s for r in submitted.rejected)
    assert [r.filename for r in submitted.rejected] == [f"doc-{i:04d}.txt" for i in range(229, FILES)]
    # And only the admitted uploads (and the earlier one) are on record, each whole
    assert upload_rows(quire.db) == 230
    with quire.db.session() as session:
        assert session.exec(select(func.count()).select_from(Upload).where(Upload.sha256 == "")).one() == 0
    # When the same person is then past the limit, a whole batch is refused as rate limited
    with pytest.raises(batches.NothingAccepted) as refused:
        submit(quire, parts(3, size=1000))
    assert {r.status for r in refused.value.rejected} == {429}


def test_the_storage_quota_holds_across_a_big_batch(
    database: ScratchDatabase, redis_server: EmbeddedRedis, tmp_path: Path, configured: Configure
) -> None:
    # Given a quota of 220,000 bytes and documents of 1,000 bytes each
    quota_mb = str(220_000 / 1_048_576)
    quire = configured(database, fresh_redis_url(redis_server), tmp_path, QUIRE_STORAGE_QUOTA_MB=quota_mb)
    submitted = submit(quire, parts(FILES, size=1000))
    # Then exactly as many as fit become jobs, and the others are refused for the quota
    assert len(submitted.jobs) == 220
    assert {(r.status, r.reason.startswith("Your stored documents have reached")) for r in submitted.rejected} == {
        (413, True)
    }
    assert upload_rows(quire.db) == 220
    assert stored_objects(quire) == 220


def test_a_batch_sent_while_redis_is_down_loses_nothing(
    database: ScratchDatabase, tmp_path: Path, configured: Configure, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batches, "CHUNK_DOCUMENTS", SMALL_CHUNK)
    server = EmbeddedRedis(tmp_path / "redis", persistent=False).start()
    try:
        quire = configured(database, server.url, tmp_path / "data")
        # Given Redis is down
        server.stop()
        # When a batch of 65 documents is sent, it is accepted, every job recorded as queued
        # with its message id and its first event
        submitted = submit(quire, parts(ACROSS))
        assert len(submitted.jobs) == ACROSS
        assert not submitted.rejected
        ids = [job.job_id for job in submitted.jobs]
        with quire.db.session() as session:
            jobs = session.exec(select(Job).where(col(Job.id).in_(ids))).all()
            events = session.exec(select(JobEvent).where(col(JobEvent.job_id).in_(ids))).all()
        assert {job.status for job in jobs} == {JobStatus.QUEUED}
        assert all(job.message_id for job in jobs)
        assert sorted(e.job_id for e in events if e.type == EventType.QUEUED) == sorted(ids)
        # Then once Redis is back (empty), recovery publishes every one of them
        server = EmbeddedRedis(server.directory, port=server.port, persistent=False).start()
        report = recover_once(quire.settings, quire.db, quire.dispatcher)
        assert report.republished == ACROSS
        with quire.db.session() as session:
            message_ids = session.exec(select(Job.message_id).where(col(Job.id).in_(ids))).all()
        assert quire.dispatcher.held([m or "" for m in message_ids]) == [True] * ACROSS
    finally:
        server.stop()


def test_a_retried_batch_answers_the_same_batch_and_stores_nothing_again(
    database: ScratchDatabase, redis_server: EmbeddedRedis, tmp_path: Path, configured: Configure
) -> None:
    redis_url = fresh_redis_url(redis_server)
    quire = configured(database, redis_url, tmp_path)
    files = parts(FILES)
    first = submit(quire, files, key="month-1")
    uploads, objects = upload_rows(quire.db), stored_objects(quire)
    # When the client sends the same request again with the same key
    for part in files:
        part.stream.seek(0)
    again = submit(quire, files, key="month-1")
    # Then it gets the same batch and jobs, and nothing more is stored or queued
    assert (again.batch.id, again.created, first.created) == (first.batch.id, False, True)
    assert [j.job_id for j in again.jobs] == [j.job_id for j in first.jobs]
    assert len(first.jobs) == FILES
    assert (upload_rows(quire.db), stored_objects(quire)) == (uploads, objects) == (FILES, FILES)
    with quire.db.session() as session:
        message_ids = session.exec(select(Job.message_id).where(Job.owner_id == OWNER)).all()
    assert len(message_ids) == FILES
    # And each job's message went out once, in the pipelines after each chunk's commit
    assert quire.dispatcher.held([m or "" for m in message_ids]) == [True] * FILES
    assert redis.Redis.from_url(redis_url).hlen(f"dramatiq:{QUEUE}.msgs") == FILES
    # And other files with the same key are a conflict
    with pytest.raises(service.IdempotencyConflict):
        submit(quire, parts(2), key="month-1")
