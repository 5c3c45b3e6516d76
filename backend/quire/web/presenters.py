"""What the pages say about a job: plain-language banners, event labels and the result preview."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from quire.db import Database
from quire.documents.storage import Storage
from quire.jobs import service, store
from quire.jobs.states import TERMINAL
from quire.jobs.store import JobView
from quire.settings import Settings
from quire.workflows.registry import WORKFLOWS

RETRY = "retry"
UPLOAD = "upload"


@dataclass(frozen=True)
class Banner:
    tone: str
    title: str
    text: str
    actions: tuple[str, ...] = field(default_factory=tuple)


_FINAL: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "timeout": (
        "It took too long",
        "Processing this document ran past its time limit on every attempt. Try again, or upload a smaller file.",
        (RETRY, UPLOAD),
    ),
    "upstream_unavailable": (
        "The AI service is unavailable",
        "We could not reach the AI service after several tries. It is usually back within minutes: try again.",
        (RETRY,),
    ),
    "rate_limited": (
        "The AI service is busy",
        "The AI service asked us to slow down. Wait a few minutes, then try again.",
        (RETRY,),
    ),
    "worker_lost": (
        "Processing stopped unexpectedly",
        "The machine handling this job stopped before finishing. Try again; if it happens again, "
        "contact support and quote the job id.",
        (RETRY,),
    ),
    "internal_error": (
        "Something went wrong on our side",
        "An unexpected error stopped this job. Try again; if it fails again, contact support and quote the job id.",
        (RETRY,),
    ),
    "malformed_output": (
        "The AI's answer could not be used",
        "The AI returned a result in the wrong format. Trying again often helps; or upload a different file.",
        (RETRY, UPLOAD),
    ),
    "upstream_rejected": (
        "The AI service refused this document",
        "The AI service would not process this document. Upload a different file.",
        (UPLOAD,),
    ),
    "invalid_input": (
        "We could not read this document",
        "Upload a different or unencrypted file: PDF, DOCX, TXT, Markdown or HTML with real text in it.",
        (UPLOAD,),
    ),
    "deadline_exceeded": (
        "The job ran out of time",
        "It could not finish before the deadline set for it, so it was stopped. Try again.",
        (RETRY,),
    ),
    "cancelled": ("Cancelled", "This job was cancelled. You can run it again.", (RETRY,)),
}

# Short names of the error codes, for timelines and operator tables (the code itself goes under
# "Technical details").
ERROR_LABELS = {code: title for code, (title, _, _) in _FINAL.items()}

EVENT_LABELS = {
    "queued": "Queued",
    "running": "Attempt started",
    "completed": "Completed",
    "dead_letter": "Stopped",
    "cancelled": "Cancelled",
    "requeued_after_restart": "Worker lost — queued again",
    "replayed": "Tried again",
    "deadline_passed": "Deadline passed",
}

STATUS_LABELS = {
    "queued": "Queued",
    "running": "Running",
    "completed": "Completed",
    "dead_letter": "Failed",
    "cancelled": "Cancelled",
}


LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "nl": "Dutch",
    "pt": "Portuguese", "sv": "Swedish", "da": "Danish", "fi": "Finnish", "no": "Norwegian", "pl": "Polish",
}  # fmt: skip


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code.lower(), code)


ARTIFACT_KINDS = {
    "-searchable.pdf": "the searchable PDF",
    ".json": "the data (JSON)",
    ".md": "the report (Markdown)",
    ".txt": "the text read from the scan",
    ".pdf": "the PDF",
}


def artifact_label(name: str) -> str:
    """What a download is, in words: the file keeps its name, the button says what it holds."""
    return next((label for suffix, label in ARTIFACT_KINDS.items() if name.endswith(suffix)), name)


def workflow_title(name: str) -> str:
    """The name people see in the workflow menu ("Invoice breakdown"), never the code name."""
    workflow = WORKFLOWS.get(name)
    return workflow.title if workflow else name.replace("_", " ").capitalize()


def banner(view: JobView) -> Banner | None:
    """The banner for where the job is now, or None when there is nothing to explain."""
    error = view.error
    status = view.status
    if error is None or status == "completed":
        return None
    if status in ("queued", "running"):
        failed = view.errors[-1].attempt if view.errors else view.attempt
        if status == "queued":
            text = f"Attempt {failed} failed: {error.message} Quire is retrying automatically."
        else:
            text = f"Attempt {failed} failed: {error.message} Attempt {view.attempt} is running now."
        return Banner("warn", "Retrying automatically", text)
    title, text, actions = _FINAL.get(error.code, _FINAL["internal_error"])
    if error.code == "invalid_input":
        # The extractor's own sentence says exactly what was wrong with the file (our text, not the file's).
        detail = next((e.detail for e in reversed(view.events) if e.error == "invalid_input"), None)
        text = detail or text
    return Banner("bad", title, text, actions)


def page_basics(settings: Settings) -> dict[str, Any]:
    """What every page's templates use: the workflows, upload limits, languages and labels."""
    return {
        "workflows": list(WORKFLOWS.values()),
        "max_upload_mb": settings.max_upload_mb,
        "document_languages": service.document_languages(settings),
        "status_labels": STATUS_LABELS,
        "event_labels": EVENT_LABELS,
        "terminal": {str(s) for s in TERMINAL},
    }


def result_preview(storage: Storage, db: Database, view: JobView) -> dict[str, Any] | None:
    """The validated JSON result of a completed job, for rendering on its page."""
    if view.status != "completed" or view.artifact is None:
        return None
    artifact = store.get_artifact(db, view.job_id, view.artifact.name)
    if artifact is None:
        return None
    try:
        document: dict[str, Any] = json.loads(storage.read_bytes(artifact.storage_key))
    except (OSError, ValueError):
        return None
    result: dict[str, Any] = document.get("result", {})
    return result


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, ... 21st: a place in line."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def about(seconds: float) -> str:
    """A rough duration, as the estimate it is: '35 s', '4 min', '2 h'."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"
