"""The JSON API (docs/api.md): uploads, jobs, artifacts."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator
from functools import partial
from typing import Annotated, Any, ParamSpec, TypeVar

import structlog
from anyio import to_thread
from litestar import Controller, Request, Response, delete, get, post
from litestar.params import HeaderParameter, JSONBody, Parameter
from litestar.response import Redirect, Stream
from pydantic import BaseModel, Field, ValidationError

from quire.accounts.service import Principal
from quire.db import Database
from quire.documents.storage import Storage, StorageUnavailable
from quire.jobs import review, service, store
from quire.jobs.models import Artifact, JobStatus
from quire.jobs.paging import InvalidCursor
from quire.jobs.states import TERMINAL
from quire.settings import Settings
from quire.web.admission import (
    IdempotencyKey,
    admit,
    answer_errors,
    answer_errors_async,
    invalid,
    ocr_language,
    submit_fields,
    unknown_workflow,
)
from quire.web.admission import callback_url as checked_callback_url
from quire.web.auth import AUTHENTICATES_ITSELF, authenticate_here
from quire.web.deps import DbDep, LiveDep, QuireDep, SettingsDep, StorageDep, quire_of
from quire.web.limits import submission_rate_limit
from quire.web.links import (
    Accepted,
    JobList,
    JobOut,
    UploadOut,
    WebhookList,
    accepted,
    status_url,
    upload_out,
    with_links,
)
from quire.web.problems import problem, storage_unavailable
from quire.web.streams import preference_applied, wait_for_end, wait_preference
from quire.web.uploads import StreamedForm, read_form
from quire.webhooks import deliveries
from quire.webhooks.deliveries import DeliveryView
from quire.workflows.registry import WORKFLOWS

log = structlog.stdlib.get_logger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
JobId = Annotated[str, Parameter(max_length=64)]
# RFC 7240: `Prefer: wait=N` holds the answer until the job is finished or N (at most 60) seconds pass.
Prefer = Annotated[str | None, HeaderParameter(name="Prefer", required=False, max_length=200)]
AuthedRequest = Request[Principal, Any, Any]


class JobRequest(BaseModel):
    workflow: str
    input_ref: str
    limits: service.Limits = service.Limits()
    # The document's language for OCR of scans (ISO 639-1 such as `de`); none: the configured set.
    language: str | None = Field(default=None, max_length=16)
    # Where the job's webhooks go (http or https); none: the account's default URL, if any.
    # Checked by `admission.callback_url`, so a bad one answers invalid_callback_url however it is wrong.
    callback_url: str | None = None


def artifact_file(settings: Settings, storage: Storage, artifact: Artifact | None) -> Stream | Redirect:
    """A job's file as a download (404 when there is none, 410 once retention deleted it): streamed
    through the app with its checksum checked, or a presigned URL when the setting asks for one."""
    if artifact is None:
        raise problem(404, "not_found", "No such artifact.")
    if artifact.deleted_at is not None:
        raise problem(410, "artifact_deleted", "This file was deleted under the retention policy.")
    digest = base64.b64encode(bytes.fromhex(artifact.sha256)).decode()
    headers = {"ETag": f'"{artifact.sha256}"', "Repr-Digest": f"sha-256=:{digest}:"}
    if settings.s3_presigned_downloads:
        url = _storage_call(storage.download_url, artifact.storage_key, artifact.name, artifact.content_type)
        if url is not None:
            return Redirect(url, status_code=307, headers={**headers, "Cache-Control": "no-store"})
    chunks = _storage_call(storage.iter_bytes, artifact.storage_key)
    return Stream(
        checked(chunks, artifact.sha256, artifact.storage_key),
        media_type=artifact.content_type,
        headers={
            **headers,
            "Content-Disposition": f'attachment; filename="{artifact.name}"',
            "Content-Length": str(artifact.size),
            "X-Content-Type-Options": "nosniff",
        },
    )


async def read_upload(settings: Settings, storage: Storage, db: Database, request: AuthedRequest) -> StreamedForm:
    """Read a multipart request, storing its file part as it arrives (refused uploads and storage
    failures answered as problems)."""
    owner = request.user.user_id

    def begin(filename: str | None, head: bytes, *, at_most: int | None) -> service.UploadInProgress:
        return answer_errors(service.begin_upload, settings, storage, db, filename, head, owner, at_most=at_most)

    return await answer_errors_async(read_form(storage, db, request, begin))


class ReviewRequest(BaseModel):
    """The values a person sets; fields left out keep what an earlier review (or the machine) said."""

    fields: review.ReviewedFields


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
    quire = quire_of(request)
    await to_thread.run_sync(
        answer_errors, service.refuse_early, quire.settings, quire.db, request.user.user_id, declared_file
    )


def _accepted(submitted: service.Submitted) -> Response[Accepted]:
    body = accepted(submitted.job.id, submitted.job.status)
    return Response(body, status_code=202, headers={"Location": body.status_url})


class JobsController(Controller):
    path = ""
    tags = ["jobs"]

    @post(
        "/uploads", status_code=201, summary="Upload a document (multipart field `file`)", before_request=_refuse_early
    )
    async def create_upload(
        self, settings: SettingsDep, storage: StorageDep, db: DbDep, request: AuthedRequest
    ) -> UploadOut:
        form = await read_upload(settings, storage, db, request)
        if form.upload is None:
            raise problem(422, "invalid_request", "Attach the document as the multipart field 'file'.")
        return upload_out(form.upload)

    @get("/uploads/{upload_id:str}", sync_to_thread=True, summary="An upload's metadata")
    def get_upload(
        self, db: DbDep, request: AuthedRequest, upload_id: Annotated[str, Parameter(max_length=64)]
    ) -> UploadOut:
        upload = store.owned_upload(db, f"uploads/{upload_id}", request.user)
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
        self, request: AuthedRequest, idempotency_key: IdempotencyKey, prefer: Prefer, quire: QuireDep, live: LiveDep
    ) -> Response[Accepted | JobOut]:
        user = request.user
        content_type = request.headers.get("content-type", "")
        if content_type.startswith("multipart/form-data"):
            # Refuse before reading what may be a large body.
            await to_thread.run_sync(admit, quire.admission)
            form = await read_upload(quire.settings, quire.storage, quire.db, request)
            upload = form.upload
            if upload is None:
                raise problem(422, "invalid_request", "Attach the document as the multipart field 'file'.")
            try:
                fields = submit_fields(quire.settings, form.fields)
            except BaseException:
                # The form was refused after its file was stored: the file goes too.
                await to_thread.run_sync(service.discard_upload, quire.storage, quire.db, upload)
                raise

            def submit_stored() -> service.Submitted:
                try:
                    submitted = answer_errors(
                        service.submit,
                        quire.settings,
                        quire.db,
                        quire.dispatcher,
                        fields.workflow,
                        upload,
                        fields.limits,
                        user.user_id,
                        idempotency_key,
                        fields.language,
                        callback_url=fields.callback_url,
                    )
                except BaseException:
                    service.discard_upload(quire.storage, quire.db, upload)  # only while no job uses it
                    raise
                if not submitted.created:
                    # A repeat is answered with the job the first request made: this copy of the
                    # file would only count against the person's quota until it expired.
                    service.discard_upload(quire.storage, quire.db, upload)
                return submitted

            submitted = await to_thread.run_sync(submit_stored)
        else:
            try:
                payload = JobRequest.model_validate_json(await request.body())
            except ValidationError as exc:
                raise invalid(exc) from exc
            if payload.workflow not in WORKFLOWS:
                raise unknown_workflow(payload.workflow)
            language = ocr_language(quire.settings, payload.language)
            callback_url = checked_callback_url(quire.settings, payload.callback_url)

            def admit_and_submit() -> service.Submitted:
                admit(quire.admission)
                upload = store.owned_upload(quire.db, payload.input_ref, user)
                if upload is None:
                    raise problem(422, "unknown_input", f"No upload {payload.input_ref!r} exists. Upload it first.")
                return answer_errors(
                    service.submit,
                    quire.settings,
                    quire.db,
                    quire.dispatcher,
                    payload.workflow,
                    upload,
                    payload.limits,
                    user.user_id,
                    idempotency_key,
                    language,
                    callback_url=callback_url,
                )

            # One trip to a worker thread for the whole submission: each trip costs about as much
            # as one of the queries it runs.
            submitted = await to_thread.run_sync(admit_and_submit)
        log.info("job accepted", job_id=submitted.job.id, workflow=submitted.job.workflow, created=submitted.created)
        job_id = submitted.job.id
        wait = wait_preference(prefer)
        view, applied = None, False
        if wait is not None:
            view, applied = await wait_for_end(live, job_id, lambda: _view(job_id, user, quire), wait)
        headers = preference_applied(wait) if wait is not None and applied else {}
        body: Accepted | JobOut = accepted(job_id, view.status if view is not None else submitted.job.status)
        if view is not None and view.status in TERMINAL:
            # Finished within the wait: the answer is the job itself, as GET /ai-jobs/{id} gives it.
            body, status_code, headers["Content-Location"] = view, 200, status_url(job_id)
        else:
            status_code, headers["Location"] = 202, status_url(job_id)
        return Response(body, status_code=status_code, headers=headers)

    @get("/ai-jobs", sync_to_thread=True, summary="List jobs, newest first")
    def list_jobs(
        self,
        settings: SettingsDep,
        db: DbDep,
        request: AuthedRequest,
        status: Annotated[JobStatus | None, Parameter(required=False)] = None,
        workflow: Annotated[str | None, Parameter(required=False, max_length=64)] = None,
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
        cursor: Annotated[str | None, Parameter(required=False, max_length=200)] = None,
    ) -> JobList:
        try:
            page = store.list_jobs(
                settings, db, request.user.user_id, status=status, workflow=workflow, limit=limit, cursor=cursor
            )
        except InvalidCursor as exc:
            raise problem(400, "invalid_cursor", str(exc)) from exc
        return JobList(items=[with_links(view) for view in page.items], next_cursor=page.next_cursor)

    @get("/ai-jobs/{job_id:str}", summary="A job's status", opt=AUTHENTICATES_ITSELF)
    async def get_job(
        self, request: AuthedRequest, job_id: JobId, prefer: Prefer, quire: QuireDep, live: LiveDep
    ) -> Response[JobOut]:
        wait = wait_preference(prefer)
        # Polled often: who asks and what the job says are read in one thread trip and session.
        view = await to_thread.run_sync(_authenticated_view, request, job_id, quire)
        headers: dict[str, str] = {}
        if wait is not None and view is not None:
            # Held by an asyncio wait, woken by the job's changes: no thread per waiting client.
            view, applied = await wait_for_end(live, job_id, partial(_view, job_id, request.user, quire), wait)
            headers = preference_applied(wait) if applied else {}
        if view is None:
            raise _not_found()
        return Response(view, headers=headers)

    @get("/ai-jobs/{job_id:str}/artifacts/{name:str}", sync_to_thread=True, summary="Download an artifact")
    def download_artifact(
        self,
        settings: SettingsDep,
        storage: StorageDep,
        db: DbDep,
        request: AuthedRequest,
        job_id: JobId,
        name: Annotated[str, Parameter(max_length=128)],
    ) -> Stream | Redirect:
        _require(db, job_id, request.user)
        return artifact_file(settings, storage, store.get_artifact(db, job_id, name))

    @post("/ai-jobs/{job_id:str}/review", status_code=200, sync_to_thread=True, summary="Review an invoice's fields")
    def review_job(
        self, request: AuthedRequest, job_id: JobId, data: JSONBody[ReviewRequest], quire: QuireDep
    ) -> JobOut:
        """Correct or confirm invoice values; the machine's artifact is not changed (docs/api.md, "Review")."""
        _require(quire.db, job_id, request.user)
        try:
            service.save_review(quire.db, quire.dispatcher, quire.results, job_id, data.fields, request.user.email)
        except review.NotReviewable as exc:
            raise problem(409, "not_reviewable", str(exc)) from exc
        view = store.view_of(quire.settings, quire.db, job_id, recent=quire.recent_views)
        if view is None:
            raise _not_found()
        return with_links(view)

    @post("/ai-jobs/{job_id:str}/cancel", status_code=200, sync_to_thread=True, summary="Cancel a job")
    def cancel_job(self, request: AuthedRequest, job_id: JobId, quire: QuireDep) -> JobOut:
        _require(quire.db, job_id, request.user)
        try:
            service.cancel(quire.settings, quire.db, quire.dispatcher, job_id)
        except service.NotAllowed as exc:
            raise problem(409, "invalid_state", str(exc)) from exc
        view = store.view_of(quire.settings, quire.db, job_id, recent=quire.recent_views)
        if view is None:  # deleted in the meantime
            raise _not_found()
        return with_links(view)

    @post("/ai-jobs/{job_id:str}/replay", status_code=202, sync_to_thread=True, summary="Replay a job")
    def replay_job(self, request: AuthedRequest, job_id: JobId, quire: QuireDep) -> Response[Accepted]:
        _require(quire.db, job_id, request.user)
        try:
            job = service.replay(quire.settings, quire.db, quire.dispatcher, job_id)
        except service.NotAllowed as exc:
            raise problem(409, "invalid_state", str(exc)) from exc
        return _accepted(service.Submitted(job, created=False))

    @get("/ai-jobs/{job_id:str}/webhooks", sync_to_thread=True, summary="A job's webhook deliveries")
    def job_webhooks(self, db: DbDep, request: AuthedRequest, job_id: JobId) -> WebhookList:
        _require(db, job_id, request.user)
        return WebhookList(items=deliveries.deliveries_of(db, job_id))

    @post(
        "/webhook-deliveries/{delivery_id:str}/replay",
        status_code=202,
        sync_to_thread=True,
        summary="Send a webhook delivery again",
    )
    def replay_webhook(
        self, request: AuthedRequest, delivery_id: Annotated[str, Parameter(max_length=64)], quire: QuireDep
    ) -> DeliveryView:
        delivery = deliveries.get_delivery(quire.db, delivery_id)
        if delivery is None or not (request.user.is_admin or delivery.owner_id == request.user.user_id):
            raise problem(404, "not_found", "No such webhook delivery.")
        try:
            view = quire.webhooks.replay(delivery_id)
        except deliveries.NotReplayable as exc:
            raise problem(409, "invalid_state", str(exc)) from exc
        if view is None:  # its job was deleted in the meantime
            raise problem(404, "not_found", "No such webhook delivery.")
        return view

    @delete("/ai-jobs/{job_id:str}", status_code=204, sync_to_thread=True, summary="Delete a job and its files")
    def delete_job(self, request: AuthedRequest, job_id: JobId, quire: QuireDep) -> None:
        _require(quire.db, job_id, request.user)
        service.delete(quire.settings, quire.storage, quire.db, quire.dispatcher, job_id)


