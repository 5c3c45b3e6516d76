"""Multipart uploads read as they arrive: the file part goes to storage chunk by chunk.

Litestar's own form parsing copies a file part to a temporary file before a handler sees it, and
only the request's total size limits it. Here the body is parsed as it streams, with the same
push parser Litestar uses (`multipart.PushMultipartParser`): the file's first bytes decide its
type, then each chunk is written to storage (`jobs.service.UploadInProgress`) with the size limit
and the owner's quota enforced at each, so a refused upload stops the reading after at most one
chunk past the limit. A failed, refused or abandoned upload leaves no object and no row behind.

A batch (`read_batch_form`) is parsed the same way, its files written one after another into one
temporary file as they arrive and handed on as windows onto it (`FileWindow`), so a request of a
thousand documents costs the web process the parser's buffers, not the files, and one descriptor.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any, BinaryIO, Protocol, cast

import anyio
from anyio import to_thread
from litestar.exceptions import ClientException
from multipart import MultipartSegment, ParserError, ParserLimitReached, PushMultipartParser

from quire.db import Database
from quire.documents.einvoice import HEAD_BYTES
from quire.documents.storage import Storage
from quire.jobs.batches import Part
from quire.jobs.models import Upload
from quire.jobs.service import UploadInProgress, discard_upload
from quire.settings import Settings
from quire.web.problems import MULTIPART_LIMIT, problem

FILE_FIELD = "file"
# The small fields around the file (workflow, limits, language, a CSRF token).
FIELD_MAX_BYTES = 16 * 1024
MAX_PARTS = 32


class Begin(Protocol):
    """Starts an upload from its file name and first bytes; `at_most` bounds the file's length."""

    def __call__(self, filename: str | None, head: bytes, *, at_most: int | None) -> UploadInProgress: ...


@dataclass
class StreamedForm:
    """The text fields of a form, and its file part once stored."""

    fields: dict[str, str] = field(default_factory=dict)
    upload: Upload | None = None
    filename: str | None = None


def _boundary(content_type: tuple[str, dict[str, str]]) -> str:
    kind, options = content_type
    if kind != "multipart/form-data" or not options.get("boundary"):
        raise problem(422, "invalid_request", "Send the document as multipart/form-data.")
    return options["boundary"]


class _Reader:
    """Parser state for one request: the text field being read, or the upload being written."""

    def __init__(self, db: Database, storage: Storage, begin: Begin, at_most: int | None) -> None:
        self.db = db
        self.storage = storage
        self.begin = begin
        self.at_most = at_most
        self.form = StreamedForm()
        self.segment: MultipartSegment | None = None
        self.text = bytearray()
        self.head = bytearray()
        self.progress: UploadInProgress | None = None

    async def feed(self, parser: PushMultipartParser, chunk: bytes) -> None:
        for event in parser.parse(chunk):
            if isinstance(event, MultipartSegment):
                await self.start(event)
            elif event:
                await self.data(event)
            else:
                await self.end()

    async def start(self, segment: MultipartSegment) -> None:
        self.segment = segment
        if segment.filename is not None and (segment.name != FILE_FIELD or self.form.filename is not None):
            raise problem(422, "invalid_request", "Attach one document, as the multipart field 'file'.")
        if segment.filename is not None:
            self.form.filename = segment.filename

    async def data(self, chunk: bytes) -> None:
        assert self.segment is not None
        if self.segment.filename is None:
            self.text += chunk
            if len(self.text) > FIELD_MAX_BYTES:
                raise problem(422, "invalid_request", f"The form field {self.segment.name!r} is too long.")
        elif not self.segment.filename:
            return  # a file part without a name is no file (as an empty file input sends)
        elif self.progress is not None:
            self.progress.write(chunk)
        else:
            self.head += chunk
            if len(self.head) >= HEAD_BYTES:
                await self._begin()

    async def end(self) -> None:
        assert self.segment is not None
        if self.segment.filename is None:
            self.form.fields[self.segment.name] = self.text.decode(self.segment.charset or "utf-8", "replace")
            self.text = bytearray()
        elif self.segment.filename:  # a file input left empty sends a part with no file name
            if self.progress is None:
                await self._begin()
            assert self.progress is not None
            progress, self.progress = self.progress, None
            try:
                self.form.upload = await to_thread.run_sync(progress.finish)
            except BaseException:
                progress.abort()
                raise
        self.segment = None

    async def _begin(self) -> None:
        assert self.segment is not None
        head, self.head = bytes(self.head), bytearray()
        self.progress = await to_thread.run_sync(partial(self.begin, self.segment.filename, head, at_most=self.at_most))

    async def abort(self) -> None:
        """The form failed: neither the file being written nor one already stored is kept."""
        progress, self.progress = self.progress, None
        stored, self.form.upload = self.form.upload, None
        with anyio.CancelScope(shield=True):
            if progress is not None:
                await to_thread.run_sync(progress.abort)
            if stored is not None:
                await to_thread.run_sync(discard_upload, self.storage, self.db, stored)


