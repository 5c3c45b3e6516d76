"""A deadline holds while a job runs: the policy is applied at the moment it passes, and recorded."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from backend.tests.integration.conftest import running_stack
from backend.tests.integration.stack import Stack, document, event_types
from quire.queue.embedded_redis import EmbeddedRedis


@pytest.fixture(
    scope="module",
    params=[
        ("sqlite", "stop"),
        ("sqlite", "finish"),
        pytest.param(("postgresql", "stop"), marks=pytest.mark.postgres),
        pytest.param(("postgresql", "finish"), marks=pytest.mark.postgres),
    ],
    ids=lambda p: "-".join(p),
)
def policy_stack(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, str]]:
    """A web and a worker under one deadline policy, on each database."""
    backend, policy = request.param
    root = tmp_path_factory.mktemp(f"deadline-{backend}-{policy}")
    env = {} if policy == "stop" else {"QUIRE_DEADLINE_POLICY": policy}  # `stop` is the default
    with running_stack(backend, redis_server, root, **env) as stack:
        yield stack, policy


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_a_running_attempt_meets_its_deadline_as_the_policy_says(policy_stack: tuple[Stack, str]) -> None:
    stack, policy = policy_stack
    # Given a job whose one attempt blocks for 8 s, and a deadline 2 s after submission
    submitted = time.monotonic()
    job_id = stack.submit(document("slow:8"), deadline_s=2)
    if policy == "stop":
        # When the deadline passes, the attempt is stopped: the job ends within about 3 s
        view = stack.wait(job_id, timeout=6)
        assert time.monotonic() - submitted < 3.5
        assert view["status"] == "dead_letter", view["events"]
        assert view["error"]["code"] == "deadline_exceeded"
        assert event_types(view) == ["queued", "running", "deadline_passed", "dead_letter"]
        assert "policy: stop" in view["events"][2]["detail"]
        # And when the abandoned attempt finishes at 8 s and stages its artifacts, its late
        # result is fenced out of the record, and its files are removed
        deadline = time.monotonic() + 10
        while "abandoned attempt ended" not in stack.logs("worker"):
            assert time.monotonic() < deadline, "the abandoned attempt never finished"
            time.sleep(0.1)
        assert stack.stored(f"artifacts/{job_id}") == []
        after = stack.job(job_id)
        assert after["status"] == "dead_letter"
        assert event_types(after) == event_types(view)
        assert (after["artifact"], after["artifacts"]) == (None, [])
    else:
        # When the deadline passes under `finish`, the attempt runs on and the job completes
        view = stack.wait(job_id, timeout=15)
        assert view["status"] == "completed", view["events"]
        assert time.monotonic() - submitted >= 8
        assert event_types(view) == ["queued", "running", "deadline_passed", "completed"]
        passed = view["events"][2]
        assert "policy: finish" in passed["detail"]
        assert view["artifact"] is not None
    # Either way the event records the moment the deadline passed
    lateness = (_at(view["events"][2]["at"]) - _at(view["deadline_at"])).total_seconds()
    assert 0 <= lateness < 1.0


def test_an_attempt_that_ends_before_the_deadline_is_untouched(policy_stack: tuple[Stack, str]) -> None:
    stack, _ = policy_stack
    view = stack.wait(stack.submit(document("slow:0.5"), deadline_s=5))
    assert view["status"] == "completed"
    assert event_types(view) == ["queued", "running", "completed"]