def _storage_call(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Call the storage, answering 503 with Retry-After while it cannot be reached."""
    try:
        return call(*args, **kwargs)
    except StorageUnavailable as exc:
        raise storage_unavailable() from exc
    except FileNotFoundError as exc:
        log.error("artifact missing from storage", key=args[0] if args else None)
        raise problem(404, "not_found", "No such artifact.") from exc


def checked(chunks: Iterator[bytes], sha256: str, key: str) -> Iterator[bytes]:
    """The object's chunks, checked against the sha256 recorded when it was written. The last chunk
    is held back until the whole has been hashed: on a mismatch it is never sent, the response
    ends short of its Content-Length, and no client takes a damaged file for a whole one."""
    digest = hashlib.sha256()
    held: bytes | None = None
    for chunk in chunks:
        digest.update(chunk)
        if held is not None:
            yield held
        held = chunk
    if digest.hexdigest() != sha256:
        log.error("artifact does not match its recorded sha256", key=key)
        raise StorageCorrupt(f"{key} does not match its recorded sha256")
    if held is not None:
        yield held


class StorageCorrupt(Exception):
    """A stored object's bytes differ from the sha256 recorded when it was written."""


def _view(job_id: str, viewer: Principal, quire: QuireDep) -> JobOut | None:
    view = store.view_of(quire.settings, quire.db, job_id, viewer, quire.recent_views)
    return with_links(view) if view is not None else None


def _authenticated_view(request: AuthedRequest, job_id: str, quire: QuireDep) -> JobOut | None:
    with quire.db.session() as session:
        view = store.view_of(
            quire.settings, quire.db, job_id, authenticate_here(quire.db, request, session), quire.recent_views, session
        )
    return with_links(view) if view is not None else None


def _not_found() -> Exception:
    return problem(404, "not_found", "No such job.")


def _require(db: Database, job_id: str, viewer: Principal) -> None:
    """404 unless the caller may see the job: another person's job does not exist for them."""
    if store.visible_job(db, job_id, viewer) is None:
        raise _not_found()


def max_request_bytes(settings: Settings) -> int:
    # Room for the multipart envelope and form fields around the largest allowed file.
    return settings.max_upload_bytes + 256 * 1024
