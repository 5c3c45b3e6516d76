"""Errors as RFC 9457 problem details with a stable `code`; nothing internal ever leaks."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.plugins.problem_details import ProblemDetailsException

log = logging.getLogger(__name__)


def problem(status: int, code: str, detail: str, headers: dict[str, str] | None = None) -> ProblemDetailsException:
    return ProblemDetailsException(
        status_code=status,
        detail=detail,
        type_=f"/problems/{code}",
        title=HTTPStatus(status).phrase,
        headers=headers,
        extra={"code": code},
    )


STORAGE_RETRY_AFTER_S = 30
STORAGE_UNAVAILABLE = "File storage cannot be reached right now, so nothing was stored. Try again in a minute."


def storage_unavailable() -> ProblemDetailsException:
    """503 while the file storage cannot be reached: nothing was stored, no job was created."""
    return problem(
        503,
        "storage_unavailable",
        STORAGE_UNAVAILABLE,
        headers={"Retry-After": str(STORAGE_RETRY_AFTER_S)},
    )


MULTIPART_LIMIT = "Request Entity Too Large"
MULTIPART_LIMIT_ANSWER = (
    "A part of this form is over our limits: a file name longer than a few thousand characters, "
    "or more than 1,000 parts. Rename the file with a shorter name and upload it again."
)

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "rate_limited",
}


def explain_multipart_limit(request: Request[Any, Any, Any], exc: HTTPException) -> HTTPException:
    """Litestar answers a multipart part over the parser's limits (a header of about 4 KB, so a
    file name of thousands of characters, or more than 1,000 parts) with 400 "Request Entity Too
    Large"; the request is well formed but refused, so this says which part and what to do (422),
    for the browser's form and the API alike."""
    if exc.status_code == 400 and exc.detail == MULTIPART_LIMIT and request.content_type[0].startswith("multipart/"):
        return HTTPException(status_code=422, detail=MULTIPART_LIMIT_ANSWER)
    return exc


def http_exception_to_problem(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    """Framework errors (404 route, 405, 413 body, validation) in the same problem+json shape."""
    status = exc.status_code
    code = _CODES.get(status, "error")
    detail = exc.detail if status < 500 else "Something went wrong on our side."
    if isinstance(exc, ValidationException):
        status, code = 422, "invalid_request"
        extra = exc.extra if isinstance(exc.extra, list) else None
        converted = problem(status, code, "The request is not valid.")
        if extra:
            converted.extra = {"code": code, "errors": extra}
        return converted.to_response(request)
    headers = dict(exc.headers or {})
    if status == 429 and "retry-after" not in {k.lower() for k in headers}:
        # Litestar's rate limiter sends RateLimit-Reset (seconds); clients also expect Retry-After.
        reset = next((v for k, v in headers.items() if k.lower() == "ratelimit-reset"), "60")
        headers["Retry-After"] = str(max(1, int(float(reset))))
    return problem(status, code, detail, headers=headers).to_response(request)


def storage_unavailable_to_problem(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Any route that meets unreachable storage (a delete, a preview) answers 503 with Retry-After."""
    log.warning("storage unreachable on %s %s: %s", request.method, request.url.path, exc)
    return storage_unavailable().to_response(request)


def unexpected_to_problem(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem(500, "internal_error", "Something went wrong on our side.").to_response(request)
