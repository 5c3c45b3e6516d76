"""Scans and photos read by the real Tesseract: types by content, orientation, mixed PDFs and refusals."""

from __future__ import annotations

import io
import struct
import threading
import time
import zlib
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytesseract
import pytest
from PIL import Image, ImageDraw, ImageFont, ImageOps
from pypdf import PdfReader, PdfWriter

from backend.tests.documents import pdf_bytes
from backend.tests.scans import degrade, encode, page_images
from quire.documents import ocr
from quire.documents.background import even_background
from quire.documents.extract import JPEG, PNG, TIFF, WEBP, Document, Limits, Progress, Word, detect_type, extract
from quire.documents.ocr import NO_TEXT_IN_IMAGE
from quire.errors import InvalidInput
from quire.workflows.models.invoice import read_invoice
from quire.workflows.models.invoice.layout import lines_from_words

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


def test_faint_print_photographed_on_a_dark_table_is_read(invoice_page: Image.Image) -> None:
    # Given a photo of a page in faint grey print lying on a dark table: a black margin half its width
    faint = invoice_page.point(lambda v: 150 + v * 105 // 255)
    photo = Image.new("L", (faint.width * 3 // 2, faint.height), 20)
    photo.paste(faint, (0, 0))
    # When it is read
    document = extract(encode([photo], "JPEG", dpi=150, quality=90), "photo.jpg", "0" * 64, languages=LANGUAGES)
    # Then its print is read: one threshold for the whole photo, margin and all, fell below the grey print
    assert "RE-20151008/504" in document.text


def test_an_evenly_lit_page_is_read_as_it_is(invoice_page: Image.Image) -> None:
    assert even_background(invoice_page) is invoice_page


def test_white_print_on_dark_inside_the_page_is_kept_when_a_dark_edge_is_whitened(invoice_page: Image.Image) -> None:
    # Given a scan with a scanner's dark edge, a dark table header band and a dark box of white print
    page = invoice_page.copy()
    draw, font = ImageDraw.Draw(page), ImageFont.load_default(size=28)
    draw.rectangle((0, 0, 40, page.height), fill=5)
    draw.rectangle((60, 120, page.width - 60, 175), fill=15)
    draw.text((80, 128), "DESCRIPTION   QUANTITY   AMOUNT", fill=255, font=font)
    draw.rectangle((page.width - 520, page.height - 260, page.width - 80, page.height - 190), fill=15)
    draw.text((page.width - 500, page.height - 248), "AMOUNT DUE 1,234.00 EUR", fill=255, font=font)
    # When its background is evened
    evened = even_background(page)
    # Then the edge is white, and the print in the band and the box still reads
    assert evened.crop((0, 0, 40, page.height)).getextrema() == (255, 255)
    text = pytesseract.image_to_string(evened, lang="eng")
    assert "DESCRIPTION" in text
    assert "AMOUNT DUE" in text


def test_a_grey_margin_with_no_print_is_made_white_and_the_paper_left_as_it_is(invoice_page: Image.Image) -> None:
    # Given a page photographed on a grey table, lighter than half the paper: no dark area on it
    width, height = invoice_page.size
    photo = Image.new("L", (width + 200, height + 200), 130)
    photo.paste(invoice_page, (100, 100))
    # When its background is evened
    evened = even_background(photo)
    # Then the table is white, and the paper (away from its edge) is as it was
    assert evened.crop((0, 0, 60, photo.height)).getextrema() == (255, 255)
    inner = (150, 150, 50 + width, 50 + height)
    assert np.array_equal(np.asarray(evened.crop(inner)), np.asarray(photo.crop(inner)))


def test_light_falling_off_across_a_photo_is_no_margin() -> None:
    # Given a photo lit from one side: its paper falls from 245 to 165 across it, and nothing else is on it
    photo = Image.fromarray(np.tile(np.linspace(245, 165, 1000).astype(np.uint8), (1800, 1)))
    # Then the background evening leaves its paper as it is
    assert even_background(photo) is photo


def test_paper_in_shadow_keeps_its_ink(invoice_page: Image.Image) -> None:
    # Given a photo whose left half lies in a shadow (its paper at 40 % of the light)
    page = invoice_page.copy()
    page.paste(page.crop((0, 0, page.width // 2, page.height)).point(lambda v: v * 2 // 5), (0, 0))
    # When its background is evened
    evened = even_background(page)
    # Then the shadowed paper is white as the rest, and its print reads
    assert np.percentile(np.asarray(evened.crop((0, 0, page.width // 2, page.height))), 50) == 255
    assert "RE-20151008/504" in pytesseract.image_to_string(evened, lang="eng+deu")


def test_print_on_dark_areas_joined_to_the_edge_is_never_whitened(invoice_page: Image.Image) -> None:
    font = ImageFont.load_default(size=28)
    # A letterhead's band across the top, in white print
    banded = invoice_page.copy()
    ImageDraw.Draw(banded).rectangle((0, 0, banded.width, 90), fill=15)
    ImageDraw.Draw(banded).text((80, 30), "BEISPIEL WERKZEUGE GMBH", fill=255, font=font)
    assert "WERKZEUGE" in pytesseract.image_to_string(even_background(banded), lang="eng")
    # Paper in a shadow deeper than a quarter of the light: left as it is, its ink kept
    shadowed = invoice_page.copy()
    shadowed.paste(shadowed.crop((0, 0, shadowed.width // 2, shadowed.height)).point(lambda v: v // 5), (0, 0))
    assert even_background(shadowed).crop((0, 0, shadowed.width // 2, shadowed.height)).getextrema()[0] < 20
    # A dark-mode screenshot: light print on a dark page
    dark_mode = ImageOps.invert(invoice_page)
    assert "RE-20151008/504" in pytesseract.image_to_string(even_background(dark_mode), lang="eng+deu")


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
        # Over Pillow's warning size and under its error size: Pillow warns as it reads the header, Quire refuses.
        pytest.param(
            _png_declaring(12_000, 9_000),
            "million pixels",
            marks=pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning"),
        ),
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


def _ocr_invoice(total_confidence: float) -> dict[str, Any]:
    """An invoice page as OCR gives it: words with boxes, the total's digits read with `total_confidence`."""
    placed = [(50, 40, "Acme Supplies Ltd", 0.95), (50, 100, "Invoice No: 4711", 0.95),
              (50, 200, "Subtotal:", 0.95), (200, 200, "100.00", 0.95), (50, 220, "Total:", 0.95),
              (200, 220, "119.00", total_confidence)]  # fmt: skip
    words = []
    for x, y, phrase, confidence in placed:
        cursor = float(x)
        for token in phrase.split():
            words.append(Word(token, 1, cursor, y, cursor + 5 * len(token), y + 10, confidence))
            cursor += 5 * len(token) + 3
    document = Document(text="\n".join(p[2] for p in placed), filename="scan.png", content_type=PNG, sha256="0",
                        words=tuple(words), ocr_pages=(1,))  # fmt: skip
    return read_invoice(document)


def test_a_word_ocr_is_unsure_of_lowers_its_fields_confidence_and_asks_for_review() -> None:
    sure, unsure = _ocr_invoice(0.95), _ocr_invoice(0.45)
    assert sure["source"] == unsure["source"] == "ocr"
    assert sure["total"] == Decimal("119.00")
    assert unsure["fields"].get("total", {}).get("confidence", 0) < sure["fields"]["total"]["confidence"]
    assert unsure["total"] is None
    assert "total" in unsure["needs_review"]


def test_a_long_text_pdf_reports_its_progress_page_by_page() -> None:
    seen: list[Progress] = []
    document = extract(pdf_bytes(["A page of text."], pages=4), "long.pdf", "0" * 64, progress=seen.append)
    assert document.ocr_pages == ()
    assert document.searchable_pdf is None
    assert [p.total for p in seen] == [4] * len(seen)
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    assert seen[-1].as_record() == {"done": 4, "total": 4, "unit": "pages", "message": "Read 4 of 4 pages"}


def _hocr(*paragraphs: tuple[str, list[str]]) -> str:
    """hOCR as Tesseract writes it: each paragraph names its language, a word only where it differs."""
    out = []
    for language, words in paragraphs:
        spans = "".join(
            f"<span class='ocrx_word' title='x'{f' lang={chr(39)}{w[1:]}{chr(39)}' if w.startswith('@') else ''}>"
            f"{'Xxxx' if w.startswith('@') else w}</span>"
            for w in words
        )
        out.append(f"<p class='ocr_par' lang='{language}' title='x'>{spans}</p>")
    return "".join(out)


def test_the_language_a_page_was_read_in_narrows_the_languages_of_the_next_pages() -> None:
    from quire.documents.ocr import OcrPage, _page_languages, languages_after

    all_six = "eng+deu+fra+nld+spa+ita"
    german = _page_languages(_hocr(("deu", ["Rechnung", "Datum", "Betrag"] * 6), ("eng", ["Total", "@fra"])))
    assert german[0] == "deu"
    assert languages_after(OcrPage((), "", b"", german), all_six) == "deu+eng"
    # An English page keeps the runner-up: Tesseract reads names and capitals of any language as English
    english = _page_languages(_hocr(("eng", ["Invoice", "Amount", "Payment"] * 6), ("deu", ["Rechnung"] * 3)))
    assert languages_after(OcrPage((), "", b"", english), all_six) == "eng+deu"
    # Numbers and short words tell nothing; a short or mixed page keeps every language
    mixed = _page_languages(_hocr(("deu", ["Rechnung"] * 8 + ["12,00", "Nr"] * 20), ("fra", ["Facture"] * 8)))
    assert mixed == ()
    assert languages_after(OcrPage((), "", b"", mixed), all_six) == all_six
    assert languages_after(OcrPage((), "", b"", german), "deu") == "deu"


def test_a_quick_look_tells_the_first_pages_language(invoice_page: Image.Image) -> None:
    from quire.documents.ocr import Look, look_at

    all_six = "eng+deu+fra+nld+spa+ita"
    # A German invoice is read in German and English, which the look is sure of
    assert look_at(invoice_page, 150, all_six) == Look("deu+eng", told=True)
    # An English letter in English and the identifier's runner-up
    letter = [
        "Thank you for your order of the replacement parts for the heating system.",
        "The delivery will arrive within three working days after the payment is received.",
        "Please contact our customer service if anything is missing or damaged on arrival.",
    ]
    english = page_images(pdf_bytes(letter * 3), dpi=300, pages=1)[0]
    assert look_at(english, 300, all_six).languages.startswith("eng+")
    assert look_at(english, 300, all_six).told
    # A page with too few words to tell keeps every language; so do two languages, or one the identifier
    # does not know (it could be the page's)
    short = page_images(pdf_bytes(["Total 12,00"]), dpi=300, pages=1)[0]
    assert look_at(short, 300, all_six) == Look(all_six)
    assert look_at(invoice_page, 150, "eng+fra") == Look("eng+fra")
    assert look_at(invoice_page, 150, "eng+deu+fra+heb") == Look("eng+deu+fra+heb")


def test_a_fine_scan_is_read_at_the_ocr_resolution_and_a_coarser_one_as_it_is(invoice_page: Image.Image) -> None:
    # Given the invoice scanned at 300 dpi, and at 150
    fine = page_images((CORPUS / "d05.pdf").read_bytes(), dpi=300, pages=1)[0]
    # Then the fine scan is scaled down to OCR_DPI, and the coarse one is not scaled up
    [(image, dpi)] = list(ocr.open_images(encode([fine], "PNG", dpi=300), max_pages=5))
    assert dpi == pytest.approx(ocr.OCR_DPI, rel=0.01)
    assert image.width == pytest.approx(fine.width * ocr.OCR_DPI / 300, abs=1)
    [(image, dpi)] = list(ocr.open_images(encode([invoice_page], "PNG", dpi=150), max_pages=5))
    assert (image.size, dpi) == (invoice_page.size, pytest.approx(150, rel=0.01))
    # And an image whose stated 300 dpi would make it smaller than a page (an editor's default) is not shrunk
    [(image, dpi)] = list(ocr.open_images(encode([invoice_page], "PNG", dpi=300), max_pages=5))
    assert image.size == invoice_page.size


def test_the_look_reads_a_page_in_bands_side_by_side_and_keeps_each_word_once(
    invoice_page: Image.Image, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the invoice page read whole, and read in three bands (as on a machine with three cores)
    monkeypatch.setattr(ocr, "page_threads", lambda: 1)
    whole = ocr._quick_words(invoice_page, 150)
    monkeypatch.setattr(ocr, "page_threads", lambda: 3)
    banded = ocr._quick_words(invoice_page, 150)
    # Then they give about as many words (a band's layout differs a little from the page's), none twice
    # from the overlaps, at their places on the page
    assert abs(len(banded) - len(whole)) <= 0.1 * len(whole)
    at = {(w.text, round(w.x0 / 4), round(w.y0 / 4)) for w in banded}
    assert len(at) == len(banded)
    number, again = (next(w for w in words if w.text == "RE-20151008/504") for words in (whole, banded))
    assert abs(number.y0 - again.y0) <= 2
    assert max(w.y1 for w in banded) > 0.8 * max(w.y1 for w in whole)


def test_a_quick_look_turns_a_sideways_page_before_it_is_read(invoice_page: Image.Image) -> None:
    from quire.documents.ocr import Look, look_at

    # Given the German invoice lying on its left side
    sideways = invoice_page.rotate(90, expand=True)
    # When it is looked at, then it must be turned a quarter clockwise, and its language is still told
    assert look_at(sideways, 150, "eng+deu+fra+nld+spa+ita") == Look("deu+eng", angle=90, told=True)


def test_an_unsure_identifier_keeps_the_few_languages_that_are_likely() -> None:
    from quire.documents.ocr import _likely_languages

    all_six = ["eng", "deu", "fra", "nld", "spa", "ita"]
    # Words of two languages: the identifier gives neither 90%, both together more; it told no language
    mixed = "Rechnung Betrag Kunde Lieferung Zahlung factuur bedrag klant levering betaling adres bestelling"
    assert _likely_languages(mixed, all_six) == ("deu+nld+eng", False)
    # German and English words: two languages, but still not told (German has 54%)
    pair = "Invoice amount customer delivery payment order Rechnung Betrag Kunde Lieferung Zahlung Bestellung address"
    assert _likely_languages(pair + " number", all_six) == ("deu+eng", False)
    # Sure of one language: it and English
    german = "Rechnung Betrag Kunde Lieferung Zahlung Anschrift Bestellung Steuernummer Gesamtbetrag Lieferschein"
    assert _likely_languages(german + " Rechnungsdatum Nettobetrag", all_six) == ("deu+eng", True)
    # Too few words to tell: every language, in the order configured
    assert _likely_languages("Rechnung Betrag", all_six) == ("eng+deu+fra+nld+spa+ita", False)


def test_pages_are_read_side_by_side_once_a_look_tells_the_language(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given five pages, a reader that takes its time, and a first page that a quick look tells is German
    calls: list[tuple[int, str]] = []
    busy, most = [0], [0]
    lock = threading.Lock()

    def read_page(image: Image.Image, dpi: float, page: int, languages: str) -> ocr.OcrPage:
        with lock:
            calls.append((page, languages))
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        time.sleep(0.2 if page % 2 else 0.05)  # odd pages are slower: later pages finish first
        with lock:
            busy[0] -= 1
        return ocr.OcrPage((), f"page {page}", b"", ())

    looked: list[str] = []

    def look_at(image: Image.Image, dpi: float, languages: str) -> ocr.Look:
        looked.append(languages)
        return ocr.Look("deu+eng", told=True)

    monkeypatch.setattr(ocr, "read_page", read_page)
    monkeypatch.setattr(ocr, "look_at", look_at)
    monkeypatch.setattr(ocr, "page_threads", lambda: 2)
    heard: list[tuple[int, int]] = []
    pages = ((n, Image.new("L", (10, 10)), 300.0) for n in range(1, 6))
    # When they are read
    read = ocr.read_pages(pages, "eng+deu+fra", lambda done, number: heard.append((done, number)))
    # Then only the first page was looked at, and every page was read once, two at a time, in its language
    assert looked == ["eng+deu+fra"]
    assert sorted(read) == [1, 2, 3, 4, 5]
    assert all(read[n].text == f"page {n}" for n in read)
    assert sorted(calls) == [(n, "deu+eng") for n in range(1, 6)]
    assert most[0] == 2
    # And progress was heard in order: pages done never go back, and the page named is the first unread
    assert heard == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]


def test_pages_are_read_one_at_a_time_until_one_shows_the_language(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a cover page that shows no language, then pages in Dutch that a quick look cannot tell from German
    calls: list[tuple[int, str, tuple[int, int]]] = []
    looked: list[tuple[int, str]] = []

    def read_page(image: Image.Image, dpi: float, page: int, languages: str) -> ocr.OcrPage:
        calls.append((page, languages, image.size))
        return ocr.OcrPage((), "", b"", () if page == 1 else ("nld", "eng"))

    def look_at(image: Image.Image, dpi: float, languages: str) -> ocr.Look:
        looked.append((len(looked) + 1, languages))
        return ocr.Look(languages if not looked[1:] else "nld+deu+eng")

    monkeypatch.setattr(ocr, "read_page", read_page)
    monkeypatch.setattr(ocr, "look_at", look_at)
    monkeypatch.setattr(ocr, "page_threads", lambda: 2)
    pages = ((n, Image.new("L", (10, 20)), 300.0) for n in range(1, 5))
    # When they are read
    ocr.read_pages(pages, "eng+deu+nld+fra", lambda done, number: None)
    # Then the first page was read alone in every language, the second alone in the languages its look
    # left, and the language it was read in narrowed the pages after it, which were not looked at
    assert looked == [(1, "eng+deu+nld+fra"), (2, "eng+deu+nld+fra")]
    assert calls[:2] == [(1, "eng+deu+nld+fra", (10, 20)), (2, "nld+deu+eng", (10, 20))]
    assert sorted(calls[2:]) == [(3, "nld+eng", (10, 20)), (4, "nld+eng", (10, 20))]


def test_a_page_the_look_finds_sideways_is_turned_before_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[Image.Image] = []

    def read_page(image: Image.Image, dpi: float, page: int, languages: str) -> ocr.OcrPage:
        read.append(image)
        return ocr.OcrPage((), "", b"", ())

    monkeypatch.setattr(ocr, "read_page", read_page)
    monkeypatch.setattr(ocr, "look_at", lambda image, dpi, languages: ocr.Look("deu+eng", angle=90, told=True))
    # Given a page whose top-left corner is marked, which the look says must be turned a quarter clockwise
    page = Image.new("L", (10, 20), 255)
    page.putpixel((0, 0), 0)
    ocr.read_pages([(1, page, 300.0)], "eng+deu+nld", lambda done, number: None)
    # Then it was read turned: wide, and the mark now in the top-right corner
    assert read[0].size == (20, 10)
    assert read[0].getpixel((19, 0)) == 0


def test_a_look_not_sure_of_two_languages_reads_the_page_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, str]] = []

    def read_page(image: Image.Image, dpi: float, page: int, languages: str) -> ocr.OcrPage:
        calls.append((page, languages))
        return ocr.OcrPage((), "", b"", ())

    # Given looks that narrow each page to German and English without being sure of German
    monkeypatch.setattr(ocr, "read_page", read_page)
    monkeypatch.setattr(ocr, "look_at", lambda image, dpi, languages: ocr.Look("deu+eng"))
    pages = ((n, Image.new("L", (10, 20)), 300.0) for n in range(1, 4))
    ocr.read_pages(pages, "eng+deu+fra", lambda done, number: None)
    # Then each page was read alone in those two, and none of them fixed the document's languages
    assert calls == [(1, "deu+eng"), (2, "deu+eng"), (3, "deu+eng")]


def test_with_two_languages_pages_are_read_side_by_side_from_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    busy, most = [0], [0]
    lock = threading.Lock()

    def read_page(image: Image.Image, dpi: float, page: int, languages: str) -> ocr.OcrPage:
        with lock:
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        time.sleep(0.1)
        with lock:
            busy[0] -= 1
        return ocr.OcrPage((), "", b"", ())

    def look_at(image: Image.Image, dpi: float, languages: str) -> ocr.Look:
        raise AssertionError("no look with two languages")

    monkeypatch.setattr(ocr, "read_page", read_page)
    monkeypatch.setattr(ocr, "look_at", look_at)
    monkeypatch.setattr(ocr, "page_threads", lambda: 2)
    pages = ((n, Image.new("L", (10, 20)), 300.0) for n in range(1, 4))
    assert sorted(ocr.read_pages(pages, "deu+eng", lambda done, number: None)) == [1, 2, 3]
    assert most[0] == 2


def test_languages_whose_packs_are_missing_are_left_out_in_their_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a machine set up before Polish and Finnish were added to the defaults
    from quire.documents import ocr

    monkeypatch.setattr(ocr, "_installed_packs", lambda: frozenset({"eng", "deu", "fra"}))
    ocr.installed.cache_clear()
    # Then OCR reads in the languages it has, in the order configured
    assert ocr.installed("fra+pol+eng+fin+deu") == "fra+eng+deu"
    # And with none of them installed, it asks for them all, so Tesseract says which is missing
    assert ocr.installed("pol+fin") == "pol+fin"
    ocr.installed.cache_clear()


def test_a_job_may_name_only_a_language_whose_pack_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an operator who configured Portuguese without installing its pack
    from quire.documents import ocr
    from quire.jobs import service
    from quire.settings import Settings

    monkeypatch.setattr(ocr, "_installed_packs", lambda: frozenset({"eng", "deu"}))
    ocr.installed.cache_clear()
    settings = Settings(ocr_languages="eng+deu+por")
    # Then the form does not offer it and a job naming it is refused with the languages it may name
    assert [code for code, _ in service.document_languages(settings)] == ["en", "de"]
    assert service.ocr_language(settings, "de") == "deu"
    with pytest.raises(service.UnknownLanguage, match="Name one of: en, de"):
        service.ocr_language(settings, "pt")
    ocr.installed.cache_clear()


def test_a_worker_without_the_named_pack_reads_in_the_configured_languages(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a job accepted by a web server that has the Portuguese pack, read by a worker that has not
    from quire.documents import ocr
    from quire.queue.results import ocr_languages
    from quire.settings import Settings

    monkeypatch.setattr(ocr, "_installed_packs", lambda: frozenset({"eng", "deu"}))
    settings = Settings(ocr_languages="eng+deu")
    # Then the worker reads it in the languages it has rather than fail every attempt
    assert ocr_languages(settings, "por") == "eng+deu"
    assert ocr_languages(settings, "deu") == "deu"
    assert ocr_languages(settings, None) == "eng+deu"


def _tsv(*words: tuple[str, int, int, int]) -> str:
    """Tesseract TSV of words on one line: (text, left, width, line number), 20 pixels tall."""
    head = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        f"5\t1\t1\t1\t{line}\t{n}\t{left}\t100\t{width}\t20\t90\t{text}"
        for n, (text, left, width, line) in enumerate(words)
    ]
    return "\n".join([head, *rows])


def test_an_amount_cut_at_its_decimal_point_is_joined_again() -> None:
    # Given receipts where Tesseract cut amounts at the point ("RM367 .10", "RM1. 30")
    from quire.documents import ocr

    def texts(tsv: str) -> list[str]:
        return [word.text for word, _ in ocr._tsv_words(tsv, 1, 1.0)]

    # Then the halves make one amount again, with one box
    assert texts(_tsv(("Total", 0, 60, 1), ("RM367", 80, 60, 1), (".10", 145, 25, 1))) == ["Total", "RM367.10"]
    assert texts(_tsv(("RM1.", 0, 40, 1), ("30", 48, 20, 1))) == ["RM1.30"]
    joined = ocr._tsv_words(_tsv(("RM1.", 0, 40, 1), ("30", 48, 20, 1)), 1, 1.0)[0][0]
    assert (joined.x0, joined.x1) == (0, 68)
    # But not numbers in columns apart, on other lines, or with a point on both sides or none
    assert texts(_tsv(("RM2", 0, 30, 1), (".50", 200, 25, 1))) == ["RM2", ".50"]
    assert texts(_tsv(("RM367", 0, 50, 1), (".10", 55, 25, 2))) == ["RM367", ".10"]
    assert texts(_tsv(("Qty", 0, 30, 1), ("12", 35, 20, 1))) == ["Qty", "12"]
    assert texts(_tsv(("RM1.", 0, 40, 1), (".30", 45, 25, 1))) == ["RM1.", ".30"]
    assert texts(_tsv(("No.", 0, 30, 1), ("30", 35, 20, 1))) == ["No.", "30"]
    # Nor numbers with no currency glued to them: a list, a date, an item code
    assert texts(_tsv(("4,", 0, 15, 1), ("12", 20, 20, 1))) == ["4,", "12"]
    assert texts(_tsv(("03.", 0, 20, 1), ("24", 25, 20, 1))) == ["03.", "24"]
    assert texts(_tsv(("12345", 0, 50, 1), (".99", 55, 25, 1))) == ["12345", ".99"]


def test_a_scan_turned_a_little_is_read_as_level_lines(invoice_page: Image.Image) -> None:
    # Given the page read level, and the same page scanned turned by one and a half degrees
    level = extract(encode([invoice_page], "PNG", dpi=150), "level.png", "0" * 64, languages=LANGUAGES)
    turned = invoice_page.rotate(1.5, expand=True, fillcolor=255)
    document = extract(encode([turned], "PNG", dpi=150), "turned.png", "0" * 64, languages=LANGUAGES)
    # Then its words stand on no more rows than the level page's: a printed line's words climb on a turned page, and
    # without levelling its right-hand words fall onto rows of their own
    assert len(lines_from_words(document.words)) <= len(lines_from_words(level.words))
    read = read_invoice(document)
    assert read["invoice_number"] == "RE-20151008/504"
    # And the evidence marks the number where it stands on the turned scan: around the box Tesseract gives its word
    tsv = pytesseract.image_to_data(turned, lang="eng", output_type=pytesseract.Output.DICT)
    at = tsv["text"].index("RE-20151008/504")
    scale = 72 / 150
    left, top = tsv["left"][at] * scale, tsv["top"][at] * scale
    right, bottom = left + tsv["width"][at] * scale, top + tsv["height"][at] * scale
    x0, y0, x1, y1 = read["fields"]["invoice_number"]["bbox"]
    assert x0 - 1 <= left <= right <= x1 + 1
    assert y0 - 1 <= top <= bottom <= y1 + 1


def test_word_boxes_are_levelled_by_the_slope_of_the_lines_baselines() -> None:
    # Given Tesseract's lines of a page that climbs 2 points in 100 (one line too short to tell)
    hocr = "".join(
        f"<span class='ocr_line' id='l{i}' title=\"bbox 100 {y} {right} {y + 20}; baseline -0.02 0; x_size 20\">"
        for i, (y, right) in enumerate([(100, 1300), (200, 1250), (300, 1400), (400, 150)])
    )
    slope = ocr._slope(hocr, dpi=200)
    assert slope == -0.02
    # When the words of one printed line, each 2 points higher than the one 100 points to its left, are levelled
    words = [Word(f"w{i}", 1, 100 * i, 300 - 2 * i, 100 * i + 60, 310 - 2 * i, 0.9) for i in range(6)]
    turn = ocr.Turn(slope, 300.0, 400.0)
    levelled = ocr._level(words, turn)
    # Then they stand on one row, each keeping its size
    assert max(w.y0 for w in levelled) - min(w.y0 for w in levelled) < 0.01
    assert all(round(w.x1 - w.x0, 6) == 60 and round(w.y1 - w.y0, 6) == 10 for w in levelled)
    # And a box of levelled words is turned back to where the words stand on the scan
    for word, level in zip(words, levelled, strict=True):
        x0, y0, x1, y1 = turn.shown((level.x0, level.y0, level.x1, level.y1))
        assert abs((x0 + x1) / 2 - (word.x0 + word.x1) / 2) < 0.01
        assert abs((y0 + y1) / 2 - (word.y0 + word.y1) / 2) < 0.01
    # And a level page's words are left as they are
    assert ocr._level(words, None) == words


def test_a_steep_line_is_text_set_at_an_angle_not_the_pages_turn() -> None:
    # Given a level page's lines and one wide stamp printed at 17 degrees across it
    hocr = "".join(
        f"<span class='ocr_line' id='l{i}' title=\"bbox 100 {y} {right} {y + 20}; baseline {slope} 0; x_size 20\">"
        for i, (y, right, slope) in enumerate([(100, 1300, 0), (200, 1250, 0), (300, 1400, 0), (600, 4000, -0.3)])
    )
    # Then the page reads as level
    assert ocr._slope(hocr, dpi=200) == 0.0
