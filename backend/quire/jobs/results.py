"""The invoice values people see and export: the machine's result, with a person's review winning.

A completed job's primary artifact never changes once published, so its values are read from
storage once per web process and kept (`ResultCache`, built by the bootstrap) under the
artifact's key and checksum: a batch page polled every few seconds reads no file twice.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlmodel import Session, col, select

from quire.documents.storage import Storage, StorageUnavailable
from quire.jobs.models import Artifact, Job, JobStatus

# What an invoice result says it read: a bill, or a credit note whose amounts are owed to the reader.
DocumentType = Literal["invoice", "credit_note"]
# The workflow whose results have fields to review.
INVOICE = "invoice_summary"
# The invoice fields a person can review and a spreadsheet shows, in reading order.
INVOICE_FIELDS = ("vendor", "invoice_number", "issue_date", "due_date", "currency", "subtotal", "tax", "total")


@dataclass(frozen=True)
class MachineResult:
    """What the machine's result says of an invoice: its values (as text) and the fields it was unsure of."""

    values: dict[str, str | None]
    needs_review: tuple[str, ...]
    document_type: DocumentType | None = None  # None: no result, or one written before results said


NO_RESULT = MachineResult({}, ())


class ResultCache:
    """Machine results read lately, by (storage key, sha256): artifacts are immutable once published."""

    def __init__(self, storage: Storage, size: int = 20_000) -> None:
        self.storage = storage
        self._results: OrderedDict[tuple[str, str], MachineResult] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def result(self, artifact: Artifact, strict: bool = False) -> MachineResult:
        """The artifact's invoice values; while storage cannot be read, no result (`strict`: `StorageUnavailable`)."""
        key = (artifact.storage_key, artifact.sha256)
        with self._lock:
            found = self._results.get(key)
            if found is not None:
                self._results.move_to_end(key)
                return found
        found = _read(self.storage, artifact)
        if found is None:
            if strict:
                raise StorageUnavailable("The result cannot be read from storage right now.")
            return NO_RESULT  # storage could not be read now: said as no result, and tried again next time
        with self._lock:
            self._results[key] = found
            while len(self._results) > self._size:
                self._results.popitem(last=False)
        return found


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _read(storage: Storage, artifact: Artifact) -> MachineResult | None:
    """The artifact's invoice values; None when storage could not be read just now."""
    if artifact.deleted_at is not None or not artifact.name.endswith(".json"):
        return NO_RESULT
    try:
        document = json.loads(storage.read_bytes(artifact.storage_key))
    except ValueError:
        return NO_RESULT
    except (OSError, StorageUnavailable):
        return None
    result = document.get("result") if isinstance(document, dict) else None
    if not isinstance(result, dict) or "total" not in result:
        return NO_RESULT  # not an invoice
    review = result.get("needs_review") or []
    values = {name: _text(result.get(name)) for name in INVOICE_FIELDS}
    return MachineResult(values, tuple(review), _document_type(result.get("document_type")))


def _document_type(value: Any) -> DocumentType | None:
    if value == "invoice":
        return "invoice"
    return "credit_note" if value == "credit_note" else None


@dataclass(frozen=True)
class InvoiceRow:
    """One job as a spreadsheet row: reviewed values win over the machine's."""

    job_id: str
    filename: str
    status: str
    error_code: str | None
    values: dict[str, str | None]
    reviewed: bool
    # The fields the machine was unsure of that no person has confirmed yet.
    needs_review: tuple[str, ...]
    created_at: datetime
    document_type: DocumentType | None = None  # as reviewed, else as the machine read it; None: no result


def reviewed_fields(job: Job) -> dict[str, Any]:
    fields = (job.review or {}).get("fields")
    return fields if isinstance(fields, dict) else {}


def signed_fields(job: Job) -> list[str]:
    """The reviewed amounts that are the machine's with their sign turned to the kind a person named, not
    values the person set or confirmed (jobs/review.py)."""
    signed = (job.review or {}).get("signed")
    return [str(name) for name in signed] if isinstance(signed, list) else []


def confirmed_among(fields: Sequence[str] | dict[str, Any], signed: Sequence[str]) -> list[str]:
    """Of a review's fields, the ones the person set or confirmed: all but the machine's amounts copied only to
    turn their sign (for the record here, for the job's view in `store.ReviewView`)."""
    turned = set(signed)
    return [name for name in fields if name not in turned]


def confirmed_fields(job: Job) -> set[str]:
    """The fields a person set or confirmed in a review."""
    return set(confirmed_among(reviewed_fields(job), signed_fields(job)))


def invoice_rows(session: Session, jobs: Sequence[Job], cache: ResultCache) -> list[InvoiceRow]:
    """A row per job, in the order given; one query for all their primary artifacts."""
    done = [job.id for job in jobs if job.status == JobStatus.COMPLETED]
    primaries: dict[str, Artifact] = {}
    if done:
        found = session.exec(select(Artifact).where(col(Artifact.job_id).in_(done), col(Artifact.primary))).all()
        primaries = {artifact.job_id: artifact for artifact in found}
    rows = []
    for job in jobs:
        artifact = primaries.get(job.id)
        machine = cache.result(artifact) if artifact is not None else NO_RESULT
        reviewed = reviewed_fields(job)
        confirmed = confirmed_fields(job)
        values = {
            name: _text(reviewed[name]) if name in reviewed else machine.values.get(name) for name in INVOICE_FIELDS
        }
        rows.append(
            InvoiceRow(
                job_id=job.id,
                filename=job.input_filename,
                status=job.status,
                error_code=job.error_code if job.status != JobStatus.COMPLETED else None,
                values=values,
                reviewed=job.reviewed_at is not None,
                needs_review=tuple(name for name in machine.needs_review if name not in confirmed),
                created_at=job.created_at,
                document_type=_document_type(reviewed.get("document_type")) or machine.document_type,
            )
        )
    return rows


def open_reviews(session: Session, job_ids: Sequence[str], cache: ResultCache) -> dict[str, int]:
    """How many fields each completed invoice of `job_ids` still asks a person to check (none listed: none)."""
    if not job_ids:
        return {}
    jobs = session.exec(
        select(Job).where(col(Job.id).in_(list(job_ids)), Job.status == JobStatus.COMPLETED, Job.workflow == INVOICE)
    ).all()
    return {row.job_id: len(row.needs_review) for row in invoice_rows(session, jobs, cache) if row.needs_review}