async def read_form(storage: Storage, db: Database, request: Any, begin: Begin) -> StreamedForm:
    """Read a multipart request, storing its `file` part through `begin` as it arrives.

    `begin(filename, head, at_most=...)` starts the upload from its first bytes (it raises `UploadRejected`
    to refuse it); a storage failure surfaces as `StorageUnavailable`.
    """
    length = request.headers.get("content-length", "")
    reader = _Reader(db, storage, begin, int(length) if length.isdigit() else None)
    try:
        with PushMultipartParser(_boundary(request.content_type), max_segment_count=MAX_PARTS) as parser:
            async for chunk in request.stream():
                await reader.feed(parser, chunk)
                if parser.closed:
                    break
            if not parser.closed:
                await reader.feed(parser, b"")  # the end of the body: a form cut short is an error
    except ParserLimitReached:
        await reader.abort()
        raise ClientException(MULTIPART_LIMIT) from None
    except ParserError as exc:
        await reader.abort()
        raise ClientException("Invalid multipart/form-data") from exc
    except BaseException:
        await reader.abort()
        raise
    return reader.form


class FileWindow(io.RawIOBase):
    """Bytes `start` to `start + length` of an open file, read with `os.pread`: a seekable file of
    its own to its reader, and safe to read from several threads beside the file's other windows."""

    def __init__(self, fd: int, start: int, length: int) -> None:
        super().__init__()
        self._fd, self._start, self._length, self._at = fd, start, length, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        wanted = min(len(buffer), self._length - self._at)
        if wanted <= 0:
            return 0
        data = os.pread(self._fd, wanted, self._start + self._at)
        buffer[: len(data)] = data
        self._at += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._at, os.SEEK_END: self._length}[whence]
        self._at = max(0, base + offset)
        return self._at

    def tell(self) -> int:
        return self._at


@dataclass
class BatchForm:
    """A batch request's text fields and its files (windows onto one temporary file, which `close` removes)."""

    fields: dict[str, str]
    parts: list[Part]
    spool: IO[bytes]

    def close(self) -> None:
        self.spool.close()


class _BatchReader:
    """Parser state for a batch: text fields kept, each file part appended to the spool."""

    def __init__(self, spool: IO[bytes], max_bytes: int) -> None:
        self.spool = spool
        self.max_bytes = max_bytes
        self.fields: dict[str, str] = {}
        self.parts: list[Part] = []
        self.segment: MultipartSegment | None = None
        self.text = bytearray()
        self.start = 0
        self.written = 0

    def feed(self, parser: PushMultipartParser, chunk: bytes) -> None:
        for event in parser.parse(chunk):
            if isinstance(event, MultipartSegment):
                self.segment, self.start = event, self.written
            elif event:
                self.data(event)
            else:
                self.end()

    def data(self, chunk: bytes) -> None:
        assert self.segment is not None
        if self.segment.filename is None:
            self.text += chunk
            if len(self.text) > FIELD_MAX_BYTES:
                raise problem(422, "invalid_request", f"The form field {self.segment.name!r} is too long.")
        elif self.segment.filename and self.segment.name == FILE_FIELD:
            self.written += len(chunk)
            if self.written > self.max_bytes:
                raise problem(413, "payload_too_large", "This batch is larger than we accept in one request.")
            self.spool.write(chunk)

    def end(self) -> None:
        assert self.segment is not None
        if self.segment.filename is None:
            self.fields[self.segment.name] = self.text.decode(self.segment.charset or "utf-8", "replace")
            self.text = bytearray()
        elif self.segment.filename and self.segment.name == FILE_FIELD:
            window = FileWindow(self.spool.fileno(), self.start, self.written - self.start)
            self.parts.append(Part(self.segment.filename, cast(BinaryIO, io.BufferedReader(window))))
        self.segment = None


async def read_batch_form(settings: Settings, request: Any, *, max_parts: int, max_bytes: int) -> BatchForm:
    """Read a batch's multipart request as it arrives: its text fields, and its `file` parts (other
    file fields, and file inputs left empty, are skipped). At most `max_parts` parts and `max_bytes`
    of files (413 past it, at most one chunk later); the caller closes what it returns."""
    scratch = settings.data_dir.resolve() / "spool"  # where an S3 upload spools too
    scratch.mkdir(parents=True, exist_ok=True)
    spool = tempfile.TemporaryFile(dir=scratch)  # noqa: SIM115  (closed by BatchForm.close, or below)
    reader = _BatchReader(spool, max_bytes)
    try:
        with PushMultipartParser(_boundary(request.content_type), max_segment_count=max_parts) as parser:
            async for chunk in request.stream():
                reader.feed(parser, chunk)
                if parser.closed:
                    break
            if not parser.closed:
                reader.feed(parser, b"")  # the end of the body: a form cut short is an error
        spool.flush()
    except ParserLimitReached:
        spool.close()
        raise ClientException(MULTIPART_LIMIT) from None
    except ParserError as exc:
        spool.close()
        raise ClientException("Invalid multipart/form-data") from exc
    except BaseException:
        spool.close()
        raise
    return BatchForm(reader.fields, reader.parts, spool)
