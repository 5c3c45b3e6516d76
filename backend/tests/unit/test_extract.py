"""Type detection by content and visible text extraction."""

from __future__ import annotations

import pytest

from quire.documents.extract import (
    DOCX,
    HTML,
    MARKDOWN,
    PDF,
    TEXT,
    XML,
    UnsupportedType,
    detect_type,
    extract,
    index_chars,
    pdf_words,
)
from quire.errors import InvalidInput


@pytest.mark.parametrize(
    ("head", "name", "expected"),
    [
        (b"%PDF-1.7\n", "report.txt", PDF),
        (b"PK\x03\x04rest", "a.docx", DOCX),
        (b"<!DOCTYPE html><html><body>x", "page.pdf", HTML),
        (b"# Title\n\ntext", "notes.md", MARKDOWN),
        (b"plain words", "notes.txt", TEXT),
        ("café au lait".encode(), "menu", TEXT),
    ],
)
def test_type_is_decided_by_content(head: bytes, name: str, expected: str) -> None:
    assert detect_type(head, name) == expected


def test_binary_content_is_unsupported() -> None:
    with pytest.raises(UnsupportedType):
        detect_type(b"\x7fELF\x02\x01\x01\x00\x00", "program.txt")


def test_html_keeps_only_visible_text() -> None:
    page = b"<html><head><title>T</title><style>p{}</style></head><body><p>Hello</p><script>alert(1)</script>"
    document = extract(page + b"<p>World</p></body></html>", "p.html", "0" * 64)
    assert document.content_type == HTML
    assert document.text.split() == ["Hello", "World"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"   \n\t ", "No readable text"),
        (b"%PDF-1.4\n%%EOF", "damaged"),
        (b"\x00\x01binary", "not supported"),
    ],
)
def test_unreadable_documents_are_invalid_input(data: bytes, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        extract(data, "x.pdf", "0" * 64)


# Generated documents: real files made by real libraries ----------------------------------------

from backend.tests.documents import docx_bytes, encrypted_pdf, image_only_pdf, pdf_bytes  # noqa: E402
from quire.documents.extract import Limits  # noqa: E402


def test_pdf_text_layer_and_page_count() -> None:
    document = extract(pdf_bytes(["Quarterly report", "Revenue grew by ten percent."], pages=3), "r.pdf", "0" * 64)
    assert document.content_type == PDF
    assert document.pages == 3
    assert document.text.count("Revenue grew by ten percent.") == 3


def test_docx_paragraphs_and_tables() -> None:
    data = docx_bytes(["Meeting notes", "We agreed on the budget."], [["Item", "Cost"], ["Chairs", "120"]])
    document = extract(data, "notes.docx", "0" * 64)
    assert document.content_type == DOCX
    assert "We agreed on the budget." in document.text
    assert "Chairs  120" in document.text


def test_markdown_is_read_as_text() -> None:
    document = extract(b"# Plan\n\n- first step\n- second step\n", "plan.md", "0" * 64)
    assert (document.content_type, document.text.splitlines()[0]) == (MARKDOWN, "# Plan")


def test_a_pdf_name_on_html_content_is_read_as_html() -> None:
    document = extract(b"<html><body><p>Actually a web page</p></body></html>", "fake.pdf", "0" * 64)
    assert (document.content_type, document.text) == (HTML, "Actually a web page")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: encrypted_pdf(["secret"]), "password-protected"),
        (lambda: pdf_bytes(["cut short"])[:300], "damaged or incomplete"),
        (image_only_pdf, "found no text in this PDF"),
        (lambda: b"", "empty"),
        (lambda: b"PK\x03\x04" + b"\x00" * 100, "not a readable Word document"),
    ],
)
def test_hostile_documents_end_in_invalid_input(make: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        extract(make(), "hostile.pdf", "0" * 64)  # type: ignore[operator]


def test_limits_on_pages_and_characters() -> None:
    with pytest.raises(InvalidInput, match="Quire reads at most 2"):
        extract(pdf_bytes(["page"], pages=3), "long.pdf", "0" * 64, Limits(max_pages=2))
    with pytest.raises(InvalidInput, match="more than 1,000 characters"):
        extract(b"word " * 1000, "huge.txt", "0" * 64, Limits(max_chars=1000))


def test_a_zip_bomb_docx_is_refused_before_it_is_inflated() -> None:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", "<w:document/>")
        archive.writestr("word/media/bomb.bin", b"\x00" * (210 * 1024 * 1024))
    with pytest.raises(InvalidInput, match="expands to far more data"):
        extract(out.getvalue(), "bomb.docx", "0" * 64)


def test_markdown_that_opens_with_html_or_a_comment_stays_markdown() -> None:
    for head in (b"<details>\n<summary>Notes</summary>\n", b"<!-- draft -->\n# Notes\n"):
        assert detect_type(head, "notes.md") == MARKDOWN


def test_an_xml_declaration_or_an_einvoice_root_is_xml() -> None:
    assert detect_type(b'<?xml version="1.0"?><note/>', "a.txt") == XML
    cii = b'<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100">'
    assert detect_type(cii, "invoice") == XML


def _pdf_with_text_operator(operands: str) -> bytes:
    """A one-page PDF whose text is one TJ operator: strings with the generator's own spacing between them."""
    content = f"BT /F1 12 Tf 50 700 Td [{operands}] TJ ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%b\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%b\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_a_kerning_gap_inside_a_word_does_not_split_it_but_a_word_space_does() -> None:
    # Given a generator that kerns "Rechnungskor" and "rektur" apart by 0.15 em and spaces words by 0.4 em
    words = pdf_words(_pdf_with_text_operator("(Rechnungskor) -150 (rektur) -400 (Nr.)"), 1)
    # Then the word is whole and the next word stands apart
    assert [w.text for w in words] == ["Rechnungskorrektur", "Nr."]


def test_runs_placed_right_to_left_are_words_of_their_own() -> None:
    # Given a bilingual line laid out right to left: "Subtotal excl. VAT" written as "VAT.", "excl", "Subtotal",
    # each string moved left of the one before
    words = pdf_words(_pdf_with_text_operator("(VAT.) 5140 (excl) 6778 (Subtotal)"), 1)
    # Then each run is a word, which the reader puts in order by where it stands
    assert [w.text for w in sorted(words, key=lambda w: w.x0)] == ["Subtotal", "excl", "VAT."]


def test_a_character_outside_the_basic_plane_keeps_its_index_and_the_ones_after_it() -> None:
    # PDFium gives a math letter (U+1D431) as two indices, its UTF-16 surrogates, with one box
    codes = [ord("x"), 0xD835, 0xDC31, ord("="), 0, 0xDC31, ord("y")]
    chars = index_chars(codes)
    assert chars == ["x", "\U0001d431", "", "=", "", "\ufffd", "y"]
    assert len(chars) == len(codes)


def test_hebrew_and_arabic_letters_stepping_left_stay_one_word() -> None:
    from quire.documents.extract import _runs_back

    # Each right-to-left letter is placed left of the last one, inside its word
    assert not _runs_back(("ש", 100.0, 0.0, 108.0, 10.0), "ח", (92.0, 0.0, 100.0, 10.0))
    assert not _runs_back(("ل", 100.0, 0.0, 108.0, 10.0), "\u0628", (92.0, 0.0, 100.0, 10.0))
    # A Latin run placed left of the last one begins a word of its own
    assert _runs_back((".", 100.0, 0.0, 104.0, 10.0), "e", (60.0, 0.0, 66.0, 10.0))
