"""Live updates, the listening side: one Redis subscription per web process, fanned out to its watchers.

A watcher is an open stream or a request waiting under `Prefer: wait`. It registers for one job or
for everything of one owner *before* it reads its snapshot, so no change between the two is missed,
and is woken (never handed data) when a change of its job commits: it then reads the database,
which is the truth. Waking is cheap and may be spurious; the streams send only what changed.

Bounded cost: at most `QUIRE_LIVE_MAX_WATCHERS` watchers per process (a new one beyond that is
refused, and the page polls); a watcher is an asyncio event, no thread.

The line: when a job leaves the queue every queued job behind it moves. At most once a second after
such a change the hub reads the places of every queued job its watchers show, all in one read
(`places_in_line`, in a thread of its own), keeps them in `line`, and wakes only the watchers whose
job's place or estimate changed; they take the new place from `line` onto the view they last sent,
without a read of their own. A change of a job itself never waits for that: it is read at once.

When the subscription breaks (Redis down or restarted), every watcher is told it is `lost` and
its stream ends cleanly; new watchers are refused until the subscription is back, so pages fall
back to polling and waiting requests answer at once. A reconnecting client gets a fresh snapshot,
so nothing is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Awaitable, Callable
from types import FrameType, TracebackType
from typing import Any, TypeVar

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from quire.db import Database
from quire.jobs.line import QueuePlace, places_in_line
from quire.jobs.models import JobStatus
from quire.queue.live import CHANNEL, Change
from quire.settings import Settings
from quire.web.links import JobOut

log = logging.getLogger(__name__)
T = TypeVar("T")

# A job that leaves the queue moves every queued job behind it; their places are read together.
LINE_WAKE_INTERVAL_S = 1.0
# How many watchers of moved jobs are woken at a time, and the share of the interval the slices
# are spread over.
LINE_WAKE_SLICE = 50
LINE_WAKE_SPREAD = 0.5
RECONNECT_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 5.0)
# The subscription waits in a read that nothing may answer for hours. A connection dropped silently
# (a NAT or load balancer forgetting it) is found by TCP keepalive: probes after 30 s of quiet,
# every 10 s, three unanswered ones and the read fails, streams end and pages poll. (The system's
# default would wait two hours.)
KEEPALIVE = {
    option: value
    for name, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3))
    if (option := getattr(socket, name, None)) is not None
}


class LiveUnavailable(Exception):
    """No watcher can be registered now: Redis is not subscribed, the process is at its limit, or
    the server is stopping."""


class Watch:
    """One watcher: woken when its job (or any job of its owner) changes."""

    def __init__(self, hub: LiveHub, job_id: str | None, owner_id: str | None) -> None:
        self.hub = hub
        self.job_id = job_id
        self.owner_id = owner_id
        # Set by the stream: the queued jobs it shows, whose places it cares about.
        self.line_jobs: frozenset[str] = frozenset()
        self.lost = False
        self._changed: set[str] = set()
        self._line_moved = False
        self._woken = asyncio.Event()

    def wake(self, job_id: str) -> None:
        self._changed.add(job_id)
        self._woken.set()

    @property
    def in_line(self) -> bool:
        return bool(self.line_jobs)

    def line_moved(self) -> None:
        self._line_moved = True
        self._woken.set()

    def take(self) -> tuple[set[str], bool]:
        """The jobs changed since the last take, and whether the line moved meanwhile."""
        changed, line_moved = self._changed, self._line_moved
        self._changed, self._line_moved = set(), False
        return changed, line_moved

    def lose(self) -> None:
        self.lost = True
        self._woken.set()

    async def changed(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a change; True when woken (a change, or `lost`)."""
        try:
            # In this task (asyncio.wait_for would make a task of its own for each wait).
            async with asyncio.timeout(timeout):
                await self._woken.wait()
        except TimeoutError:
            return False
        self._woken.clear()
        return True

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.hub.remove(self)


