"""Type detection by content and visible text extraction."""

from __future__ import annotations

import pytest

from quire.documents.extract import DOCX, HTML, MARKDOWN, PDF, TEXT, UnsupportedType, detect_type, extract
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
