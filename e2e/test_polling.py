"""The adaptive polling cadence, measured from the requests the page really makes.

Pages follow a live stream when they can (test_live.py); here every stream is cut, as a proxy
that does not pass them would, so the pages fall back to this schedule.

The schedule is shrunk by settings (fast 0.3 s for 1.5 s, then 0.8 s, stop after 4 s) so the
test watches the whole shape of DESIGN's 2 s / 5 s / 2 min schedule in a few seconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import pairwise
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from backend.tests.integration.stack import Stack, document
from e2e.conftest import screenshot, sign_in, start_stack
from quire.queue.embedded_redis import EmbeddedRedis

FAST, FAST_FOR, SLOW, STOP_AFTER = 0.3, 1.5, 0.8, 4.0


@pytest.fixture(scope="module")
def cadence_stack(e2e_redis: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack, database = start_stack(
        tmp_path_factory.mktemp("cadence"),
        e2e_redis,
        1,
        QUIRE_POLL_FAST_S=str(FAST),
        QUIRE_POLL_FAST_FOR_S=str(FAST_FOR),
        QUIRE_POLL_SLOW_S=str(SLOW),
        QUIRE_POLL_STOP_AFTER_S=str(STOP_AFTER),
    )
    yield stack
    stack.stop()
    database.drop()


def record_polls(page: Page, path: str) -> list[float]:
    times: list[float] = []

    def on_request(request: Request) -> None:
        if path in request.url:
            times.append(time.monotonic())

    page.on("request", on_request)
    return times


def record_watch(page: Page, path: str) -> list[tuple[float, float]]:
    """Each poll's wall-clock time and the start of the watch it belongs to (its `since`), in seconds.

    The server counts the schedule from `since`, the moment it rendered the page, so the phases
    are read against that rather than against when the test asked for the page (a busy machine
    can take a second to serve it).
    """
    polls: list[tuple[float, float]] = []

    def on_request(request: Request) -> None:
        if path in request.url:
            asked = time.time()
            since = parse_qs(urlsplit(request.url).query).get("since")
            # (without one, as when the page turns from a failed stream to polling, the watch starts now)
            polls.append((asked, int(since[0]) / 1000 if since else asked))

    page.on("request", on_request)
    return polls


def without_streams(page: Page) -> None:
    page.route("**/stream*", lambda route: route.abort())


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in pairwise(times)]


@pytest.mark.serial  # measures the gaps between polls, which a busy machine stretches
def test_polling_backs_off_stops_and_resumes_on_check_now(page: Page, cadence_stack: Stack) -> None:
    sign_in(page, cadence_stack.base_url)
    without_streams(page)
    job_id = cadence_stack.submit(document("slow:30"))
    watch = record_watch(page, f"/jobs/{job_id}/status")
    page.goto(f"{cadence_stack.base_url}/jobs/{job_id}")
    # Polling stops after the watch limit and says the job is still working
    still = page.locator("[data-still-working]")
    expect(still).to_contain_text("Still working — this is taking longer than usual", timeout=15_000)
    stopped_at = len(watch)
    screenshot(page, "polling-still-working")
    polls = [asked for asked, _ in watch]
    # A gap's length was decided when its first poll was answered, by how long the page had watched
    watched = [asked - since for asked, since in watch]
    # (read with a margin for the server's answer: it decides when it answers, a little after `asked`)
    fast = [g for w, g in zip(watched, gaps(polls), strict=False) if w < FAST_FOR - 0.4]
    slow = [g for w, g in zip(watched, gaps(polls), strict=False) if w > FAST_FOR + 0.2]
    assert len(fast) >= 2, polls
    assert len(slow) >= 2, polls
    assert all(0.2 < g < 0.6 for g in fast), fast
    assert all(0.7 < g < 1.3 for g in slow), slow
    time.sleep(2 * SLOW + 0.5)
    assert len(watch) == stopped_at, "the page kept polling after it gave up"
    # "Check now" asks at once and resumes the fast schedule
    clicked = time.time()
    page.get_by_role("link", name="Check now").click()
    expect(still).to_have_count(0)
    page.wait_for_timeout(1000)
    resumed = [asked for asked, _ in watch if asked >= clicked]
    assert resumed, "Check now made no request"
    assert resumed[0] - clicked < 0.3, resumed
    assert len(resumed) >= 3, resumed
    # A terminal state stops polling at once
    assert cadence_stack.http.post(f"/ai-jobs/{job_id}/cancel").status_code == 200
    expect(page.locator("[role=status]")).to_have_attribute("data-status", "cancelled")
    final = len(watch)
    time.sleep(2 * SLOW + 0.5)
    assert len(watch) == final, "the page kept polling a finished job"


def test_list_polls_only_while_a_job_is_unfinished(page: Page, cadence_stack: Stack) -> None:
    sign_in(page, cadence_stack.base_url)
    without_streams(page)
    job_id = cadence_stack.submit(document("slow:1"))
    polls = record_polls(page, "/jobs/table")
    page.goto(f"{cadence_stack.base_url}/jobs")
    expect(page.locator(f"tr[data-job-id='{job_id}'] .badge")).to_have_text("Completed", timeout=15_000)
    assert polls, "the list never polled while a job was running"
    settled = len(polls)
    time.sleep(2 * SLOW + 0.5)
    assert len(polls) == settled, "the list kept polling with only finished jobs"
