"""The `invoice_summary` workflow: vendor, number, dates, amounts and line items of an invoice."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from quire.documents.extract import Document
from quire.workflows import Workflow
from quire.workflows.models import ModelProvider, Task, ask

VERSION = "2"
TASK = Task(
    name="invoice_summary",
    prompt_version="2",
    instructions=(
        "Read the invoice. Give the vendor (who issued it), the invoice number, the issue and due dates "
        "as ISO 8601 dates, the ISO 4217 currency code, the subtotal, tax and total as decimal numbers, "
        "every line item (description, quantity, unit price, amount), the ISO 639-1 language of the "
        "document, and a one-paragraph summary. Give document_type credit_note for a credit note (its "
        "subtotal, tax and total negative), else invoice. Use null for anything the invoice does not state."
    ),
)


class LineItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(max_length=500)
    quantity: Decimal | None = None
    unit_price: Decimal | None = None
    amount: Decimal | None = None


class FieldEvidence(BaseModel):
    """Where a field's value was read: how sure the reader is, the page, the printed text and its box."""

    model_config = ConfigDict(extra="forbid")

    confidence: float = Field(ge=0, le=1)
    page: int | None = None
    text: str | None = Field(default=None, max_length=300)
    bbox: list[float] | None = Field(default=None, min_length=4, max_length=4)


class InvoiceSummary(BaseModel):
    """Amounts are decimals (serialised as strings), never floats.

    A field the reader is not sure of is null and named in `needs_review`; `fields` holds the
    evidence of each value given, `checks` the arithmetic and date checks (null: not checkable).
    """

    model_config = ConfigDict(extra="forbid")

    vendor: str | None = Field(default=None, max_length=300)
    invoice_number: str | None = Field(default=None, max_length=100)
    issue_date: date | None = None
    due_date: date | None = None
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    subtotal: Decimal | None = None
    tax: Decimal | None = None
    total: Decimal | None = None
    line_items: list[LineItem] = Field(default_factory=list, max_length=500)
    language: str | None = Field(default=None, max_length=8)
    summary: str = Field(max_length=2000)
    # A credit note's amounts are owed to the reader, not by them.
    document_type: Literal["invoice", "credit_note"] = "invoice"
    source: Literal["einvoice", "text", "ocr"] = "text"
    fields: dict[str, FieldEvidence] = Field(default_factory=dict)
    checks: dict[str, bool | None] = Field(default_factory=dict)
    needs_review: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _credits_negative(self) -> InvoiceSummary:
        """A credit note's subtotal, tax and total are negative whatever the source: an e-invoice states them
        positive beside its type code, a page prints them either way, a model may answer either."""
        if self.document_type == "credit_note":
            for name in ("subtotal", "tax", "total"):
                value = getattr(self, name)
                if value is not None and value > 0:
                    setattr(self, name, -value)
        return self


def summarize_invoice(document: Document, model: ModelProvider) -> InvoiceSummary:
    return ask(model, TASK, document, InvoiceSummary)


def _money(value: Decimal | None, currency: str | None) -> str:
    return "—" if value is None else f"{value:,.2f} {currency or ''}".strip()


# The names people see for the result's fields and checks, in the report and on the job page.
FIELD_LABELS = {
    "vendor": "Vendor", "invoice_number": "Invoice number", "issue_date": "Issue date", "due_date": "Due date",
    "currency": "Currency", "subtotal": "Subtotal", "tax": "Tax", "total": "Total",
}  # fmt: skip
CHECK_LABELS = {
    "totals_add_up": "Subtotal and tax add up to the total",
    "tax_below_total": "Tax is less than the total",
    "due_after_issue": "Due date is on or after the issue date",
    "payment_matches_total": "The amount paid (card, or cash less change) is the total",
    "tax_table_matches_total": "The tax table's rows (each amount taxed and its tax) add up to the total",
}
# The names people see for the kinds of document, in the report and the spreadsheet.
DOCUMENT_LABELS = {"invoice": "Invoice", "credit_note": "Credit note"}
# What a credit note means to the person reading it, in the report and on the job page.
CREDIT_NOTE = "This is a credit note: its amounts are owed to you, not by you. Do not pay it."
_TABLE = [name for name in FIELD_LABELS if name != "currency"]  # the currency is shown beside each amount


def _shown(result: InvoiceSummary, name: str) -> str:
    value = getattr(result, name)
    if name in ("subtotal", "tax", "total"):
        return _money(value, result.currency)
    return "—" if value is None else str(value)


def report(result: InvoiceSummary) -> str:
    """The readable report: fields with where they were printed, what to check, and the line items."""
    source = {"einvoice": "the e-invoice data (exact)", "ocr": "the scanned page (OCR)", "text": "the document's text"}
    lines = [
        f"# {DOCUMENT_LABELS[result.document_type]} {result.invoice_number or ''}".rstrip(),
        "",
        result.summary,
        "",
        f"Read from {source[result.source]}.",
        "",
    ]
    if result.document_type == "credit_note":
        lines += [f"**{CREDIT_NOTE}**", ""]
    if result.needs_review:
        names = ", ".join(FIELD_LABELS[name] for name in [*_TABLE, "currency"] if name in result.needs_review)
        lines += [f"**Check before use:** {names}. An empty field means no value could be read with confidence.", ""]
    lines += ["| field | value | printed as | confidence |", "|---|---|---|---:|"]
    for name in _TABLE:
        evidence = result.fields.get(name)
        printed = (evidence.text or "").replace("|", "\\|") if evidence else ""
        where = f" (page {evidence.page})" if evidence and evidence.page else ""
        confidence = f"{evidence.confidence:.0%}" if evidence else ""
        flag = " ⚠" if name in result.needs_review else ""
        lines.append(f"| {FIELD_LABELS[name]}{flag} | {_shown(result, name)} | {printed}{where} | {confidence} |")
    lines.append("")
    failed = [name for name, passed in result.checks.items() if passed is False]
    if failed:
        lines += ["Checks that failed: " + "; ".join(CHECK_LABELS.get(name, name) for name in failed) + ".", ""]
    if result.line_items:
        lines += ["## Line items", "", "| description | quantity | unit price | amount |", "|---|---:|---:|---:|"]
        for item in result.line_items:
            lines.append(
                f"| {item.description} | {item.quantity or ''} | {item.unit_price or ''} | {item.amount or ''} |"
            )
    return "\n".join(lines) + "\n"


WORKFLOW = Workflow(
    name="invoice_summary",
    version=VERSION,
    title="Invoice breakdown",
    description="Vendor, dates, totals, tax and line items of an invoice.",
    prompt_version=TASK.prompt_version,
    output_schema=InvoiceSummary,
    run=summarize_invoice,
    report=report,
)