class LiveHub:
    """The web process's subscription to job changes and the watchers it wakes; one per process."""

    def __init__(
        self,
        redis_url: str,
        max_watchers: int,
        read_line: Callable[[frozenset[str]], dict[str, QueuePlace]],
    ) -> None:
        self.redis_url = redis_url
        self.max_watchers = max_watchers
        self._read_line = read_line  # `read_places` on the app's database
        self.subscribed = False
        self.stopping = False
        self._watches: set[Watch] = set()
        self._by_job: dict[str, set[Watch]] = {}
        self._by_owner: dict[str, set[Watch]] = {}
        # How often each watched job changed: what a shared read is keyed by.
        self._versions: dict[str, int] = {}
        self._reads: dict[str, tuple[int, asyncio.Future[Any]]] = {}
        self._task: asyncio.Task[None] | None = None
        # The places of the queued jobs watched here, as the last read of the line found them.
        self.line: dict[str, QueuePlace] = {}
        # Each job's view with its new place, and the texts it was rendered to, once per read of
        # the line, whatever number of streams here show it.
        self._moved: dict[str, tuple[str | None, JobOut]] = {}
        self._moved_texts: dict[tuple[str, Callable[[JobOut], str]], str] = {}
        self._line_wake: asyncio.TimerHandle | None = None
        self._line_read: asyncio.Task[None] | None = None
        self._line_again = False
        self._ready = asyncio.Event()

    @property
    def watchers(self) -> int:
        return len(self._watches)

    def watch(self, *, job_id: str | None = None, owner_id: str | None = None) -> Watch:
        """Register a watcher of one job, or of every job of one owner; LiveUnavailable if none can be."""
        if not self.subscribed or self.stopping:
            raise LiveUnavailable("live updates are not available right now")
        if len(self._watches) >= self.max_watchers:
            raise LiveUnavailable("this server holds as many live updates as it may")
        watch = Watch(self, job_id, owner_id)
        self._watches.add(watch)
        if job_id is not None:
            self._by_job.setdefault(job_id, set()).add(watch)
        else:
            self._by_owner.setdefault(owner_id or "", set()).add(watch)
        return watch

    def remove(self, watch: Watch) -> None:
        self._watches.discard(watch)
        for index, key in ((self._by_job, watch.job_id), (self._by_owner, watch.owner_id or "")):
            if key is not None and (found := index.get(key)) is not None:
                found.discard(watch)
                if not found:
                    del index[key]
        if watch.job_id is not None and watch.job_id not in self._by_job:
            self._versions.pop(watch.job_id, None)
            self._reads.pop(watch.job_id, None)

    async def shared(self, job_id: str, read: Callable[[], Awaitable[T]]) -> T:
        """`read()` once per change of the job, however many watchers of this process ask: a change
        watched by a thousand streams costs one database read, not a thousand."""
        version = self._versions.get(job_id, 0)
        found = self._reads.get(job_id)
        # A read that failed is not shared on: the next watcher to ask reads again.
        if found is None or found[0] != version or _failed(found[1]):
            found = (version, asyncio.ensure_future(read()))
            self._reads[job_id] = found
        result: T = await asyncio.shield(found[1])
        return result

    def deliver(self, change: Change) -> None:
        """Wake the watchers a committed change concerns."""
        if change.job_id in self._by_job:
            self._versions[change.job_id] = self._versions.get(change.job_id, 0) + 1
        for watch in self._by_job.get(change.job_id, ()):
            watch.wake(change.job_id)
        for watch in self._by_owner.get(change.owner_id or "", ()):
            watch.wake(change.job_id)
        leaves_line = change.status is not None and change.status != JobStatus.QUEUED
        if leaves_line and self._line_wake is None:
            self._line_wake = asyncio.get_running_loop().call_later(LINE_WAKE_INTERVAL_S, self._wake_line)

    def _wake_line(self) -> None:
        self._line_wake = None
        if self._line_read is not None and not self._line_read.done():
            self._line_again = True  # read again once this read is in: the line moved meanwhile
            return
        self._line_read = asyncio.create_task(self._refresh_line(), name="live-line")

    async def _refresh_line(self) -> None:
        """Read the places of every watched queued job at once; wake the watchers whose jobs moved."""
        wanted = frozenset(job_id for watch in self._watches for job_id in watch.line_jobs)
        if wanted:
            try:
                # A thread of the loop's own, apart from the one requests and streams read in.
                places = await asyncio.to_thread(self._read_line, wanted)
            except Exception:
                log.exception("live updates: could not read the line; queued jobs show their last place")
            else:
                before, self.line = self.line, places
                self._moved, self._moved_texts = {}, {}
                moved = [
                    watch
                    for watch in self._watches
                    if any(before.get(job_id) != places.get(job_id) for job_id in watch.line_jobs)
                ]
                # In slices spread over part of the interval, not in one burst: a change of a job
                # itself (read from Redis meanwhile) waits for one slice at most, here and in the
                # network and clients, not for every stream of the line.
                slices = range(0, len(moved), LINE_WAKE_SLICE)
                pause = LINE_WAKE_SPREAD * LINE_WAKE_INTERVAL_S / len(slices) if len(slices) > 1 else 0.0
                for start in slices:
                    for watch in moved[start : start + LINE_WAKE_SLICE]:
                        watch.line_moved()
                    await asyncio.sleep(pause)
        if self._line_again:
            self._line_again = False
            if self._line_wake is None:
                self._line_wake = asyncio.get_running_loop().call_later(LINE_WAKE_INTERVAL_S, self._wake_line)

    def moved_view(self, last: JobOut) -> JobOut | None:
        """`last` (a queued job's view a stream sent) with the job's place from the last read of the
        line; None when that place is what `last` shows. One view per job and read of the line."""
        job_id = last.job_id
        place = self.line.get(job_id)
        if place is None or place == last.queue:
            return None
        found = self._moved.get(job_id)
        if found is not None and found[0] == last.updated_at:
            return found[1]
        view = msgspec.structs.replace(last, queue=place)
        self._moved[job_id] = (last.updated_at, view)
        return view

    def rendered(self, view: JobOut, render: Callable[[JobOut], str]) -> str:
        """`render(view)`, once per view of `moved_view` and renderer: the JSON streams of a job
        send one text."""
        found = self._moved.get(view.job_id)
        if found is None or found[1] is not view:
            return render(view)
        key = (view.job_id, render)
        text = self._moved_texts.get(key)
        if text is None:
            text = self._moved_texts[key] = render(view)
        return text

    def _lose_all(self) -> None:
        for watch in list(self._watches):
            watch.lose()

    # The subscription

    async def start(self) -> None:
        """Subscribe (in a task that reconnects), waiting briefly for the first subscription."""
        self._task = asyncio.create_task(self._listen(), name="live-updates")
        self._end_streams_on_stop_signal()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), 2.0)

    async def stop(self) -> None:
        self.stopping = True
        self._lose_all()
        if self._line_wake is not None:
            self._line_wake.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _listen(self) -> None:
        failures = 0
        while not self.stopping:
            client = aioredis.Redis.from_url(
                self.redis_url, socket_connect_timeout=2, socket_keepalive=True, socket_keepalive_options=KEEPALIVE
            )
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(CHANNEL)
                    self.subscribed = True
                    self._ready.set()
                    if failures:
                        log.info("live updates: subscribed to Redis again")
                    failures = 0
                    async for message in pubsub.listen():
                        change = Change.decode(message["data"]) if message["type"] == "message" else None
                        if change is not None:
                            self.deliver(change)
            except (RedisError, OSError) as exc:
                if failures == 0:
                    log.warning("live updates: the Redis subscription broke (%s); streams end, pages poll", exc)
            finally:
                self.subscribed = False
                self._lose_all()
                await client.connection_pool.disconnect()
            self._ready.set()  # start() waits no longer once the first try is over
            await asyncio.sleep(RECONNECT_DELAYS_S[min(failures, len(RECONNECT_DELAYS_S) - 1)])
            failures += 1

    def _end_streams_on_stop_signal(self) -> None:
        """End every stream as soon as the server is told to stop.

        uvicorn's graceful shutdown waits for open responses to finish before it tells the app
        (lifespan shutdown), and a stream never finishes by itself; so the hub also hears SIGTERM
        and SIGINT, chained in front of the server's own handlers (which still run).
        """
        loop = asyncio.get_running_loop()

        def chain(signum: int, previous: Any) -> None:
            def handler(received: int, frame: FrameType | None) -> None:
                # Only schedule: a signal handler must not take locks the interrupted code may hold.
                loop.call_soon_threadsafe(self._stop_watching)
                if callable(previous):
                    previous(received, frame)

            signal.signal(signum, handler)

        with contextlib.suppress(ValueError):  # not the main thread (an app run in a test client)
            for signum in (signal.SIGTERM, signal.SIGINT):
                chain(signum, signal.getsignal(signum))

    def _stop_watching(self) -> None:
        self.stopping = True
        self._lose_all()


def read_places(settings: Settings, db: Database, job_ids: frozenset[str]) -> dict[str, QueuePlace]:
    """The places in line of those of `job_ids` still queued (one read of the whole line)."""
    with db.session() as session:
        return places_in_line(settings, session, job_ids)


def _failed(future: asyncio.Future[Any]) -> bool:
    return future.done() and (future.cancelled() or future.exception() is not None)
