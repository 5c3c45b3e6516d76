"""Error codes (docs/architecture.md, "The failure policy") and the exceptions that carry them out of a workflow."""

from __future__ import annotations

from enum import StrEnum
from typing import TypedDict


class ErrorCode(StrEnum):
    TIMEOUT = "timeout"
    UPSTREAM_UNAVAILABLE = "upstream_unavailable"
    RATE_LIMITED = "rate_limited"
    WORKER_LOST = "worker_lost"
    INTERNAL_ERROR = "internal_error"
    MALFORMED_OUTPUT = "malformed_output"
    UPSTREAM_REJECTED = "upstream_rejected"
    INVALID_INPUT = "invalid_input"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    CANCELLED = "cancelled"


# Plain, safe text for each code: what the status payload says when nothing more specific is known.
ERROR_MESSAGES: dict[ErrorCode, str] = {
    ErrorCode.TIMEOUT: "The attempt ran longer than its time limit.",
    ErrorCode.UPSTREAM_UNAVAILABLE: "The model provider could not be reached or failed.",
    ErrorCode.RATE_LIMITED: "The model provider asked us to slow down.",
    ErrorCode.WORKER_LOST: "The worker running this job stopped before finishing it.",
    ErrorCode.INTERNAL_ERROR: "An unexpected error stopped the attempt.",
    ErrorCode.MALFORMED_OUTPUT: "The model returned a result that did not match the expected format.",
    ErrorCode.UPSTREAM_REJECTED: "The model provider refused the request.",
    ErrorCode.INVALID_INPUT: "The document could not be read.",
    ErrorCode.DEADLINE_EXCEEDED: "The job could not finish before its deadline.",
    ErrorCode.CANCELLED: "The job was cancelled.",
}


class JobFailure(Exception):
    """A workflow or provider failure with a known error code and a message safe to show users."""

    code: ErrorCode = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str | None = None, status_code: int | None = None) -> None:
        self.message = message or ERROR_MESSAGES[self.code]
        # The provider's HTTP status, for operators.
        self.status_code = status_code
        super().__init__(self.message)


class WorkerLost(JobFailure):
    code = ErrorCode.WORKER_LOST


class UpstreamUnavailable(JobFailure):
    code = ErrorCode.UPSTREAM_UNAVAILABLE


class RateLimited(JobFailure):
    code = ErrorCode.RATE_LIMITED

    def __init__(
        self, message: str | None = None, retry_after_s: float | None = None, status_code: int | None = 429
    ) -> None:
        super().__init__(message, status_code)
        self.retry_after_s = retry_after_s


class UpstreamRejected(JobFailure):
    code = ErrorCode.UPSTREAM_REJECTED


class Problem(TypedDict):
    """One thing a validator found wrong in a model's answer: where (`a.b.0`; empty: the whole answer) and what."""

    path: str
    message: str


class MalformedOutput(JobFailure):
    """The model answered, but not in the expected shape. Carries the evidence for operators: the
    raw answer as received and what the validator found wrong with it (docs/architecture.md,
    "The failure policy"); neither ever reaches the job's owner."""

    code = ErrorCode.MALFORMED_OUTPUT

    def __init__(
        self, message: str | None = None, raw_answer: str | None = None, problems: list[Problem] | None = None
    ) -> None:
        super().__init__(message)
        self.raw_answer = raw_answer
        self.problems = problems or []


class InvalidInput(JobFailure):
    code = ErrorCode.INVALID_INPUT


class StorageUnavailable(JobFailure):
    """The file storage (a bucket, most often) could not be reached or failed: transient, retried.

    A worker's attempt that meets it is retried with backoff like an unreachable provider; the web
    answers 503 with Retry-After.
    """

    code = ErrorCode.UPSTREAM_UNAVAILABLE

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or "The file storage could not be reached.")
