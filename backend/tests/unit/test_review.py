"""A person's review of an invoice's fields, as the batch page, the export and the job page read it back."""

from __future__ import annotations

import json

from quire.db import Database
from quire.documents.storage import Storage
from quire.jobs import service, states
from quire.jobs.models import Artifact, Job, Upload
from quire.jobs.results import ResultCache, invoice_rows
from quire.jobs.review import ReviewedFields, save_review
from quire.jobs.states import AttemptRef
from quire.queue.dispatch import Dispatcher, InMemoryQueue
from quire.settings import Settings


def _completed_invoice(settings: Settings, db: Database, storage: Storage, result: dict[str, object]) -> str:
    """A completed invoice job whose primary artifact holds `result`."""
    upload = Upload(owner_id="owner", filename="a.pdf", size=1, sha256="0" * 64, content_type="application/pdf")
    job_id = service.submit(
        settings, db, Dispatcher(InMemoryQueue()), "invoice_summary", upload, service.Limits()
    ).job.id
    job = states.claim(settings, db, job_id, "w", 60)
    assert job is not None
    stored = storage.put_bytes(f"artifacts/{job_id}/invoice_summary.json", json.dumps({"result": result}).encode())
    artifact = Artifact(job_id=job_id, name="invoice_summary.json", storage_key=stored.key, size=stored.size,
                        sha256=stored.sha256, content_type="application/json", primary=True)  # fmt: skip
    assert states.complete(settings, db, AttemptRef(job_id, job.attempt, "w"), [artifact], {}) is not None
    return job_id


def test_amounts_signed_for_a_reviewed_kind_still_ask_for_review(
    settings: Settings, db: Database, storage: Storage
) -> None:
    # Given an invoice read with a tax the reader was unsure of
    result = {
        "subtotal": "100.00",
        "tax": "19.00",
        "total": "119.00",
        "needs_review": ["tax"],
        "document_type": "invoice",
    }
    job_id = _completed_invoice(settings, db, storage, result)
    cache = ResultCache(storage)
    # When a person says only that it is a credit note
    save_review(db, cache, job_id, ReviewedFields.model_validate({"document_type": "credit_note"}), "person")
    with db.session() as session:
        [row] = invoice_rows(session, [session.get_one(Job, job_id)], cache)
    # Then every amount is negative, and the tax, turned but not confirmed, still asks for review
    assert (row.values["subtotal"], row.values["tax"], row.values["total"]) == ("-100.00", "-19.00", "-119.00")
    assert row.document_type == "credit_note"
    assert row.needs_review == ("tax",)
    # And once the person names the tax, it is theirs and asks no more
    save_review(db, cache, job_id, ReviewedFields.model_validate({"tax": "-19.00"}), "person")
    with db.session() as session:
        [row] = invoice_rows(session, [session.get_one(Job, job_id)], cache)
    assert row.needs_review == ()
    assert row.values["tax"] == "-19.00"
