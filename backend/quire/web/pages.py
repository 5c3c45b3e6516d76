"""The browser pages (docs/api.md, "Pages"): full pages, and the fragments htmx swaps in."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, BinaryIO, cast

from anyio import to_thread
from litestar import Controller, Response, get, post
from litestar.datastructures import UploadFile
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import FromPath, QueryParameter
from litestar.plugins.htmx import ClientRedirect, HTMXRequest
from litestar.plugins.problem_details import ProblemDetailsException
from litestar.response import Redirect, Template
from pydantic import ValidationError
from sqlmodel import Session

from quire.accounts.service import Principal
from quire.db import Database
from quire.documents.archive import is_archive
from quire.documents.storage import Storage, StorageUnavailable
from quire.jobs import review, service, store
from quire.jobs.models import Job, JobStatus, Upload
from quire.jobs.paging import InvalidCursor
from quire.jobs.results import INVOICE_FIELDS, ResultCache, open_reviews
from quire.jobs.states import TERMINAL
from quire.settings import Settings
from quire.web.auth import AUTHENTICATES_ITSELF, FLASH_KEY, authenticate_here
from quire.web.batches import admit_batch, form_parts
from quire.web.csrf import CSRF_HEADER
from quire.web.deps import DbDep, QuireDep, StorageDep
from quire.web.limits import submission_rate_limit
from quire.web.links import JobOut, batch_url, with_links
from quire.web.polling import Poll, next_poll
from quire.web.presenters import banner, page_basics, result_preview
from quire.web.preview import input_image, page_png, preview_of, preview_source
from quire.web.problems import STORAGE_RETRY_AFTER_S
from quire.web.uploads import read_form
from quire.webhooks import deliveries
from quire.workflows.invoice_summary import FIELD_LABELS
from quire.workflows.registry import WORKFLOWS

HTMX_STOP_POLLING = 286
# The last workflow chosen lives in the browser's server-side session.
LAST_WORKFLOW_KEY = "quire_last_workflow"
# Previews are the owner's document: cached by their browser only, and revalidated after a delete.
PRIVATE_CACHE = {"Cache-Control": "private, max-age=300"}
# HTMXRequest (request.htmx) whose user is set by the authentication middleware.
PageRequest = HTMXRequest
Since = Annotated[int | None, QueryParameter(name="since", required=False, ge=0)]
# A plain string: the filter form sends "" for "All", which is no status at all.
StatusFilter = Annotated[str | None, QueryParameter(name="status", required=False, max_length=32)]
Cursor = Annotated[str | None, QueryParameter(name="cursor", required=False, max_length=200)]


def streaming() -> Poll:
    """What a fragment sent down a stream carries instead of a polling schedule: none at all."""
    return Poll(since=0, delay_s=None, gave_up=False)


def job_context(
    settings: Settings, storage: Storage, db: Database, view: JobOut, since: int | None, poll: Poll | None = None
) -> dict[str, Any]:
    terminal = view.status in TERMINAL
    result = result_preview(storage, db, view)
    job = store.get_job(db, view.job_id) if result is not None else None
    return {
        **page_basics(settings),
        "job": view,
        "poll": poll or next_poll(settings, since, terminal),
        "banner": banner(view),
        "result": result,
        "preview": preview_of(storage, preview_source(db, job), view.input.filename, result) if job else None,
    }


def list_context(
    settings: Settings,
    db: Database,
    viewer: Principal,
    status_text: str | None,
    cursor: str | None,
    since: int | None,
    limit: int,
    results: ResultCache,
) -> dict[str, Any]:
    status = JobStatus(status_text) if status_text in set(JobStatus) else None
    try:
        page = store.list_jobs(settings, db, viewer.user_id, status=status, limit=limit, cursor=cursor)
    except InvalidCursor as exc:
        raise ClientException(str(exc)) from exc
    active = any(item.status not in TERMINAL for item in page.items)
    with db.session() as session:
        reviews = open_reviews(session, [item.job_id for item in page.items], results)
    return {
        **page_basics(settings),
        "items": page.items,
        # A completed invoice with fields still to check says so in the list, as on its page.
        "reviews": reviews,
        "next_cursor": page.next_cursor,
        "cursor": cursor,
        "status_filter": status.value if status else "",
        "poll": next_poll(settings, since, terminal=not active),
    }


def render(request: PageRequest, name: str, context: dict[str, Any]) -> str:
    """A template rendered to text, as a Template response would render it (for the page streams)."""
    template = request.app.template_engine.get_template(name)  # type: ignore[union-attr]
    return str(template.render(**context, request=request))


def _fragment(name: str, context: dict[str, Any]) -> Template:
    # A fragment that no longer polls answers 286, which htmx takes as "stop polling".
    status = 200 if context["poll"].active else HTMX_STOP_POLLING
    return Template(template_name=name, context=context, status_code=status)


async def _read_upload_form(
    settings: Settings, storage: Storage, db: Database, request: PageRequest, owner: str
) -> tuple[dict[str, str], Upload | None]:
    """The upload form's fields and its stored file (None when no file was chosen)."""
    if request.headers.get(CSRF_HEADER):
        # The token came in a header, so the body is still unread: stream it to storage.
        form = await read_form(
            storage, db, request, partial(service.begin_upload, settings, storage, db, owner_id=owner)
        )
        return form.fields, form.upload
    # The form carried its CSRF token in the body: the CSRF check has read it already (Litestar
    # spools its file part to a temporary file), and the file is stored from there.
    parsed = await request.form()
    fields = {name: value for name, value in parsed.items() if isinstance(value, str)}
    file = parsed.get("file")
    if not isinstance(file, UploadFile) or not file.filename:
        return fields, None
    return fields, await to_thread.run_sync(
        service.store_upload, settings, storage, db, file.filename, cast(BinaryIO, file.file), owner
    )


