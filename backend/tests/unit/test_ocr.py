"""Scans and photos read by the real Tesseract: types by content, orientation, mixed PDFs and refusals."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from backend.tests.scans import degrade, encode, page_images
from quire.documents.extract import JPEG, PNG, TIFF, WEBP, Limits, Progress, detect_type, extract
from quire.documents.ocr import NO_TEXT_IN_IMAGE
from quire.errors import InvalidInput

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "zugferd" / "pdf"
LANGUAGES = "eng+deu"


@pytest.fixture(scope="module")
def invoice_page() -> Image.Image:
    """The first page of a real German invoice, scanned at 150 dpi."""
    return page_images((CORPUS / "d05.pdf").read_bytes(), dpi=150, pages=1)[0]


@pytest.mark.parametrize(("fmt", "expected"), [("PNG", PNG), ("JPEG", JPEG), ("TIFF", TIFF), ("WEBP", WEBP)])
def test_images_are_recognised_by_content(fmt: str, expected: str) -> None:
    data = encode([Image.new("L", (40, 40), 255)], fmt)
    assert detect_type(data[:64], "named.txt") == expected


def test_a_photo_is_turned_upright_by_its_exif_orientation(invoice_page: Image.Image) -> None:
    # Given a photo stored sideways with EXIF orientation 6 (the camera says: turn 90 degrees clockwise)
    sideways = invoice_page.rotate(90, expand=True)
    exif = Image.Exif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    sideways.save(buffer, format="JPEG", quality=85, exif=exif)
    # When it is read
    document = extract(buffer.getvalue(), "photo.jpg", "0" * 64, languages=LANGUAGES)
    # Then the text reads upright, without asking Tesseract to find the orientation
    assert "RE-20151008/504" in document.text
    assert document.ocr_pages == (1,)


def test_a_mixed_pdf_reads_text_pages_from_their_layer_and_scanned_pages_by_ocr(invoice_page: Image.Image) -> None:
    # Given a PDF whose first page has a text layer and whose second page is only an image
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO((CORPUS / "d01.pdf").read_bytes())), pages=[0])
    writer.append(PdfReader(io.BytesIO(encode([degrade(invoice_page, skew=1.0)], "PDF", dpi=150))))
    buffer = io.BytesIO()
    writer.write(buffer)
    seen: list[Progress] = []
    # When it is read
    document = extract(buffer.getvalue(), "mixed.pdf", "0" * 64, languages=LANGUAGES, progress=seen.append)
    # Then only the second page went through OCR, and both pages' words are there with their page numbers
    assert document.ocr_pages == (2,)
    assert "RE-20140519/499" in document.text
    assert "RE-20151008/504" in document.text
    assert {w.page for w in document.words} == {1, 2}
    assert all(w.confidence == 1.0 for w in document.words if w.page == 1)
    assert seen[-1].done == seen[-1].total == 2
    # And the searchable PDF keeps the text page and gives the scanned one a text layer
    searchable = PdfReader(io.BytesIO(document.searchable_pdf or b""))
    assert len(searchable.pages) == 2
    assert "504" in (searchable.pages[1].extract_text() or "")


def test_a_blank_image_is_invalid_input_with_a_sentence() -> None:
    data = encode([degrade(Image.new("L", (1240, 1754), 255), noise=0.0005)], "PNG", dpi=150)
    with pytest.raises(InvalidInput) as raised:
        extract(data, "blank.png", "0" * 64, languages=LANGUAGES)
    assert raised.value.message == NO_TEXT_IN_IMAGE


def _png_declaring(width: int, height: int) -> bytes:
    """A PNG whose header claims a size far beyond its data: a decompression bomb's signature."""
    small = encode([Image.new("L", (8, 8), 255)], "PNG")
    header = struct.pack(">II", width, height) + small[24:29]
    chunk = b"IHDR" + header
    return small[:8] + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk)) + small[33:]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (_png_declaring(60_000, 60_000), "million pixels"),
        (_png_declaring(12_000, 9_000), "million pixels"),
        (_png_declaring(20, 4_000), "not the shape of a page"),
    ],
    ids=["pillow-bomb", "too-many-pixels", "absurd-shape"],
)
def test_oversized_and_absurd_images_are_refused_before_decoding(data: bytes, words: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        extract(data, "bomb.png", "0" * 64, languages=LANGUAGES)
    assert words in raised.value.message


def test_more_pages_than_the_limit_is_invalid_input() -> None:
    pages = [Image.new("L", (200, 280), 255)] * 3
    with pytest.raises(InvalidInput) as raised:
        extract(encode(pages, "TIFF"), "pages.tif", "0" * 64, Limits(max_pages=2), languages=LANGUAGES)
    assert "3 pages" in raised.value.message
