"""The document preview beside a job's result: first pages as images, the reader's boxes on them.

PDF pages are rendered with PDFium (pypdfium2) on first view and kept in storage under the job's
artifact prefix, so they are deleted with the job and never rendered twice; they are not listed
as downloads. A document read by OCR (a scan or a photo) is shown as its searchable PDF: those
pages are the images as OCR read them, turned upright, so the reader's boxes fall on their words.
Images without one are shown as uploaded (a TIFF, which browsers do not show, as a PNG of its
first page, converted once). Other types (DOCX, TXT, Markdown, HTML) are shown as the text Quire
read from them. A preview is a typed structure without URLs: the page adds links.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium
from PIL import Image

from quire.db import Database
from quire.documents.extract import extract
from quire.documents.storage import Storage
from quire.errors import InvalidInput
from quire.jobs import store
from quire.jobs.models import Job, preview_key
from quire.processors import all_processors

PREVIEW_PAGES = 3
RENDER_SCALE = 1.5  # 108 dpi: legible beside the result, about 100-200 KB a page
TEXT_PREVIEW_CHARS = 4000
IMAGE_TYPES = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}
TIFF_MAGIC = (b"II*\x00", b"MM\x00*")  # browsers do not show TIFF: its first page is shown as a PNG


@dataclass(frozen=True)
class FieldBox:
    """Where the reader found a field, in PDF points from the page's top-left corner."""

    field: str
    x: float
    y: float
    width: float
    height: float
    review: bool


@dataclass(frozen=True)
class PreviewPage:
    number: int
    width: float
    height: float
    boxes: tuple[FieldBox, ...] = ()


@dataclass(frozen=True)
class Preview:
    kind: str  # "pages", "image" or "text"
    pages: tuple[PreviewPage, ...] = ()
    page_count: int = 0
    text: str = ""
    truncated: bool = False


def _image_type(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(TIFF_MAGIC):
        return "image/tiff"
    return next((kind for magic, kind in IMAGE_TYPES.items() if data.startswith(magic)), None)


def field_boxes(result: dict[str, Any] | None, page: int) -> tuple[FieldBox, ...]:
    """The boxes the reader gave for fields on `page` (from 1); fields without one are left out."""
    if not result:
        return ()
    review = set(result.get("needs_review") or [])
    found = []
    for name, evidence in (result.get("fields") or {}).items():
        bbox = evidence.get("bbox") if isinstance(evidence, dict) else None
        if not bbox or len(bbox) != 4 or (evidence.get("page") or 1) != page:
            continue
        x0, y0, x1, y1 = (float(v) for v in bbox)
        found.append(FieldBox(name, x0, y0, max(x1 - x0, 1.0), max(y1 - y0, 1.0), name in review))
    return tuple(found)


def preview_source(db: Database, job: Job) -> str:
    """The storage key of the document the preview shows: the searchable PDF when OCR made one
    (kept until retention), else the upload."""
    searchable = store.get_artifact(db, job.id, f"{job.workflow}-searchable.pdf")
    if searchable is not None and searchable.deleted_at is None:
        return searchable.storage_key
    return job.input_ref


def preview_of(storage: Storage, source_ref: str, filename: str, result: dict[str, Any] | None) -> Preview | None:
    """What to show of the document stored under `source_ref` (see `preview_source`); None when it
    cannot be read (the result says why)."""
    try:
        data = storage.read_bytes(source_ref)
    except OSError:
        return None
    if _image_type(data):
        return Preview(kind="image")
    if data.startswith(b"%PDF"):
        with contextlib.suppress(pdfium.PdfiumError):
            pdf = pdfium.PdfDocument(data)
            try:
                pages = []
                for index in range(min(len(pdf), PREVIEW_PAGES)):
                    width, height = pdf[index].get_size()
                    pages.append(PreviewPage(index + 1, width, height, field_boxes(result, index + 1)))
                return Preview(kind="pages", pages=tuple(pages), page_count=len(pdf))
            finally:
                pdf.close()
        return None
    try:
        text = extract(data, filename, hashlib.sha256(data).hexdigest()).text
    except InvalidInput:
        return None
    return Preview(kind="text", text=text[:TEXT_PREVIEW_CHARS], truncated=len(text) > TEXT_PREVIEW_CHARS)


def page_png(storage: Storage, job_id: str, source_ref: str, number: int) -> bytes | None:
    """Page `number` (from 1) of the previewed PDF (see `preview_source`) as a PNG, rendered once
    and then read from storage."""
    if not 1 <= number <= PREVIEW_PAGES:
        return None
    key = preview_key(job_id, f"page-{number}.png")
    with contextlib.suppress(OSError):
        return storage.read_bytes(key)
    try:
        pdf = pdfium.PdfDocument(storage.read_bytes(source_ref))
    except (OSError, pdfium.PdfiumError):
        return None
    # Rendering and encoding run outside the interpreter: on every processor, as a job page asks for three at once.
    with all_processors():
        try:
            if number > len(pdf):
                return None
            image = pdf[number - 1].render(scale=RENDER_SCALE).to_pil()
        finally:
            pdf.close()
        out = io.BytesIO()
        image.save(out, format="PNG", optimize=True)
    png = out.getvalue()
    with contextlib.suppress(OSError):  # a read-only store still shows the page, just renders again
        storage.put_bytes(key, png)
    return png


def input_image(storage: Storage, job_id: str, input_ref: str) -> tuple[bytes, str] | None:
    """The uploaded image and its type, shown as it is (a TIFF's first page as a PNG, kept with
    the job's files)."""
    try:
        data = storage.read_bytes(input_ref)
    except OSError:
        return None
    kind = _image_type(data)
    if kind != "image/tiff":
        return (data, kind) if kind else None
    key = preview_key(job_id, "image.png")
    with contextlib.suppress(OSError):
        return storage.read_bytes(key), "image/png"
    out = io.BytesIO()
    try:
        with all_processors(), Image.open(io.BytesIO(data)) as image:
            image.convert("RGB").save(out, format="PNG", optimize=True)
    except (OSError, ValueError):
        return None
    with contextlib.suppress(OSError):
        storage.put_bytes(key, out.getvalue())
    return out.getvalue(), "image/png"
