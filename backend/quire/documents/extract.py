"""Text out of documents: decide the type by content (magic bytes), then read the visible text.

Every way a document can be unreadable ends in InvalidInput with a sentence that tells the
person what to do; extraction is bounded by page and character limits from the settings.
Images, and the pages of a PDF that have no text layer, are read by OCR (`ocr`); long
documents report their progress page by page through the `progress` callback.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from quire.documents.einvoice import HEAD_BYTES, EInvoice, embedded_einvoice, is_einvoice_xml, read_einvoice
from quire.documents.words import Word as Word  # re-exported: a Document is made of them
from quire.errors import InvalidInput
from quire.views import View

if TYPE_CHECKING:
    from quire.documents.ocr import OcrPage, Turn

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
MARKDOWN = "text/markdown"
TEXT = "text/plain"
XML = "application/xml"
PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
WEBP = "image/webp"
IMAGES = frozenset({PNG, JPEG, TIFF, WEBP})

# A DOCX is a zip: refuse archives that would inflate past this, or with implausibly many entries.
MAX_DOCX_UNCOMPRESSED = 200 * 1024 * 1024
MAX_DOCX_ENTRIES = 5000
UNSUPPORTED = (
    "This file type is not supported. Upload a PDF, DOCX, TXT, Markdown, HTML or XML e-invoice file, "
    "or a PNG, JPEG, TIFF or WebP image."
)
# An XML declaration or a non-HTML DOCTYPE says XML; a bare root element only when it is an e-invoice's,
# so Markdown that opens with `<details>` or a comment stays text.
_XML_START = re.compile(rb"^(?:\xef\xbb\xbf)?\s*<(?:\?xml\s|!DOCTYPE\s+(?!html))", re.I)


class UnsupportedType(Exception):
    """The bytes are not a document type Quire reads."""


@dataclass(frozen=True)
class Limits:
    max_pages: int = 500
    max_chars: int = 2_000_000


@dataclass(frozen=True)
class Progress:
    """How far the reading of a document is: `done` of `total` pages, and how many need OCR."""

    done: int
    total: int
    message: str
    ocr_pages: int = 0
    unit: str = "pages"

    def as_record(self) -> dict[str, object]:
        """Progress as the job record keeps it (its `progress` column); read back as a `ProgressView`."""
        return {"done": self.done, "total": self.total, "unit": self.unit, "message": self.message}


class ProgressView(View, frozen=True):
    """Progress as the job's view shows it."""

    done: int
    total: int
    unit: str
    message: str


ProgressCallback = Callable[[Progress], None]


def _no_progress(_: Progress) -> None:
    """Extraction without anyone watching (tests, benchmarks)."""


@dataclass(frozen=True)
class Document:
    """What a workflow receives: the text of one input and where it came from.

    `words` keeps the layout where the format has one (PDF pages, OCR), empty otherwise; `einvoice`
    holds the e-invoice, read once here, when the input is one or a PDF carries a readable one.
    `ocr_pages` names the pages read by OCR, and `searchable_pdf` is then the scan with an
    invisible text layer (the PDF's own pages where they had text).
    """

    text: str
    filename: str
    content_type: str
    sha256: str
    pages: int | None = None
    words: tuple[Word, ...] = ()
    einvoice: EInvoice | None = None
    ocr_pages: tuple[int, ...] = ()
    searchable_pdf: bytes | None = field(default=None, repr=False)
    # The scanned pages whose words' boxes were levelled, and how (`ocr.Turn`): a box of them is turned back by it
    # to mark where its words stand on the page.
    turns: dict[int, Turn] = field(default_factory=dict)


