"""Group replays as records: start one, take it on under a lease, advance its cursor, finish it.

A replay of a dead-letter group is durable work (docs/architecture.md, "Group replay"): the web
process only records it; workers carry it out (`queue/replays.py`), one job at a time at its rate,
and a worker that dies leaves a lease that runs out, after which another worker goes on from the
cursor. Every write after the start is fenced by the lease owner, so two workers never advance the
same replay, and each job's replay is itself a conditional transition: a job is replayed once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Table, Update, func, or_, tuple_, update
from sqlmodel import col, select

from quire.db import Database
from quire.jobs import states
from quire.jobs.models import GroupReplay, Job, JobStatus, ReplayState, utcnow
from quire.jobs.store import iso
from quire.settings import Settings
from quire.views import View

REPLAY: Table = GroupReplay.__table__  # type: ignore[attr-defined]


class ReplayView(View, frozen=True):
    """A group replay as the admin page shows it."""

    replay_id: str
    error: str
    workflow: str | None
    workflow_version: str | None
    rate: float
    state: str
    total: int
    replayed: int
    skipped: int
    created_by: str | None
    created_at: str | None
    updated_at: str | None


def _group(
    error: str, workflow: str | None, workflow_version: str | None, cutoff: datetime
) -> list[ColumnElement[bool]]:
    where = [col(Job.status) == JobStatus.DEAD_LETTER, col(Job.error_code) == error, col(Job.updated_at) <= cutoff]
    if workflow:
        where.append(col(Job.workflow) == workflow)
    if workflow_version:
        where.append(col(Job.workflow_version) == workflow_version)
    return where


def group_size(db: Database, error: str, workflow: str | None, workflow_version: str | None) -> int:
    """How many dead letters a replay of the group started now would replay."""
    with db.session() as session:
        where = _group(error, workflow, workflow_version, utcnow())
        return int(session.exec(select(func.count()).select_from(Job).where(*where)).one())


def start(
    db: Database,
    error: str,
    workflow: str | None,
    workflow_version: str | None,
    rate: float,
    created_by: str | None,
    owner: str | None = None,
    lease_s: float = 0.0,
) -> GroupReplay:
    """Record a replay of the group as it is now. With `owner`, the caller takes it on at once (the
    CLI carries it out itself); without, a worker takes it on."""
    now = utcnow()
    with db.session() as session:
        where = _group(error, workflow, workflow_version, now)
        total = session.exec(select(func.count()).select_from(Job).where(*where)).one()
        replay = GroupReplay(
            error=error,
            workflow=workflow or None,
            workflow_version=workflow_version or None,
            rate=rate,
            state=ReplayState.RUNNING,
            total=int(total),
            cutoff_at=now,
            owner=owner,
            lease_until=now + timedelta(seconds=lease_s) if owner else None,
            created_by=created_by,
            created_at=now,
            updated_at=now,
        )
        session.add(replay)
        session.flush()
        session.expunge(replay)
    return replay


def take_on(db: Database, owner: str, lease_s: float) -> GroupReplay | None:
    """Take on a running replay nobody holds (never taken, or its holder's lease ran out)."""
    now = utcnow()
    with db.session() as session:
        free = session.exec(
            select(GroupReplay.id)
            .where(
                GroupReplay.state == ReplayState.RUNNING,
                or_(col(GroupReplay.lease_until).is_(None), col(GroupReplay.lease_until) < now),
            )
            .order_by(col(GroupReplay.created_at))
            .limit(1)
        ).first()
        if free is None:
            return None
        taken = session.execute(
            update(REPLAY)
            .where(
                REPLAY.c.id == free,
                REPLAY.c.state == ReplayState.RUNNING,
                or_(REPLAY.c.lease_until.is_(None), REPLAY.c.lease_until < now),
            )
            .values(owner=owner, lease_until=now + timedelta(seconds=lease_s), updated_at=now)
            .returning(*REPLAY.c)
        ).one_or_none()
    return GroupReplay.model_validate(dict(taken._mapping)) if taken is not None else None


def next_job(db: Database, replay: GroupReplay) -> tuple[str, datetime] | None:
    """The next job of the group after the cursor, as (id, updated_at), or None when none is left."""
    where = _group(replay.error, replay.workflow, replay.workflow_version, replay.cutoff_at)
    if replay.cursor_at is not None and replay.cursor_id is not None:
        where.append(tuple_(col(Job.updated_at), col(Job.id)) > tuple_(replay.cursor_at, replay.cursor_id))
    with db.session() as session:
        row = session.exec(
            select(Job.id, Job.updated_at).where(*where).order_by(col(Job.updated_at), col(Job.id)).limit(1)
        ).first()
    return (row[0], row[1]) if row is not None else None


class Lost(Exception):
    """The replay is no longer held by this owner: an operator stopped it, or another worker took it on."""


def replay_next(
    settings: Settings,
    db: Database,
    replay: GroupReplay,
    job_id: str,
    job_updated_at: datetime,
    message_id: str,
    lease_s: float,
) -> Job | None:
    """Replay one job of the group and move the cursor past it, in one transaction, so that a worker
    killed between the two can neither count a job it did not replay nor replay a job twice.

    Returns the replayed job, or None when the job was skipped (someone else replayed or removed it
    meanwhile); raises `Lost` (and changes nothing) when `replay.owner` no longer holds the replay.
    """
    now = utcnow()
    with db.session() as session:
        # The fence first: a worker that lost the replay touches no job.
        held = session.execute(
            _held(replay).values(
                {
                    REPLAY.c.cursor_at: job_updated_at,
                    REPLAY.c.cursor_id: job_id,
                    REPLAY.c.lease_until: now + timedelta(seconds=lease_s),
                    REPLAY.c.updated_at: now,
                }
            )
        )
        if getattr(held, "rowcount", 0) != 1:
            raise Lost(replay.id)
        job = states.replay_in(settings, session, job_id, message_id)
        counter = REPLAY.c.replayed if job is not None else REPLAY.c.skipped
        session.execute(update(REPLAY).where(REPLAY.c.id == replay.id).values({counter: counter + 1}))
    replay.cursor_at, replay.cursor_id = job_updated_at, job_id
    return job


def renew(db: Database, replay: GroupReplay, lease_s: float) -> bool:
    """Keep holding the replay while waiting for the next job's turn; False when it was lost."""
    now = utcnow()
    with db.session() as session:
        renewed = session.execute(_held(replay).values(lease_until=now + timedelta(seconds=lease_s)))
    return getattr(renewed, "rowcount", 0) == 1


def finish(db: Database, replay: GroupReplay, state: ReplayState = ReplayState.DONE) -> None:
    """The group has no job left (done), or an operator stopped the replay (stopped)."""
    now = utcnow()
    with db.session() as session:
        session.execute(_held(replay).values(state=state, owner=None, lease_until=None, updated_at=now))


def let_go(db: Database, replay: GroupReplay) -> None:
    """Give the replay up at shutdown so that another worker takes it on at once."""
    with db.session() as session:
        session.execute(_held(replay).values(owner=None, lease_until=None))


def _held(replay: GroupReplay) -> Update:
    return update(REPLAY).where(
        REPLAY.c.id == replay.id, REPLAY.c.state == ReplayState.RUNNING, REPLAY.c.owner == replay.owner
    )


def stop(db: Database, replay_id: str) -> bool:
    """An operator stops a running replay; whoever holds it sees that at its next step."""
    with db.session() as session:
        stopped = session.execute(
            update(REPLAY)
            .where(REPLAY.c.id == replay_id, REPLAY.c.state == ReplayState.RUNNING)
            .values(state=ReplayState.STOPPED, owner=None, lease_until=None, updated_at=utcnow())
        )
    return getattr(stopped, "rowcount", 0) == 1


def recent(db: Database, limit: int = 10) -> list[ReplayView]:
    """The latest replays, newest first, for the admin page."""
    with db.session() as session:
        rows = session.exec(select(GroupReplay).order_by(col(GroupReplay.created_at).desc()).limit(limit)).all()
    return [
        ReplayView(
            replay_id=r.id,
            error=r.error,
            workflow=r.workflow,
            workflow_version=r.workflow_version,
            rate=r.rate,
            state=r.state,
            total=r.total,
            replayed=r.replayed,
            skipped=r.skipped,
            created_by=r.created_by,
            created_at=iso(r.created_at),
            updated_at=iso(r.updated_at),
        )
        for r in rows
    ]
