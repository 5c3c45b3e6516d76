"""The API's answers as they go on the wire: the domain's typed views plus the links only the web knows.

These are the handlers' return types, so `/schema` documents every response shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from quire.jobs.batches import BatchItem, BatchSubmitted, BatchSummary, BatchView
from quire.jobs.models import Upload
from quire.jobs.operations import HistoryEvent
from quire.jobs.store import ArtifactView, JobView
from quire.views import View
from quire.webhooks.deliveries import DeliveryView


def artifact_url(job_id: str, name: str) -> str:
    return f"/ai-jobs/{job_id}/artifacts/{name}"


def evidence_url(job_id: str, name: str) -> str:
    return f"/admin/jobs/{job_id}/evidence/{name}"


def status_url(job_id: str) -> str:
    return f"/ai-jobs/{job_id}"


class ArtifactOut(ArtifactView, frozen=True):
    """A result file with where to download it."""

    url: str


class JobOut(JobView, frozen=True):
    """GET /ai-jobs/{id}: the job's view with its artifacts' download links."""

    artifact: ArtifactOut | None
    artifacts: tuple[ArtifactOut, ...]


class OperatorJobOut(View, frozen=True):
    """GET /admin/jobs/{id}/detail: what an operator sees of a job, beyond its owner's view."""

    job: JobOut
    # Every event with its operator-only detail (a malformed answer's validation problems among them).
    history: list[HistoryEvent]
    # Operator-only files (a malformed attempt's raw answer), with their admin download links.
    evidence: list[ArtifactOut]


class JobList(View, frozen=True):
    items: list[JobOut]
    next_cursor: str | None


class Accepted(View, frozen=True):
    """The answer to a submission or a replay (202, with Location)."""

    job_id: str
    status: str
    status_url: str


class WebhookList(View, frozen=True):
    """GET /ai-jobs/{id}/webhooks and /batches/{id}/webhooks: the job's (or batch's) deliveries,
    oldest first, each with its attempts."""

    items: list[DeliveryView]


class UploadOut(View, frozen=True):
    input_ref: str
    filename: str
    size: int
    sha256: str
    content_type: str


def _artifact_out(job_id: str, artifact: ArtifactView, url: Callable[[str, str], str] = artifact_url) -> ArtifactOut:
    return ArtifactOut(**msgspec.structs.asdict(artifact), url=url(job_id, artifact.name))


def with_links(view: JobView) -> JobOut:
    """The view as the API and the pages show it: each artifact with its download URL."""
    job_id = view.job_id
    primary = view.artifact
    fields = msgspec.structs.asdict(view)
    fields["artifact"] = _artifact_out(job_id, primary) if primary is not None else None
    fields["artifacts"] = tuple(_artifact_out(job_id, a) for a in view.artifacts)
    return JobOut(**fields)


def accepted(job_id: str, status: str) -> Accepted:
    return Accepted(job_id=job_id, status=status, status_url=status_url(job_id))


def upload_out(upload: Upload) -> UploadOut:
    return UploadOut(
        input_ref=upload.input_ref,
        filename=upload.filename,
        size=upload.size,
        sha256=upload.sha256,
        content_type=upload.content_type,
    )


def operator_out(view: JobView, history: list[HistoryEvent], evidence: list[ArtifactView]) -> OperatorJobOut:
    job_id = view.job_id
    return OperatorJobOut(
        job=with_links(view),
        history=history,
        evidence=[_artifact_out(job_id, a, evidence_url) for a in evidence],
    )


def batch_url(batch_id: str) -> str:
    return f"/batches/{batch_id}"


def job_page_url(job_id: str) -> str:
    return f"/jobs/{job_id}"


class AcceptedItem(View, frozen=True):
    job_id: str
    filename: str
    status: str


class RejectedItem(View, frozen=True):
    filename: str
    reason: str


class BatchAccepted(View, frozen=True):
    """The answer to POST /batches (202, with Location)."""

    batch_id: str
    status_url: str
    jobs: list[AcceptedItem]
    rejected: list[RejectedItem]


class BatchItemOut(BatchItem, frozen=True):
    status_url: str


class BatchOut(BatchView, frozen=True):
    """GET /batches/{id}: the batch's view with each item's link and the spreadsheet downloads."""

    items: tuple[BatchItemOut, ...]
    export_csv_url: str
    export_xlsx_url: str


def batch_accepted(submitted: BatchSubmitted) -> BatchAccepted:
    return BatchAccepted(
        batch_id=submitted.batch.id,
        status_url=batch_url(submitted.batch.id),
        jobs=[AcceptedItem(job_id=j.job_id, filename=j.filename, status=j.status) for j in submitted.jobs],
        rejected=[RejectedItem(filename=r.filename, reason=r.reason) for r in submitted.rejected],
    )


class BatchListItem(BatchSummary, frozen=True):
    """One of GET /batches' items: the batch as someone's list shows it, with its link."""

    status_url: str


class BatchList(View, frozen=True):
    """GET /batches: the caller's latest batches, newest first."""

    items: tuple[BatchListItem, ...]


def batch_list(summaries: Sequence[BatchSummary]) -> BatchList:
    return BatchList(
        items=tuple(
            BatchListItem(**msgspec.structs.asdict(summary), status_url=batch_url(summary.batch_id))
            for summary in summaries
        )
    )


def batch_out(view: BatchView) -> BatchOut:
    url = batch_url(view.batch_id)
    fields = msgspec.structs.asdict(view)
    fields["items"] = tuple(
        BatchItemOut(**msgspec.structs.asdict(item), status_url=status_url(item.job_id)) for item in view.items
    )
    return BatchOut(**fields, export_csv_url=f"{url}/export.csv", export_xlsx_url=f"{url}/export.xlsx")
