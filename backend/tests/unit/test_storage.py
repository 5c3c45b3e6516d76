"""The storage contract, on the local directory and on a real S3-compatible server (moto's).

Every backend keeps the same promises: an object is there whole or not at all, its sha256 is the
one computed while it was written, a refused or abandoned write leaves nothing, a missing key is
`FileNotFoundError`, and a store that cannot be reached is `StorageUnavailable` (never a hang).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backend.tests.conftest import S3Server
from quire.documents.storage import LocalStorage, Storage, StorageUnavailable, TooLarge, open_storage
from quire.queue.embedded_redis import free_port


@pytest.fixture(params=["local", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    if request.param == "local":
        yield open_storage((tmp_path / "files").as_uri(), tmp_path / "spool")
        return
    server: S3Server = request.getfixturevalue("s3_server")
    yield open_storage(f"s3://{server.new_bucket()}/quire", tmp_path / "spool", server.endpoint)


def test_an_object_is_stored_whole_with_its_sha256(storage: Storage) -> None:
    # Given a stream of several chunks
    chunks = [b"a" * 1000, b"b" * 70_000, b"c"]
    data = b"".join(chunks)
    # When it is stored
    stored = storage.put_stream("uploads/u1", iter(chunks), max_bytes=len(data))
    # Then it reads back whole, in one piece or in chunks, with the sha256 computed as it was written
    assert (stored.key, stored.size, stored.sha256) == ("uploads/u1", len(data), hashlib.sha256(data).hexdigest())
    assert storage.read_bytes("uploads/u1") == data
    assert b"".join(storage.iter_bytes("uploads/u1")) == data
    assert storage.exists("uploads/u1")


def test_a_stream_past_its_limit_leaves_nothing(storage: Storage, tmp_path: Path) -> None:
    with pytest.raises(TooLarge):
        storage.put_stream("uploads/big", iter([b"x" * 600, b"x" * 600]), max_bytes=1000)
    assert not storage.exists("uploads/big")
    # Nor does an abandoned write, nor any scratch file
    pending = storage.begin("uploads/gone", max_bytes=None)
    pending.write(b"half a document")
    pending.abort()
    assert not storage.exists("uploads/gone")
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert leftovers == []


def test_missing_keys_and_deleted_trees(storage: Storage) -> None:
    with pytest.raises(FileNotFoundError):
        storage.read_bytes("artifacts/nothing/a.json")
    with pytest.raises(FileNotFoundError):
        storage.iter_bytes("artifacts/nothing/a.json")
    for name in ("attempt-1-w/a.json", "attempt-1-w/a.md", "preview/page-1.png"):
        storage.put_bytes(f"artifacts/job1/{name}", b"{}")
    storage.put_bytes("artifacts/job10/a.json", b"{}")
    storage.delete_tree("artifacts/job1")
    assert not storage.exists("artifacts/job1/attempt-1-w/a.json")
    assert not storage.exists("artifacts/job1/preview/page-1.png")
    # A neighbour whose name starts the same is not under the prefix
    assert storage.exists("artifacts/job10/a.json")
    storage.delete_tree("artifacts/job1")  # nothing there: not an error
    storage.put_bytes("uploads/u2", b"x")
    storage.delete_tree("uploads/u2")
    assert not storage.exists("uploads/u2")


def test_bytes_in_memory_are_stored_whole_in_new_folders_and_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "files")
    # Given a job's two files, the first in a folder that does not exist yet
    first = storage.put_bytes("artifacts/job3/attempt-1-w/a.json", b'{"total": 12}')
    second = storage.put_bytes("artifacts/job3/attempt-1-w/a.md", b"")
    # Then each is there whole, counted and hashed, and no scratch file is left beside them
    assert (first.size, first.sha256) == (13, hashlib.sha256(b'{"total": 12}').hexdigest())
    assert (second.size, storage.read_bytes(second.key)) == (0, b"")
    assert sorted(p.name for p in (tmp_path / "files/artifacts/job3/attempt-1-w").iterdir()) == ["a.json", "a.md"]
    # When a file cannot take its place (a folder has its name), the write fails and leaves no scratch file
    with pytest.raises(IsADirectoryError):
        storage.put_bytes("artifacts/job3", b"x")
    assert [p.name for p in (tmp_path / "files/artifacts").iterdir()] == ["job3"]


def test_keys_are_only_the_servers_own(storage: Storage) -> None:
    for key in ("../etc/passwd", "/abs", "a//b", "uploads/../x", "a b"):
        with pytest.raises(ValueError, match="invalid storage key"):
            storage.put_bytes(key, b"x")


def test_download_url_serves_the_object_as_an_attachment(storage: Storage) -> None:
    storage.put_bytes("artifacts/job2/a.json", b'{"ok": true}')
    url = storage.download_url("artifacts/job2/a.json", "a.json", "application/json")
    if isinstance(storage, LocalStorage):
        assert url is None  # the local directory has no URLs of its own: downloads are streamed
        return
    assert url is not None
    response = httpx.get(url)
    assert response.status_code == 200
    assert response.content == b'{"ok": true}'
    assert response.headers["content-disposition"] == 'attachment; filename="a.json"'
    # The signature covers the key: another key with the same query string is refused
    assert httpx.get(url.replace("job2/a.json", "job3/a.json")).status_code == 403


def test_an_unreachable_bucket_is_transient_and_quick(tmp_path: Path) -> None:
    # Given a bucket whose server does not answer
    storage = open_storage("s3://nowhere/quire", tmp_path / "spool", f"http://127.0.0.1:{free_port()}")
    # Then every operation fails as StorageUnavailable, and readiness says so
    assert not storage.reachable()
    for attempt in (
        lambda: storage.put_bytes("uploads/u", b"x"),
        lambda: storage.read_bytes("uploads/u"),
        lambda: storage.delete_tree("uploads/u"),
        lambda: storage.exists("uploads/u"),
    ):
        with pytest.raises(StorageUnavailable):
            attempt()
    # And the spooled copy of the refused write is gone
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
