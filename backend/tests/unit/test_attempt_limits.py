"""How long the worker waits for an attempt: its timeout, and the job's deadline by policy."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from quire.db import Database
from quire.jobs import states
from quire.jobs.models import utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.jobs.states import AttemptRef
from quire.queue.execution import AttemptLimits, AttemptTimedOut, DeadlinePassed
from quire.settings import Settings

REF = AttemptRef("job-1", 1, "worker-a")


@pytest.fixture
def passed(monkeypatch: pytest.MonkeyPatch) -> list[DeadlinePolicy]:
    """The policies the runner reported the deadline passing with (the job record is not needed)."""
    calls: list[DeadlinePolicy] = []
    monkeypatch.setattr(states, "pass_deadline", lambda settings, db, job_id, policy, ref=None: calls.append(policy))
    return calls


def never_finishes(seconds: float) -> bool:
    time.sleep(seconds)
    return False


def limits(db: Database, timeout_s: float, deadline_in_s: float, policy: DeadlinePolicy) -> AttemptLimits:
    return AttemptLimits(db, Settings(), REF, timeout_s, utcnow() + timedelta(seconds=deadline_in_s), policy)


@pytest.mark.parametrize("policy", list(DeadlinePolicy))
def test_a_timeout_before_the_deadline_is_a_timeout(
    db: Database, passed: list[DeadlinePolicy], policy: DeadlinePolicy
) -> None:
    with pytest.raises(AttemptTimedOut):
        limits(db, 0.1, 60, policy).wait(never_finishes)
    assert passed == []


def test_under_stop_the_wait_ends_at_the_deadline(db: Database, passed: list[DeadlinePolicy]) -> None:
    started = time.monotonic()
    with pytest.raises(DeadlinePassed):
        limits(db, 60, 0.2, DeadlinePolicy.STOP).wait(never_finishes)
    assert 0.2 <= time.monotonic() - started < 1
    assert passed == [DeadlinePolicy.STOP]


def test_under_finish_the_deadline_is_recorded_and_the_wait_goes_on(db: Database, passed: list[DeadlinePolicy]) -> None:
    started = time.monotonic()
    with pytest.raises(AttemptTimedOut):
        limits(db, 0.5, 0.2, DeadlinePolicy.FINISH).wait(never_finishes)
    assert time.monotonic() - started >= 0.5
    assert passed == [DeadlinePolicy.FINISH]


def test_an_attempt_that_finishes_first_is_left_alone(db: Database, passed: list[DeadlinePolicy]) -> None:
    limits(db, 60, 0.5, DeadlinePolicy.STOP).wait(lambda seconds: True)
    assert passed == []
