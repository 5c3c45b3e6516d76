"""A job's view is rebuilt whenever something it shows has changed, and cannot be changed by those who share it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlmodel import col, select

from backend.tests.unit.test_states import REF, WORKER, force, make_job
from quire.db import Database
from quire.jobs import states, store
from quire.jobs.line import QueuePlace, RecentBasis, place_in_line, places_in_line
from quire.jobs.models import Artifact, EventType, Job, JobEvent, JobStatus, WorkerProcess, utcnow
from quire.settings import Settings


def artifact(job_id: str) -> Artifact:
    return Artifact(
        job_id=job_id, name="a.json", storage_key=f"artifacts/{job_id}/a.json", size=2, sha256="0" * 64,
        content_type="application/json", primary=True,
    )  # fmt: skip


def test_each_change_shows_in_the_next_view(settings: Settings, db: Database) -> None:
    recent = store.RecentViews()
    job = make_job(db)
    assert store.view_of(settings, db, job.id, recent=recent).status == "queued"
    assert store.view_of(settings, db, job.id, recent=recent).status == "queued"  # from the recent views
    claimed = states.claim(settings, db, job.id, WORKER, 30)
    assert claimed is not None
    running = store.view_of(settings, db, job.id, recent=recent)
    assert running is not None
    assert (running.status, running.attempt) == ("running", 1)
    assert states.complete(settings, db, REF(claimed), [artifact(job.id)], {}) is not None
    done = store.view_of(settings, db, job.id, recent=recent)
    assert done is not None
    assert done.status == "completed"
    assert [a.name for a in done.artifacts] == ["a.json"]
    assert done.artifacts[0].deleted_at is None
    # Retention deletes files without a transition; its mark is part of the version too.
    now = utcnow()
    force(db, job.id, files_deleted_at=now)
    with db.session() as session:
        session.execute(update(Artifact).where(col(Artifact.job_id) == job.id).values(deleted_at=now))
    assert store.view_of(settings, db, job.id, recent=recent).artifacts[0].deleted_at is not None


def test_a_queued_job_shows_no_progress_left_by_an_earlier_attempt(settings: Settings, db: Database) -> None:
    # Given a running attempt that had read one page of three
    job = make_job(db, JobStatus.RUNNING, attempt=1)
    reading = {"done": 1, "total": 3, "unit": "pages", "message": "Reading page 2 of 3"}
    assert states.report_progress(db, REF(job), reading, 30)
    running = store.view_of(settings, db, job.id)
    assert running is not None
    assert running.progress is not None
    assert (running.progress.done, running.progress.message) == (1, "Reading page 2 of 3")
    # When the job waits in the queue again (a retry, a replay), the record still holds that progress
    force(db, job.id, status=JobStatus.QUEUED, available_at=utcnow())
    queued = store.view_of(settings, db, job.id)
    # Then its view shows none: it belongs to an attempt that is over
    assert queued is not None
    assert queued.progress is None


def test_a_shared_view_cannot_be_changed_by_one_of_its_callers(settings: Settings, db: Database) -> None:
    recent = store.RecentViews()
    job = make_job(db, JobStatus.QUEUED)
    first = store.view_of(settings, db, job.id, recent=recent)
    assert first is not None
    with pytest.raises(AttributeError):
        first.status = "edited"  # type: ignore[misc]
    assert isinstance(first.events, tuple)  # no list to clear either
    again = store.view_of(settings, db, job.id, recent=recent)
    assert again is not None
    assert again.status == "queued"
    assert again.events == first.events


def a_basis_for_estimates(settings: Settings, db: Database, seconds: float) -> Job:
    """A finished attempt that took `seconds`, and a live worker with two threads."""
    done = make_job(db)
    claimed = states.claim(settings, db, done.id, WORKER, 30)
    assert claimed is not None
    assert states.complete(settings, db, REF(claimed), [artifact(done.id)], {}) is not None
    with db.session() as session:
        start = session.exec(select(JobEvent).where(JobEvent.job_id == done.id, JobEvent.type == EventType.RUNNING))
        start.one().at -= timedelta(seconds=seconds)
        session.add(WorkerProcess(id="w", hostname="h", pid=1, threads=2))
    return done


def test_one_read_of_the_line_gives_each_job_the_place_its_own_read_gives(settings: Settings, db: Database) -> None:
    # Given a finished attempt (a basis for estimates), a live worker and five jobs in line
    done = a_basis_for_estimates(settings, db, 0)
    line = [make_job(db) for _ in range(5)]
    wanted = [job.id for job in line[1:4]] + [done.id, "no-such-job"]
    # When the places of some of them are read at once
    with db.session() as session:
        places = places_in_line(settings, session, wanted)
        # Then only the queued ones asked for have a place, each the one its own read finds
        assert set(places) == {job.id for job in line[1:4]}
        for job in line[1:4]:
            assert places[job.id] == place_in_line(settings, session, job)
    assert [places[job.id].position for job in line[1:4]] == [2, 3, 4]
    assert all(place.eta_s is not None for place in places.values())


def test_polls_share_a_recent_basis_but_each_reads_its_own_position(settings: Settings, db: Database) -> None:
    # Given a finished 10-second attempt, a live worker and three jobs in line, polled through one
    # process's recent views
    a_basis_for_estimates(settings, db, 10)
    line = [make_job(db) for _ in range(3)]
    recent = store.RecentViews()
    recent.basis.max_age_s = 60

    def poll(settings: Settings, db: Database, job: Job) -> QueuePlace | None:
        view = store.view_of(settings, db, job.id, recent=recent)
        assert view is not None
        return view.queue

    def own_read(settings: Settings, job: Job) -> QueuePlace:
        with db.session() as session:
            return place_in_line(settings, session, job)

    # Then a poll gives what a read of its own gives
    assert [poll(settings, db, job) for job in line] == [own_read(settings, job) for job in line]
    # When a second worker starts and the first job in line is claimed
    with db.session() as session:
        session.add(WorkerProcess(id="w2", hostname="h", pid=2, threads=6))
    assert states.claim(settings, db, line[0].id, WORKER, 30) is not None
    # Then the polls' basis does not see the new threads before it is due, but the position moves
    shared, own = poll(settings, db, line[2]), own_read(settings, line[2])
    assert shared is not None
    assert (shared.position, own.position) == (2, 2)
    assert own.eta_s is not None
    assert shared.eta_s is not None
    assert own.eta_s < shared.eta_s  # eight threads now, where the shared basis still counts two
    # And once it is due, a poll reads the new basis
    recent.basis.max_age_s = 0
    again = poll(settings, db, line[2])
    assert again is not None
    assert again.position == own.position
    assert again.eta_s == pytest.approx(own.eta_s, abs=0.5)  # the running attempt aged meanwhile


def test_while_one_poll_reads_the_basis_anew_the_others_do_not_wait_for_it(settings: Settings, db: Database) -> None:
    # Given a basis read once for the third job in line, then a second worker
    a_basis_for_estimates(settings, db, 10)
    job = [make_job(db) for _ in range(3)][-1]
    shared, first_ever = RecentBasis(), RecentBasis()
    with db.session() as session:
        before = place_in_line(settings, session, job, shared)
        session.add(WorkerProcess(id="w2", hostname="h", pid=2, threads=6))
    # When the basis is due while another poll is reading it anew (it holds the lock)
    shared.max_age_s = 0
    with shared._refreshing, first_ever._refreshing, db.session() as session:
        # Then a poll goes on with the previous basis rather than wait
        assert place_in_line(settings, session, job, shared) == before
        # And a poll with no previous basis to go on with reads one of its own
        assert place_in_line(settings, session, job, first_ever) == place_in_line(settings, session, job)
    # And once the lock is free, the next poll reads the new basis
    with db.session() as session:
        assert place_in_line(settings, session, job, shared) == place_in_line(settings, session, job)
        assert place_in_line(settings, session, job, shared) != before
