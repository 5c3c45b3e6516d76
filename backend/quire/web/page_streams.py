"""The streams the pages follow (frontend live.js): the job card, the jobs list and the batch card
as HTML fragments.

The same streams as the JSON API's (web/streams.py), rendered with the pages' templates and without
polling attributes, so a card that streams never reaches the polling schedule's two-minute stop;
live.js falls back to polling when a stream fails.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from anyio import to_thread
from litestar import Controller, get
from litestar.params import FromPath
from litestar.response import ServerSentEvent, ServerSentEventMessage

from quire.bootstrap import Quire
from quire.db import Database
from quire.documents.storage import Storage
from quire.jobs import batches as batch_records
from quire.jobs.results import ResultCache, open_reviews
from quire.settings import Settings
from quire.web import batches, pages
from quire.web.deps import LiveDep, QuireDep
from quire.web.links import JobOut
from quire.web.pages import Cursor, PageRequest, StatusFilter
from quire.web.presenters import STATUS_LABELS
from quire.web.streams import Feed, JobId, ThreadedFeed, job_stream_of, open_watch, read_view, start_stream


class TableFeed(ThreadedFeed):
    """The jobs list page: the whole table first, then the row of each shown job that changes, or the
    whole table again when a job it does not show changes (a new one, say) or a shown one is deleted.
    A whole table is made at most once every `MIN_INTERVAL_S` and never more often than twice the time
    the last one took (a batch of thousands running changes jobs not shown many times a second), and
    sent only when it differs from the last; the rows of jobs not shown are never read one by one."""

    MIN_INTERVAL_S = 1.0

    def __init__(
        self,
        settings: Settings,
        db: Database,
        request: PageRequest,
        status: str | None,
        cursor: str | None,
        results: ResultCache,
    ) -> None:
        super().__init__(
            settings, db, lambda view: pages.render(request, "partials/job_row.html", _row_context(db, view, results))
        )
        self.request = request
        self.results = results
        self.status = status
        self.cursor = cursor
        self._shown: set[str] = set()
        self._last_table = ""
        self._table_at = 0.0  # time.monotonic() when the last whole table was started
        self._took = 0.0  # how long it took to make
        self._gone = False  # a shown job was deleted: the table must be made again

    def snapshot(self) -> list[ServerSentEventMessage]:
        self._table_at = time.monotonic()
        context = {
            **pages.list_context(
                self.settings, self.db, self.request.user, self.status, self.cursor, None, 20, self.results
            ),
            "poll": pages.streaming(),
        }
        self._shown = {item.job_id for item in context["items"]}
        table = pages.render(self.request, "partials/jobs_table.html", context)
        self._took = time.monotonic() - self._table_at
        if table == self._last_table:
            return []
        self._last_table = table
        return [ServerSentEventMessage(data=table, event="table")]

    async def follow(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        if job_ids <= self._shown:
            events = await super().follow(job_ids, line_moved)
            if not self._gone:
                return events
        if (wait := self._table_at + max(self.MIN_INTERVAL_S, 2 * self._took) - time.monotonic()) > 0:
            await asyncio.sleep(wait)
        self._gone = False
        return await to_thread.run_sync(self.snapshot)

    def changes(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        views = {job_id: read_view(self.settings, self.db, job_id, self.request.user) for job_id in sorted(job_ids)}
        if any(view is None for view in views.values()):
            self._gone = True
            return []
        return [event for view in views.values() if view is not None and (event := self.job_event(view)) is not None]


class BatchCardFeed(Feed):
    """A batch's page: its card (counts, progress, the items) first, then again after a change of
    any of its jobs, at most once every `MIN_INTERVAL_S` however fast they finish, and never more
    often than twice the time the last card took to make (a large batch's card costs a read of all
    its items), changes that come meanwhile read together; `end` once every job of it is finished."""

    MIN_INTERVAL_S = 1.0

    def __init__(self, request: PageRequest, batch_id: str, quire: Quire) -> None:
        super().__init__(quire.settings, quire.db, lambda view: "")
        self.request = request
        self.batch_id = batch_id
        self.quire = quire
        self._job_ids: set[str] = set()
        self._last_card = ""
        self._sent_at = 0.0
        self._took = 0.0  # how long the last card took to make

    def snapshot(self) -> list[ServerSentEventMessage]:
        return self._card()

    async def follow(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        if not job_ids & self._job_ids:
            return []
        loop = asyncio.get_running_loop()
        if (wait := self._sent_at + max(self.MIN_INTERVAL_S, 2 * self._took) - loop.time()) > 0:
            await asyncio.sleep(wait)
        self._sent_at = loop.time()
        events = await to_thread.run_sync(self._card)
        self._took = loop.time() - self._sent_at
        return events

    def _card(self) -> list[ServerSentEventMessage]:
        batch = batch_records.get_batch(self.quire.db, self.batch_id)
        if batch is None:  # deleted meanwhile: the page keeps what it shows
            self.ended = True
            return [ServerSentEventMessage(data='{"reason": "deleted"}', event="end")]
        context = batches.page_context(batch, self.quire, None, pages.streaming())
        self._job_ids = {item.job_id for item in context["batch"].items}
        card = pages.render(self.request, "partials/batch_card.html", context)
        events = [] if card == self._last_card else [ServerSentEventMessage(data=card, event="batch")]
        self._last_card = card
        if context["batch"].status == "completed":
            self.ended = True
            events.append(ServerSentEventMessage(data='{"reason": "finished"}', event="end"))
        return events


def _row_context(db: Database, view: JobOut, results: ResultCache) -> dict[str, Any]:
    with db.session() as session:
        reviews = open_reviews(session, [view.job_id], results) if view.status == "completed" else {}
    return {"item": view, "status_labels": STATUS_LABELS, "reviews": reviews}


def _card(settings: Settings, storage: Storage, db: Database, request: PageRequest, view: JobOut) -> str:
    return pages.render(
        request, "partials/job_card.html", pages.job_context(settings, storage, db, view, None, pages.streaming())
    )


def _deleted_card(request: PageRequest, job_id: str) -> str:
    return pages.render(request, "partials/job_deleted.html", {"job_id": job_id})


class PageStreamsController(Controller):
    """The streams the pages follow (live.js): HTML fragments, with the JSON API's rules."""

    path = ""
    include_in_schema = False

    @get("/jobs/stream")
    async def jobs_table_stream(
        self, request: PageRequest, status: StatusFilter, cursor: Cursor, live: LiveDep, quire: QuireDep
    ) -> ServerSentEvent:
        feed = TableFeed(quire.settings, quire.db, request, status, cursor, quire.results)
        return await start_stream(quire.settings, open_watch(live, owner_id=request.user.user_id), feed)

    @get("/batches/{batch_id:str}/stream")
    async def batch_card_stream(
        self, request: PageRequest, batch_id: FromPath[str], quire: QuireDep, live: LiveDep
    ) -> ServerSentEvent:
        batch = await to_thread.run_sync(batches.require_page, quire.db, batch_id, request.user)
        watch = open_watch(live, owner_id=batch.owner_id)
        return await start_stream(quire.settings, watch, BatchCardFeed(request, batch.id, quire))

    @get("/jobs/{job_id:str}/stream")
    async def job_card_stream(
        self, request: PageRequest, job_id: JobId, quire: QuireDep, live: LiveDep
    ) -> ServerSentEvent:
        return await job_stream_of(
            quire.settings,
            quire.db,
            live,
            job_id,
            request.user,
            quire.recent_views,
            lambda view: _card(quire.settings, quire.storage, quire.db, request, view),
            offload=True,
            render_gone=lambda gone: _deleted_card(request, gone),
        )
