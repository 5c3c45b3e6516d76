"""Result writing: run one attempt's workflow and stage its files under the attempt's own keys.

Files are staged, not published: the transition that records the attempt's end (complete, or
the failure's retry or dead letter) publishes them, fenced by the attempt, so a late attempt's
files are never seen. A malformed answer is staged as evidence for operators only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import structlog

from quire.documents.extract import Document, Limits, ProgressCallback, extract
from quire.documents.storage import Storage, StorageUnavailable
from quire.errors import MalformedOutput
from quire.jobs.models import Artifact, Job, attempt_prefix, utcnow
from quire.jobs.states import AttemptRef
from quire.queue.failures import FailedAttempt, classify
from quire.settings import Settings
from quire.workflows.models.providers import get_provider
from quire.workflows.registry import get_workflow

log = structlog.stdlib.get_logger(__name__)


@dataclass(frozen=True)
class Outcome:
    """A successful attempt: its staged artifacts, and who answered (provider, model, prompt version)."""

    artifacts: list[Artifact]
    provenance: dict[str, str]


@dataclass(frozen=True)
class File:
    name: str
    content: bytes
    content_type: str
    primary: bool = False
    operator_only: bool = False


def execute(
    settings: Settings, storage: Storage, job: Job, worker_id: str, progress: ProgressCallback | None = None
) -> Outcome:
    """Read the input, run the workflow, and stage its artifacts under this attempt's own keys.

    A malformed answer is staged as evidence and raised as a `FailedAttempt` that carries it.
    """
    workflow = get_workflow(job.workflow)
    model = get_provider(settings, job.timeout_s)
    data = storage.read_bytes(job.input_ref)
    if hashlib.sha256(data).hexdigest() != job.input_sha256:
        # Downloads are checked against the recorded digest; so is what a worker reads. A short or
        # damaged read is worth another try; a stored copy that stays wrong ends in dead_letter.
        raise StorageUnavailable("The stored copy of the document is not the one that was uploaded.")
    limits = Limits(max_pages=settings.max_pages, max_chars=settings.max_text_chars)
    languages = ocr_languages(settings, job.language)
    document: Document = extract(data, job.input_filename, job.input_sha256, limits, languages, progress)
    try:
        result = workflow.run(document, model)
    except MalformedOutput as malformed:
        raw = [raw_answer_file(job.attempt, malformed.raw_answer)] if malformed.raw_answer is not None else []
        evidence = stage(storage, job, worker_id, raw)
        raise FailedAttempt(classify(malformed, evidence)) from malformed
    provenance: dict[str, Any] = {
        "workflow": workflow.name,
        "workflow_version": workflow.version,
        "provider": model.name,
        "model": model.model_name,
        "prompt_version": workflow.prompt_version,
        "input_sha256": job.input_sha256,
    }
    if model.redacted is not None:
        # Kinds and counts only: the values never leave the attempt.
        provenance["redacted"] = model.redacted
    body = json.dumps({"result": result.model_dump(mode="json"), "provenance": provenance}, indent=2)
    files = [
        File(f"{workflow.name}.json", body.encode(), "application/json", primary=True),
        File(f"{workflow.name}.md", workflow.report(result).encode(), "text/markdown; charset=utf-8"),
    ]
    if document.ocr_pages:
        # What OCR read, as text to search or copy, and the scan made searchable.
        files.append(File(f"{workflow.name}.txt", document.text.encode(), "text/plain; charset=utf-8"))
    if document.searchable_pdf is not None:
        files.append(File(f"{workflow.name}-searchable.pdf", document.searchable_pdf, "application/pdf"))
    return Outcome(
        stage(storage, job, worker_id, files),
        {"provider": model.name, "model_name": model.model_name, "prompt_version": workflow.prompt_version},
    )


def raw_answer_file(attempt: int, raw: str) -> File:
    """The model's answer as it came, named by attempt (a replayed job may fail again)."""
    try:
        json.loads(raw)
    except ValueError:
        return File(f"raw-answer-attempt-{attempt}.txt", raw.encode(), "text/plain; charset=utf-8", operator_only=True)
    return File(f"raw-answer-attempt-{attempt}.json", raw.encode(), "application/json", operator_only=True)


def stage(storage: Storage, job: Job, worker_id: str, files: list[File]) -> list[Artifact]:
    """Store files under this attempt's own keys; the records to publish with the attempt's end."""
    prefix = attempt_prefix(job.id, job.attempt, worker_id)
    artifacts = []
    for file in files:
        stored = storage.put_bytes(f"{prefix}/{file.name}", file.content)
        # Built without SQLAlchemy's instance bookkeeping, every field given (defaults too, which would otherwise be
        # worked out one by one): a tenth of the constructor's cost, for a record every job builds twice. Such a record
        # is only inserted by its values (`states._insert`), never added to a session.
        artifacts.append(
            Artifact.model_construct(
                job_id=job.id,
                name=file.name,
                storage_key=stored.key,
                size=stored.size,
                sha256=stored.sha256,
                content_type=file.content_type,
                primary=file.primary,
                operator_only=file.operator_only,
                created_at=utcnow(),
                deleted_at=None,
            )
        )
    return artifacts


def discard_staged(storage: Storage, ref: AttemptRef) -> None:
    """Files of an attempt that failed or was fenced out are never published: remove them (best
    effort; deleting the job, or retention, removes whatever is left under its prefix)."""
    try:
        storage.delete_tree(attempt_prefix(ref.job_id, ref.attempt, ref.worker_id))
    except (OSError, StorageUnavailable) as exc:
        log.warning("could not remove a discarded attempt's files", error=str(exc))


def ocr_languages(settings: Settings, named: str | None) -> str:
    """The languages a job's scans are read in: the one it named, else the configured set. Also the configured
    set when the named one's pack is not installed on this worker (a web server with other packs accepted the
    job): read in the others rather than fail every attempt."""
    if not named:
        return settings.ocr_languages
    from quire.documents import ocr  # Tesseract's list only when a job names a language

    if ocr.missing(named):
        log.warning("OCR language pack not installed, read in the configured languages", named=named)
        return settings.ocr_languages
    return named
