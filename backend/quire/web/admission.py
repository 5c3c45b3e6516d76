"""What every way of submitting work shares over HTTP: the submission's fields, admission control,
and the problem answers for what the service refuses.

`POST /ai-jobs` (JSON or multipart), `POST /batches` and the upload page's batch all read their
fields through `submit_fields` and answer refusals through `answer_errors`, so a bad workflow,
limit, language or callback URL is refused the same way wherever it is sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import structlog
from litestar.params import HeaderParameter
from pydantic import ValidationError

from quire.documents.storage import StorageUnavailable
from quire.jobs import service
from quire.settings import Settings
from quire.web.problems import problem, storage_unavailable
from quire.webhooks.targets import TargetRefused, check_url
from quire.workflows.registry import WORKFLOWS

log = structlog.stdlib.get_logger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
IdempotencyKey = Annotated[str | None, HeaderParameter(name="Idempotency-Key", required=False, max_length=255)]
# The form fields that set a job's limits.
LIMIT_FIELDS = ("timeout_s", "max_attempts", "deadline_s")


@dataclass(frozen=True)
class SubmitFields:
    """A submission's fields, checked: what `service.submit` takes besides the document."""

    workflow: str
    limits: service.Limits
    language: str | None
    callback_url: str | None


def submit_fields(settings: Settings, form: Mapping[str, Any]) -> SubmitFields:
    """Check a multipart form's fields (a streamed form's text fields, or a parsed form's first
    values): `workflow`, the limits, `language` and `callback_url`. Raises the problem to answer."""
    fields = {name: form[name] for name in ("workflow", "language", "callback_url", *LIMIT_FIELDS) if name in form}
    if not all(isinstance(value, str) for value in fields.values()):
        raise problem(422, "invalid_request", "The workflow, limits, language and callback_url are plain form fields.")
    workflow = fields.get("workflow", "")
    if workflow not in WORKFLOWS:
        raise unknown_workflow(workflow)
    try:
        limits = service.Limits.model_validate_strings({k: fields[k] for k in LIMIT_FIELDS if fields.get(k, "") != ""})
    except ValidationError as exc:
        raise invalid(exc) from exc
    language = ocr_language(settings, fields.get("language"))
    return SubmitFields(workflow, limits, language, callback_url(settings, fields.get("callback_url")))


def unknown_workflow(name: str) -> Exception:
    known = ", ".join(sorted(WORKFLOWS))
    return problem(422, "unknown_workflow", f"Unknown workflow {name!r}. Choose one of: {known}.")


def ocr_language(settings: Settings, name: str | None) -> str | None:
    """Tesseract's name for the language a submitter named (none: the configured set); 422 unknown_language."""
    try:
        return service.ocr_language(settings, name)
    except service.UnknownLanguage as exc:
        raise problem(422, "unknown_language", str(exc)) from exc


def callback_url(settings: Settings, url: str | None) -> str | None:
    """The callback URL as `check_url` accepts it (none when empty); 422 invalid_callback_url."""
    if not url or not url.strip():
        return None
    try:
        return check_url(settings, url)
    except TargetRefused as exc:
        raise problem(422, "invalid_callback_url", str(exc)) from exc


def invalid(exc: ValidationError) -> Exception:
    errors = [{"loc": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]
    failure = problem(422, "invalid_request", "The request is not valid.")
    failure.extra = {"code": "invalid_request", "errors": errors}
    return failure


def admit(admission: service.Admission) -> None:
    """Admission control: 429 overloaded with Retry-After while the queue is too far behind."""
    try:
        admission.admit()
    except service.Overloaded as exc:
        raise problem(429, "overloaded", str(exc), headers={"Retry-After": str(exc.retry_after_s)}) from exc


def answer_errors(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Store or submit, turning a refused upload, a reused Idempotency-Key or unreachable storage
    into its problem answer."""
    try:
        return call(*args, **kwargs)
    except service.UploadRejected as exc:
        code = exc.code or {413: "payload_too_large", 415: "unsupported_media_type"}.get(exc.status, "invalid_input")
        headers = {"Retry-After": str(exc.retry_after_s)} if exc.retry_after_s else None
        raise problem(exc.status, code, exc.message, headers=headers) from exc
    except service.IdempotencyConflict as exc:
        raise problem(
            409, "idempotency_conflict", "This Idempotency-Key was already used for a different request."
        ) from exc
    except StorageUnavailable as exc:
        log.warning("storage unreachable", error=str(exc))
        raise storage_unavailable() from exc


async def answer_errors_async(call: Awaitable[T]) -> T:
    """`answer_errors` for a coroutine."""
    try:
        return await call
    except (service.UploadRejected, StorageUnavailable) as exc:
        return answer_errors(_reraise, exc)


def _reraise(exc: BaseException) -> NoReturn:
    raise exc
