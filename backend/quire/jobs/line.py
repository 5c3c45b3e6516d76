"""Where a queued job stands in line, and about how long until its result: the view's `queue`.

The line is every queued job, in the order attempts become due: (available_at, created_at, id).
A job's `position` is 1 + the queued jobs before it. Its `eta_s` is the estimated time until it
finishes: the work ahead (what the running attempts have left, plus each queued job before it)
spread over the worker threads alive, then its own run, each job costed at the mean of its
workflow's recent attempt durations. With no live worker, or no recent attempt of a workflow the
estimate needs, there is no basis and `eta_s` is None.

A job's position is never cached: it changes without the job's own row changing. One job's place
is read with a few queries (`place_in_line`); the places of many jobs at once from one read of the
whole line (`places_in_line`), which is how the live streams refresh every queued job they show.
What the estimate rests on (the threads alive, the running attempts, each workflow's recent
durations) is the same for every job and moves slowly, so a web process's polls share one read of
it for up to a second (`RecentBasis`): a thousand browsers watching queued jobs cost about one
read of the basis a second, not one a poll. An attempt that starts or ends in that second shows in
the estimates a second late; positions are exact.
The statements are built once per process (`_statements`) with bound parameters: a polled queued
job reads its place on every poll, and building these joins anew cost more than running them.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cache
from typing import Protocol

from sqlalchemy import String, and_, bindparam, func, tuple_
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import Select, SelectOfScalar
from sqlmodel.sql.sqltypes import UTCDateTime

from quire.jobs.models import EventType, Job, JobEvent, JobStatus, WorkerProcess, utcnow
from quire.settings import Settings
from quire.views import View

# How many recent attempts of a workflow its duration is the mean of.
RECENT_ATTEMPTS = 20


class QueuePlace(View, frozen=True):
    position: int
    eta_s: float | None


class InLine(Protocol):
    """What a queued job's place is read from: a `Job`, or only these columns of its row."""

    @property
    def id(self) -> str: ...
    @property
    def workflow(self) -> str: ...
    @property
    def available_at(self) -> datetime: ...
    @property
    def created_at(self) -> datetime: ...


def place_in_line(settings: Settings, session: Session, job: InLine, basis: RecentBasis | None = None) -> QueuePlace:
    """The queued job's place and estimate (see the module docstring); the estimate rests on
    `basis` when given, else on a read of its own."""
    now = utcnow()
    # Through the connection: an ORM execution of these columns cost twice the query.
    ahead_rows = session.connection().execute(
        _statements().ahead, {"available_at": job.available_at, "created_at": job.created_at, "id": job.id}
    )
    ahead = {workflow: int(count) for workflow, count in ahead_rows}
    position = 1 + sum(ahead.values())
    workflows = {job.workflow, *ahead}
    read = (
        basis.read(settings, session, workflows, now)
        if basis is not None
        else _Basis.read(settings, session, workflows, now)
    )
    return QueuePlace(position=position, eta_s=read.eta_s(job.workflow, job.available_at, ahead))


def places_in_line(settings: Settings, session: Session, job_ids: Collection[str]) -> dict[str, QueuePlace]:
    """The place of each of `job_ids` that is queued, from one read of the whole line: the same
    figures as `place_in_line` for each, for a handful of queries however many jobs are asked."""
    if not job_ids:
        return {}
    now = utcnow()
    line = session.exec(
        select(Job.id, Job.workflow, Job.available_at)
        .where(Job.status == JobStatus.QUEUED)
        .order_by(col(Job.available_at), col(Job.created_at), col(Job.id))
    ).all()
    wanted = set(job_ids)
    basis = _Basis.read(settings, session, {workflow for _, workflow, _ in line}, now)
    ahead: dict[str, int] = defaultdict(int)
    places: dict[str, QueuePlace] = {}
    for position, (job_id, workflow, available_at) in enumerate(line, start=1):
        if job_id in wanted:
            places[job_id] = QueuePlace(position=position, eta_s=basis.eta_s(workflow, available_at, ahead))
        ahead[workflow] += 1
    return places


@dataclass(frozen=True)
class _Basis:
    """What an estimate rests on: the worker threads alive, the running attempts, and the recent
    durations of the workflows involved."""

    now: datetime
    threads: int
    running: list[tuple[str, datetime]]
    durations: dict[str, float]

    @classmethod
    def read(cls, settings: Settings, session: Session, workflows: set[str], now: datetime) -> _Basis:
        running = _running_since(session)
        durations = _recent_durations(session, workflows | {workflow for workflow, _ in running})
        return cls(now, _live_threads(settings, session, now), running, _known(durations))

    def eta_s(self, workflow: str, available_at: datetime, ahead: dict[str, int]) -> float | None:
        """The estimate for a job of `workflow` due at `available_at` with `ahead` queued before it."""
        durations, now = self.durations, self.now
        workflows = {workflow, *(w for w, count in ahead.items() if count), *(w for w, _ in self.running)}
        if self.threads == 0 or any(w not in durations for w in workflows):
            return None
        left = sum(max(0.0, durations[w] - (now - since).total_seconds()) for w, since in self.running)
        queued = sum(count * durations[w] for w, count in ahead.items() if count)
        start_in = max((left + queued) / self.threads, (available_at - now).total_seconds())
        return round(start_in + durations[workflow], 1)