async def _submit_streamed(request: PageRequest, quire: QuireDep) -> Redirect | Template:
    """One document sent with its CSRF token in a header: streamed to storage, submitted, then a
    redirect to the job page."""
    error, status, headers = None, 422, {}
    owner = request.user.user_id
    try:
        # Refuse before reading what may be a large body.
        await to_thread.run_sync(quire.admission.admit)
        fields, upload = await _read_upload_form(quire.settings, quire.storage, quire.db, request, owner)
        workflow = fields.get("workflow", "")
        if workflow in WORKFLOWS:
            # The next upload starts with the same workflow (the page with JavaScript keeps it too).
            request.session[LAST_WORKFLOW_KEY] = workflow
        if upload is None:
            error = "Choose a document to upload."
        elif workflow not in WORKFLOWS:
            error = "Choose a workflow."
        else:
            try:
                language = service.ocr_language(quire.settings, fields.get("language"))
                submitted = await to_thread.run_sync(
                    service.submit,
                    quire.settings,
                    quire.db,
                    quire.dispatcher,
                    workflow,
                    upload,
                    service.Limits(),
                    owner,
                    None,
                    language,
                )
                return Redirect(f"/jobs/{submitted.job.id}", status_code=303)
            except service.UnknownLanguage as exc:
                error = str(exc)
        if upload is not None:
            await to_thread.run_sync(service.discard_upload, quire.storage, quire.db, upload)
    except service.UploadRejected as exc:
        error, status = exc.message, exc.status
        if exc.retry_after_s:
            headers["Retry-After"] = str(exc.retry_after_s)
    except service.Overloaded as exc:
        error, status = str(exc), 429
    except StorageUnavailable:
        error, status = (
            "File storage cannot be reached right now, so nothing was stored. Try again in a minute.",
            503,
        )
        headers["Retry-After"] = str(STORAGE_RETRY_AFTER_S)
    context = await to_thread.run_sync(
        list_context, quire.settings, quire.db, request.user, None, None, None, 5, quire.results
    )
    context = {**context, "error": error, **_chosen(request)}
    return Template("pages/index.html", context=context, status_code=status, headers=headers)


