"""Uploads are read as they stream: the multipart body is parsed chunk by chunk, the file part goes
to storage as it comes, and a refused file stops the reading at once.

The request here is the two things `read_form` uses of Litestar's: its content type and its body
stream, a multipart body made on demand that counts how much of it was read. The parser, the
upload service and the storage are the real ones.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path

import pytest
from litestar.exceptions import ClientException, HTTPException

from backend.tests.aio import run_async
from quire.db import Database
from quire.documents.einvoice import HEAD_BYTES
from quire.documents.storage import Storage
from quire.jobs import service
from quire.settings import Settings
from quire.web.uploads import read_batch_form, read_form

BOUNDARY = "quire-test-boundary"
CHUNK = 64 * 1024  # what uvicorn hands the app at most per read


class StreamedRequest:
    def __init__(self, fields: dict[str, str], filename: str, content: Iterator[bytes]) -> None:
        self.content_type = ("multipart/form-data", {"boundary": BOUNDARY})
        # No Content-Length: the body's length is not known before it ends, as with a chunked body.
        self.headers: dict[str, str] = {}
        self.fields = fields
        self.filename = filename
        self.content = content
        self.read = 0

    def _body(self) -> Iterator[bytes]:
        for name, value in self.fields.items():
            yield f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        yield (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{self.filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        yield from self.content
        yield f"\r\n--{BOUNDARY}--\r\n".encode()

    async def stream(self) -> AsyncIterator[bytes]:
        pending = b""
        for piece in self._body():
            pending += piece
            while len(pending) >= CHUNK:
                chunk, pending = pending[:CHUNK], pending[CHUNK:]
                self.read += len(chunk)
                yield chunk
        self.read += len(pending)
        yield pending


def text_of(size: int) -> Iterator[bytes]:
    line = b"A line of a long report about quarterly shipping figures.\n"
    sent = 0
    while sent < size:
        piece = line * 1000
        piece = piece[: size - sent]
        sent += len(piece)
        yield piece


def files_left() -> list[Path]:
    data = Settings().data_dir
    return [p for p in data.rglob("*") if p.is_file() and ("uploads" in p.parts or "spool" in p.parts)]


def test_an_upload_over_the_limit_is_refused_within_one_chunk_of_it(
    settings: Settings, db: Database, storage: Storage
) -> None:
    limit = settings.max_upload_bytes
    before = files_left()
    request = StreamedRequest({"workflow": "document_summary"}, "big.txt", text_of(limit + 20 * CHUNK))
    with pytest.raises(service.UploadRejected) as refused:
        run_async(read_form, storage, db, request, partial(service.begin_upload, settings, storage, db, owner_id=None))
    assert refused.value.status == 413
    # Read: the small field and the part's headers, the limit, and at most the one chunk that passed it
    assert limit < request.read <= limit + CHUNK + 1024, request.read
    assert files_left() == before


def test_the_type_is_decided_from_the_first_bytes(settings: Settings, db: Database, storage: Storage) -> None:
    binary = iter([b"\x7fELF\x02\x01\x01" + b"\x00" * (CHUNK - 7)] * 200)  # 12.8 MB of something unreadable
    before = files_left()
    request = StreamedRequest({}, "a.pdf", binary)
    with pytest.raises(service.UploadRejected) as refused:
        run_async(read_form, storage, db, request, partial(service.begin_upload, settings, storage, db, owner_id=None))
    assert refused.value.status == 415
    assert request.read <= HEAD_BYTES + 2 * CHUNK
    assert files_left() == before


def test_a_streamed_form_stores_its_file_and_reads_its_fields(
    settings: Settings, db: Database, storage: Storage
) -> None:
    content = b"".join(text_of(3 * 1024 * 1024 + 17))
    request = StreamedRequest({"workflow": "document_summary", "timeout_s": "30"}, "notes.txt", iter([content]))
    form = run_async(
        read_form, storage, db, request, partial(service.begin_upload, settings, storage, db, owner_id=None)
    )
    assert form.fields == {"workflow": "document_summary", "timeout_s": "30"}
    assert form.upload is not None
    assert (form.upload.size, form.upload.sha256) == (len(content), hashlib.sha256(content).hexdigest())
    assert form.upload.content_type.startswith("text/plain")


class CutShortRequest(StreamedRequest):
    """A form whose file arrives whole, then the body ends in the middle of the next field."""

    def _body(self) -> Iterator[bytes]:
        for piece in super()._body():
            if piece.startswith(b"\r\n--"):
                yield f'\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name="workflow"\r\n\r\ndocum'.encode()
                return
            yield piece


def test_a_form_cut_short_after_its_file_keeps_nothing(settings: Settings, db: Database, storage: Storage) -> None:
    from sqlmodel import select

    from quire.jobs.models import Upload

    before = files_left()
    request = CutShortRequest({}, "notes.txt", text_of(300_000))
    with pytest.raises(ClientException):
        run_async(read_form, storage, db, request, partial(service.begin_upload, settings, storage, db, owner_id=None))
    assert files_left() == before
    with db.session() as session:
        assert session.exec(select(Upload)).all() == []


class BatchRequest(StreamedRequest):
    """A batch's body: its fields, then several files."""

    def __init__(self, fields: dict[str, str], files: dict[str, bytes]) -> None:
        super().__init__(fields, "", iter(()))
        self.files = files

    def _body(self) -> Iterator[bytes]:
        for name, value in self.fields.items():
            yield f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for filename, data in self.files.items():
            yield (
                f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            yield data
            yield b"\r\n"
        yield f"--{BOUNDARY}--\r\n".encode()


def test_a_batch_is_read_into_windows_of_one_spool_each_a_file_of_its_own(settings: Settings) -> None:
    # Given a batch of three files, one of them a ZIP archive, each larger than a chunk or not
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("inner.txt", "inside the archive")
    files = {"a.txt": b"a" * (3 * CHUNK + 5), "b.txt": b"small", "c.zip": archive.getvalue()}
    request = BatchRequest({"workflow": "invoice_summary", "language": "de"}, files)
    # When it is read as it streams
    form = run_async(partial(read_batch_form, settings, request, max_parts=10, max_bytes=10 * CHUNK))
    try:
        # Then the fields are kept, and each part reads back as exactly its file, from any point
        assert form.fields == {"workflow": "invoice_summary", "language": "de"}
        assert [part.filename for part in form.parts] == list(files)
        for part in form.parts:
            assert part.stream.read() == files[part.filename]
            part.stream.seek(2)
            assert part.stream.read(3) == files[part.filename][2:5]
            assert part.stream.seek(0, 2) == len(files[part.filename])
        # And the parts are independent: reading one does not move another, and a ZIP opens as one
        first, _, zipped_part = form.parts
        first.stream.seek(0)
        first.stream.read(10)
        zipped_part.stream.seek(0)
        with zipfile.ZipFile(zipped_part.stream) as opened:
            assert opened.read("inner.txt") == b"inside the archive"
        assert first.stream.read(5) == b"aaaaa"
    finally:
        form.close()
    assert form.spool.closed


def test_a_batch_over_its_size_is_refused_within_one_chunk_of_it(settings: Settings) -> None:
    request = BatchRequest({"workflow": "document_summary"}, {"big.txt": b"x" * (40 * CHUNK)})
    with pytest.raises(HTTPException) as refused:
        run_async(partial(read_batch_form, settings, request, max_parts=10, max_bytes=4 * CHUNK))
    assert refused.value.status_code == 413
    assert request.read <= 6 * CHUNK  # the fields and headers, the limit, and one chunk past it


def test_a_batch_with_more_parts_than_allowed_is_refused(settings: Settings) -> None:
    request = BatchRequest({"workflow": "document_summary"}, {f"{n}.txt": b"x" for n in range(12)})
    with pytest.raises(ClientException):
        run_async(partial(read_batch_form, settings, request, max_parts=10, max_bytes=4 * CHUNK))
