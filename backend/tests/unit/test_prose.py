"""What reaches the summarizer is prose: markup, code, tables, running headers, reference lists and
repeated boilerplate are left out; summaries are bounded and never repeat themselves."""

from __future__ import annotations

import re

from quire.documents.extract import Document
from quire.workflows.models.local import NEAR_DUPLICATE, similarity, summarize
from quire.workflows.models.prose import prose_sentences
from quire.workflows.models.text import content_words, words

PROSE = [
    "The city council approved a new network of protected bicycle lanes for the downtown district.",
    "Construction of the first lanes starts in the spring and should be finished by the autumn.",
    "Shop owners worried that the lanes would remove parking spaces in front of their stores.",
    "The council answered that delivery zones will stay on every block of the main street.",
    "Cyclists welcomed the decision and asked for secure parking near the railway station.",
    "A study of similar projects found that traffic accidents fell by a third within two years.",
]


def doc(text: str) -> Document:
    return Document(text=text, filename="d.txt", content_type="text/plain", sha256="0" * 64)


def test_markup_code_and_tables_are_left_out() -> None:
    text = "\n\n".join(
        [
            PROSE[0],
            '<xsd:element name="Invoice" type="InvoiceType" minOccurs="1"/>',
            "```python\ndef total(items):\n    return sum(i.amount for i in items)\n```",
            "| Field | Type | Required |\n|---|---|---|\n| total | decimal | yes |",
            "Item      Quantity      Price\nChairs    12            120.00",
            "if (x == 1) { return y; }",
            PROSE[1],
        ]
    )
    assert prose_sentences(text) == PROSE[:2]


def test_running_headers_page_numbers_and_boilerplate_are_left_out() -> None:
    pages = [
        f"ACME Specification v2 - Confidential\n{sentence}\nPage {n} of 6" for n, sentence in enumerate(PROSE, start=1)
    ]
    found = prose_sentences("\n\n".join(pages))
    assert found == PROSE
    assert not any("Confidential" in s or "Page" in s for s in found)


def test_a_reference_list_is_left_out() -> None:
    text = "\n".join(
        [
            *PROSE[:2],
            "",
            "# References",
            "",
            "Smith, J. (2019). A study of bicycle lanes in the downtown district. Journal of Cities, 4(2).",
            "[2] Doe, A. Protected lanes and the safety of cyclists. doi:10.1000/xyz123",
        ]
    )
    assert prose_sentences(text) == PROSE[:2]


def test_markdown_decoration_and_citations_are_removed_from_sentences() -> None:
    text = "The [`mwarp1d`](https://example.org) tool warps **one-dimensional** data for registration [@Ramsay:1998]."
    assert prose_sentences(text) == ["The mwarp1d tool warps one-dimensional data for registration."]


def test_sphinx_headings_glued_to_paragraphs_are_split_off() -> None:
    text = f"New Features\u00b6 Parenthesized context managers\u00b6 {PROSE[0]}"
    assert prose_sentences(text) == [PROSE[0]]


def test_summary_is_bounded_and_key_points_never_repeat_it() -> None:
    repeated_page = "\n\n".join(PROSE * 3)  # the same boilerplate-free prose three times over
    result = summarize(doc("Bicycle lanes\n\n" + repeated_page))
    summary = prose_sentences(result["summary"])
    assert len(words(result["summary"])) <= 0.5 * len(words(repeated_page))
    shown = summary + result["key_points"]
    bags = [set(content_words(words(s))) for s in shown]
    for i in range(len(bags)):
        for j in range(i + 1, len(bags)):
            assert similarity(bags[i], bags[j]) < NEAR_DUPLICATE, (shown[i], shown[j])
    assert not set(result["key_points"]) & set(summary)


def test_near_duplicate_sentences_are_not_both_picked() -> None:
    twin = PROSE[0].replace("approved", "has approved")
    result = summarize(doc("\n\n".join([PROSE[0], twin, *PROSE[1:]])))
    shown = prose_sentences(result["summary"]) + result["key_points"]
    assert not (PROSE[0] in shown and twin in shown)


def test_a_document_without_prose_still_gets_a_short_summary() -> None:
    result = summarize(doc("id;amount;date\n1;20.00;2024-01-01\n2;30.00;2024-01-02\n"))
    assert 0 < len(result["summary"]) <= 300
    assert not re.search(r"<|\{", result["summary"])


def test_a_title_that_wraps_onto_a_references_line_does_not_hide_the_document() -> None:
    # Given a PDF whose title breaks before its last word, so "References" stands on a line of its own
    text = "\n".join(["Natural Sciences Citations and", "References", "", *PROSE])
    # Then the prose after it still reaches the summarizer: sources come after something has been said
    assert prose_sentences(text) == PROSE
