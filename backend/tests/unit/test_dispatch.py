"""The dispatcher's protocol at every site that hands a job to the queue, on the in-memory queue.

Each site must record the new message id in its transition and publish that same id only after
the transition committed; a transition that did not move the job publishes nothing. The real
Redis path is covered by the integration tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta

import pytest

from backend.tests.conftest import Database
from backend.tests.unit.test_states import WORKER, current, force, make_job
from quire.documents.extract import Progress
from quire.errors import ErrorCode
from quire.jobs import service, states
from quire.jobs.models import JobStatus, Upload, utcnow
from quire.jobs.states import AttemptRef
from quire.queue.dispatch import Dispatcher, InMemoryQueue
from quire.queue.recovery import recover_once
from quire.queue.runner import AttemptProgress, ExecutionControl, Runner
from quire.settings import get_settings


@pytest.fixture
def queue(migrated: Database) -> Iterator[InMemoryQueue]:
    os.environ["QUIRE_REPUBLISH_AFTER_SECONDS"] = "1"
    get_settings.cache_clear()
    yield InMemoryQueue()
    os.environ.pop("QUIRE_REPUBLISH_AFTER_SECONDS")
    get_settings.cache_clear()


def _upload() -> Upload:
    return Upload(owner_id=None, filename="a.txt", size=1, sha256="0" * 64, content_type="text/plain")


def _running(attempt: int = 1) -> tuple[str, AttemptRef]:
    job = make_job(JobStatus.RUNNING, attempt=attempt)
    force(job.id, lease_until=utcnow() + timedelta(seconds=60))
    return job.id, AttemptRef(job.id, attempt, WORKER)


def test_submit_records_the_message_it_publishes(queue: InMemoryQueue) -> None:
    # Given a dispatcher on a reachable queue, when a job is submitted
    submitted = service.submit(Dispatcher(queue), "document_summary", _upload(), service.Limits())
    # Then exactly one message went out, and it is the one the job record expects
    [message] = queue.messages
    assert message.job_id == submitted.job.id
    assert current(submitted.job.id).message_id == message.message_id
    assert current(submitted.job.id).status == JobStatus.QUEUED


def test_submit_is_accepted_when_the_queue_is_down(queue: InMemoryQueue) -> None:
    queue.reachable = False
    submitted = service.submit(Dispatcher(queue), "document_summary", _upload(), service.Limits())
    # The id is recorded for recovery to republish; nothing was sent.
    assert current(submitted.job.id).message_id is not None
    assert queue.messages == []


def test_replay_publishes_once_and_only_from_a_replayable_state(queue: InMemoryQueue) -> None:
    dispatcher = Dispatcher(queue)
    job = make_job(JobStatus.DEAD_LETTER)
    service.replay(dispatcher, job.id)
    [message] = queue.messages
    assert current(job.id).status == JobStatus.QUEUED
    assert current(job.id).message_id == message.message_id
    with pytest.raises(service.NotAllowed):
        service.replay(dispatcher, job.id)
    assert len(queue.messages) == 1


def test_a_retry_publishes_a_delayed_message(queue: InMemoryQueue) -> None:
    job_id, ref = _running()
    runner = Runner(Dispatcher(queue), ExecutionControl(worker_id=WORKER))
    runner._fail(current(job_id), ref, ErrorCode.UPSTREAM_UNAVAILABLE, "The provider is down.", "detail")
    [message] = queue.messages
    assert message.delay_s > 0
    assert current(job_id).status == JobStatus.QUEUED
    assert current(job_id).message_id == message.message_id


def test_a_final_failure_publishes_nothing(queue: InMemoryQueue) -> None:
    job_id, ref = _running(attempt=3)
    runner = Runner(Dispatcher(queue), ExecutionControl(worker_id=WORKER))
    runner._fail(current(job_id), ref, ErrorCode.UPSTREAM_UNAVAILABLE, "The provider is down.", "detail")
    assert current(job_id).status == JobStatus.DEAD_LETTER
    assert queue.messages == []


def test_shutdown_hands_held_attempts_back_to_the_queue(queue: InMemoryQueue) -> None:
    job_id, ref = _running()
    control = ExecutionControl(worker_id=WORKER)
    control.hold(ref)
    assert Runner(Dispatcher(queue), control).release_held_attempts() == 1
    [message] = queue.messages
    assert current(job_id).status == JobStatus.QUEUED
    assert current(job_id).message_id == message.message_id
    assert control.held_jobs() == []


def test_recovery_requeues_an_expired_lease_and_dead_letters_one_out_of_attempts(queue: InMemoryQueue) -> None:
    with_budget = make_job(JobStatus.RUNNING, attempt=1)
    without_budget = make_job(JobStatus.RUNNING, attempt=3)
    report = recover_once(Dispatcher(queue))
    assert (report.requeued, report.dead_lettered) == (1, 1)
    [message] = queue.messages
    assert message.job_id == with_budget.id
    assert current(with_budget.id).message_id == message.message_id
    assert current(without_budget.id).status == JobStatus.DEAD_LETTER


def test_recovery_republishes_only_a_message_the_queue_lost(queue: InMemoryQueue) -> None:
    dispatcher = Dispatcher(queue)
    kept = service.submit(dispatcher, "document_summary", _upload(), service.Limits()).job
    lost = service.submit(dispatcher, "document_summary", _upload(), service.Limits()).job
    queue.lose(current(lost.id).message_id or "")
    for job in (kept, lost):
        force(job.id, updated_at=utcnow() - timedelta(seconds=30))
    assert recover_once(dispatcher).republished == 1
    assert {m.job_id for m in queue.messages} == {kept.id, lost.id}
    assert queue.held([current(lost.id).message_id or ""]) == [True]


def test_after_commit_hooks_see_each_move_and_cannot_undo_it(queue: InMemoryQueue) -> None:
    dispatcher = Dispatcher(queue)
    seen: list[tuple[str, JobStatus]] = []

    def broken(_job_id: str, _moved: object) -> None:
        raise RuntimeError("a listener failed")

    dispatcher.on_commit(broken)
    dispatcher.on_commit(lambda job_id, moved: seen.append((job_id, moved.status)))  # type: ignore[attr-defined]
    job = make_job(JobStatus.CANCELLED)
    service.replay(dispatcher, job.id)
    assert seen == [(job.id, JobStatus.QUEUED)]
    assert len(queue.messages) == 1
    # A transition that moves nothing tells nobody.
    with pytest.raises(service.NotAllowed):
        service.replay(dispatcher, job.id)
    assert len(seen) == 1


def test_a_transition_that_moves_nothing_publishes_nothing(queue: InMemoryQueue) -> None:
    job = make_job(JobStatus.COMPLETED)
    dispatched = Dispatcher(queue).move(job.id, lambda message_id: states.replay(job.id, message_id))
    assert dispatched.moved is None
    assert not dispatched.sent
    assert queue.messages == []


def test_hooks_also_hear_of_moves_that_send_nothing(queue: InMemoryQueue) -> None:
    dispatcher = Dispatcher(queue)
    seen: list[str] = []
    dispatcher.on_commit(lambda job_id, moved: seen.append(moved.status))  # type: ignore[attr-defined]
    job_id, ref = _running(attempt=3)
    runner = Runner(dispatcher, ExecutionControl(worker_id=WORKER))
    runner._fail(current(job_id), ref, ErrorCode.UPSTREAM_UNAVAILABLE, "The provider is down.", "detail")
    queued = make_job(JobStatus.QUEUED)
    service.cancel(dispatcher, queued.id)
    with pytest.raises(service.NotAllowed):
        service.cancel(dispatcher, queued.id)
    assert seen == [JobStatus.DEAD_LETTER, JobStatus.CANCELLED]
    assert queue.messages == []


def test_hooks_hear_of_progress_written_with_the_lease(queue: InMemoryQueue) -> None:
    dispatcher = Dispatcher(queue)
    seen: list[tuple[str, object]] = []
    dispatcher.on_commit(lambda job_id, moved: seen.append((job_id, moved)))
    job_id, ref = _running()
    AttemptProgress(ref, on_written=dispatcher.committed)(Progress(2, 3, "Reading page 2 of 3"))
    assert seen == [(job_id, {"done": 2, "total": 3, "unit": "pages", "message": "Reading page 2 of 3"})]
    assert current(job_id).progress == seen[0][1]
    # A fenced-out attempt writes nothing and tells nobody.
    AttemptProgress(AttemptRef(job_id, 9, WORKER), on_written=dispatcher.committed)(Progress(3, 3, "Done"))
    assert len(seen) == 1
