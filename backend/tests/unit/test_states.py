"""The state machine: legal moves happen once, every illegal move changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlmodel import col

from quire.db import Database
from quire.errors import ErrorCode
from quire.jobs import states
from quire.jobs.models import Artifact, Job, JobStatus, utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.jobs.states import ALLOWED, AttemptRef
from quire.settings import Settings

WORKER = "worker-a"


def make_job(db: Database, status: JobStatus = JobStatus.QUEUED, attempt: int = 0) -> Job:
    job = Job(
        workflow="document_summary",
        workflow_version="1",
        input_ref="uploads/x",
        input_filename="a.txt",
        input_size=1,
        input_sha256="0" * 64,
        input_content_type="text/plain",
        status=JobStatus.QUEUED,
        max_attempts=3,
        timeout_s=10,
        deadline_s=60,
        deadline_at=utcnow() + timedelta(seconds=60),
    )
    states.accept(db, job, "m-1")
    force(db, job.id, status=status, attempt=attempt, worker_id=WORKER, lease_until=utcnow() - timedelta(seconds=1))
    return job


def force(db: Database, job_id: str, **values: object) -> None:
    """Put a row in a given state directly, as only a test may."""
    with db.session() as session:
        session.execute(update(Job).where(col(Job.id) == job_id).values(**values))


def current(db: Database, job_id: str) -> Job:
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def event_types(db: Database, job_id: str) -> list[str]:
    with db.session() as session:
        return [e.type for e in states.events_of(session, job_id)]


REF = lambda job: AttemptRef(job.id, 1, WORKER)  # noqa: E731

# Each transition: the states it may start from, and how to call it for a job at attempt 1.
TRANSITIONS: dict[str, tuple[set[JobStatus], Callable[[Settings, Database, Job], Job | None]]] = {
    "claim": ({JobStatus.QUEUED}, lambda settings, db, job: states.claim(settings, db, job.id, WORKER, 30)),
    "complete": ({JobStatus.RUNNING}, lambda settings, db, job: states.complete(settings, db, REF(job), [], {})),
    "retry": (
        {JobStatus.RUNNING},
        lambda settings, db, job: states.retry(settings, db, REF(job), ErrorCode.TIMEOUT, 0.1, "m-2", "again"),
    ),
    "dead_letter": (
        {JobStatus.RUNNING},
        lambda settings, db, job: states.dead_letter(settings, db, REF(job), ErrorCode.TIMEOUT, "x"),
    ),
    "release_expired_lease": (
        {JobStatus.RUNNING},
        lambda settings, db, job: states.release_expired_lease(settings, db, job.id, "m-3", True),
    ),
    "cancel": ({JobStatus.QUEUED, JobStatus.RUNNING}, lambda settings, db, job: states.cancel(settings, db, job.id)),
    "replay": (
        {JobStatus.DEAD_LETTER, JobStatus.CANCELLED},
        lambda settings, db, job: states.replay(settings, db, job.id, "m-4"),
    ),
}


@pytest.mark.parametrize("name", sorted(TRANSITIONS))
@pytest.mark.parametrize("start", list(JobStatus))
def test_each_transition_moves_only_from_its_states(
    settings: Settings, db: Database, name: str, start: JobStatus
) -> None:
    # Given a job sitting in `start` at attempt 1
    sources, call = TRANSITIONS[name]
    job = make_job(db, start, attempt=1)
    before_events = event_types(db, job.id)
    # When the transition is attempted
    moved = call(settings, db, job)
    # Then it happens exactly when the table allows it, and otherwise changes nothing at all
    after = current(db, job.id)
    if start in sources:
        assert moved is not None
        assert after.status in ALLOWED[start]
        assert len(event_types(db, job.id)) == len(before_events) + 1
    else:
        assert moved is None
        assert after.status == start
        assert event_types(db, job.id) == before_events


def test_table_matches_design() -> None:
    assert ALLOWED[JobStatus.COMPLETED] == frozenset()
    assert JobStatus.QUEUED in ALLOWED[JobStatus.DEAD_LETTER]
    assert JobStatus.RUNNING not in ALLOWED[JobStatus.CANCELLED]
    with pytest.raises(states.IllegalTransition):
        states._check([JobStatus.COMPLETED], JobStatus.QUEUED)


def test_a_fenced_out_attempt_changes_nothing(settings: Settings, db: Database) -> None:
    # Given a job whose attempt 1 timed out and attempt 2 now runs on another worker
    job = make_job(db, JobStatus.RUNNING, attempt=2)
    force(db, job.id, worker_id="worker-b")
    # When the late attempt 1 tries to complete, retry or dead-letter it
    stale = AttemptRef(job.id, 1, WORKER)
    artifact = Artifact(job_id=job.id, name="x.json", storage_key="k", size=1, sha256="0" * 64, content_type="a/b")
    assert states.complete(settings, db, stale, [artifact], {}) is None
    assert states.retry(settings, db, stale, ErrorCode.TIMEOUT, 0, "m", "d") is None
    assert states.dead_letter(settings, db, stale, ErrorCode.TIMEOUT, "d") is None
    # Then the record still belongs to attempt 2 and no artifact was published
    after = current(db, job.id)
    assert (after.status, after.attempt, after.worker_id) == (JobStatus.RUNNING, 2, "worker-b")
    with db.session() as session:
        assert session.get(Artifact, (job.id, "x.json")) is None


def test_claim_waits_for_backoff_and_counts_attempts(settings: Settings, db: Database) -> None:
    job = make_job(db, JobStatus.QUEUED)
    force(db, job.id, available_at=utcnow() + timedelta(seconds=30))
    assert states.claim(settings, db, job.id, WORKER, 30) is None
    force(db, job.id, available_at=utcnow())
    claimed = states.claim(settings, db, job.id, WORKER, 30)
    assert claimed is not None
    assert (claimed.attempt, claimed.worker_id, claimed.status) == (1, WORKER, JobStatus.RUNNING)
    assert states.claim(settings, db, job.id, "worker-b", 30) is None


def test_live_lease_is_not_released(settings: Settings, db: Database) -> None:
    job = make_job(db, JobStatus.RUNNING, attempt=1)
    force(db, job.id, lease_until=utcnow() + timedelta(seconds=30))
    assert states.release_expired_lease(settings, db, job.id, "m", True) is None
    assert states.extend_leases(db, WORKER, [job.id], 30) == 1
    assert states.extend_leases(db, "someone-else", [job.id], 30) == 0


def test_lost_attempt_without_budget_is_dead_lettered(settings: Settings, db: Database) -> None:
    job = make_job(db, JobStatus.RUNNING, attempt=3)
    moved = states.release_expired_lease(settings, db, job.id, "m", budget_left=False)
    assert moved is not None
    assert moved.status == JobStatus.DEAD_LETTER
    assert event_types(db, job.id)[-1] == "dead_letter"


def test_replay_renews_budget_and_deadline(settings: Settings, db: Database) -> None:
    job = make_job(db, JobStatus.DEAD_LETTER, attempt=3)
    force(db, job.id, deadline_at=utcnow() - timedelta(seconds=1))
    replayed = states.replay(settings, db, job.id, "m-9")
    assert replayed is not None
    assert (replayed.attempt_floor, replayed.message_id) == (3, "m-9")
    assert replayed.deadline_at > utcnow()
    assert event_types(db, job.id)[-1] == "replayed"


def test_expire_deadline_only_after_deadline(settings: Settings, db: Database) -> None:
    job = make_job(db, JobStatus.QUEUED)
    assert states.expire_deadline(settings, db, job.id) is None
    force(db, job.id, deadline_at=utcnow() - timedelta(seconds=1))
    assert states.expire_deadline(settings, db, job.id) is not None
    assert current(db, job.id).status == JobStatus.DEAD_LETTER


def test_a_lost_isolated_attempt_is_refunded(settings: Settings, db: Database) -> None:
    # Given a job whose isolated attempt 3 (of 3) died with its worker
    job = make_job(db, JobStatus.RUNNING, attempt=3)
    moved = states.release_expired_lease(settings, db, job.id, "m", budget_left=False, refund=True)
    # Then it is queued again, and the lost attempt does not count against its budget
    assert moved is not None
    assert (moved.status, moved.attempt, moved.attempt_floor) == (JobStatus.QUEUED, 3, 1)
    assert event_types(db, job.id)[-1] == "requeued_after_restart"


def _overdue_running(db: Database, attempt: int = 1) -> Job:
    job = make_job(db, JobStatus.RUNNING, attempt=attempt)
    force(db, job.id, deadline_at=utcnow() - timedelta(seconds=1), lease_until=utcnow() + timedelta(seconds=30))
    return job


def test_stop_at_the_deadline_dead_letters_and_fences_the_attempt_out(settings: Settings, db: Database) -> None:
    # Given attempt 1 still running when its job's deadline has passed
    job = _overdue_running(db)
    # When its worker applies the stop policy
    moved = states.pass_deadline(settings, db, job.id, DeadlinePolicy.STOP, REF(job))
    # Then the job ends deadline_exceeded, the moment and the policy are recorded first
    assert moved is not None
    assert (moved.status, moved.error_code) == (JobStatus.DEAD_LETTER, ErrorCode.DEADLINE_EXCEEDED)
    assert event_types(db, job.id)[-2:] == ["deadline_passed", "dead_letter"]
    with db.session() as session:
        passed = states.events_of(session, job.id)[-2]
    assert passed.detail is not None
    assert "policy: stop" in passed.detail
    assert passed.error is None
    # And the attempt finishing late publishes nothing
    assert states.complete(settings, db, REF(job), [], {}) is None
    assert current(db, job.id).status == JobStatus.DEAD_LETTER


def test_finish_at_the_deadline_records_it_and_lets_the_attempt_complete(settings: Settings, db: Database) -> None:
    job = _overdue_running(db)
    noted = states.pass_deadline(settings, db, job.id, DeadlinePolicy.FINISH, REF(job))
    assert noted is not None
    assert noted.status == JobStatus.RUNNING
    assert states.complete(settings, db, REF(job), [], {}) is not None
    assert event_types(db, job.id)[-2:] == ["deadline_passed", "completed"]


def test_the_deadline_is_not_passed_early_or_by_another_attempt(settings: Settings, db: Database) -> None:
    job = make_job(db, JobStatus.RUNNING, attempt=1)
    assert states.pass_deadline(settings, db, job.id, DeadlinePolicy.STOP, REF(job)) is None
    force(db, job.id, deadline_at=utcnow() - timedelta(seconds=1))
    assert states.pass_deadline(settings, db, job.id, DeadlinePolicy.STOP, AttemptRef(job.id, 1, "worker-b")) is None
    assert current(db, job.id).status == JobStatus.RUNNING
    assert event_types(db, job.id) == ["queued"]


def test_a_lost_attempt_past_its_deadline_ends_whatever_the_policy(settings: Settings, db: Database) -> None:
    # Given an overdue job whose worker still holds a live lease, recovery leaves it alone
    job = _overdue_running(db)
    assert states.pass_deadline(settings, db, job.id, DeadlinePolicy.FINISH) is None
    # When the lease expires (the worker is gone), recovery ends it: no attempt can start any more
    force(db, job.id, lease_until=utcnow() - timedelta(seconds=1))
    moved = states.pass_deadline(settings, db, job.id, DeadlinePolicy.FINISH)
    assert moved is not None
    assert (moved.status, moved.error_code) == (JobStatus.DEAD_LETTER, ErrorCode.DEADLINE_EXCEEDED)


@pytest.mark.parametrize(("past_deadline", "capped"), [(False, True), (True, False)])
def test_leases_end_at_the_deadline_unless_the_policy_lets_attempts_finish(
    settings: Settings, db: Database, past_deadline: bool, capped: bool
) -> None:
    # Given a job due in 5 s
    job = make_job(db, JobStatus.QUEUED)
    force(db, job.id, deadline_at=utcnow() + timedelta(seconds=5))
    # When it is claimed and its lease renewed for 30 s
    claimed = states.claim(settings, db, job.id, WORKER, 30, lease_past_deadline=past_deadline)
    assert claimed is not None
    assert claimed.lease_until is not None
    assert (claimed.lease_until == claimed.deadline_at) is capped
    assert states.extend_leases(db, WORKER, [job.id], 30, past_deadline=past_deadline) == 1
    # Then under `stop` the lease never runs past the deadline; under `finish` it does
    after = current(db, job.id)
    assert after.lease_until is not None
    assert (after.lease_until <= after.deadline_at) is capped


def test_progress_is_written_with_the_lease_by_the_attempt_that_holds_it(settings: Settings, db: Database) -> None:
    # Given a running attempt 2 whose lease is about to run out
    job = make_job(db, JobStatus.RUNNING, attempt=2)
    reading = {"done": 1, "total": 3, "unit": "pages", "message": "Reading page 2 of 3"}
    # When a late attempt 1 reports progress, nothing changes
    assert states.report_progress(db, AttemptRef(job.id, 1, WORKER), reading, 30) is False
    assert current(db, job.id).progress is None
    # When attempt 2 reports it, the record shows it and the lease is renewed in the same write
    assert states.report_progress(db, AttemptRef(job.id, 2, WORKER), reading, 30) is True
    after = current(db, job.id)
    assert after.progress == reading
    assert after.lease_until is not None
    assert after.lease_until > utcnow() + timedelta(seconds=20)
    # And the next attempt starts without the last one's progress
    force(db, job.id, status=JobStatus.QUEUED, available_at=utcnow())
    claimed = states.claim(settings, db, job.id, WORKER, 30)
    assert claimed is not None
    assert claimed.progress is None


def test_a_short_attempts_progress_is_recorded_by_its_completion(settings: Settings, db: Database) -> None:
    # Given a running attempt that finished reading before its progress was worth a write of its own
    job = make_job(db, JobStatus.RUNNING, attempt=1)
    read = {"done": 1, "total": 1, "unit": "pages", "message": "Read 1 of 1 pages"}
    # When a late attempt completes with it, nothing changes
    assert states.complete(settings, db, AttemptRef(job.id, 2, WORKER), [], {}, read) is None
    assert current(db, job.id).progress is None
    # When the attempt that holds the job completes with it, one write records both
    completed = states.complete(settings, db, AttemptRef(job.id, 1, WORKER), [], {}, read)
    assert completed is not None
    assert (completed.status, completed.progress) == (JobStatus.COMPLETED, read)
    assert current(db, job.id).progress == read