class PagesController(Controller):
    path = ""
    include_in_schema = False

    @get("/", sync_to_thread=True)
    def index(self, request: PageRequest, quire: QuireDep) -> Template:
        context = list_context(quire.settings, quire.db, request.user, None, None, None, 5, quire.results)
        return Template("pages/index.html", context={**context, "error": None, **_chosen(request)})

    @post("/jobs", status_code=303, middleware=[submission_rate_limit().middleware])
    async def submit_form(self, request: PageRequest, quire: QuireDep) -> Redirect | Template:
        """The upload form without JavaScript: store, submit, then redirect to the job page (or, for
        several files or a ZIP archive, to the batch's page)."""
        if request.headers.get(CSRF_HEADER):
            # The body is still unread: one document, streamed to storage as it arrives.
            return await _submit_streamed(request, quire)
        form = await request.form()
        files = [f for f in form.getall("file", []) if isinstance(f, UploadFile) and f.filename]
        file = files[0] if files else None
        workflow = str(form.get("workflow") or "")
        if workflow in WORKFLOWS:
            # The next upload starts with the same workflow (the page with JavaScript keeps it too).
            request.session[LAST_WORKFLOW_KEY] = workflow
        error, status, headers = None, 422, {}
        one_archive = file is not None and await to_thread.run_sync(is_archive, cast(BinaryIO, file.file))
        if file is not None and workflow in WORKFLOWS and (len(files) > 1 or one_archive):
            try:
                batch = await to_thread.run_sync(admit_batch, quire, request.user, dict(form), form_parts(form), None)
                return Redirect(batch_url(batch.batch.id), status_code=303)
            except ProblemDetailsException as exc:
                extra = exc.extra if isinstance(exc.extra, dict) else {}
                refused = [f"{r['filename']}: {r['reason']}" for r in extra.get("rejected", [])]
                error, status = " ".join([exc.detail, *refused]), exc.status_code
                headers.update(exc.headers or {})
        elif file is None:
            error = "Choose a document to upload."
        elif workflow not in WORKFLOWS:
            error = "Choose a workflow."
        else:
            try:
                owner = request.user.user_id
                language = service.ocr_language(quire.settings, str(form.get("language") or ""))

                def admit_and_submit() -> service.Submitted:
                    quire.admission.admit()
                    return service.submit_document(
                        quire.settings,
                        quire.storage,
                        quire.db,
                        quire.dispatcher,
                        workflow,
                        file.filename,
                        file.file,  # type: ignore[arg-type]
                        service.Limits(),
                        owner,
                        None,
                        language,
                    )

                submitted = await to_thread.run_sync(admit_and_submit)
                return Redirect(f"/jobs/{submitted.job.id}", status_code=303)
            except service.UploadRejected as exc:
                error, status = exc.message, exc.status
                if exc.retry_after_s:
                    headers["Retry-After"] = str(exc.retry_after_s)
            except service.UnknownLanguage as exc:
                error = str(exc)
            except service.Overloaded as exc:
                error, status = str(exc), 429
        context = await to_thread.run_sync(
            list_context, quire.settings, quire.db, request.user, None, None, None, 5, quire.results
        )
        context = {**context, "error": error, **_chosen(request)}
        return Template("pages/index.html", context=context, status_code=status, headers=headers)

    @get("/jobs", sync_to_thread=True)
    def jobs(self, request: PageRequest, status: StatusFilter, cursor: Cursor, quire: QuireDep) -> Template:
        """The page, or for the filter form (which pushes this URL, so a reload or a shared link
        gives the whole page) just the table. htmx restoring history asks for the whole page."""
        context = list_context(quire.settings, quire.db, request.user, status, cursor, None, 20, quire.results)
        headers = {"Vary": "HX-Request"}  # one URL, two bodies: caches must tell them apart
        if request.htmx and not request.htmx.history_restore_request:
            fragment = _fragment("partials/jobs_table.html", context)
            fragment.headers.update(headers)
            return fragment
        notice = request.session.pop(FLASH_KEY, None) if request.session else None
        return Template("pages/jobs.html", context={**context, "notice": notice}, headers=headers)

    @get("/jobs/table", sync_to_thread=True)
    def jobs_table(
        self, request: PageRequest, status: StatusFilter, cursor: Cursor, since: Since, quire: QuireDep
    ) -> Template:
        context = list_context(quire.settings, quire.db, request.user, status, cursor, since, 20, quire.results)
        return _fragment("partials/jobs_table.html", context)

    @get("/jobs/recent", sync_to_thread=True)
    def recent_jobs(self, request: PageRequest, since: Since, quire: QuireDep) -> Template:
        return _fragment(
            "partials/recent_jobs.html",
            list_context(quire.settings, quire.db, request.user, None, None, since, 5, quire.results),
        )

    @get("/jobs/{job_id:str}", sync_to_thread=True)
    def job_page(self, request: PageRequest, job_id: FromPath[str], quire: QuireDep) -> Template:
        view = _require(quire.settings, quire.db, job_id, request.user, quire.recent_views)
        webhooks = {"webhooks": deliveries.deliveries_of(quire.db, job_id), "webhooks_base": f"/jobs/{job_id}"}
        context = {**job_context(quire.settings, quire.storage, quire.db, view, None), **webhooks}
        return Template("pages/job.html", context=context)

    @post("/jobs/{job_id:str}/webhooks/{delivery_id:str}/replay", sync_to_thread=True, status_code=303)
    def replay_webhook(
        self, request: PageRequest, job_id: FromPath[str], delivery_id: FromPath[str], quire: QuireDep
    ) -> Redirect:
        """Send a delivered or given-up webhook again, then back to the job's deliveries."""
        _require_visible(quire.db, job_id, request.user)
        delivery = deliveries.get_delivery(quire.db, delivery_id)
        if delivery is None or delivery.subject_id != job_id:
            raise NotFoundException("No such webhook delivery.")
        # One already being sent again is left to finish; the page shows where it is.
        with contextlib.suppress(deliveries.NotReplayable):
            quire.webhooks.replay(delivery_id)
        return Redirect(f"/jobs/{job_id}#webhooks", status_code=303)

    @get("/jobs/{job_id:str}/status", sync_to_thread=True, opt=AUTHENTICATES_ITSELF)
    def job_status(self, request: PageRequest, job_id: FromPath[str], since: Since, quire: QuireDep) -> Template:
        # Polled by every open job card: who asks and what the job says come from one session.
        with quire.db.session() as session:
            view = _require(
                quire.settings,
                quire.db,
                job_id,
                authenticate_here(quire.db, request, session),
                quire.recent_views,
                session,
            )
        return _fragment("partials/job_card.html", job_context(quire.settings, quire.storage, quire.db, view, since))

    @get("/jobs/{job_id:str}/preview/{page:int}", sync_to_thread=True)
    def preview_page(
        self, storage: StorageDep, db: DbDep, request: PageRequest, job_id: FromPath[str], page: FromPath[int]
    ) -> Response[bytes]:
        """A page of the job's PDF, or of the searchable PDF OCR made of a scan, as an image
        (rendered once, then kept with the job's files)."""
        job = _require_visible(db, job_id, request.user)
        png = page_png(storage, job_id, preview_source(db, job), page)
        if png is None:
            raise NotFoundException("No such page.")
        return Response(png, media_type="image/png", headers=PRIVATE_CACHE)

    @get("/jobs/{job_id:str}/preview/image", sync_to_thread=True)
    def preview_image(
        self, storage: StorageDep, db: DbDep, request: PageRequest, job_id: FromPath[str]
    ) -> Response[bytes]:
        """The uploaded image itself, shown beside the result."""
        found = input_image(storage, job_id, _require_visible(db, job_id, request.user).input_ref)
        if found is None:
            raise NotFoundException("This document is not an image.")
        data, media_type = found
        return Response(data, media_type=media_type, headers=PRIVATE_CACHE)

    @post("/jobs/{job_id:str}/review", status_code=303)
    async def save_review(self, request: PageRequest, job_id: FromPath[str], quire: QuireDep) -> Redirect | Template:
        """Save a person's review of an invoice's fields, then show the job again (without JavaScript too)."""
        form = await request.form()
        given = {name: str(form.get(name) or "").strip() or None for name in INVOICE_FIELDS}
        if form.get("document_type"):
            given["document_type"] = str(form.get("document_type"))
        viewer = request.user

        def save() -> Redirect | Template:
            _require_visible(quire.db, job_id, viewer)
            try:
                fields = review.ReviewedFields.model_validate(given)
                service.save_review(quire.db, quire.dispatcher, quire.results, job_id, fields, viewer.email)
            except ValidationError as exc:
                labels = {**FIELD_LABELS, "document_type": "Document"}
                names = ", ".join(labels.get(str(e["loc"][0]), str(e["loc"][0])) for e in exc.errors())
                error = f"Nothing was saved: check {names} (amounts like 1234.50, dates like 2026-01-31)."
            except review.NotReviewable as exc:
                error = str(exc)
            else:
                return Redirect(f"/jobs/{job_id}", status_code=303)
            context = {
                **job_context(
                    quire.settings,
                    quire.storage,
                    quire.db,
                    _require(quire.settings, quire.db, job_id, viewer, quire.recent_views),
                    None,
                ),
                "review_error": error,
            }
            return Template("pages/job.html", context=context, status_code=422)

        return await to_thread.run_sync(save)

    @post("/jobs/{job_id:str}/cancel", sync_to_thread=True, status_code=200)
    def cancel(self, request: PageRequest, job_id: FromPath[str], quire: QuireDep) -> Template | Redirect:
        return _act(
            request, quire, job_id, lambda job_id: service.cancel(quire.settings, quire.db, quire.dispatcher, job_id)
        )

    @post("/jobs/{job_id:str}/replay", sync_to_thread=True, status_code=200)
    def replay(self, request: PageRequest, job_id: FromPath[str], quire: QuireDep) -> Template | Redirect:
        return _act(
            request, quire, job_id, lambda job_id: service.replay(quire.settings, quire.db, quire.dispatcher, job_id)
        )

    @post("/jobs/{job_id:str}/delete", sync_to_thread=True, status_code=303)
    def delete(self, request: PageRequest, job_id: FromPath[str], quire: QuireDep) -> Redirect | ClientRedirect:
        view = _require(quire.settings, quire.db, job_id, request.user, quire.recent_views)
        service.delete(quire.settings, quire.storage, quire.db, quire.dispatcher, job_id)
        request.session[FLASH_KEY] = f"Deleted {view.input.filename} and its results."
        if request.htmx:
            return ClientRedirect("/jobs")
        return Redirect("/jobs", status_code=303)


