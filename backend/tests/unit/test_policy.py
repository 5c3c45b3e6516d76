"""Backoff bounds and jitter, and which failures retry."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from quire.errors import ErrorCode
from quire.jobs.models import utcnow
from quire.jobs.policy import GiveUp, Retry, backoff_delay, decide


@pytest.mark.parametrize("attempt", [1, 2, 3, 5, 10])
def test_backoff_stays_within_full_jitter_bounds(attempt: int) -> None:
    rng = random.Random(attempt)
    ceiling = min(30.0, 1.0 * 2 ** (attempt - 1))
    delays = [backoff_delay(attempt, 1.0, 30.0, rng) for _ in range(2000)]
    assert all(0 <= d <= ceiling for d in delays)
    # Full jitter spreads delays over the whole range, not around one value.
    assert min(delays) < ceiling * 0.05
    assert max(delays) > ceiling * 0.95
    assert len({round(d, 6) for d in delays}) > 1900


def test_backoff_is_capped() -> None:
    assert all(backoff_delay(40, 2.0, 5.0) <= 5.0 for _ in range(100))


def _decide(code: ErrorCode, attempt: int, max_attempts: int = 3, **kw: object) -> Retry | GiveUp:
    now = utcnow()
    args: dict = {"now": now, "deadline_at": now + timedelta(hours=1), "base_s": 0.1, "max_s": 1.0}
    args.update(kw)
    return decide(code, attempt=attempt, max_attempts=max_attempts, **args)


@pytest.mark.parametrize(
    "code",
    [ErrorCode.TIMEOUT, ErrorCode.UPSTREAM_UNAVAILABLE, ErrorCode.RATE_LIMITED, ErrorCode.WORKER_LOST,
     ErrorCode.INTERNAL_ERROR],
)  # fmt: skip
def test_transient_errors_retry_within_budget(code: ErrorCode) -> None:
    assert isinstance(_decide(code, 1), Retry)
    assert isinstance(_decide(code, 2), Retry)
    assert _decide(code, 3) == GiveUp(code)


@pytest.mark.parametrize("code", [ErrorCode.MALFORMED_OUTPUT, ErrorCode.UPSTREAM_REJECTED, ErrorCode.INVALID_INPUT])
def test_terminal_errors_never_retry(code: ErrorCode) -> None:
    assert _decide(code, 1) == GiveUp(code)


def test_retry_after_is_honoured() -> None:
    decision = _decide(ErrorCode.RATE_LIMITED, 1, retry_after_s=7.5)
    assert isinstance(decision, Retry)
    assert decision.delay_s >= 7.5


def test_a_retry_past_the_deadline_gives_up() -> None:
    now = utcnow()
    decision = _decide(ErrorCode.TIMEOUT, 1, now=now, deadline_at=now + timedelta(seconds=1), retry_after_s=5)
    assert decision == GiveUp(ErrorCode.DEADLINE_EXCEEDED)
