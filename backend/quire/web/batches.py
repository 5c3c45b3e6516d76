"""Batches over HTTP (docs/api.md, "Batches"): submit many documents, watch them, act on them, export.

`/batches/{id}` is both the JSON view and, for a browser that asks for HTML, the page; the page's
self-polling fragment and its two actions (retry the failed jobs, cancel the rest) live beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, BinaryIO, cast

import structlog
from anyio import to_thread
from litestar import Controller, MediaType, Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, Parameter, QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from quire.accounts.service import Principal
from quire.bootstrap import Quire
from quire.db import Database, moment
from quire.jobs import batches, export, service, store
from quire.jobs.batches import Part
from quire.jobs.models import Batch, JobStatus
from quire.jobs.results import InvoiceRow
from quire.jobs.states import TERMINAL
from quire.web.admission import IdempotencyKey, admit, answer_errors, submit_fields
from quire.web.deps import DbDep, QuireDep, quire_of
from quire.web.limits import submission_rate_limit
from quire.web.links import (
    BatchAccepted,
    BatchList,
    BatchOut,
    WebhookList,
    batch_accepted,
    batch_list,
    batch_out,
    batch_url,
    job_page_url,
)
from quire.web.polling import Poll, next_poll
from quire.web.presenters import page_basics
from quire.web.problems import problem
from quire.web.uploads import read_batch_form
from quire.webhooks import deliveries

log = structlog.stdlib.get_logger(__name__)
BatchId = Annotated[str, Parameter(max_length=64)]
Since = Annotated[int | None, QueryParameter(name="since", required=False, ge=0)]
AuthedRequest = Request[Principal, Any, Any]
HTMX_STOP_POLLING = 286
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# The page shows the items that need a person first, and at most this many rows.
PAGE_ROWS = 200
# Room for a batch request's text fields beside its files.
FORM_FIELDS = 16


def _require(db: Database, batch_id: str, viewer: Principal) -> Batch:
    batch = batches.owned_batch(db, batch_id, viewer.user_id, viewer.is_admin)
    if batch is None:
        raise problem(404, "not_found", "No such batch.")
    return batch


async def _refuse_early(request: AuthedRequest) -> None:
    """Before the body is read: refuse at once when the person is past a per-minute upload limit
    or their storage quota is full (each file is checked again as it is stored)."""
    if request.content_type[0].startswith("multipart/"):
        quire = quire_of(request)
        await to_thread.run_sync(answer_errors, service.refuse_early, quire.settings, quire.db, request.user.user_id, 0)


def form_parts(form: Any) -> list[Part]:
    """The files of a form Litestar parsed (the upload page without JavaScript)."""
    # A form's file is a SpooledTemporaryFile: binary, readable and seekable, as a BinaryIO is.
    return [
        Part(file.filename, cast(BinaryIO, file.file))
        for file in form.getall("file", [])
        if isinstance(file, UploadFile) and file.filename
    ]


def _nothing_accepted(exc: batches.NothingAccepted) -> Exception:
    """Every file was refused: the shared reason when they all hit a per-minute limit, else 422 with each reason."""
    limited = [r for r in exc.rejected if r.status == 429]
    if limited and len(limited) == len(exc.rejected):
        headers = {"Retry-After": str(limited[0].retry_after_s)} if limited[0].retry_after_s else None
        return problem(429, "rate_limited", limited[0].reason, headers=headers)
    failure = problem(422, "nothing_accepted", "No document in this request could be accepted.")
    failure.extra = {
        "code": "nothing_accepted",
        "rejected": [{"filename": r.filename, "reason": r.reason} for r in exc.rejected],
    }
    return failure


def admit_batch(
    quire: Quire,
    user: Principal,
    form: Mapping[str, Any],
    parts: list[Part],
    idempotency_key: str | None,
) -> batches.BatchSubmitted:
    """Submit a form's files as a batch: the API's and the upload page's one way (run in a thread)."""
    fields = submit_fields(quire.settings, form)
    if not parts:
        raise problem(422, "invalid_request", "Attach the documents (or ZIP archives) as multipart fields 'file'.")
    admit(quire.admission)
    try:
        return answer_errors(
            batches.submit_batch,
            quire.settings,
            quire.storage,
            quire.db,
            quire.dispatcher,
            quire.batches,
            fields.workflow,
            parts,
            user.user_id,
            idempotency_key=idempotency_key,
            # Kept with the batch for its completion call; its jobs take the account's default URL.
            callback_url=fields.callback_url,
            limits=fields.limits,
            language=fields.language,
        )
    except batches.NothingAccepted as exc:
        raise _nothing_accepted(exc) from exc