def _act(request: PageRequest, quire: QuireDep, job_id: str, action: Callable[[str], object]) -> Template | Redirect:
    """Cancel or replay from the job page, then show the refreshed card (htmx) or the page."""
    _require_visible(quire.db, job_id, request.user)
    # A job no longer in a state that allows the action is left as it is; the card shows where it is.
    with contextlib.suppress(service.NotAllowed):
        action(job_id)
    if request.htmx:
        view = _require(quire.settings, quire.db, job_id, request.user, quire.recent_views)
        return _fragment("partials/job_card.html", job_context(quire.settings, quire.storage, quire.db, view, None))
    return Redirect(f"/jobs/{job_id}", status_code=303)


def _chosen(request: PageRequest) -> dict[str, str | None]:
    """The workflow this browser used last, preselected in the upload form."""
    last = request.session.get(LAST_WORKFLOW_KEY) if request.session else None
    return {"chosen_workflow": last if last in WORKFLOWS else None}


def _require_visible(db: Database, job_id: str, viewer: Principal) -> Job:
    job = store.visible_job(db, job_id, viewer)
    if job is None:
        raise NotFoundException("No such job.")
    return job


def _require(
    settings: Settings,
    db: Database,
    job_id: str,
    viewer: Principal,
    recent: store.RecentViews,
    session: Session | None = None,
) -> JobOut:
    """The job's view if the viewer may see it; otherwise 404, exactly as for a job that never existed."""
    view = store.view_of(settings, db, job_id, viewer, recent, session)
    if view is None:
        raise NotFoundException("No such job.")
    return with_links(view)
