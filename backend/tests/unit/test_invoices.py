"""Invoice fields by the local provider, measured on generated invoices with known true fields; the report."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any

from backend.tests.documents import make_invoices, render
from quire.documents.extract import Document, extract
from quire.workflows.invoice_summary import CREDIT_NOTE, InvoiceSummary, report
from quire.workflows.models.invoice import read_invoice

FIELDS = ["vendor", "invoice_number", "issue_date", "due_date", "currency", "subtotal", "tax", "total", "line_items"]


def _observed(result: dict[str, Any], name: str) -> Any:
    if name == "line_items":
        return [(i["description"], i["quantity"], i["unit_price"], i["amount"]) for i in result["line_items"]]
    return result[name]


def test_invoice_field_accuracy_is_at_least_95_percent() -> None:
    invoices = make_invoices(36)
    right: dict[str, int] = dict.fromkeys(FIELDS, 0)
    misses: list[str] = []
    for i, invoice in enumerate(invoices):
        data, filename = render(invoice, variant=i)
        document = extract(data, filename, hashlib.sha256(data).hexdigest())
        result = read_invoice(document)
        InvoiceSummary.model_validate(result)  # what the workflow will validate
        truth = invoice.truth()
        for name in FIELDS:
            if _observed(result, name) == truth[name]:
                right[name] += 1
            else:
                misses.append(f"{invoice.doc_type}/{invoice.language}/{invoice.currency} {name}: "
                              f"{_observed(result, name)!r} != {truth[name]!r}")  # fmt: skip
    total = len(invoices) * len(FIELDS)
    accuracy = sum(right.values()) / total
    print(f"\ninvoice field accuracy: {accuracy:.1%} over {len(invoices)} invoices ({total} fields)")
    for name in FIELDS:
        print(f"  {name:<15} {right[name] / len(invoices):.0%}")
    for miss in misses:
        print("  miss:", miss)
    assert accuracy >= 0.95, misses


def test_amounts_are_decimals_never_floats() -> None:
    invoice = make_invoices(1)[0]
    data, filename = render(invoice, 0)
    result = InvoiceSummary.model_validate(read_invoice(extract(data, filename, "0" * 64)))
    assert isinstance(result.total, Decimal)
    dumped = result.model_dump(mode="json")
    assert isinstance(dumped["total"], str)
    assert Decimal(dumped["total"]) == invoice.total


def test_the_report_names_a_failed_check_in_words() -> None:
    # Given a receipt whose total the printed subtotal and tax do not add up to
    text = "Total (Excluding GST):  28.58\nGST payable (6%):  1.72\nTotal (Inclusive of GST):  36.30"
    answer = read_invoice(Document(text=text, filename="r.txt", content_type="text/plain", sha256="0"))
    written = report(InvoiceSummary.model_validate(answer))
    # Then the report says which check failed as a person reads it, not by its key
    assert "Checks that failed: Subtotal and tax add up to the total." in written
    assert "totals_add_up" not in written


def test_the_report_of_a_credit_note_says_not_to_pay_it() -> None:
    text = "CREDIT NOTE\nCredit Note No: CN-88\nSubtotal: 40.00 USD\nTax: 4.00 USD\nTotal credit: 44.00 USD"
    answer = read_invoice(Document(text=text, filename="c.txt", content_type="text/plain", sha256="0"))
    written = report(InvoiceSummary.model_validate(answer))
    assert written.startswith("# Credit note CN-88\n")
    assert f"**{CREDIT_NOTE}**" in written
    assert "| Total | -44.00 USD |" in written
