"""The attempt timeout: it holds against a blocked workflow, and grows with the pages OCR must read."""

from __future__ import annotations

import time

import pytest

from quire.queue.runner import AttemptTimedOut, call_with_timeout


def test_an_attempt_granted_more_time_while_it_runs_finishes() -> None:
    # Given an attempt with 0.3 s that learns, once running, that it has pages to read by OCR
    granted = [0.3]

    def read_scan() -> str:
        granted[0] = 5.0
        time.sleep(0.8)
        return "read"

    # Then it is not stopped at 0.3 s
    assert call_with_timeout(read_scan, 0.3, "test-attempt", lambda: granted[0]) == "read"


def test_an_attempt_past_its_allowance_times_out() -> None:
    started = time.monotonic()
    with pytest.raises(AttemptTimedOut) as raised:
        call_with_timeout(lambda: time.sleep(3), 0.3, "test-attempt", lambda: 0.6)
    assert raised.value.seconds == 0.6
    assert time.monotonic() - started < 1.5
