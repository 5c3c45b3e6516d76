"""Spreadsheets of invoice values: CSV and XLSX (openpyxl), one row per job, reviewed values winning.

Formula injection: a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or a tab or
carriage return before one) as a formula, so a vendor name printed as `=HYPERLINK(...)` on an
invoice could act when the file is opened. Such text cells get a leading apostrophe, as OWASP's
CSV-injection guidance recommends; a plain number such as `-12.50` (a credit note) is left as
it is, since it cannot be a formula. In the XLSX file amounts are numbers and dates are dates.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

from sqlmodel import col, select

from quire.db import Database
from quire.jobs.models import Job, JobStatus
from quire.jobs.paging import NEWEST_FIRST
from quire.jobs.results import INVOICE_FIELDS, InvoiceRow, ResultCache, invoice_rows
from quire.workflows.invoice_summary import DOCUMENT_LABELS

HEADER = (
    "File name", "Status", "Document", "Vendor", "Invoice number", "Issue date", "Due date", "Currency",
    "Subtotal", "Tax", "Total", "Reviewed", "Needs review", "Job link",
)  # fmt: skip
AMOUNTS = ("subtotal", "tax", "total")
DATES = ("issue_date", "due_date")

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")
EXPORT_LIMIT = 10_000
Link = Callable[[str], str]


def escape_formula(text: str) -> str:
    """The text as a spreadsheet shows it and never runs it (see the module's docstring)."""
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(text):
        return "'" + text
    return text


def _typed(name: str, value: str | None) -> object:
    """An amount as a decimal and a date as a date (so a spreadsheet can sum and sort them), else the text."""
    if value is None:
        return None
    try:
        if name in AMOUNTS:
            return Decimal(value)
        if name in DATES:
            return date.fromisoformat(value)
    except (InvalidOperation, ValueError):
        pass
    return value


def _cells(row: InvoiceRow, link: Link) -> list[object]:
    return [
        row.filename,
        row.status,
        DOCUMENT_LABELS[row.document_type] if row.document_type else "",
        *(_typed(name, row.values.get(name)) for name in INVOICE_FIELDS),
        "yes" if row.reviewed else "no",
        " ".join(row.needs_review),
        link(row.job_id),
    ]


def _safe(cell: object) -> object:
    return escape_formula(cell) if isinstance(cell, str) else cell


def to_csv(rows: Sequence[InvoiceRow], link: Link) -> bytes:
    """UTF-8 with a byte-order mark, so spreadsheet programs read accented names right."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    for row in rows:
        writer.writerow(["" if cell is None else _safe(str(cell)) for cell in _cells(row, link)])
    return ("\ufeff" + out.getvalue()).encode()


def to_xlsx(rows: Sequence[InvoiceRow], link: Link) -> bytes:
    # Imported here: openpyxl imports numpy when it is installed, which sets an environment
    # variable, and importing a Quire module must change nothing (tests/unit/test_imports.py).
    from openpyxl import Workbook

    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("Invoices")
    sheet.append(list(HEADER))
    for row in rows:
        sheet.append([_safe(cell) for cell in _cells(row, link)])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def owner_rows(
    db: Database,
    owner_id: str,
    cache: ResultCache,
    *,
    status: JobStatus | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[InvoiceRow]:
    """The caller's own jobs (newest first, at most EXPORT_LIMIT), by state and creation time."""
    stmt = select(Job).where(Job.owner_id == owner_id)
    if status is not None:
        stmt = stmt.where(Job.status == status)
    if since is not None:
        stmt = stmt.where(col(Job.created_at) >= since)
    if until is not None:
        stmt = stmt.where(col(Job.created_at) < until)
    with db.session() as session:
        jobs = list(session.exec(stmt.order_by(*NEWEST_FIRST).limit(EXPORT_LIMIT)))
        return invoice_rows(session, jobs, cache)
