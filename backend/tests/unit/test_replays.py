"""Group replays as records carried out by workers, on the in-memory queue: the group is fixed at
the start, a job is replayed once, and a replay whose holder died is taken on by another."""

from __future__ import annotations

import threading
from datetime import timedelta
from functools import partial

import pytest
from sqlalchemy import update
from sqlmodel import col

from backend.tests.unit.test_states import current, event_types, force, make_job
from quire.db import Database
from quire.jobs import replays, states
from quire.jobs.models import GroupReplay, JobStatus, ReplayState, utcnow
from quire.queue.dispatch import Dispatcher, InMemoryQueue
from quire.queue.replays import carry_out
from quire.settings import Settings

ERROR = "upstream_rejected"


def _dead_letters(db: Database, count: int, error: str = ERROR) -> list[str]:
    ids = []
    for _ in range(count):
        job = make_job(db, JobStatus.DEAD_LETTER, attempt=1)
        force(db, job.id, error_code=error)
        ids.append(job.id)
    return ids


def _replayed_events(db: Database, job_id: str) -> int:
    return event_types(db, job_id).count("replayed")


def test_a_replay_takes_the_group_as_it_was_and_replays_each_job_once(settings: Settings, db: Database) -> None:
    # Given four dead letters of the group and one of another group
    group = _dead_letters(db, 4)
    other = _dead_letters(db, 1, error="internal_error")
    queue = InMemoryQueue()
    dispatcher = Dispatcher(queue)
    replay = replays.start(db, ERROR, "document_summary", "1", rate=1000, created_by="admin@example.com")
    assert replay.total == 4
    assert replays.take_on(db, "worker-a", 30) is not None
    taken = replays.take_on(db, "worker-b", 30)
    assert taken is None  # held by worker-a

    # When each replayed job fails again at once (as a still-broken provider makes it)
    def fails_again(job_id: str) -> None:
        force(db, job_id, status=JobStatus.DEAD_LETTER, error_code=ERROR, updated_at=utcnow())

    held = GroupReplay.model_validate(replay.model_dump() | {"owner": "worker-a"})
    assert carry_out(settings, db, held, dispatcher, threading.Event(), on_replayed=fails_again)
    # Then every job of the group was replayed exactly once, and the other group not at all
    assert [_replayed_events(db, job_id) for job_id in group] == [1, 1, 1, 1]
    assert _replayed_events(db, other[0]) == 0
    assert sorted(m.job_id for m in queue.messages) == sorted(group)
    [view] = [r for r in replays.recent(db) if r.replay_id == replay.id]
    assert (view.state, view.replayed, view.total) == (ReplayState.DONE, 4, 4)


def test_a_replay_whose_holder_died_is_taken_on_from_its_cursor(settings: Settings, db: Database) -> None:
    # Given a replay that worker-a took on and advanced by one job before it died
    group = _dead_letters(db, 3)
    queue = InMemoryQueue()
    dispatcher = Dispatcher(queue)
    replays.start(db, ERROR, None, None, rate=1000, created_by=None)
    first = replays.take_on(db, "worker-a", 30)
    assert first is not None
    stop_after_one = threading.Event()
    # (stopping gives the replay up; a dead worker gives nothing up, so take the lease back by hand)
    carry_out(settings, db, first, dispatcher, stop_after_one, on_replayed=lambda _job_id: stop_after_one.set())
    with db.session() as session:
        session.execute(
            update(GroupReplay)
            .where(col(GroupReplay.id) == first.id)
            .values(owner="worker-a", lease_until=utcnow() + timedelta(seconds=30))
        )
    assert replays.take_on(db, "worker-b", 30) is None  # the lease still runs
    with db.session() as session:
        session.execute(
            update(GroupReplay)
            .where(col(GroupReplay.id) == first.id)
            .values(lease_until=utcnow() - timedelta(seconds=1))
        )
    # When worker-b takes it on after the lease ran out
    second = replays.take_on(db, "worker-b", 30)
    assert second is not None
    assert second.cursor_id == group[0]
    # (a late write of worker-a's, while worker-b holds the replay, touches neither the job nor the cursor)
    with pytest.raises(replays.Lost):
        replays.replay_next(settings, db, first, group[1], utcnow(), "m-late", 30)
    assert (current(db, group[1]).status, _replayed_events(db, group[1])) == (JobStatus.DEAD_LETTER, 0)
    assert carry_out(settings, db, second, dispatcher, threading.Event())
    # Then the rest was replayed once each, and worker-a's late write changes nothing
    assert [_replayed_events(db, job_id) for job_id in group] == [1, 1, 1]
    assert all(current(db, job_id).status == JobStatus.QUEUED for job_id in group)


def test_a_job_replayed_by_someone_else_meanwhile_is_counted_as_skipped_and_not_sent(
    settings: Settings, db: Database
) -> None:
    # Given a replay held by worker-a, and one job of its group replayed by hand after it read the job
    [job_id] = _dead_letters(db, 1)
    queue = InMemoryQueue()
    replay = replays.start(db, ERROR, None, None, rate=1000, created_by=None, owner="worker-a", lease_s=30)
    assert states.replay(settings, db, job_id, "m-by-hand") is not None
    # When worker-a replays it, as carry_out does
    moved = Dispatcher(queue).move(
        job_id, partial(replays.replay_next, settings, db, replay, job_id, utcnow(), lease_s=30)
    )
    # Then nothing is sent, the job was replayed once (by hand), and the replay counts it as skipped
    assert moved.moved is None
    assert queue.messages == []
    assert _replayed_events(db, job_id) == 1
    [view] = [r for r in replays.recent(db) if r.replay_id == replay.id]
    assert (view.replayed, view.skipped, view.state) == (0, 1, ReplayState.RUNNING)
