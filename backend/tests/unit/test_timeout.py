"""The attempt timeout: it holds against a blocked workflow, and grows with the pages OCR must read."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from quire.db import Database
from quire.jobs.models import utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.jobs.states import AttemptRef
from quire.queue.execution import AttemptLimits, AttemptTimedOut, ExecutionControl, call_with_timeout
from quire.settings import Settings


def limits(db: Database, timeout_s: float) -> AttemptLimits:
    return AttemptLimits(db, Settings(), AttemptRef("job-1", 1, "worker-a"), timeout_s, utcnow() + timedelta(hours=1),
                         DeadlinePolicy.STOP)  # fmt: skip


def test_an_attempt_granted_more_time_while_it_runs_finishes(db: Database) -> None:
    # Given an attempt with 0.3 s that learns, once running, that it has a page to read by OCR
    given = limits(db, 0.3)

    def read_scan() -> str:
        given.allow_ocr_pages(1)
        time.sleep(0.8)
        return "read"

    # Then it is not stopped at 0.3 s
    assert call_with_timeout(read_scan, given, "test-attempt", ExecutionControl()) == "read"


def test_an_attempt_past_its_allowance_times_out(db: Database) -> None:
    given = limits(db, 0.3)
    given.extra_s = 0.3
    started = time.monotonic()
    with pytest.raises(AttemptTimedOut) as raised:
        call_with_timeout(lambda: time.sleep(3), given, "test-attempt", ExecutionControl())
    assert raised.value.seconds == pytest.approx(0.6)
    assert time.monotonic() - started < 1.5
