"""The API's answers as they go on the wire: the domain's typed views plus the links only the web knows.

These are the handlers' return types, so `/schema` documents every response shape.
"""

from __future__ import annotations

from typing import TypedDict

from quire.jobs.models import Upload
from quire.jobs.store import ArtifactView, JobView, JobViewBase


def artifact_url(job_id: str, name: str) -> str:
    return f"/ai-jobs/{job_id}/artifacts/{name}"


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


class JobList(TypedDict):
    items: list[JobOut]
    next_cursor: str | None


class Accepted(TypedDict):
    """The answer to a submission or a replay (202, with Location)."""

    job_id: str
    status: str
    status_url: str


class UploadOut(TypedDict):
    input_ref: str
    filename: str
    size: int
    sha256: str
    content_type: str


def _artifact_out(job_id: str, artifact: ArtifactView) -> ArtifactOut:
    return {
        "name": artifact["name"],
        "url": artifact_url(job_id, artifact["name"]),
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