def _view(batch: Batch, quire: Quire) -> BatchOut:
    return batch_out(batches.batch_view(quire.db, batch, quire.results, store.iso))


def page_context(batch: Batch, quire: Quire, since: int | None, poll: Poll | None = None) -> dict[str, Any]:
    """The batch page's and card's context; `poll` replaces the polling schedule (a streamed card,
    page_streams.py, has none)."""
    view = _view(batch, quire)
    ordered = sorted(
        view.items,
        key=lambda item: (
            not (item.status == "dead_letter" or (item.status == "completed" and item.needs_review)),
            item.status in TERMINAL,
        ),
    )
    return {
        **page_basics(quire.settings),
        "batch": view,
        "rows": ordered[:PAGE_ROWS],
        "poll": poll or next_poll(quire.settings, since, view.status == "completed"),
    }


# One address, a JSON body or a page by the Accept header: caches must tell them apart.
_BY_ACCEPT = {"Vary": "Accept"}
# How many batches the list shows, newest first.
BATCH_LIST_LIMIT = 50


def _wants_page(request: AuthedRequest) -> bool:
    """A browser navigating here (HTML preferred to JSON by its Accept header), not htmx fetching a fragment."""
    best = request.accept.best_match([MediaType.JSON, MediaType.HTML], default=MediaType.JSON)
    return best == MediaType.HTML and not request.headers.get("hx-request")


async def _list_page_if_html(request: AuthedRequest) -> Template | None:
    """A browser asking for HTML gets the page of its batches at the address of their JSON list."""
    if not _wants_page(request):
        return None
    quire = quire_of(request)
    found = await to_thread.run_sync(batches.owner_batches, quire.db, request.user.user_id, BATCH_LIST_LIMIT)
    context = {**page_basics(quire.settings), "batches": found, "limit": BATCH_LIST_LIMIT}
    return Template("pages/batches.html", context=context, media_type=MediaType.HTML, headers=_BY_ACCEPT)


async def _page_if_html(request: AuthedRequest) -> Template | None:
    """A browser asking for HTML gets the page at the same address as the JSON view.

    A before-request hook gets no dependencies, so it finds the process's `Quire` in the app state.
    """
    if not _wants_page(request):
        return None
    quire = quire_of(request)
    batch_id = request.path_params["batch_id"]
    batch = await to_thread.run_sync(
        batches.owned_batch, quire.db, batch_id, request.user.user_id, request.user.is_admin
    )
    if batch is None:
        raise NotFoundException("No such batch.")
    context = await to_thread.run_sync(page_context, batch, quire, None)
    # Named: the template would otherwise take the JSON handler's media type.
    return Template("pages/batch.html", context=context, media_type=MediaType.HTML, headers=_BY_ACCEPT)


def _spreadsheet(rows: list[InvoiceRow], name: str, request: AuthedRequest) -> Response[bytes]:
    """The rows as the file the path names (export.csv or export.xlsx), each linking to its job's page."""
    kind = request.url.path.rsplit(".", 1)[-1]
    base = str(request.base_url).rstrip("/")

    def link(job_id: str) -> str:
        return base + job_page_url(job_id)

    if kind == "csv":
        body, media_type = export.to_csv(rows, link), "text/csv; charset=utf-8"
    else:
        body, media_type = export.to_xlsx(rows, link), XLSX
    return Response(
        body,
        media_type=media_type,
        headers={"Content-Disposition": f'attachment; filename="{name}.{kind}"', "Cache-Control": "no-store"},
    )


