"""File storage for uploads and artifacts: one interface, a local directory or an S3-compatible bucket.

Keys are chosen by the server (`uploads/<id>`, and the layout of `jobs.models.artifacts_prefix`).
Every object is written once, whole or not at all, and its sha256 is computed as it is written.
`QUIRE_STORAGE_URL` chooses the backend: `file:///path` (`LocalStorage`) or `s3://bucket/prefix`
(`documents.s3.S3Storage`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import BinaryIO, Protocol, runtime_checkable
from urllib.parse import unquote, urlsplit

from quire.documents.objects import CHUNK, PendingObject, Stored, TooLarge, Writes, check_key
from quire.errors import StorageUnavailable
from quire.settings import Settings

__all__ = [
    "CHUNK", "LocalStorage", "PendingObject", "Storage", "StorageUnavailable", "Stored", "TooLarge",
]  # fmt: skip


# Runtime-checkable: Litestar checks an injected value against its parameter's type (web/deps.py).
@runtime_checkable
class Storage(Protocol):
    """What Quire needs from a place to keep files.

    A key that does not exist raises `FileNotFoundError`; a store that cannot be reached raises
    `StorageUnavailable` (transient: the caller retries later or answers 503).
    """

    def begin(self, key: str, max_bytes: int | None = None) -> PendingObject:
        """Start writing `key`: write chunks to the returned object, then commit or abort it."""
        ...

    def put_stream(self, key: str, chunks: Iterable[bytes], max_bytes: int | None = None) -> Stored:
        """Store the chunks under `key`, all or nothing; past `max_bytes` raise `TooLarge` and store nothing."""
        ...

    def put_bytes(self, key: str, data: bytes) -> Stored: ...

    def read_bytes(self, key: str) -> bytes: ...

    def iter_bytes(self, key: str) -> Iterator[bytes]:
        """The object in chunks; opened (and a missing key raised) before the first is asked for."""
        ...

    def exists(self, key: str) -> bool: ...

    def delete_tree(self, prefix: str) -> None:
        """Delete the object `prefix` and every object under `prefix/`; nothing there is not an error."""
        ...

    def reachable(self) -> bool:
        """Whether objects can be written now (for `/readyz`)."""
        ...

    def download_url(self, key: str, filename: str, content_type: str) -> str | None:
        """A short-lived URL that serves the object as an attachment, or None when this store has none."""
        ...


class LocalStorage(Writes):
    """Files under one root directory, written to a temporary name and renamed into place.

    Paths are plain strings, not `pathlib` objects: Python 3.11's pathlib interns every part of a
    path, so each job's unique keys and temporary names went into the interpreter's table of
    interned strings, whose growth was a worker's largest single step in memory (measured by
    tracemalloc: 1.9 MB at once after about 6,000 jobs).
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._root = str(self.root)

    def path(self, key: str) -> str:
        return os.path.join(self._root, check_key(key))

    def begin(self, key: str, max_bytes: int | None = None) -> PendingObject:
        target = self.path(key)
        folder = os.path.dirname(target)
        os.makedirs(folder, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=".tmp-")

        def publish(pending: PendingObject) -> None:
            pending.file.flush()
            os.fsync(pending.file.fileno())
            os.replace(tmp_name, target)

        return PendingObject(key, os.fdopen(fd, "wb"), max_bytes, publish, partial(_unlink, tmp_name))

    def put_bytes(self, key: str, data: bytes) -> Stored:
        """`put_stream` for content already in memory (a worker's artifacts), in as few system calls as it takes:
        each lets another thread take the interpreter, and a short job's files were a tenth of its thread switches."""
        target = self.path(key)
        folder = os.path.dirname(target)
        try:
            fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        except FileNotFoundError:  # the first file of its folder
            os.makedirs(folder, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp_name, target)
        except BaseException:
            _unlink(tmp_name)
            raise
        return Stored(key=key, size=len(data), sha256=hashlib.sha256(data).hexdigest())

    def read_bytes(self, key: str) -> bytes:
        # Read by descriptor, as `put_bytes` writes: a buffered file asks the system four more questions first.
        fd = os.open(self.path(key), os.O_RDONLY | os.O_CLOEXEC)
        try:
            # Its size, then that many bytes: an object is put in place whole by a rename and never changes after.
            size = os.fstat(fd).st_size
            data = os.read(fd, size)
            while len(data) < size and (more := os.read(fd, size - len(data))):
                data += more
            return data
        finally:
            os.close(fd)

    def iter_bytes(self, key: str) -> Iterator[bytes]:
        return file_chunks(open(self.path(key), "rb"), close=True)  # closed by file_chunks

    def exists(self, key: str) -> bool:
        return os.path.isfile(self.path(key))

    def delete_tree(self, prefix: str) -> None:
        target = self.path(prefix)
        if os.path.isdir(target):
            shutil.rmtree(target, ignore_errors=True)
        else:
            _unlink(target)

    def reachable(self) -> bool:
        self.root.mkdir(parents=True, exist_ok=True)
        probe = self.root / f".probe-{os.getpid()}"
        try:
            probe.write_bytes(b"ok")
            probe.unlink()
        except OSError:
            return False
        return True

    def download_url(self, key: str, filename: str, content_type: str) -> str | None:
        return None


def _unlink(name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name)


def file_chunks(stream: BinaryIO, size: int = CHUNK, close: bool = False) -> Iterator[bytes]:
    try:
        while chunk := stream.read(size):
            yield chunk
    finally:
        if close:
            stream.close()


def open_storage(url: str, spool_dir: Path, endpoint_url: str | None = None, presign_s: int = 60) -> Storage:
    """The store a `QUIRE_STORAGE_URL` names. `spool_dir` is local scratch space (an S3 upload is
    spooled there while it arrives, so that only a whole, checked file reaches the bucket);
    `endpoint_url` names an S3 server that is not AWS; presigned URLs last `presign_s` seconds."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        return LocalStorage(Path(unquote(parts.path)))
    if parts.scheme == "s3" and parts.netloc:
        from quire.documents.s3 import S3Storage

        return S3Storage(parts.netloc, parts.path.strip("/"), spool_dir, endpoint_url, presign_s)
    raise ValueError(f"QUIRE_STORAGE_URL must be file:///path or s3://bucket/prefix, not {url!r}")


def configured_storage(settings: Settings) -> Storage:
    """The store the settings name (`QUIRE_STORAGE_URL`, by default the data directory's files)."""
    return open_storage(
        settings.resolved_storage_url,
        settings.data_dir.resolve() / "spool",
        settings.s3_endpoint_url,
        settings.s3_presigned_expiry_s,
    )
