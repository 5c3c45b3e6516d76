"""The dispatcher's protocol at every site that hands a job to the queue, on the in-memory queue.

Each site must record the new message id in its transition and publish that same id only after
the transition committed; a transition that did not move the job publishes nothing. The real
Redis path is covered by the integration tests.
"""

from __future__ import annotations

import time
from datetime import timedelta
from functools import partial

import pytest

from backend.tests.conftest import ScratchDatabase
from backend.tests.unit.test_states import WORKER, current, force, make_job
from quire.accounts import service as accounts
from quire.db import Database
from quire.documents.extract import Progress
from quire.documents.storage import Storage
from quire.errors import ErrorCode, MalformedOutput
from quire.jobs import operations, service, states, store
from quire.jobs.models import Artifact, JobStatus, Upload, utcnow
from quire.jobs.states import AttemptRef
from quire.queue.dispatch import Dispatcher, InMemoryQueue
from quire.queue.execution import AttemptProgress, ExecutionControl
from quire.queue.failures import AttemptFailure, classify, record_failure
from quire.queue.recovery import Outage, recover_once
from quire.queue.runner import Runner
from quire.settings import Settings


@pytest.fixture
def settings() -> Settings:
    return Settings(republish_after_seconds=1)


@pytest.fixture
def queue(migrated: ScratchDatabase) -> InMemoryQueue:
    return InMemoryQueue()


DOWN = AttemptFailure(ErrorCode.UPSTREAM_UNAVAILABLE, "The provider is down.", "detail")


def _upload() -> Upload:
    return Upload(owner_id=None, filename="a.txt", size=1, sha256="0" * 64, content_type="text/plain")


def _running(db: Database, attempt: int = 1) -> tuple[str, AttemptRef]:
    job = make_job(db, JobStatus.RUNNING, attempt=attempt)
    force(db, job.id, lease_until=utcnow() + timedelta(seconds=60))
    return job.id, AttemptRef(job.id, attempt, WORKER)


def test_submit_records_the_message_it_publishes(settings: Settings, db: Database, queue: InMemoryQueue) -> None:
    # Given a dispatcher on a reachable queue, when a job is submitted
    submitted = service.submit(settings, db, Dispatcher(queue), "document_summary", _upload(), service.Limits())
    # Then exactly one message went out, and it is the one the job record expects
    [message] = queue.messages
    assert message.job_id == submitted.job.id
    assert current(db, submitted.job.id).message_id == message.message_id
    assert current(db, submitted.job.id).status == JobStatus.QUEUED


def test_submit_is_accepted_when_the_queue_is_down(settings: Settings, db: Database, queue: InMemoryQueue) -> None:
    queue.reachable = False
    submitted = service.submit(settings, db, Dispatcher(queue), "document_summary", _upload(), service.Limits())
    # The id is recorded for recovery to republish; nothing was sent.
    assert current(db, submitted.job.id).message_id is not None
    assert queue.messages == []