class BatchesController(Controller):
    path = "/batches"
    tags = ["batches"]

    @post(
        "/",
        status_code=202,
        summary="Submit many documents (or ZIP archives of them) as one batch",
        middleware=[submission_rate_limit().middleware],
        before_request=_refuse_early,
    )
    async def create_batch(
        self, request: AuthedRequest, idempotency_key: IdempotencyKey, quire: QuireDep
    ) -> Response[BatchAccepted]:
        if not request.content_type[0].startswith("multipart/"):
            raise problem(415, "unsupported_media_type", "Send the documents as multipart/form-data.")
        await to_thread.run_sync(admit, quire.admission)  # refuse before reading what may be a large body
        form = await read_batch_form(
            quire.settings,
            request,
            max_parts=quire.settings.batch_max_files + FORM_FIELDS,
            max_bytes=quire.settings.batch_max_bytes,
        )
        try:
            submitted = await to_thread.run_sync(
                admit_batch, quire, request.user, form.fields, form.parts, idempotency_key
            )
        finally:
            form.close()
        body = batch_accepted(submitted)
        log.info("batch accepted", batch_id=body.batch_id, jobs=len(body.jobs), rejected=len(body.rejected))
        return Response(body, status_code=202, headers={"Location": body.status_url})

    # Beside the POST: two controllers on one path would each declare its OPTIONS.
    @get(
        "/",
        sync_to_thread=True,
        summary="Your latest batches",
        before_request=_list_page_if_html,
        response_headers=_BY_ACCEPT,
    )
    def list_batches(self, db: DbDep, request: AuthedRequest) -> BatchList:
        """The caller's latest 50 batches, newest first, each counted from its jobs; a browser asking for
        HTML gets the page that lists them, so a batch can be found again once its page is closed."""
        return batch_list(batches.owner_batches(db, request.user.user_id, BATCH_LIST_LIMIT))

    @get("/{batch_id:str}/webhooks", sync_to_thread=True, summary="A batch's webhook deliveries (batch.completed)")
    def batch_webhooks(self, db: DbDep, request: AuthedRequest, batch_id: BatchId) -> WebhookList:
        _require(db, batch_id, request.user)
        return WebhookList(items=deliveries.deliveries_of(db, batch_id))

    @get(
        "/{batch_id:str}",
        sync_to_thread=True,
        summary="A batch's progress and items",
        before_request=_page_if_html,
        response_headers=_BY_ACCEPT,
    )
    def get_batch(self, request: AuthedRequest, batch_id: BatchId, quire: QuireDep) -> BatchOut:
        return _view(_require(quire.db, batch_id, request.user), quire)

    @post("/{batch_id:str}/retry", status_code=200, sync_to_thread=True, summary="Replay the batch's failed jobs")
    def retry_batch(self, request: AuthedRequest, batch_id: BatchId, quire: QuireDep) -> BatchOut:
        batch = _require(quire.db, batch_id, request.user)
        batches.retry_failed(quire.settings, quire.db, quire.dispatcher, batch.id)
        return _view(batch, quire)

    @post("/{batch_id:str}/cancel", status_code=200, sync_to_thread=True, summary="Cancel the batch's unfinished jobs")
    def cancel_batch(self, request: AuthedRequest, batch_id: BatchId, quire: QuireDep) -> BatchOut:
        batch = _require(quire.db, batch_id, request.user)
        batches.cancel_rest(quire.settings, quire.db, quire.dispatcher, batch.id)
        return _view(batch, quire)

    @get(["/{batch_id:str}/export.csv", "/{batch_id:str}/export.xlsx"], summary="The batch as a spreadsheet")
    async def export_batch(self, request: AuthedRequest, batch_id: BatchId, quire: QuireDep) -> Response[bytes]:
        # async, with the work in a thread: Litestar 2.25 returns an unawaited coroutine for a
        # sync_to_thread handler registered on several paths.
        def rows() -> list[InvoiceRow]:
            return batches.rows_of(quire.db, _require(quire.db, batch_id, request.user).id, quire.results)

        return _spreadsheet(await to_thread.run_sync(rows), f"batch-{batch_id}", request)


