"""The failure policy as the runner applies it: what failed (classify), and what happens next
(retry with backoff, or dead letter) as `jobs.policy.decide` says (docs/architecture.md,
"The failure policy")."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import structlog

from quire.db import Database
from quire.errors import ERROR_MESSAGES, ErrorCode, JobFailure, MalformedOutput, Problem, RateLimited
from quire.jobs import policy, states
from quire.jobs.models import Artifact, Job, utcnow
from quire.jobs.states import AttemptRef
from quire.queue.dispatch import Dispatcher
from quire.settings import Settings

log = structlog.stdlib.get_logger(__name__)


@dataclass(frozen=True)
class AttemptFailure:
    """How an attempt failed: the code and the owner's message, what operators see, and the
    evidence files the attempt staged (published by the transition that records the failure)."""

    code: ErrorCode
    message: str
    operator_detail: str
    retry_after_s: float | None = None
    evidence: list[Artifact] = field(default_factory=list)


class FailedAttempt(Exception):
    """An attempt's failure, already classified (an isolated attempt's, or one with evidence)."""

    def __init__(self, failure: AttemptFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def classify(exc: BaseException, evidence: list[Artifact] | None = None) -> AttemptFailure:
    """The failure an exception out of an attempt stands for; anything unknown is `internal_error`."""
    if isinstance(exc, FailedAttempt):
        return exc.failure
    if isinstance(exc, JobFailure):
        retry_after = exc.retry_after_s if isinstance(exc, RateLimited) else None
        return AttemptFailure(exc.code, exc.message, operator_detail(exc), retry_after, evidence or [])
    code = ErrorCode.INTERNAL_ERROR
    return AttemptFailure(code, ERROR_MESSAGES[code], operator_detail(exc), None, evidence or [])


def operator_detail(exc: BaseException) -> str:
    """What an operator needs to see: the exception type and message, the provider's status, and
    for a malformed answer the validator's findings (field path and message)."""
    status = getattr(exc, "status_code", None)
    cause = exc.__cause__
    parts = [f"{type(exc).__name__}: {str(exc)[:500]}"]
    if status is not None:
        parts.append(f"provider status {status}")
    if isinstance(exc, MalformedOutput) and exc.problems:
        parts.append("validation: " + "; ".join(_problem(p) for p in exc.problems))
    elif cause is not None:
        parts.append(f"caused by {type(cause).__name__}: {str(cause)[:300]}")
    return "; ".join(parts)


def _problem(problem: Problem) -> str:
    return f"{problem['path'] or '(answer)'}: {problem['message']}"


def record_failure(
    settings: Settings, db: Database, dispatcher: Dispatcher, job: Job, ref: AttemptRef, failure: AttemptFailure
) -> bool:
    """Retry the job after its backoff, or dead-letter it, as the policy decides. False when the
    attempt no longer holds the job (fenced out): nothing was recorded, its evidence included."""
    decision = policy.decide(
        failure.code,
        attempt=job.attempt - job.attempt_floor,
        max_attempts=job.max_attempts,
        now=utcnow(),
        deadline_at=job.deadline_at,
        base_s=settings.retry_base_s,
        max_s=settings.retry_max_s,
        retry_after_s=failure.retry_after_s,
    )
    log.info("attempt failed", error=failure.code.value, retry=isinstance(decision, policy.Retry))
    if isinstance(decision, policy.Retry):
        detail = f"{failure.message} Retrying in {decision.delay_s:.1f} s."
        retried = dispatcher.move(
            job.id,
            lambda message_id: states.retry(
                settings,
                db,
                ref,
                failure.code,
                decision.delay_s,
                message_id,
                detail,
                failure.operator_detail,
                failure.evidence,
            ),
            delay_s=decision.delay_s,
        )
        return retried.moved is not None
    message = failure.message
    if decision.code is not failure.code:
        # The failure was retryable, but its backoff would end past the deadline: no retry is scheduled.
        message = (
            f"{ERROR_MESSAGES[decision.code]} A retry after this failure ({failure.code.value}) would start too late."
        )
    dead = partial(
        states.dead_letter, settings, db, ref, decision.code, message, failure.operator_detail, failure.evidence
    )
    return dispatcher.record(job.id, dead) is not None
