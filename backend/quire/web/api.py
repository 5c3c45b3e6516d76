"""The JSON API (docs/api.md): uploads, jobs, artifacts."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import structlog
from anyio import to_thread
from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import UploadFile
from litestar.enums import RequestEncodingType
from litestar.params import Body, Parameter
from litestar.response import File
from pydantic import BaseModel, Field, ValidationError

from quire.accounts.service import Principal
from quire.documents.storage import get_storage
from quire.jobs import service, store
from quire.jobs.models import JobStatus, Upload
from quire.jobs.paging import InvalidCursor
from quire.settings import get_settings
from quire.web.deps import QuireDep
from quire.web.limits import submission_rate_limit
from quire.web.links import Accepted, JobList, JobOut, UploadOut, accepted, upload_out, with_links
from quire.web.problems import problem
from quire.workflows.registry import WORKFLOWS

log = structlog.stdlib.get_logger(__name__)
T = TypeVar("T")
IdempotencyKey = Annotated[str | None, Parameter(header="Idempotency-Key", required=False, max_length=255)]
JobId = Annotated[str, Parameter(max_length=64)]
AuthedRequest = Request[Principal, Any, Any]


@dataclass
class UploadForm:
    file: UploadFile


class JobRequest(BaseModel):
    workflow: str
    input_ref: str
    limits: service.Limits = service.Limits()
    # The document's language for OCR of scans (ISO 639-1 such as `de`); none: the configured set.
    language: str | None = Field(default=None, max_length=16)


def _store_upload(file: UploadFile, owner: Principal) -> Upload:
    return _answer_errors(service.store_upload, file.filename, file.file, owner.user_id)


def _admit(admission: service.Admission) -> None:
    try:
        admission.admit()
    except service.Overloaded as exc:
        raise problem(429, "overloaded", str(exc), headers={"Retry-After": str(exc.retry_after_s)}) from exc


# Boundaries, part headers and the small fields around the file: a body's declared length less
# this is the least its file can be.
FORM_OVERHEAD_BYTES = 64 * 1024


async def _refuse_early(request: AuthedRequest) -> None:
    """Before a multipart body is read (so only for requests that do not need it read for their
    CSRF token): refuse from the declared length when the person is already past a per-minute
    limit, or the file cannot fit in their storage quota."""
    length = request.headers.get("content-length", "")
    if not length.isdigit() or not request.content_type[0].startswith("multipart/"):
        return
    declared_file = max(0, int(length) - FORM_OVERHEAD_BYTES)
    await to_thread.run_sync(_answer_errors, service.refuse_early, request.user.user_id, declared_file)


def _answer_errors(call: Callable[..., T], *args: Any) -> T:
    """Store or submit, turning a refused upload or a reused Idempotency-Key into its problem answer."""
    try:
        return call(*args)
    except service.UploadRejected as exc:
        code = exc.code or {413: "payload_too_large", 415: "unsupported_media_type"}.get(exc.status, "invalid_input")
        headers = {"Retry-After": str(exc.retry_after_s)} if exc.retry_after_s else None
        raise problem(exc.status, code, exc.message, headers=headers) from exc
    except service.IdempotencyConflict as exc:
        raise problem(
            409, "idempotency_conflict", "This Idempotency-Key was already used for a different request."
        ) from exc


def _language(name: str | None) -> str | None:
    try:
        return service.ocr_language(name)
    except service.UnknownLanguage as exc:
        raise problem(422, "unknown_language", str(exc)) from exc


def _unknown_workflow(name: str) -> Exception:
    known = ", ".join(sorted(WORKFLOWS))
    return problem(422, "unknown_workflow", f"Unknown workflow {name!r}. Choose one of: {known}.")


def _accepted(submitted: service.Submitted) -> Response[Accepted]:
    body = accepted(submitted.job.id, submitted.job.status)
    return Response(body, status_code=202, headers={"Location": body["status_url"]})


def _limits_from_form(form: dict[str, Any]) -> service.Limits:
    fields = {k: form[k] for k in ("timeout_s", "max_attempts", "deadline_s") if form.get(k) not in (None, "")}
    if not all(isinstance(value, str) for value in fields.values()):
        raise problem(422, "invalid_request", "Limits are plain form fields, not files.")
    return service.Limits.model_validate_strings(fields)


def _invalid(exc: ValidationError) -> Exception:
    errors = [{"loc": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]
    failure = problem(422, "invalid_request", "The request is not valid.")
    failure.extra = {"code": "invalid_request", "errors": errors}
    return failure


class JobsController(Controller):
    path = ""
    tags = ["jobs"]

    @post("/uploads", status_code=201, sync_to_thread=True, summary="Upload a document", before_request=_refuse_early)
    def create_upload(
        self, request: AuthedRequest, data: Annotated[UploadForm, Body(media_type=RequestEncodingType.MULTI_PART)]
    ) -> UploadOut:
        return upload_out(_store_upload(data.file, request.user))

    @get("/uploads/{upload_id:str}", sync_to_thread=True, summary="An upload's metadata")
    def get_upload(self, request: AuthedRequest, upload_id: Annotated[str, Parameter(max_length=64)]) -> UploadOut:
        upload = store.owned_upload(f"uploads/{upload_id}", request.user)
        if upload is None:
            raise problem(404, "not_found", "No such upload.")
        return upload_out(upload)

    @post(
        "/ai-jobs",
        status_code=202,
        summary="Submit a job (JSON or multipart)",
        middleware=[submission_rate_limit().middleware],
        before_request=_refuse_early,
    )
    async def create_job(
        self, request: AuthedRequest, idempotency_key: IdempotencyKey, quire: QuireDep
    ) -> Response[Accepted]:
        user = request.user
        content_type = request.headers.get("content-type", "")
        if content_type.startswith("multipart/form-data"):
            # Refuse before reading what may be a large body.
            await to_thread.run_sync(_admit, quire.admission)
            form = await request.form()
            file = form.get("file")
            workflow = str(form.get("workflow") or "")
            if not isinstance(file, UploadFile):
                raise problem(422, "invalid_request", "Attach the document as the multipart field 'file'.")
            try:
                limits = _limits_from_form(dict(form))
            except ValidationError as exc:
                raise _invalid(exc) from exc
            if workflow not in WORKFLOWS:
                raise _unknown_workflow(workflow)
            language = _language(str(form.get("language") or ""))

            submitted = await to_thread.run_sync(
                lambda: _answer_errors(
                    service.submit_document,
                    quire.dispatcher,
                    workflow,
                    file.filename,
                    file.file,
                    limits,
                    user.user_id,
                    idempotency_key,
                    language,
                )
            )
        else:
            try:
                payload = JobRequest.model_validate_json(await request.body())
            except ValidationError as exc:
                raise _invalid(exc) from exc
            if payload.workflow not in WORKFLOWS:
                raise _unknown_workflow(payload.workflow)
            language = _language(payload.language)

            def admit_and_submit() -> service.Submitted:
                _admit(quire.admission)
                upload = store.owned_upload(payload.input_ref, user)
                if upload is None:
                    raise problem(422, "unknown_input", f"No upload {payload.input_ref!r} exists. Upload it first.")
                return _answer_errors(
                    service.submit,
                    quire.dispatcher,
                    payload.workflow,
                    upload,
                    payload.limits,
                    user.user_id,
                    idempotency_key,
                    language,
                )

            # One trip to a worker thread for the whole submission: each trip costs about as much
            # as one of the queries it runs.
            submitted = await to_thread.run_sync(admit_and_submit)
        log.info("job accepted", job_id=submitted.job.id, workflow=submitted.job.workflow, created=submitted.created)
        return _accepted(submitted)

    @get("/ai-jobs", sync_to_thread=True, summary="List jobs, newest first")
    def list_jobs(
        self,
        request: AuthedRequest,
        status: Annotated[JobStatus | None, Parameter(required=False)] = None,
        workflow: Annotated[str | None, Parameter(required=False, max_length=64)] = None,
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
        cursor: Annotated[str | None, Parameter(required=False, max_length=200)] = None,
    ) -> JobList:
        try:
            page = store.list_jobs(request.user.user_id, status=status, workflow=workflow, limit=limit, cursor=cursor)
        except InvalidCursor as exc:
            raise problem(400, "invalid_cursor", str(exc)) from exc
        return {"items": [with_links(view) for view in page.items], "next_cursor": page.next_cursor}

    @get("/ai-jobs/{job_id:str}", sync_to_thread=True, summary="A job's status")
    def get_job(self, request: AuthedRequest, job_id: JobId, quire: QuireDep) -> JobOut:
        view = store.view_of(job_id, request.user, quire.recent_views)
        if view is None:
            raise _not_found()
        return with_links(view)

    @get("/ai-jobs/{job_id:str}/artifacts/{name:str}", sync_to_thread=True, summary="Download an artifact")
    def download_artifact(
        self, request: AuthedRequest, job_id: JobId, name: Annotated[str, Parameter(max_length=128)]
    ) -> File:
        _require(job_id, request.user)
        artifact = store.get_artifact(job_id, name)
        if artifact is None:
            raise problem(404, "not_found", "No such artifact.")
        if artifact.deleted_at is not None:
            raise problem(410, "artifact_deleted", "This file was deleted under the retention policy.")
        digest = base64.b64encode(bytes.fromhex(artifact.sha256)).decode()
        return File(
            get_storage().path(artifact.storage_key),
            filename=artifact.name,
            content_disposition_type="attachment",
            media_type=artifact.content_type,
            headers={
                "ETag": f'"{artifact.sha256}"',
                "Repr-Digest": f"sha-256=:{digest}:",
                "X-Content-Type-Options": "nosniff",
            },
        )

    @post("/ai-jobs/{job_id:str}/cancel", status_code=200, sync_to_thread=True, summary="Cancel a job")
    def cancel_job(self, request: AuthedRequest, job_id: JobId, quire: QuireDep) -> JobOut:
        _require(job_id, request.user)
        try:
            service.cancel(quire.dispatcher, job_id)
        except service.NotAllowed as exc:
            raise problem(409, "invalid_state", str(exc)) from exc
        view = store.view_of(job_id, recent=quire.recent_views)
        if view is None:  # deleted in the meantime
            raise _not_found()
        return with_links(view)

    @post("/ai-jobs/{job_id:str}/replay", status_code=202, sync_to_thread=True, summary="Replay a job")
    def replay_job(self, request: AuthedRequest, job_id: JobId, quire: QuireDep) -> Response[Accepted]:
        _require(job_id, request.user)
        try:
            job = service.replay(quire.dispatcher, job_id)
        except service.NotAllowed as exc:
            raise problem(409, "invalid_state", str(exc)) from exc
        return _accepted(service.Submitted(job, created=False))

    @delete("/ai-jobs/{job_id:str}", status_code=204, sync_to_thread=True, summary="Delete a job and its files")
    def delete_job(self, request: AuthedRequest, job_id: JobId) -> None:
        _require(job_id, request.user)
        service.delete(job_id)


def _not_found() -> Exception:
    return problem(404, "not_found", "No such job.")


def _require(job_id: str, viewer: Principal) -> None:
    """404 unless the caller may see the job: another person's job does not exist for them."""
    if store.visible_job(job_id, viewer) is None:
        raise _not_found()


def max_request_bytes() -> int:
    # Room for the multipart envelope and form fields around the largest allowed file.
    return get_settings().max_upload_bytes + 256 * 1024
