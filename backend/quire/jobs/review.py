"""A person's review of an invoice result: corrected or confirmed values, kept with who and when.

The machine's artifact is never touched. The review lives on the job record (`review`,
`reviewed_by`, `reviewed_at`); the job view shows it as `"review": {"fields", "by", "at"}` and
wherever values are shown or exported the reviewed ones win. A field the reader listed in
`needs_review` counts as confirmed once a review names it. Saving again merges: fields named
again are replaced, the others kept, and `by` and `at` say who saved last and when.

A person may also say what the document is (`document_type`): an invoice read as a credit note, or
the other way round, is corrected like any field. The amounts then follow the kind, as the reader's
do: a credit note's are negative (owed to the reader), and a credit note reviewed as an invoice has
its amounts positive. The machine's amounts a person did not name are copied into the review with
that sign, so every view and export agrees, and listed under `signed`: the marks asking a person to
check them stay until a person names them.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import update
from sqlmodel import col, select

from quire.db import Database
from quire.jobs.models import Artifact, Job, JobStatus, utcnow
from quire.jobs.results import (
    INVOICE,
    NO_RESULT,
    DocumentType,
    MachineResult,
    ResultCache,
    reviewed_fields,
    signed_fields,
)

REVIEWABLE_WORKFLOWS = {INVOICE}
AMOUNTS = ("subtotal", "tax", "total")
_AMOUNT = Field(default=None, max_digits=18, decimal_places=4, allow_inf_nan=False)


class ReviewedFields(BaseModel):
    """The values a person may set: the same types as the invoice result's own fields."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    vendor: str | None = Field(default=None, max_length=300)
    invoice_number: str | None = Field(default=None, max_length=100)
    issue_date: date | None = None
    due_date: date | None = None
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    subtotal: Decimal | None = _AMOUNT
    tax: Decimal | None = _AMOUNT
    total: Decimal | None = _AMOUNT
    document_type: DocumentType | None = None


class NotReviewable(Exception):
    """Only a completed invoice job can be reviewed."""


def save_review(db: Database, results: ResultCache, job_id: str, fields: ReviewedFields, by: str) -> Job:
    """Record the fields the person set (the ones given; blank means "no value"), merged with earlier ones.

    A kind of document makes the amounts follow it (`_signed_amounts`); the machine's amounts copied only to
    turn their sign are listed apart (`signed`), so they count as read, not as confirmed by the person. A null
    kind takes the person's kind back: the machine's stands. `updated_at` moves too, so every cached view of the
    job is rebuilt. `StorageUnavailable` when the machine's result, which the signs depend on, cannot be read.
    """
    given = fields.model_dump(mode="json", exclude_unset=True)
    with db.session() as session:
        job = session.get(Job, job_id, with_for_update=True)
        if job is None or job.status != JobStatus.COMPLETED or job.workflow not in REVIEWABLE_WORKFLOWS:
            raise NotReviewable("Only a completed invoice can be reviewed.")
        before = reviewed_fields(job)
        named = (set(before) - set(signed_fields(job))) | set(given)
        merged = {**before, **given}
        if merged.get("document_type", "") is None:
            del merged["document_type"]
        if "document_type" in merged:
            primary = session.exec(
                select(Artifact).where(col(Artifact.job_id) == job_id, col(Artifact.primary))
            ).first()
            machine = results.result(primary, strict=True) if primary is not None else NO_RESULT
            merged.update(_signed_amounts(merged, machine, before.get("document_type") or _kind(machine)))
            for name in AMOUNTS:  # a copy the sign no longer changes is the machine's value again
                copied = name in merged and name not in named
                if copied and _same(merged[name], machine.values.get(name)):
                    del merged[name]
        signed = [name for name in AMOUNTS if name in merged and name not in named]
        now = utcnow()
        session.execute(
            update(Job)
            .where(col(Job.id) == job_id)
            .values(review={"fields": merged, "signed": signed}, reviewed_by=by, reviewed_at=now, updated_at=now)
        )
        session.refresh(job)
        return job


def _kind(machine: MachineResult) -> DocumentType | None:
    """What the machine read the document as; a result written before results said is a credit note when its
    total is negative."""
    if machine.document_type is not None:
        return machine.document_type
    total = machine.values.get("total")
    return "credit_note" if total is not None and Decimal(total) < 0 else None


def _signed_amounts(merged: dict[str, Any], machine: MachineResult, was: DocumentType | None) -> dict[str, str]:
    """The amounts, reviewed or the machine's, with the sign of the kind the review names: negative for a credit
    note; positive for an invoice that was (as read, or as reviewed before) a credit note."""
    kind = merged["document_type"]
    if kind != "credit_note" and not (kind == "invoice" and was == "credit_note"):
        return {}
    signed = {}
    for name in AMOUNTS:
        value = merged[name] if name in merged else machine.values.get(name)
        if value is None:
            continue
        amount = abs(Decimal(value))
        signed[name] = str(-amount if kind == "credit_note" else amount)
    return signed


def _same(value: str | None, other: str | None) -> bool:
    return value is not None and other is not None and Decimal(value) == Decimal(other)
