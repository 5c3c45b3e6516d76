"""The retry policy: which failures retry, how long to back off, when to give up; and what a
running attempt does when its job's deadline passes."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from quire.errors import ErrorCode
from quire.settings import DeadlinePolicy as DeadlinePolicy  # a setting; named here with the rest of the policy

RETRYABLE: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.TIMEOUT,
        ErrorCode.UPSTREAM_UNAVAILABLE,
        ErrorCode.RATE_LIMITED,
        ErrorCode.WORKER_LOST,
        ErrorCode.INTERNAL_ERROR,
    }
)


def backoff_delay(attempt: int, base_s: float, max_s: float, rng: random.Random | None = None) -> float:
    """Exponential backoff with full jitter: uniform(0, min(max, base * 2**(attempt-1)))."""
    ceiling = min(max_s, base_s * 2 ** max(attempt - 1, 0))
    return (rng or random).uniform(0, ceiling)


@dataclass(frozen=True)
class Retry:
    delay_s: float


@dataclass(frozen=True)
class GiveUp:
    code: ErrorCode


def decide(
    code: ErrorCode,
    *,
    attempt: int,
    max_attempts: int,
    now: datetime,
    deadline_at: datetime,
    base_s: float,
    max_s: float,
    retry_after_s: float | None = None,
) -> Retry | GiveUp:
    """What follows a failed attempt: a retry after a delay, or dead letter with a code."""
    if code not in RETRYABLE or attempt >= max_attempts:
        return GiveUp(code)
    delay = backoff_delay(attempt, base_s, max_s)
    if retry_after_s is not None:
        delay = max(delay, retry_after_s)
    if now + timedelta(seconds=delay) >= deadline_at:
        return GiveUp(ErrorCode.DEADLINE_EXCEEDED)
    return Retry(delay)
