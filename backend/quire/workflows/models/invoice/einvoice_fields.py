"""An e-invoice's fields in the reader's answer: exact values, full confidence, the XML as the evidence."""

from __future__ import annotations

from typing import Any

from quire.documents.einvoice import EInvoice
from quire.workflows.models.invoice.candidates import evidence

_SOURCES = {"cii": "UN/CEFACT CII", "ubl": "UBL", "fatturapa": "FatturaPA"}


def einvoice_answer(invoice: EInvoice) -> dict[str, Any]:
    """The fields as the XML states them; a field the XML leaves out is absent, not guessed."""
    values: dict[str, Any] = {
        "vendor": " ".join(invoice.vendor.split()) if invoice.vendor else None,
        "invoice_number": invoice.invoice_number,
        "issue_date": invoice.issue_date.isoformat() if invoice.issue_date else None,
        "due_date": invoice.due_date.isoformat() if invoice.due_date else None,
        "currency": invoice.currency,
        "subtotal": invoice.subtotal,
        "tax": invoice.tax,
        "total": invoice.total,
    }
    syntax = _SOURCES.get(invoice.syntax, invoice.syntax)
    fields = {name: evidence(1.0, f"{syntax}: {value}") for name, value in values.items() if value is not None}
    sub, tax, total = invoice.subtotal, invoice.tax, invoice.total
    checks: dict[str, bool | None] = {
        "totals_add_up": None if sub is None or tax is None or total is None else abs(sub + tax - total) <= 0.01,
        "due_after_issue": None
        if invoice.due_date is None or invoice.issue_date is None
        else invoice.due_date >= invoice.issue_date,
    }
    items = [
        {"description": item.description[:500], "quantity": item.quantity, "unit_price": item.unit_price,
         "amount": item.amount}
        for item in invoice.line_items
    ]  # fmt: skip
    return {
        **values,
        "line_items": items[:500],
        "language": invoice.language,
        # The amounts here are as the XML states them, a credit note's positive as EN 16931 writes them; the result's
        # model gives a credit note's negative, as from any other source (`InvoiceSummary`).
        "document_type": "credit_note" if invoice.credit_note else "invoice",
        "source": "einvoice",
        "fields": fields,
        "checks": checks,
        "needs_review": [name for name in ("vendor", "invoice_number", "issue_date", "total") if values[name] is None],
    }
