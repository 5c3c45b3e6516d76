"""The API's answers as they go on the wire: the domain's typed views plus the links only the web knows.

These are the handlers' return types, so `/schema` documents every response shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from quire.jobs.batches import BatchItem, BatchSubmitted, BatchView, BatchViewBase
from quire.jobs.models import Upload
from quire.jobs.operations import HistoryEvent
from quire.jobs.store import ArtifactView, JobView, JobViewBase
from quire.webhooks.deliveries import DeliveryView


def artifact_url(job_id: str, name: str) -> str:
    return f"/ai-jobs/{job_id}/artifacts/{name}"


def evidence_url(job_id: str, name: str) -> str:
    return f"/admin/jobs/{job_id}/evidence/{name}"


def status_url(job_id: str) -> str:
    return f"/ai-jobs/{job_id}"


class ArtifactOut(TypedDict):
    name: str
    url: str
    size: int
    sha256: str
    content_type: str
    deleted_at: str | None


class JobOut(JobViewBase):
    """GET /ai-jobs/{id}: the job's view with its artifacts' download links."""

    artifact: ArtifactOut | None
    artifacts: list[ArtifactOut]


class OperatorJobOut(TypedDict):
    """GET /admin/jobs/{id}/detail: what an operator sees of a job, beyond its owner's view."""

    job: JobOut
    # Every event with its operator-only detail (a malformed answer's validation problems among them).
    history: list[HistoryEvent]
    # Operator-only files (a malformed attempt's raw answer), with their admin download links.
    evidence: list[ArtifactOut]


class JobList(TypedDict):
    items: list[JobOut]
    next_cursor: str | None


class Accepted(TypedDict):
    """The answer to a submission or a replay (202, with Location)."""

    job_id: str
    status: str
    status_url: str


class WebhookList(TypedDict):
    """GET /ai-jobs/{id}/webhooks and /batches/{id}/webhooks: the job's (or batch's) deliveries,
    oldest first, each with its attempts."""

    items: list[DeliveryView]


class UploadOut(TypedDict):
    input_ref: str
    filename: str
    size: int
    sha256: str
    content_type: str


def _artifact_out(job_id: str, artifact: ArtifactView, url: Callable[[str, str], str] = artifact_url) -> ArtifactOut:
    return {
        "name": artifact["name"],
        "url": url(job_id, artifact["name"]),
        "size": artifact["size"],
        "sha256": artifact["sha256"],
        "content_type": artifact["content_type"],
        "deleted_at": artifact["deleted_at"],
    }


def with_links(view: JobView) -> JobOut:
    """The view as the API and the pages show it: each artifact with its download URL."""
    job_id = view["job_id"]
    primary = view["artifact"]
    # Built key by key in the view's own order, so the JSON reads as it always has.
    return {
        "job_id": job_id,
        "workflow": view["workflow"],
        "workflow_version": view["workflow_version"],
        "status": view["status"],
        "attempt": view["attempt"],
        "max_attempts": view["max_attempts"],
        "input": view["input"],
        "artifact": _artifact_out(job_id, primary) if primary is not None else None,
        "artifacts": [_artifact_out(job_id, a) for a in view["artifacts"]],
        "error": view["error"],
        "errors": view["errors"],
        "events": view["events"],
        "created_at": view["created_at"],
        "updated_at": view["updated_at"],
        "deadline_at": view["deadline_at"],
        "next_attempt_at": view["next_attempt_at"],
        "progress": view["progress"],
        "queue": view["queue"],
        "review": view["review"],
    }


def accepted(job_id: str, status: str) -> Accepted:
    return {"job_id": job_id, "status": status, "status_url": status_url(job_id)}


def upload_out(upload: Upload) -> UploadOut:
    return {
        "input_ref": upload.input_ref,
        "filename": upload.filename,
        "size": upload.size,
        "sha256": upload.sha256,
        "content_type": upload.content_type,
    }


def operator_out(view: JobView, history: list[HistoryEvent], evidence: list[ArtifactView]) -> OperatorJobOut:
    job_id = view["job_id"]
    return {
        "job": with_links(view),
        "history": history,
        "evidence": [_artifact_out(job_id, a, evidence_url) for a in evidence],
    }


def batch_url(batch_id: str) -> str:
    return f"/batches/{batch_id}"


def job_page_url(job_id: str) -> str:
    return f"/jobs/{job_id}"


class AcceptedItem(TypedDict):
    job_id: str
    filename: str
    status: str


class RejectedItem(TypedDict):
    filename: str
    reason: str


class BatchAccepted(TypedDict):
    """The answer to POST /batches (202, with Location)."""

    batch_id: str
    status_url: str
    jobs: list[AcceptedItem]
    rejected: list[RejectedItem]


class BatchItemOut(BatchItem):
    status_url: str


class BatchOut(BatchViewBase):
    """GET /batches/{id}: the batch's view with each item's link and the spreadsheet downloads."""

    items: list[BatchItemOut]
    export_csv_url: str
    export_xlsx_url: str


def batch_accepted(submitted: BatchSubmitted) -> BatchAccepted:
    return {
        "batch_id": submitted.batch.id,
        "status_url": batch_url(submitted.batch.id),
        "jobs": [{"job_id": j.job_id, "filename": j.filename, "status": j.status} for j in submitted.jobs],
        "rejected": [{"filename": r.filename, "reason": r.reason} for r in submitted.rejected],
    }


def batch_out(view: BatchView) -> BatchOut:
    url = batch_url(view["batch_id"])
    return {
        **view,
        "items": [{**item, "status_url": status_url(item["job_id"])} for item in view["items"]],
        "export_csv_url": f"{url}/export.csv",
        "export_xlsx_url": f"{url}/export.xlsx",
    }