@dataclass(frozen=True)
class _BasisRead:
    at: float  # time.monotonic()
    threads: int
    running: list[tuple[str, datetime]]
    durations: dict[str, float | None]  # None: the workflow has no recent attempt


class RecentBasis:
    """One web process's latest read of the estimates' basis, reused for `max_age_s` (see the
    module docstring). When it is due, one poll reads it anew while the others go on with the one
    before, without waiting; each read is a new object, never changed once shared. Durations of a
    workflow the read lacks are added by the poll that needs them, so a process reads the basis
    about once a second, not exactly once."""

    def __init__(self, max_age_s: float = 1.0) -> None:
        self.max_age_s = max_age_s
        self._last: _BasisRead | None = None
        self._refreshing = threading.Lock()

    def read(self, settings: Settings, session: Session, workflows: set[str], now: datetime) -> _Basis:
        last = self._last
        if last is None or time.monotonic() - last.at >= self.max_age_s:
            if self._refreshing.acquire(blocking=False):
                try:
                    newest = self._last
                    if newest is last or newest is None:  # else the poll that held the lock read it
                        newest = self._last = _BasisRead(
                            time.monotonic(), _live_threads(settings, session, now), _running_since(session), {}
                        )
                    last = newest
                finally:
                    self._refreshing.release()
            elif last is None:  # the first read is under way elsewhere, with nothing to share yet
                return _Basis.read(settings, session, workflows, now)
        missing = (workflows | {workflow for workflow, _ in last.running}) - last.durations.keys()
        if missing:
            known = last
            last = replace(last, durations={**last.durations, **_recent_durations(session, missing)})
            if self._last is known:  # not when a newer read has taken its place meanwhile
                self._last = last
        return _Basis(now, last.threads, last.running, _known(last.durations))


def _known(durations: dict[str, float | None]) -> dict[str, float]:
    return {workflow: seconds for workflow, seconds in durations.items() if seconds is not None}


def _live_threads(settings: Settings, session: Session, now: datetime) -> int:
    # A worker renews its row every third of a lease; two leases without a word and it is gone.
    alive_since = now - timedelta(seconds=2 * settings.lease_seconds)
    return int(session.exec(_statements().live_threads, params={"alive_since": alive_since}).one())


def _running_since(session: Session) -> list[tuple[str, datetime]]:
    """Each running attempt's workflow and the moment it started."""
    return [(workflow, at) for workflow, at in session.exec(_statements().running_since)]


def _recent_durations(session: Session, workflows: set[str]) -> dict[str, float | None]:
    """The mean duration of each workflow's recent completed attempts (None: none recorded)."""
    seconds: dict[str, list[float]] = defaultdict(list)
    for workflow in workflows:
        rows = session.exec(_statements().recent_attempts, params={"workflow": workflow}).all()
        seconds[workflow] = [(end - start).total_seconds() for end, start in rows]
    return {workflow: sum(values) / len(values) if values else None for workflow, values in seconds.items()}


@dataclass(frozen=True)
class _Statements:
    ahead: Select[str, int]
    live_threads: SelectOfScalar[int]
    running_since: Select[str, datetime]
    recent_attempts: Select[datetime, datetime]


@cache
def _statements() -> _Statements:
    """The line's queries, with bound parameters, built on first use (see the module docstring).
    Each parameter has its column's type, so PostgreSQL compares timestamps with time zone."""
    key = tuple_(col(Job.available_at), col(Job.created_at), col(Job.id))
    after = tuple_(
        bindparam("available_at", type_=UTCDateTime()),
        bindparam("created_at", type_=UTCDateTime()),
        bindparam("id", type_=String()),
    )
    finished = aliased(JobEvent)
    started = aliased(JobEvent)
    return _Statements(
        ahead=select(Job.workflow, func.count())
        .where(Job.status == JobStatus.QUEUED, key < after)
        .group_by(col(Job.workflow)),
        live_threads=select(func.coalesce(func.sum(WorkerProcess.threads), 0)).where(
            col(WorkerProcess.stopped_at).is_(None),
            col(WorkerProcess.last_heartbeat_at) >= bindparam("alive_since", type_=UTCDateTime()),
        ),
        running_since=select(Job.workflow, func.max(JobEvent.at))
        .join(JobEvent, and_(col(JobEvent.job_id) == col(Job.id), col(JobEvent.attempt) == col(Job.attempt)))
        .where(Job.status == JobStatus.RUNNING, JobEvent.type == EventType.RUNNING)
        .group_by(col(Job.id), col(Job.workflow)),
        recent_attempts=select(finished.at, started.at)
        .join(Job, col(Job.id) == finished.job_id)
        .join(started, and_(col(started.job_id) == col(finished.job_id), col(started.attempt) == col(finished.attempt)))
        .where(
            col(Job.workflow) == bindparam("workflow", type_=String()),
            finished.type == EventType.COMPLETED,
            started.type == EventType.RUNNING,
        )
        .order_by(col(finished.id).desc())
        .limit(RECENT_ATTEMPTS),
    )