def detect_type(head: bytes, filename: str) -> str:
    """The content type decided from the first bytes; the name only tells Markdown from plain text."""
    if head.startswith(b"%PDF-"):
        return PDF
    if head.startswith(b"PK\x03\x04"):
        return DOCX
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return TIFF
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return WEBP
    lowered = head.lstrip()[:1024].lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<html" in lowered or b"<body" in lowered:
        return HTML
    if _XML_START.match(head) or is_einvoice_xml(head):
        return XML
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
    _SKIP = frozenset({"script", "style", "head", "template", "noscript", "svg"})
    _BLOCK = frozenset(
        {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article", "table"}
    )

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
        elif tag in ("td", "th"):
            self.parts.append("  ")
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def _html_text(data: bytes) -> str:
    parser = _VisibleText()
    parser.feed(data.decode("utf-8", errors="replace"))
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


BEYOND_LIMITS = (
    "This {kind} is built in a way Quire refuses to read (far larger or more deeply nested inside "
    "than a real document). Upload a different copy, such as one exported again or printed to PDF."
)


def _pdf_text(data: bytes, limits: Limits, progress: ProgressCallback) -> list[str]:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PdfReadError, PdfStreamError, PyPdfError

    damaged = "This PDF is damaged or incomplete. Upload a different copy."
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InvalidInput("This PDF is password-protected. Upload an unencrypted copy.")
        count = len(reader.pages)
        if count > limits.max_pages:
            raise InvalidInput(f"This PDF has {count:,} pages; Quire reads at most {limits.max_pages:,}.")
        pages: list[str] = []
        chars = 0
        with_text = 0
        for number, page in enumerate(reader.pages, start=1):
            # Pages without text are counted when OCR has read them, so `done` only goes up.
            progress(Progress(with_text, count, f"Reading page {number} of {count}"))
            text = page.extract_text() or ""
            chars += len(text)
            if chars > limits.max_chars:
                raise InvalidInput(_too_long(limits))
            pages.append(text)
            with_text += bool(text.strip())
    except InvalidInput:
        raise
    except LimitReachedError as exc:
        # pypdf's own guards (array and dictionary sizes, decompression, object streams) stop a
        # hostile file; reading it again cannot succeed, so it is invalid input, not a retry.
        raise InvalidInput(BEYOND_LIMITS.format(kind="PDF")) from exc
    except (PyPdfError, PdfReadError, PdfStreamError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
        raise InvalidInput(damaged) from exc
    return pages


def pdf_words(data: bytes, max_pages: int) -> tuple[Word, ...]:
    """Every word of a PDF's text layer with its box, read by PDFium; empty when PDFium cannot open it."""
    import pypdfium2 as pdfium

    words: list[Word] = []
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return ()
    try:
        for index in range(min(len(pdf), max_pages)):
            page = pdf[index]
            textpage = page.get_textpage()
            words += _page_words(textpage, index + 1, page.get_height())
            textpage.close()
            page.close()
    except pdfium.PdfiumError:
        pass  # a page PDFium cannot load (a page tree that claims more pages than it has): keep the rest
    finally:
        pdf.close()
    return tuple(words)


def _page_words(textpage: Any, page_number: int, page_height: float) -> list[Word]:
    """PDFium puts a space where the layout separates words; a gap wider than most of a character's
    height splits a word too, since some generators place words without any space between them.
    A space PDFium made up itself over a gap narrower than a thin space is kerning, not a word break
    ("Rechnungskor rektur")."""
    import pypdfium2.raw as pdfium_c

    count = textpage.count_chars()
    text: Sequence[str] = textpage.get_text_range(0, count) if count else ""
    if len(text) != count:
        # The text and the indices disagree: a character outside the Basic Multilingual Plane (a math
        # letter, an emoji) takes two indices, its UTF-16 surrogates, and a glyph with no Unicode is
        # left out of the text. Read the indices one by one instead, so each box keeps its character.
        text = index_chars([pdfium_c.FPDFText_GetUnicode(textpage.raw, i) for i in range(count)])
    words: list[Word] = []
    chars: list[tuple[str, float, float, float, float]] = []
    for i, ch in enumerate([*text[:count], " "]):
        if not ch:
            continue  # the second half of a surrogate pair, or a glyph with no Unicode
        box = None if ch.isspace() or not ch.isprintable() else textpage.get_charbox(i, loose=True)
        if box is None and chars and i + 1 < count and pdfium_c.FPDFText_IsGenerated(textpage.raw, i) == 1:
            following = textpage.get_charbox(i + 1, loose=True)
            if not text[i + 1].isspace() and not _apart(chars[-1], following, gap=0.15):
                continue
        if chars and (box is None or _apart(chars[-1], box) or _runs_back(chars[-1], ch, box)):
            words.append(
                Word(
                    "".join(c[0] for c in chars),
                    page_number,
                    min(c[1] for c in chars),
                    page_height - max(c[4] for c in chars),
                    max(c[3] for c in chars),
                    page_height - min(c[2] for c in chars),
                )
            )
            chars = []
        if box is not None:
            chars.append((ch, *box))
    return words


def index_chars(codes: list[int]) -> list[str]:
    """The character at each of PDFium's character indices, from their UTF-16 code units: a surrogate
    pair gives its character at the first index and nothing at the second; a glyph with no Unicode
    (code 0) gives nothing, as PDFium's text leaves it out; an unpaired surrogate gives U+FFFD."""
    chars: list[str] = []
    for i, code in enumerate(codes):
        if 0xDC00 <= code <= 0xDFFF and i and 0xD800 <= codes[i - 1] <= 0xDBFF:
            chars.append("")  # the second half of the pair before it
        elif 0xD800 <= code <= 0xDBFF and i + 1 < len(codes) and 0xDC00 <= codes[i + 1] <= 0xDFFF:
            chars.append(chr(0x10000 + ((code - 0xD800) << 10) + (codes[i + 1] - 0xDC00)))
        elif code == 0:
            chars.append("")
        else:
            chars.append("\ufffd" if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF else chr(code))
    return chars


def _apart(
    last: tuple[str, float, float, float, float], box: tuple[float, float, float, float], gap: float = 0.8
) -> bool:
    left, bottom, _, top = box
    size = max(top - bottom, last[4] - last[2])
    return left - last[3] > gap * size or abs(bottom - last[2]) > 0.5 * size


def _runs_back(last: tuple[str, float, float, float, float], ch: str, box: tuple[float, float, float, float]) -> bool:
    """A left-to-right character placed before the last one's start begins another run: a right-to-left
    line's runs come right to left ("VAT." then "excl" then "Subtotal" of "Subtotal excl. VAT" beside
    Arabic). Hebrew and Arabic letters step left within their words, which stay whole."""
    if box[0] >= last[1] - 0.5 * max(box[3] - box[1], last[4] - last[2]):
        return False
    return (
        unicodedata.bidirectional(ch) not in _RIGHT_TO_LEFT and unicodedata.bidirectional(last[0]) not in _RIGHT_TO_LEFT
    )


_RIGHT_TO_LEFT = frozenset({"R", "AL", "AN"})


def _docx_text(data: bytes, limits: Limits) -> str:
    import docx
    from lxml.etree import XMLSyntaxError  # type: ignore[import-untyped]  # lxml ships no type hints

    not_word = "This file is not a readable Word document. Upload a different copy."
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
            if "word/document.xml" not in archive.namelist():
                raise InvalidInput(UNSUPPORTED)
            inflated = sum(entry.file_size for entry in entries)
            if len(entries) > MAX_DOCX_ENTRIES or inflated > MAX_DOCX_UNCOMPRESSED:
                raise InvalidInput("This Word document expands to far more data than a document should.")
        document = docx.Document(io.BytesIO(data))
    except InvalidInput:
        raise
    except XMLSyntaxError as exc:
        # libxml2's guards (entity amplification, huge or deeply nested trees) or plainly broken XML.
        if "amplification" in str(exc) or "huge" in str(exc).lower() or "depth" in str(exc).lower():
            raise InvalidInput(BEYOND_LIMITS.format(kind="Word document")) from exc
        raise InvalidInput(not_word) from exc
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise InvalidInput(not_word) from exc
    parts = [paragraph.text for paragraph in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            parts.append("  ".join(cell.text.strip() for cell in row.cells))
    return "\n".join(parts)


def _attached_einvoice(pdf: bytes) -> EInvoice | None:
    """The e-invoice a PDF carries, or None; an unreadable attachment leaves the printed page to be read."""
    xml = embedded_einvoice(pdf)
    if xml is None:
        return None
    try:
        return read_einvoice(xml)
    except InvalidInput:
        return None


def einvoice_text(invoice: EInvoice) -> str:
    """What an e-invoice says, as plain lines, so that a summary of it reads like one of a printed invoice."""
    kind = "Credit note" if invoice.credit_note else "Invoice"
    lines = [f"{kind} {invoice.invoice_number or ''}".strip()]
    for label, value in (
        ("From", invoice.vendor), ("To", invoice.buyer), ("Issue date", invoice.issue_date),
        ("Due date", invoice.due_date), ("Net amount", invoice.subtotal), ("Tax", invoice.tax),
        ("Total", invoice.total), ("Currency", invoice.currency),
    ):  # fmt: skip
        if value is not None:
            lines.append(f"{label}: {value}")
    lines += [
        f"{item.description}  {item.quantity or ''}  {item.unit_price or ''}  {item.amount or ''}".rstrip()
        for item in invoice.line_items
    ]
    return "\n".join(lines)


def _too_long(limits: Limits) -> str:
    return f"The document has more than {limits.max_chars:,} characters of text. Upload a shorter one."


def _scanned_pdf_pages(
    data: bytes, texts: list[str], words: tuple[Word, ...], languages: str, progress: ProgressCallback
) -> dict[int, OcrPage]:
    """OCR of every page that has neither text for pypdf nor words for PDFium: a scanned page."""
    import pypdfium2 as pdfium

    from quire.documents.ocr import read_pages, render_pdf_page

    with_words = {word.page for word in words}
    scanned = [n for n, text in enumerate(texts, start=1) if not text.strip() and n not in with_words]
    if not scanned:
        return {}
    count = len(texts)
    done = count - len(scanned)
    pdf = pdfium.PdfDocument(data)

    def rendered() -> Iterator[tuple[int, Any, float]]:
        for number in scanned:
            page = pdf[number - 1]
            image, dpi = render_pdf_page(page)
            page.close()
            yield number, image, dpi

    def reading(read: int, number: int) -> None:
        progress(Progress(done + read, count, f"Reading page {number} of {count}", ocr_pages=len(scanned)))

    try:
        return read_pages(rendered(), languages, reading)
    except pdfium.PdfiumError as exc:
        raise InvalidInput("This PDF is damaged or incomplete. Upload a different copy.") from exc
    finally:
        pdf.close()


def _searchable_pdf(original: bytes | None, count: int, read: dict[int, OcrPage]) -> bytes:
    """The scan with its invisible text layer: OCR's page where a page was read by OCR, else the original."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    source = PdfReader(io.BytesIO(original)) if original is not None else None
    for number in range(1, count + 1):
        if number in read:
            writer.add_page(PdfReader(io.BytesIO(read[number].pdf)).pages[0])
        elif source is not None:
            writer.add_page(source.pages[number - 1])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _image_pages(data: bytes, limits: Limits, languages: str, progress: ProgressCallback) -> dict[int, OcrPage]:
    from quire.documents.ocr import open_images, page_count, read_pages

    count = page_count(data)

    def reading(read: int, number: int) -> None:
        progress(Progress(read, count, f"Reading page {number} of {count}", ocr_pages=count))

    pages = ((number, image, dpi) for number, (image, dpi) in enumerate(open_images(data, limits.max_pages), start=1))
    return read_pages(pages, languages, reading)


def _legible(read: dict[int, OcrPage]) -> bool:
    from quire.documents.ocr import legible_words

    return any(legible_words(page.words) for page in read.values())


def extract(
    data: bytes,
    filename: str,
    sha256: str,
    limits: Limits | None = None,
    languages: str = "eng",
    progress: ProgressCallback | None = None,
) -> Document:
    """Read the text of a stored document, or raise InvalidInput saying what the user can do.

    `languages` are Tesseract's names of the languages OCR tries (`eng+deu`); `progress` hears
    of each page as it is read, and of the end.
    """
    limits = limits or Limits()
    progress = progress or _no_progress
    if not data:
        raise InvalidInput("The file is empty. Upload a document with text in it.")
    try:
        content_type = detect_type(data[:HEAD_BYTES], filename)
    except UnsupportedType as exc:
        raise InvalidInput(UNSUPPORTED) from exc
    pages: int | None = None
    words: tuple[Word, ...] = ()
    einvoice: EInvoice | None = None
    read: dict[int, OcrPage] = {}
    if content_type == PDF:
        texts = _pdf_text(data, limits, progress)
        pages = len(texts)
        words = pdf_words(data, pages)  # pypdf's count of the real page tree, already within the limit
        einvoice = _attached_einvoice(data)
        if einvoice is None:
            read = _scanned_pdf_pages(data, texts, words, languages, progress)
        for number, page in read.items():
            texts[number - 1] = page.text
        words = tuple(sorted((*words, *(w for page in read.values() for w in page.words)), key=lambda w: w.page))
        text = "\n\n".join(texts)
    elif content_type in IMAGES:
        read = _image_pages(data, limits, languages, progress)
        pages = len(read)
        if not _legible(read):
            from quire.documents.ocr import NO_TEXT_IN_IMAGE

            raise InvalidInput(NO_TEXT_IN_IMAGE)
        words = tuple(w for page in read.values() for w in page.words)
        text = "\n\n".join(page.text for page in read.values())
    elif content_type == XML:
        einvoice = read_einvoice(data)
        text = einvoice_text(einvoice)
    elif content_type == DOCX:
        text = _docx_text(data, limits)
    elif content_type == HTML:
        text = _html_text(data)
    else:
        text = data.decode("utf-8", errors="replace")
    text = text.strip()
    if not text:
        if content_type == PDF:
            raise InvalidInput(
                "We found no text in this PDF, not even by reading its pages as images. "
                "Upload a PDF with a text layer or a sharper scan."
            )
        raise InvalidInput("No readable text was found. Upload a document with text in it.")
    if len(text) > limits.max_chars:
        raise InvalidInput(_too_long(limits))
    if pages:
        progress(Progress(pages, pages, f"Read {pages} of {pages} pages", ocr_pages=len(read)))
    return Document(
        text=text,
        filename=filename,
        content_type=content_type,
        sha256=sha256,
        pages=pages,
        words=words,
        einvoice=einvoice,
        ocr_pages=tuple(sorted(read)),
        turns={number: page.turn for number, page in read.items() if page.turn is not None},
        searchable_pdf=_searchable_pdf(data if content_type == PDF else None, pages or 0, read) if read else None,
    )
