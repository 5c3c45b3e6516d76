"""File storage for uploads and artifacts: server-chosen keys, atomic writes, sha256 checksums."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

CHUNK = 1024 * 1024
_KEY = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")


class TooLarge(Exception):
    """The stream was longer than the limit; nothing was stored."""


@dataclass(frozen=True)
class Stored:
    key: str
    size: int
    sha256: str


class Storage(Protocol):
    """What Quire needs from a place to keep files. Another backend (S3-compatible) implements this."""

    def put_stream(self, key: str, chunks: Iterable[bytes], max_bytes: int | None = None) -> Stored: ...

    def put_bytes(self, key: str, data: bytes) -> Stored: ...

    def read_bytes(self, key: str) -> bytes: ...

    def open(self, key: str) -> BinaryIO: ...

    def path(self, key: str) -> Path: ...

    def exists(self, key: str) -> bool: ...

    def delete_tree(self, prefix: str) -> None: ...

    def writable(self) -> bool: ...


class LocalStorage:
    """Files under one root directory, written to a temporary name and renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def path(self, key: str) -> Path:
        # Keys are built by the server from generated ids; this refuses anything else.
        if not _KEY.match(key) or ".." in key.split("/"):
            raise ValueError(f"invalid storage key {key!r}")
        return self.root / key

    def put_stream(self, key: str, chunks: Iterable[bytes], max_bytes: int | None = None) -> Stored:
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        size = 0
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as tmp:
                for chunk in chunks:
                    size += len(chunk)
                    if max_bytes is not None and size > max_bytes:
                        raise TooLarge(f"larger than {max_bytes} bytes")
                    digest.update(chunk)
                    tmp.write(chunk)
                tmp.flush()
                os.fsync(tmp.fileno())
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        return Stored(key=key, size=size, sha256=digest.hexdigest())

    def put_bytes(self, key: str, data: bytes) -> Stored:
        return self.put_stream(key, [data])

    def read_bytes(self, key: str) -> bytes:
        return self.path(key).read_bytes()

    def open(self, key: str) -> BinaryIO:
        return self.path(key).open("rb")

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def delete_tree(self, prefix: str) -> None:
        target = self.path(prefix)
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)

    def writable(self) -> bool:
        self.root.mkdir(parents=True, exist_ok=True)
        probe = self.root / f".probe-{os.getpid()}"
        try:
            probe.write_bytes(b"ok")
            probe.unlink()
        except OSError:
            return False
        return True


def file_chunks(stream: BinaryIO, size: int = CHUNK) -> Iterator[bytes]:
    while chunk := stream.read(size):
        yield chunk


def get_storage() -> Storage:
    """The configured storage: local files under the data directory."""
    from quire.settings import get_settings

    return _local_storage(get_settings().data_dir / "files")


@functools.lru_cache(maxsize=8)
def _local_storage(root: Path) -> LocalStorage:
    return LocalStorage(root)
