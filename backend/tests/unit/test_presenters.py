"""What the job page says: a banner for every error code, and the retry notice while a retry waits."""

from __future__ import annotations

import pytest

from quire.errors import ERROR_MESSAGES, ErrorCode
from quire.jobs.store import AttemptError, EventView, InputView, JobError, JobView
from quire.web.presenters import RETRY, UPLOAD, banner


def view(status: str, code: str | None, attempt: int = 1, events: tuple[EventView, ...] = ()) -> JobView:
    error = JobError(code=code, message=ERROR_MESSAGES[ErrorCode(code)]) if code else None
    errors = (AttemptError(attempt=attempt, code=code, at="2026-01-01T00:00:00Z"),) if code else ()
    return JobView(
        job_id="j1",
        workflow="document_summary",
        workflow_version="1",
        status=status,
        attempt=attempt,
        max_attempts=3,
        input=InputView(filename="a.txt", size=1, sha256="0" * 64),
        artifact=None,
        artifacts=(),
        error=error,
        errors=errors,
        events=events,
        created_at=None,
        updated_at=None,
        deadline_at=None,
        next_attempt_at=None,
        progress=None,
        queue=None,
        review=None,
    )


@pytest.mark.parametrize("code", [c.value for c in ErrorCode])
def test_every_error_code_has_a_plain_banner_with_an_action(code: str) -> None:
    status = "cancelled" if code == "cancelled" else "dead_letter"
    shown = banner(view(status, code))
    assert shown is not None
    assert shown.tone == "bad"
    assert shown.actions
    assert set(shown.actions) <= {RETRY, UPLOAD}
    assert "_" not in shown.text  # words for people, not codes like upstream_unavailable


def test_input_problems_say_what_was_wrong_with_the_file() -> None:
    events = (
        EventView(
            type="dead_letter", at=None, attempt=1, error="invalid_input", detail="This PDF is password-protected."
        ),
    )
    shown = banner(view("dead_letter", "invalid_input", events=events))
    assert shown is not None
    assert shown.text == "This PDF is password-protected."
    assert shown.actions == (UPLOAD,)


def test_a_scheduled_retry_is_announced_not_alarmed() -> None:
    shown = banner(view("queued", "upstream_unavailable"))
    assert shown is not None
    assert (shown.tone, shown.title, shown.actions) == ("warn", "Retrying automatically", ())
    assert "Attempt 1 failed" in shown.text


def test_no_banner_without_an_error_or_once_completed() -> None:
    assert banner(view("running", None)) is None
    assert banner(view("completed", "timeout")) is None
