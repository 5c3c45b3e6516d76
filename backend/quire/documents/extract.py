"""Text out of documents: detect the type by content, then read its visible text."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser

from quire.errors import InvalidInput

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
MARKDOWN = "text/markdown"
TEXT = "text/plain"
SUPPORTED = (PDF, DOCX, HTML, MARKDOWN, TEXT)

MAX_CHARS = 2_000_000


class UnsupportedType(Exception):
    """The bytes are not a document type Quire reads."""


@dataclass(frozen=True)
class Document:
    """What a workflow receives: the text of one input and where it came from."""

    text: str
    filename: str
    content_type: str
    sha256: str
    pages: int | None = None


def detect_type(head: bytes, filename: str) -> str:
    """The content type decided from the first bytes; the name only separates Markdown from text."""
    stripped = head.lstrip()
    if head.startswith(b"%PDF-"):
        return PDF
    if head.startswith(b"PK\x03\x04"):
        return DOCX
    lowered = stripped[:512].lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<html" in lowered or b"<body" in lowered:
        return HTML
    if b"\x00" in head:
        raise UnsupportedType("binary content")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text.
        if exc.start < len(head) - 4:
            raise UnsupportedType("not UTF-8 text") from exc
    if filename.lower().endswith((".md", ".markdown")):
        return MARKDOWN
    return TEXT


class _VisibleText(HTMLParser):
    _SKIP = frozenset({"script", "style", "head", "template", "noscript"})
    _BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def _html_text(data: bytes) -> str:
    parser = _VisibleText()
    parser.feed(data.decode("utf-8", errors="replace"))
    parser.close()
    return "".join(parser.parts)


def _pdf_text(data: bytes) -> tuple[str, int]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InvalidInput("This PDF is password-protected. Upload an unencrypted copy.")
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise InvalidInput("This PDF is damaged or incomplete. Upload a different copy.") from exc
    return "\n\n".join(pages), len(pages)


def _docx_text(data: bytes) -> str:
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise InvalidInput("This file is not a readable Word document.") from exc
    return "\n".join(paragraph.text for paragraph in document.paragraphs)


def extract(data: bytes, filename: str, sha256: str) -> Document:
    """Read the text of a stored document, or raise InvalidInput saying what the user can do."""
    if not data:
        raise InvalidInput("The file is empty. Upload a document with text in it.")
    try:
        content_type = detect_type(data[:4096], filename)
    except UnsupportedType as exc:
        raise InvalidInput("This file type is not supported. Upload a PDF, DOCX, TXT, Markdown or HTML file.") from exc
    pages: int | None = None
    if content_type == PDF:
        text, pages = _pdf_text(data)
    elif content_type == DOCX:
        text = _docx_text(data)
    elif content_type == HTML:
        text = _html_text(data)
    else:
        text = data.decode("utf-8", errors="replace")
    text = text.strip()
    if not text:
        raise InvalidInput("No readable text was found. If this is a scan, upload a version with a text layer.")
    if len(text) > MAX_CHARS:
        raise InvalidInput(f"The document has more than {MAX_CHARS:,} characters of text. Upload a shorter one.")
    return Document(text=text, filename=filename, content_type=content_type, sha256=sha256, pages=pages)
