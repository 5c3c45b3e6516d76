"""An object written whole or not at all: chunks to a temporary file, hashed and counted, then published.

The pieces every storage backend shares (`documents.storage` for the local directory,
`documents.s3` for a bucket).
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import BinaryIO

CHUNK = 1024 * 1024
_KEY = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")


class TooLarge(Exception):
    """The stream was longer than the limit; nothing was stored."""


@dataclass(frozen=True)
class Stored:
    key: str
    size: int
    sha256: str


def check_key(key: str) -> str:
    """Keys are built by the server from generated ids; this refuses anything else."""
    if not _KEY.match(key) or ".." in key.split("/"):
        raise ValueError(f"invalid storage key {key!r}")
    return key


class PendingObject:
    """An object being written: its chunks go to a temporary file (hashed and counted on the way, the
    limit enforced at each), and `commit` publishes the whole of it; until then nothing is visible."""

    def __init__(
        self,
        key: str,
        file: BinaryIO,
        max_bytes: int | None,
        publish: Callable[[PendingObject], None],
        discard: Callable[[], None] = lambda: None,
    ) -> None:
        self.key = key
        self.file = file
        self.max_bytes = max_bytes
        self.size = 0
        self.digest = hashlib.sha256()
        self._publish = publish
        self._discard = discard

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise TooLarge(f"larger than {self.max_bytes} bytes")
        self.digest.update(chunk)
        self.file.write(chunk)

    def commit(self) -> Stored:
        try:
            self._publish(self)
        finally:
            self.abort()
        return Stored(key=self.key, size=self.size, sha256=self.digest.hexdigest())

    def abort(self) -> None:
        """Forget what was written (after a commit: only the temporary file)."""
        self.file.close()
        self._discard()


class Writes(ABC):
    """`put_stream` and `put_bytes` for a store that has `begin`."""

    @abstractmethod
    def begin(self, key: str, max_bytes: int | None = None) -> PendingObject:
        """Each kind of writes says how."""

    def put_stream(self, key: str, chunks: Iterable[bytes], max_bytes: int | None = None) -> Stored:
        pending = self.begin(key, max_bytes)
        try:
            for chunk in chunks:
                pending.write(chunk)
        except BaseException:
            pending.abort()
            raise
        return pending.commit()

    def put_bytes(self, key: str, data: bytes) -> Stored:
        return self.put_stream(key, [data])