class JobExportController(Controller):
    path = "/ai-jobs"
    tags = ["jobs"]

    @get(["/export.csv", "/export.xlsx"], summary="Your jobs as a spreadsheet")
    async def export_jobs(
        self,
        request: AuthedRequest,
        quire: QuireDep,
        status: Annotated[str | None, Parameter(required=False, max_length=32)] = None,
        since: Annotated[str | None, QueryParameter(name="from", required=False, max_length=40)] = None,
        until: Annotated[str | None, QueryParameter(name="to", required=False, max_length=40)] = None,
    ) -> Response[bytes]:
        """Jobs created from `from` (inclusive) to `to` (exclusive), ISO 8601 dates or times, newest first.

        Empty values mean "any", as the page's form sends them.
        """
        if status and status not in set(JobStatus):
            raise problem(400, "invalid_request", f"Unknown status {status[:32]!r}.")
        start, end = _moment(since), _moment(until)
        wanted = JobStatus(status) if status else None

        def rows() -> list[InvoiceRow]:
            return export.owner_rows(
                quire.db, request.user.user_id, quire.results, status=wanted, since=start, until=end
            )

        return _spreadsheet(await to_thread.run_sync(rows), "jobs", request)


def _moment(text: str | None) -> datetime | None:
    """An ISO 8601 date or time (UTC unless it says otherwise), or None for nothing; 400 for anything else."""
    if not text:
        return None
    try:
        return moment(text)
    except ValueError as exc:
        raise problem(400, "invalid_request", f"{text[:40]!r} is not an ISO 8601 date or time.") from exc


class BatchPagesController(Controller):
    path = "/batches"
    include_in_schema = False

    @get("/{batch_id:str}/card", sync_to_thread=True)
    def card(self, request: HTMXRequest, batch_id: FromPath[str], since: Since, quire: QuireDep) -> Template:
        return _card(require_page(quire.db, batch_id, request.user), quire, since)

    @post("/{batch_id:str}/retry-failed", sync_to_thread=True, status_code=200)
    def retry_failed(self, request: HTMXRequest, batch_id: FromPath[str], quire: QuireDep) -> Template | Redirect:
        batch = require_page(quire.db, batch_id, request.user)
        batches.retry_failed(quire.settings, quire.db, quire.dispatcher, batch.id)
        return _card(batch, quire, None) if request.htmx else Redirect(batch_url(batch.id), status_code=303)

    @post("/{batch_id:str}/cancel-rest", sync_to_thread=True, status_code=200)
    def cancel_rest(self, request: HTMXRequest, batch_id: FromPath[str], quire: QuireDep) -> Template | Redirect:
        batch = require_page(quire.db, batch_id, request.user)
        batches.cancel_rest(quire.settings, quire.db, quire.dispatcher, batch.id)
        return _card(batch, quire, None) if request.htmx else Redirect(batch_url(batch.id), status_code=303)


def require_page(db: Database, batch_id: str, viewer: Principal) -> Batch:
    batch = batches.owned_batch(db, batch_id, viewer.user_id, viewer.is_admin)
    if batch is None:
        raise NotFoundException("No such batch.")
    return batch


def _card(batch: Batch, quire: Quire, since: int | None) -> Template:
    context = page_context(batch, quire, since)
    status = 200 if context["poll"].active else HTMX_STOP_POLLING
    return Template("partials/batch_card.html", context=context, status_code=status)
