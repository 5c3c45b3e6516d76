"""The browser pages (docs/api.md, "Pages"): full pages, and the fragments htmx swaps in."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Annotated, Any

from anyio import to_thread
from litestar import Controller, Response, get, post
from litestar.datastructures import UploadFile
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import Parameter
from litestar.plugins.htmx import ClientRedirect, HTMXRequest
from litestar.response import Redirect, Template

from quire.accounts.service import Principal
from quire.jobs import service, store
from quire.jobs.models import Job, JobStatus
from quire.jobs.paging import InvalidCursor
from quire.jobs.states import TERMINAL
from quire.settings import get_settings
from quire.web.deps import QuireDep
from quire.web.limits import submission_rate_limit
from quire.web.links import JobOut, with_links
from quire.web.polling import next_poll
from quire.web.presenters import EVENT_LABELS, STATUS_LABELS, banner, result_preview
from quire.web.preview import input_image, page_png, preview_of
from quire.workflows.registry import WORKFLOWS

HTMX_STOP_POLLING = 286
# One-time notices and the last workflow live in the browser's server-side session.
FLASH_KEY = "quire_flash"
LAST_WORKFLOW_KEY = "quire_last_workflow"
# Previews are the owner's document: cached by their browser only, and revalidated after a delete.
PRIVATE_CACHE = {"Cache-Control": "private, max-age=300"}
# HTMXRequest (request.htmx) whose user is set by the authentication middleware.
PageRequest = HTMXRequest
Since = Annotated[int | None, Parameter(query="since", required=False, ge=0)]
# A plain string: the filter form sends "" for "All", which is no status at all.
StatusFilter = Annotated[str | None, Parameter(query="status", required=False, max_length=32)]
Cursor = Annotated[str | None, Parameter(query="cursor", required=False, max_length=200)]


def _common() -> dict[str, Any]:
    settings = get_settings()
    return {
        "workflows": list(WORKFLOWS.values()),
        "max_upload_mb": settings.max_upload_mb,
        "document_languages": service.document_languages(),
        "status_labels": STATUS_LABELS,
        "event_labels": EVENT_LABELS,
        "terminal": {str(s) for s in TERMINAL},
    }


def _job_context(view: JobOut, since: int | None) -> dict[str, Any]:
    terminal = view["status"] in TERMINAL
    result = result_preview(view)
    job = store.get_job(view["job_id"]) if result is not None else None
    return {
        **_common(),
        "job": view,
        "poll": next_poll(get_settings(), since, terminal),
        "banner": banner(view),
        "result": result,
        "preview": preview_of(job.input_ref, view["input"]["filename"], result) if job else None,
    }


def _list_context(
    viewer: Principal, status_text: str | None, cursor: str | None, since: int | None, limit: int
) -> dict[str, Any]:
    status = JobStatus(status_text) if status_text in set(JobStatus) else None
    try:
        page = store.list_jobs(viewer.user_id, status=status, limit=limit, cursor=cursor)
    except InvalidCursor as exc:
        raise ClientException(str(exc)) from exc
    active = any(item["status"] not in TERMINAL for item in page.items)
    return {
        **_common(),
        "items": page.items,
        "next_cursor": page.next_cursor,
        "status_filter": status.value if status else "",
        "poll": next_poll(get_settings(), since, terminal=not active),
    }


def _fragment(name: str, context: dict[str, Any]) -> Template:
    # A fragment that no longer polls answers 286, which htmx takes as "stop polling".
    status = 200 if context["poll"].active else HTMX_STOP_POLLING
    return Template(template_name=name, context=context, status_code=status)


class PagesController(Controller):
    path = ""
    include_in_schema = False

    @get("/", sync_to_thread=True)
    def index(self, request: PageRequest) -> Template:
        context = _list_context(request.user, None, None, None, 5)
        return Template("pages/index.html", context={**context, "error": None, **_chosen(request)})

    @post("/jobs", status_code=303, middleware=[submission_rate_limit().middleware])
    async def submit_form(self, request: PageRequest, quire: QuireDep) -> Redirect | Template:
        """The upload form without JavaScript: store, submit, then redirect to the job page."""
        form = await request.form()
        file = form.get("file")
        workflow = str(form.get("workflow") or "")
        if workflow in WORKFLOWS:
            # The next upload starts with the same workflow (the page with JavaScript keeps it too).
            request.session[LAST_WORKFLOW_KEY] = workflow
        error, status, headers = None, 422, {}
        if not isinstance(file, UploadFile) or not file.filename:
            error = "Choose a document to upload."
        elif workflow not in WORKFLOWS:
            error = "Choose a workflow."
        else:
            try:
                owner = request.user.user_id
                language = service.ocr_language(str(form.get("language") or ""))

                def admit_and_submit() -> service.Submitted:
                    quire.admission.admit()
                    return service.submit_document(
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
        context = await to_thread.run_sync(_list_context, request.user, None, None, None, 5)
        context = {**context, "error": error, **_chosen(request)}
        return Template("pages/index.html", context=context, status_code=status, headers=headers)

    @get("/jobs", sync_to_thread=True)
    def jobs(self, request: PageRequest, status: StatusFilter, cursor: Cursor) -> Template:
        """The page, or for the filter form (which pushes this URL, so a reload or a shared link
        gives the whole page) just the table. htmx restoring history asks for the whole page."""
        context = _list_context(request.user, status, cursor, None, 20)
        headers = {"Vary": "HX-Request"}  # one URL, two bodies: caches must tell them apart
        if request.htmx and not request.htmx.history_restore_request:
            fragment = _fragment("partials/jobs_table.html", context)
            fragment.headers.update(headers)
            return fragment
        notice = request.session.pop(FLASH_KEY, None) if request.session else None
        return Template("pages/jobs.html", context={**context, "notice": notice}, headers=headers)

    @get("/jobs/table", sync_to_thread=True)
    def jobs_table(self, request: PageRequest, status: StatusFilter, cursor: Cursor, since: Since) -> Template:
        return _fragment("partials/jobs_table.html", _list_context(request.user, status, cursor, since, 20))

    @get("/jobs/recent", sync_to_thread=True)
    def recent_jobs(self, request: PageRequest, since: Since) -> Template:
        return _fragment("partials/recent_jobs.html", _list_context(request.user, None, None, since, 5))

    @get("/jobs/{job_id:str}", sync_to_thread=True)
    def job_page(self, request: PageRequest, job_id: str, quire: QuireDep) -> Template:
        view = _require(job_id, request.user, quire.recent_views)
        return Template("pages/job.html", context=_job_context(view, None))

    @get("/jobs/{job_id:str}/status", sync_to_thread=True)
    def job_status(self, request: PageRequest, job_id: str, since: Since, quire: QuireDep) -> Template:
        view = _require(job_id, request.user, quire.recent_views)
        return _fragment("partials/job_card.html", _job_context(view, since))

    @get("/jobs/{job_id:str}/preview/{page:int}", sync_to_thread=True)
    def preview_page(self, request: PageRequest, job_id: str, page: int) -> Response[bytes]:
        """A page of the job's PDF as an image (rendered once, then kept with the job's files)."""
        job = _require_visible(job_id, request.user)
        png = page_png(job_id, job.input_ref, page)
        if png is None:
            raise NotFoundException("No such page.")
        return Response(png, media_type="image/png", headers=PRIVATE_CACHE)

    @get("/jobs/{job_id:str}/preview/image", sync_to_thread=True)
    def preview_image(self, request: PageRequest, job_id: str) -> Response[bytes]:
        """The uploaded image itself, shown beside the result."""
        found = input_image(job_id, _require_visible(job_id, request.user).input_ref)
        if found is None:
            raise NotFoundException("This document is not an image.")
        data, media_type = found
        return Response(data, media_type=media_type, headers=PRIVATE_CACHE)

    @post("/jobs/{job_id:str}/cancel", sync_to_thread=True, status_code=200)
    def cancel(self, request: PageRequest, job_id: str, quire: QuireDep) -> Template | Redirect:
        return _act(request, quire, job_id, lambda job_id: service.cancel(quire.dispatcher, job_id))

    @post("/jobs/{job_id:str}/replay", sync_to_thread=True, status_code=200)
    def replay(self, request: PageRequest, job_id: str, quire: QuireDep) -> Template | Redirect:
        return _act(request, quire, job_id, lambda job_id: service.replay(quire.dispatcher, job_id))

    @post("/jobs/{job_id:str}/delete", sync_to_thread=True, status_code=303)
    def delete(self, request: PageRequest, job_id: str, quire: QuireDep) -> Redirect | ClientRedirect:
        view = _require(job_id, request.user, quire.recent_views)
        service.delete(job_id)
        request.session[FLASH_KEY] = f"Deleted {view['input']['filename']} and its results."
        if request.htmx:
            return ClientRedirect("/jobs")
        return Redirect("/jobs", status_code=303)


def _act(request: PageRequest, quire: QuireDep, job_id: str, action: Callable[[str], object]) -> Template | Redirect:
    """Cancel or replay from the job page, then show the refreshed card (htmx) or the page."""
    _require_visible(job_id, request.user)
    # A job no longer in a state that allows the action is left as it is; the card shows where it is.
    with contextlib.suppress(service.NotAllowed):
        action(job_id)
    if request.htmx:
        view = _require(job_id, request.user, quire.recent_views)
        return _fragment("partials/job_card.html", _job_context(view, None))
    return Redirect(f"/jobs/{job_id}", status_code=303)


def _chosen(request: PageRequest) -> dict[str, str | None]:
    """The workflow this browser used last, preselected in the upload form."""
    last = request.session.get(LAST_WORKFLOW_KEY) if request.session else None
    return {"chosen_workflow": last if last in WORKFLOWS else None}


def _require_visible(job_id: str, viewer: Principal) -> Job:
    job = store.visible_job(job_id, viewer)
    if job is None:
        raise NotFoundException("No such job.")
    return job


def _require(job_id: str, viewer: Principal, recent: store.RecentViews) -> JobOut:
    """The job's view if the viewer may see it; otherwise 404, exactly as for a job that never existed."""
    view = store.view_of(job_id, viewer, recent)
    if view is None:
        raise NotFoundException("No such job.")
    return with_links(view)
