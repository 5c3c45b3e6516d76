"""Live updates over HTTP: server-sent event streams and `Prefer: wait`, both woken by web/live.py.

A stream registers its watcher, then reads its snapshot (so nothing between the two is missed),
then sends an event each time a change it watches reads differently from what it last sent. The
JSON streams (`/ai-jobs/{id}/stream`, `/ai-jobs/stream`) carry job views; the page streams
(web/page_streams.py) carry HTML fragments. Every read goes to the database, which is the truth.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Annotated, Any

from anyio import to_thread
from litestar import Controller, Request, get
from litestar.params import Parameter
from litestar.response import ServerSentEvent, ServerSentEventMessage
from litestar.serialization import encode_json

from quire.accounts.service import Principal
from quire.db import Database
from quire.jobs import store
from quire.jobs.states import TERMINAL
from quire.settings import Settings
from quire.web.deps import DbDep, LiveDep, QuireDep, SettingsDep
from quire.web.links import JobOut, with_links
from quire.web.live import LiveHub, LiveUnavailable, Watch
from quire.web.problems import problem

JobId = Annotated[str, Parameter(max_length=64)]
KEEP_ALIVE = ServerSentEventMessage(data=None, comment="keep-alive")
# The streams' own headers: never cached or buffered by a proxy on the way.
STREAM_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
# Most unfinished jobs a list stream starts with.
SNAPSHOT_LIMIT = 200
MAX_WAIT_S = 60


class Feed(ABC):
    """What one stream sends: its first events, and the events for the jobs that changed."""

    def __init__(
        self, settings: Settings, db: Database, render: Callable[[JobOut], str], hub: LiveHub | None = None
    ) -> None:
        self.settings = settings
        self.db = db
        self.render = render
        self.hub = hub  # shares the views and texts of moves in line between the streams it serves
        self.ended = False
        self._sent: dict[str, str] = {}
        # The last view of each queued job shown: a move in line changes only its `queue`.
        self._queued: dict[str, JobOut] = {}

    @abstractmethod
    def snapshot(self) -> list[ServerSentEventMessage]:
        """The stream's first events."""

    @abstractmethod
    async def follow(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        """The events for the jobs that changed."""

    def job_event(self, view: JobOut) -> ServerSentEventMessage | None:
        """The view's event, or None when it reads as the one last sent for that job."""
        data = self.hub.rendered(view, self.render) if self.hub is not None else self.render(view)
        if self._sent.get(view.job_id) == data:
            return None
        if view.status in TERMINAL:
            self._sent.pop(view.job_id, None)  # a finished job changes again only by a replay
        else:
            self._sent[view.job_id] = data
        return ServerSentEventMessage(data=data, event="job")

    def keep_place(self, view: JobOut) -> None:
        """Remember the view while its job is queued, so a move in line needs no read of it."""
        if view.queue is not None:
            self._queued[view.job_id] = view
        else:
            self._queued.pop(view.job_id, None)

    def moved_in_line(self, hub: LiveHub, job_ids: Iterable[str]) -> list[JobOut]:
        """The views of those of the queued jobs shown that have a new place in the hub's last read
        of the line; a job that left the line is told by its own change."""
        return [view for job_id in job_ids if (last := self._queued.get(job_id)) and (view := hub.moved_view(last))]


class ThreadedFeed(Feed):
    """A feed whose changes are read in a worker thread (they query the database)."""

    @abstractmethod
    def changes(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        """The events for the jobs that changed."""

    async def follow(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        return await to_thread.run_sync(self.changes, job_ids, line_moved)


class JobFeed(Feed):
    """One job: its view at every change, then `end` after a terminal state, or `end` with the
    reason `deleted` once the job is deleted (after the page's "deleted" fragment, `render_gone`).

    After the snapshot (read with the viewer's rights) every stream of the process that follows the
    job shares one read per change (`LiveHub.shared`); `offload` renders in a worker thread (HTML).
    """

    def __init__(
        self,
        settings: Settings,
        db: Database,
        job_id: str,
        watch: Watch,
        viewer: Principal,
        recent: store.RecentViews,
        render: Callable[[JobOut], str],
        offload: bool = False,
        render_gone: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(settings, db, render, watch.hub)
        self.job_id = job_id
        self.watch = watch
        self.viewer = viewer
        self.recent = recent
        self.offload = offload
        self.render_gone = render_gone

    def snapshot(self) -> list[ServerSentEventMessage]:
        view = read_view(self.settings, self.db, self.job_id, self.viewer, self.recent)
        if view is None:  # not there, or not the viewer's: as if it never existed
            raise problem(404, "not_found", "No such job.")
        return self._events(view)

    async def follow(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        view: JobOut | None
        if job_ids:
            # The viewer's right to see the job was checked by the snapshot, and a job keeps its owner.
            view = await self.watch.hub.shared(
                self.job_id,
                lambda: to_thread.run_sync(read_view, self.settings, self.db, self.job_id, None, self.recent),
            )
        else:  # only its place in line moved
            moved = self.moved_in_line(self.watch.hub, [self.job_id])
            if not moved:
                return []
            view = moved[0]
        if self.offload:
            return await to_thread.run_sync(self._events, view)
        return self._events(view)

    def _events(self, view: JobOut | None) -> list[ServerSentEventMessage]:
        if view is None:  # deleted meanwhile
            return self._gone()
        self.keep_place(view)
        self.watch.line_jobs = frozenset(self._queued)
        event = self.job_event(view)
        events = [event] if event is not None else []
        if view.status in TERMINAL:
            self.ended = True
            events.append(_end(view.job_id, view.status, "finished"))
        return events

    def _gone(self) -> list[ServerSentEventMessage]:
        self.ended = True
        events = [_end(self.job_id, None, "deleted")]
        if self.render_gone is not None:
            events.insert(0, ServerSentEventMessage(data=self.render_gone(self.job_id), event="job"))
        return events


class OwnerFeed(ThreadedFeed):
    """Every job of one person: first each unfinished one, then each that changes (new ones too)."""

    def __init__(
        self, settings: Settings, db: Database, viewer: Principal, watch: Watch, render: Callable[[JobOut], str]
    ) -> None:
        super().__init__(settings, db, render, watch.hub)
        self.viewer = viewer
        self.watch = watch

    def snapshot(self) -> list[ServerSentEventMessage]:
        views = [
            with_links(v) for v in store.unfinished_jobs(self.settings, self.db, self.viewer.user_id, SNAPSHOT_LIMIT)
        ]
        return self._events(views)

    def changes(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        views = [
            view
            for job_id in sorted(job_ids)
            if (view := read_view(self.settings, self.db, job_id, self.viewer)) is not None
        ]
        if line_moved:
            views += self.moved_in_line(self.watch.hub, sorted(set(self._queued) - job_ids))
        return self._events(views)

    async def follow(self, job_ids: set[str], line_moved: bool) -> list[ServerSentEventMessage]:
        if not job_ids:  # only places in line moved: nothing to read
            return self.changes(job_ids, line_moved)
        return await super().follow(job_ids, line_moved)

    def _events(self, views: Iterable[JobOut]) -> list[ServerSentEventMessage]:
        events = []
        for view in views:
            self.keep_place(view)
            if (event := self.job_event(view)) is not None:
                events.append(event)
        self.watch.line_jobs = frozenset(self._queued)
        return events


def _end(job_id: str, status: str | None, reason: str) -> ServerSentEventMessage:
    """The last event of a one-job stream: the job finished (its terminal status), or was deleted
    (status null)."""
    data = {"job_id": job_id, "status": status, "reason": reason}
    return ServerSentEventMessage(data=encode_json(data).decode(), event="end")


def read_view(
    settings: Settings, db: Database, job_id: str, viewer: Principal | None, recent: store.RecentViews | None = None
) -> JobOut | None:
    view = store.view_of(settings, db, job_id, viewer, recent)
    return with_links(view) if view is not None else None


def as_json(view: JobOut) -> str:
    return encode_json(view).decode()


def open_watch(live: LiveHub, *, job_id: str | None = None, owner_id: str | None = None) -> Watch:
    """A watcher, or 503 with Retry-After: the client polls instead (the page does so at once)."""
    try:
        return live.watch(job_id=job_id, owner_id=owner_id)
    except LiveUnavailable as exc:
        raise problem(503, "live_updates_unavailable", f"{exc}; poll instead.", headers={"Retry-After": "5"}) from exc


async def start_stream(settings: Settings, watch: Watch, feed: Feed) -> ServerSentEvent:
    """Read the feed's snapshot under its watcher and answer with the stream that follows it."""
    try:
        first = await to_thread.run_sync(feed.snapshot)
    except BaseException:
        watch.hub.remove(watch)
        raise
    return ServerSentEvent(_follow(settings, watch, feed, first), headers=STREAM_HEADERS)


async def _follow(
    settings: Settings, watch: Watch, feed: Feed, first: list[ServerSentEventMessage]
) -> AsyncIterator[Any]:
    loop = asyncio.get_running_loop()
    ends_at = loop.time() + settings.stream_max_s
    with watch:
        for event in first:
            yield event
        # Ends after a terminal state, when Redis is lost or the server stops (the client polls or
        # reconnects), and after the stream's lifetime (the client reconnects for a fresh snapshot).
        while not feed.ended and (left := ends_at - loop.time()) > 0:
            if not await watch.changed(min(settings.stream_keepalive_s, left)):
                yield KEEP_ALIVE
                continue
            if watch.lost:
                return
            job_ids, line_moved = watch.take()
            for event in await feed.follow(job_ids, line_moved):
                yield event


def wait_preference(prefer: str | None) -> int | None:
    """N from `Prefer: wait=N` (RFC 7240), at most 60; None when the header asks no wait."""
    for preference in (prefer or "").split(","):
        name, _, value = preference.split(";")[0].strip().partition("=")
        if name.strip().lower() == "wait" and value.strip().strip('"').isdigit():
            return min(int(value.strip().strip('"')), MAX_WAIT_S)
    return None


async def wait_for_end(
    live: LiveHub, job_id: str, read: Callable[[], JobOut | None], seconds: int
) -> tuple[JobOut | None, bool]:
    """The job's view once it is terminal or `seconds` have passed, and whether the wait was applied
    (not when live updates are unavailable: the view is then read at once)."""
    try:
        watch = live.watch(job_id=job_id)
    except LiveUnavailable:
        return await to_thread.run_sync(read), False
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    with watch:
        view = await to_thread.run_sync(read)
        while view is not None and view.status not in TERMINAL and (left := until - loop.time()) > 0:
            if await watch.changed(left):
                if watch.lost:
                    break
                watch.take()
                view = await to_thread.run_sync(read)
    return view, True


def preference_applied(seconds: int) -> dict[str, str]:
    return {"Preference-Applied": f"wait={seconds}", "Vary": "Prefer"}


AuthedRequest = Request[Principal, Any, Any]


class StreamsController(Controller):
    path = ""
    tags = ["jobs"]

    @get("/ai-jobs/stream", summary="Every change of your jobs, as server-sent events")
    async def jobs_stream(
        self, settings: SettingsDep, db: DbDep, request: AuthedRequest, live: LiveDep
    ) -> ServerSentEvent:
        watch = open_watch(live, owner_id=request.user.user_id)
        return await start_stream(settings, watch, OwnerFeed(settings, db, request.user, watch, as_json))

    @get("/ai-jobs/{job_id:str}/stream", summary="A job's changes, as server-sent events")
    async def job_stream(
        self, request: AuthedRequest, job_id: JobId, quire: QuireDep, live: LiveDep
    ) -> ServerSentEvent:
        return await job_stream_of(quire.settings, quire.db, live, job_id, request.user, quire.recent_views, as_json)


async def job_stream_of(
    settings: Settings,
    db: Database,
    live: LiveHub,
    job_id: str,
    viewer: Principal,
    recent: store.RecentViews,
    render: Callable[[JobOut], str],
    offload: bool = False,
    render_gone: Callable[[str], str] | None = None,
) -> ServerSentEvent:
    """One job's stream, rendered by `render`; 404 for a job the viewer may not see."""
    watch = open_watch(live, job_id=job_id)
    return await start_stream(
        settings, watch, JobFeed(settings, db, job_id, watch, viewer, recent, render, offload, render_gone)
    )