def test_a_job_without_a_callback_takes_its_accounts_default(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    # Given an account with a default webhook URL
    owner = accounts.create_user(db, "hooks@example.com", "correct horse battery").user_id
    accounts.set_default_webhook_url(db, owner, "https://hooks.example.com/quire")
    dispatcher = Dispatcher(queue)
    submit = partial(service.submit, settings, db, dispatcher, "document_summary", _upload(), service.Limits(), owner)
    # When jobs are submitted with and without a callback_url of their own
    defaulted, own = submit().job, submit(callback_url="https://own.example.com/hook").job
    # Then the one without takes the account's URL as it is now, and the other keeps its own
    assert current(db, defaulted.id).callback_url == "https://hooks.example.com/quire"
    assert current(db, own.id).callback_url == "https://own.example.com/hook"
    # And a job of nobody's has none
    assert current(db, service.submit(settings, db, dispatcher, "document_summary", _upload(),
                                      service.Limits()).job.id).callback_url is None  # fmt: skip


def test_submit_many_records_each_message_it_publishes_and_tells_hooks_once(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    # Given a dispatcher with a hook that hears many moves at once and one that hears them one by one
    dispatcher = Dispatcher(queue)
    together: list[list[str]] = []
    one_by_one: list[str] = []

    class Together:
        def __call__(self, job_id: str, moved: object) -> None:
            raise AssertionError("a hook with `many` hears a bulk move in one call")

        def many(self, moves: list[tuple[str, object]]) -> None:
            together.append([job_id for job_id, _ in moves])

    dispatcher.on_commit(Together())
    dispatcher.on_commit(lambda job_id, moved: one_by_one.append(job_id))
    # When three uploads are submitted at once
    jobs = service.submit_many(
        settings, db, dispatcher, "document_summary", [_upload() for _ in range(3)], service.Limits(), None
    )
    # Then each job's message went out, the one its record expects, in order
    ids = [job.id for job in jobs]
    assert [m.job_id for m in queue.messages] == ids
    assert [current(db, job_id).message_id for job_id in ids] == [m.message_id for m in queue.messages]
    assert {current(db, job_id).status for job_id in ids} == {JobStatus.QUEUED}
    # And the hooks heard of every job: the first in one call, the second once per job
    assert together == [ids]
    assert one_by_one == ids


def test_submit_many_is_accepted_when_the_queue_is_down(settings: Settings, db: Database, queue: InMemoryQueue) -> None:
    queue.reachable = False
    dispatcher = Dispatcher(queue)
    jobs = service.submit_many(
        settings, db, dispatcher, "document_summary", [_upload(), _upload()], service.Limits(), None
    )
    assert queue.messages == []
    # The message ids are recorded all the same, and recovery republishes them once the queue is back
    assert all(current(db, job.id).message_id for job in jobs)
    queue.reachable = True
    for job in jobs:
        force(db, job.id, updated_at=utcnow() - timedelta(seconds=30))
    assert recover_once(settings, db, dispatcher).republished == 2
    assert {m.job_id for m in queue.messages} == {job.id for job in jobs}


def test_replay_publishes_once_and_only_from_a_replayable_state(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    dispatcher = Dispatcher(queue)
    job = make_job(db, JobStatus.DEAD_LETTER)
    service.replay(settings, db, dispatcher, job.id)
    [message] = queue.messages
    assert current(db, job.id).status == JobStatus.QUEUED
    assert current(db, job.id).message_id == message.message_id
    with pytest.raises(service.NotAllowed):
        service.replay(settings, db, dispatcher, job.id)
    assert len(queue.messages) == 1


def test_a_retry_publishes_a_delayed_message(settings: Settings, db: Database, queue: InMemoryQueue) -> None:
    job_id, ref = _running(db)
    record_failure(settings, db, Dispatcher(queue), current(db, job_id), ref, DOWN)
    [message] = queue.messages
    assert message.delay_s > 0
    assert current(db, job_id).status == JobStatus.QUEUED
    assert current(db, job_id).message_id == message.message_id


def test_a_final_failure_publishes_nothing(settings: Settings, db: Database, queue: InMemoryQueue) -> None:
    job_id, ref = _running(db, attempt=3)
    record_failure(settings, db, Dispatcher(queue), current(db, job_id), ref, DOWN)
    assert current(db, job_id).status == JobStatus.DEAD_LETTER
    assert queue.messages == []


def test_shutdown_hands_held_attempts_back_to_the_queue(
    settings: Settings, db: Database, storage: Storage, queue: InMemoryQueue
) -> None:
    job_id, ref = _running(db)
    control = ExecutionControl(worker_id=WORKER)
    control.hold(ref)
    assert Runner(db, storage, settings, Dispatcher(queue), control).release_held_attempts() == 1
    [message] = queue.messages
    assert current(db, job_id).status == JobStatus.QUEUED
    assert current(db, job_id).message_id == message.message_id
    assert control.held_jobs() == []


def test_recovery_requeues_an_expired_lease_and_dead_letters_one_out_of_attempts(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    with_budget = make_job(db, JobStatus.RUNNING, attempt=1)
    without_budget = make_job(db, JobStatus.RUNNING, attempt=3)
    report = recover_once(settings, db, Dispatcher(queue))
    assert (report.requeued, report.dead_lettered) == (1, 1)
    [message] = queue.messages
    assert message.job_id == with_budget.id
    assert current(db, with_budget.id).message_id == message.message_id
    assert current(db, without_budget.id).status == JobStatus.DEAD_LETTER


def test_recovery_republishes_only_a_message_the_queue_lost(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    dispatcher = Dispatcher(queue)
    kept = service.submit(settings, db, dispatcher, "document_summary", _upload(), service.Limits()).job
    lost = service.submit(settings, db, dispatcher, "document_summary", _upload(), service.Limits()).job
    queue.lose(current(db, lost.id).message_id or "")
    for job in (kept, lost):
        force(db, job.id, updated_at=utcnow() - timedelta(seconds=30))
    assert recover_once(settings, db, dispatcher).republished == 1
    assert {m.job_id for m in queue.messages} == {kept.id, lost.id}
    assert queue.held([current(db, lost.id).message_id or ""]) == [True]


def test_recovery_has_what_dead_workers_took_given_back_when_an_overdue_message_is_held(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    dispatcher = Dispatcher(queue)
    # Given a queued job whose message is held and not yet overdue: nothing to give back
    job = service.submit(settings, db, dispatcher, "document_summary", _upload(), service.Limits()).job
    recover_once(settings, db, dispatcher)
    assert queue.reclaims == 0
    # When it has waited past the grace with its message still held (perhaps by a worker that died)
    force(db, job.id, updated_at=utcnow() - timedelta(seconds=30))
    recover_once(settings, db, dispatcher)
    # Then the queue is asked to give back what dead workers took; right after an outage it is not
    assert queue.reclaims == 1
    recover_once(settings, db, dispatcher, reclaim=False)
    assert queue.reclaims == 1


def test_after_an_outage_recovery_gives_nothing_back_for_a_heartbeat_timeout() -> None:
    outage = Outage(heartbeat_timeout_s=0.2)
    assert outage.over()
    outage.seen()
    assert not outage.over()
    time.sleep(0.25)
    assert outage.over()


def test_after_commit_hooks_see_each_move_and_cannot_undo_it(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    dispatcher = Dispatcher(queue)
    seen: list[tuple[str, JobStatus]] = []

    def broken(_job_id: str, _moved: object) -> None:
        raise RuntimeError("a listener failed")

    dispatcher.on_commit(broken)
    dispatcher.on_commit(lambda job_id, moved: seen.append((job_id, moved.status)))  # type: ignore[attr-defined]
    job = make_job(db, JobStatus.CANCELLED)
    service.replay(settings, db, dispatcher, job.id)
    assert seen == [(job.id, JobStatus.QUEUED)]
    assert len(queue.messages) == 1
    # A transition that moves nothing tells nobody.
    with pytest.raises(service.NotAllowed):
        service.replay(settings, db, dispatcher, job.id)
    assert len(seen) == 1


def test_a_transition_that_moves_nothing_publishes_nothing(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    job = make_job(db, JobStatus.COMPLETED)
    dispatched = Dispatcher(queue).move(job.id, lambda message_id: states.replay(settings, db, job.id, message_id))
    assert dispatched.moved is None
    assert not dispatched.sent
    assert queue.messages == []


def test_hooks_also_hear_of_moves_that_send_nothing(settings: Settings, db: Database, queue: InMemoryQueue) -> None:
    dispatcher = Dispatcher(queue)
    seen: list[str] = []
    dispatcher.on_commit(lambda job_id, moved: seen.append(moved.status))  # type: ignore[attr-defined]
    job_id, ref = _running(db, attempt=3)
    record_failure(settings, db, dispatcher, current(db, job_id), ref, DOWN)
    queued = make_job(db, JobStatus.QUEUED)
    service.cancel(settings, db, dispatcher, queued.id)
    with pytest.raises(service.NotAllowed):
        service.cancel(settings, db, dispatcher, queued.id)
    assert seen == [JobStatus.DEAD_LETTER, JobStatus.CANCELLED]
    assert queue.messages == []


def test_hooks_hear_of_progress_written_with_the_lease(db: Database, queue: InMemoryQueue) -> None:
    dispatcher = Dispatcher(queue)
    seen: list[tuple[str, object]] = []
    dispatcher.on_commit(lambda job_id, moved: seen.append((job_id, moved)))
    job_id, ref = _running(db)
    AttemptProgress(db, ref, 30, on_written=dispatcher.committed)(Progress(2, 3, "Reading page 2 of 3"))
    assert seen == [(job_id, {"done": 2, "total": 3, "unit": "pages", "message": "Reading page 2 of 3"})]
    assert current(db, job_id).progress == seen[0][1]
    # A fenced-out attempt writes nothing and tells nobody.
    AttemptProgress(db, AttemptRef(job_id, 9, WORKER), 30, on_written=dispatcher.committed)(Progress(3, 3, "Done"))
    assert len(seen) == 1


def test_a_malformed_answers_evidence_is_published_with_the_failure_for_operators_only(
    settings: Settings, db: Database, queue: InMemoryQueue
) -> None:
    # Given a running attempt whose model answered in the wrong shape, with its raw answer staged
    job_id, ref = _running(db)
    malformed = MalformedOutput("bad shape", raw_answer="{}", problems=[{"path": "title", "message": "Field required"}])
    raw = Artifact(
        job_id=job_id,
        name="raw-answer-attempt-1.json",
        storage_key="k",
        size=2,
        sha256="0" * 64,
        content_type="application/json",
        operator_only=True,
    )
    # When a late attempt of the same job reports the same failure, nothing is published
    late = AttemptRef(job_id, 9, WORKER)
    record_failure(settings, db, Dispatcher(queue), current(db, job_id), late, classify(malformed, [raw]))
    assert store.evidence_of(db, job_id) == []
    # When the attempt that owns the job reports it, the job is dead-lettered with its evidence
    record_failure(settings, db, Dispatcher(queue), current(db, job_id), ref, classify(malformed, [raw]))
    assert current(db, job_id).status == JobStatus.DEAD_LETTER
    assert [a.name for a in store.evidence_of(db, job_id)] == ["raw-answer-attempt-1.json"]
    # Then operators read the validator's findings; the owner's view has neither
    assert "validation: title: Field required" in (operations.history(db, job_id)[-1].operator_detail or "")
    view = store.view_of(settings, db, job_id)
    assert view is not None
    assert view.artifacts == ()
    assert store.get_artifact(db, job_id, "raw-answer-attempt-1.json") is None
    assert store.get_artifact(db, job_id, "raw-answer-attempt-1.json", operator=True) is not None
