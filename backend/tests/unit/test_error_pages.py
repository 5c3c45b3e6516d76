"""How a failure is answered: a page in words for a browser, problem+json for the API and programs."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.response import Template

from quire.app import on_storage_unavailable, on_unexpected
from quire.documents.storage import StorageUnavailable


def request(path: str, accept: str) -> Request[Any, Any, Any]:
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [(b"accept", accept.encode())], "app": None, "state": {}, "path_params": {}}  # fmt: skip
    return Request(scope)  # type: ignore[arg-type]


def test_a_failure_of_ours_is_a_page_in_words_for_a_browser() -> None:
    answer = on_unexpected(request("/jobs", "text/html,application/xhtml+xml"), RuntimeError("a secret detail"))
    assert isinstance(answer, Template)
    assert answer.status_code == 500
    assert answer.context["title"] == "Something went wrong"
    assert "secret" not in answer.context["detail"]


def test_a_failure_of_ours_is_problem_json_for_the_api_even_from_a_browser() -> None:
    answer = on_unexpected(request("/ai-jobs/export.csv", "text/html"), RuntimeError("a secret detail"))
    assert not isinstance(answer, Template)
    assert answer.status_code == 500
    assert answer.content["code"] == "internal_error"


def test_unreachable_storage_is_a_page_that_says_when_to_try_again() -> None:
    answer = on_storage_unavailable(request("/jobs/abc", "text/html"), StorageUnavailable("bucket down"))
    assert isinstance(answer, Template)
    assert answer.status_code == 503
    assert "Retry-After" in answer.headers
