"""The local invoice reader: e-invoice XML read exactly when there is one, else the page layout read by
labelled candidates, checks and abstention (`reader`), with line items from table rows (`lines`)."""

from __future__ import annotations

from typing import Any

from quire.documents.extract import Document
from quire.workflows.models.invoice.einvoice_fields import einvoice_answer
from quire.workflows.models.invoice.layout import lines_from_text, lines_from_words
from quire.workflows.models.invoice.lines import describe, line_item
from quire.workflows.models.invoice.reader import decide, read_layout
from quire.workflows.models.text import detect_language, words


def read_invoice(document: Document) -> dict[str, Any]:
    """The invoice's fields with their evidence, checks and the fields a person should review."""
    if document.einvoice is not None:
        exact = einvoice_answer(document.einvoice)
        exact["summary"] = describe(exact)
        return exact
    has_layout = bool(document.words)
    lines = lines_from_words(document.words) if has_layout else lines_from_text(document.text)
    reading = read_layout(lines, has_layout)
    for evidence in reading["fields"].values():
        turn = document.turns.get(evidence.get("page") or 0)
        if turn is not None and evidence.get("bbox"):
            # Read on a scan's levelled boxes: marked where its words stand on the page as scanned.
            evidence["bbox"] = [round(v, 1) for v in turn.shown(tuple(evidence["bbox"]))]
    values, review = decide(reading)
    items = [item for item in (line_item(line.text) for line in lines) if item is not None]
    language = reading["language"] if reading["fields"] else detect_language(words(document.text))
    answer: dict[str, Any] = {
        "vendor": values.get("vendor"),
        "invoice_number": values.get("invoice_number"),
        "issue_date": _iso(values.get("issue_date")),
        "due_date": _iso(values.get("due_date")),
        "currency": values.get("currency"),
        "subtotal": values.get("subtotal"),
        "tax": values.get("tax"),
        "total": values.get("total"),
        "line_items": items,
        "language": language,
        "document_type": reading["document_type"],
        "source": "ocr" if document.ocr_pages else "text",
        "fields": reading["fields"],
        "checks": reading["checks"],
        "needs_review": review,
    }
    answer["summary"] = describe(answer)
    return answer


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())
