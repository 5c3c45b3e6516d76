"""Live updates in the browser: the job card and the jobs list follow their streams, make no polling
request while a stream is open, and poll on the server's schedule when the stream is blocked."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from playwright.sync_api import Page, expect

from backend.tests.integration.stack import Stack, document
from e2e.conftest import E2E_POLLING, screenshot
from e2e.test_polling import gaps, record_polls


def epoch_ms(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


def watch_status_changes(page: Page) -> None:
    """Record in the page the wall-clock moment each status first shows."""
    page.evaluate(
        """() => {
          window.shownAt = {};
          const note = () => {
            const status = document.querySelector("[role=status]");
            const shown = status && status.dataset.status;
            if (shown && !(shown in window.shownAt)) window.shownAt[shown] = Date.now();
          };
          new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true });
          note();
        }"""
    )


def test_card_shows_each_change_from_the_stream_at_once_without_polling(page: Page, live: Stack) -> None:
    # Given a job page open on a five-second job (time for the page to load on a busy machine)
    job_id = live.submit(document("slow:5"))
    polls = record_polls(page, f"/jobs/{job_id}/status")
    page.goto(f"{live.base_url}/jobs/{job_id}")
    region = page.locator("[data-live-stream]")
    expect(region).to_have_attribute("data-live", "streaming")
    watch_status_changes(page)
    # When it finishes
    expect(page.locator("[role=status]")).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(region).to_have_attribute("data-live", "ended")
    screenshot(page, "live-card-completed")
    # Then the card showed it within 500 ms of the transition, and never polled meanwhile
    view = live.job(job_id)
    committed = epoch_ms(next(e["at"] for e in view["events"] if e["type"] == "completed"))
    shown = page.evaluate("() => window.shownAt.completed")
    assert shown - committed < 500, shown - committed
    assert polls == [], "the card polled while its stream was open"
    # And the final card carries the result and no polling attributes
    expect(page.locator("[data-artifact]").first).to_be_visible()
    assert page.locator("[data-poll]").count() == 0


def test_card_counts_down_its_place_in_line(page: Page, live: Stack) -> None:
    # Given twice the worker's four threads of work, and a job behind it (each job ahead long enough that
    # the line has not moved yet when a loaded machine has made the nine jobs and opened the page)
    ahead = [live.submit(document("slow:4")) for _ in range(8)]
    job_id = live.submit(document("slow:0.5"))
    page.goto(f"{live.base_url}/jobs/{job_id}")
    place = page.locator("[data-queue-position]")
    expect(place).to_contain_text("in line")
    first = int(place.get_attribute("data-queue-position") or 0)
    assert first >= 2, first
    # Then the place counts down live as the line moves, until the job runs and completes
    lower = "first => +(document.querySelector('[data-queue-position]')?.dataset.queuePosition ?? first) < first"
    page.wait_for_function(lower, arg=first, timeout=15_000)
    assert page.locator("[role=status]").get_attribute("data-status") == "queued"
    expect(page.locator("[role=status]")).to_have_attribute("data-status", "completed", timeout=30_000)
    for other in ahead:
        live.wait(other)


def test_page_reconnects_after_a_web_restart_and_shows_the_right_state(page: Page, live: Stack) -> None:
    # Given a job page following its stream
    job_id = live.submit(document("slow:6"))
    page.goto(f"{live.base_url}/jobs/{job_id}")
    region = page.locator("[data-live-stream]")
    expect(region).to_have_attribute("data-live", "streaming")
    # When the web process restarts on the same address while the job finishes
    assert live.web is not None
    live.web.terminate()
    live.web.wait(timeout=15)
    live.start_web(port=live.port)
    # Then the page reconnects and shows the state the job reached meanwhile
    expect(page.locator("[role=status]")).to_have_attribute("data-status", "completed", timeout=60_000)
    expect(region).to_have_attribute("data-live", "ended")


def test_blocked_stream_falls_back_to_the_polling_schedule_at_once(page: Page, live: Stack) -> None:
    # Given a proxy that cuts every stream
    page.route("**/stream*", lambda route: route.abort())
    job_id = live.submit(document("slow:30"))
    polls = record_polls(page, f"/jobs/{job_id}/status")
    streams = record_polls(page, f"/jobs/{job_id}/stream")
    # When the job page opens
    page.goto(f"{live.base_url}/jobs/{job_id}")
    expect(page.locator("[data-live-stream]")).to_have_attribute("data-live", "polling")
    page.wait_for_timeout(2000)
    # Then it asked as soon as the stream failed (well before the stream's retry, 2 s later), and
    # then polled on the server's fast schedule. Timed from the failed stream, not from the page
    # load, which a loaded machine can stretch.
    fast = float(E2E_POLLING["QUIRE_POLL_FAST_S"])
    assert polls, "the page never polled"
    assert streams, "the page never tried its stream"
    assert polls[0] - streams[0] < 1.0, polls[0] - streams[0]
    assert len(polls) >= 4, polls
    assert all(0.6 * fast < gap < 3 * fast for gap in gaps(polls[1:])), gaps(polls)
    assert live.http.post(f"/ai-jobs/{job_id}/cancel").status_code == 200
    expect(page.locator("[role=status]")).to_have_attribute("data-status", "cancelled")


def test_list_page_follows_several_jobs_live(page: Page, live: Stack) -> None:
    # Given the list open while three jobs run
    jobs = [live.submit(document("slow:1")) for _ in range(3)]
    polls = record_polls(page, "/jobs/table")
    page.goto(f"{live.base_url}/jobs")
    expect(page.locator("[data-live-stream]")).to_have_attribute("data-live", "streaming")
    # When another is submitted while the list is open
    jobs.append(live.submit(document("slow:0.5")))
    # Then every row, the new one too, reaches Completed from the stream, without polling
    for job_id in jobs:
        expect(page.locator(f"tr[data-job-id='{job_id}'] .badge")).to_have_text("Completed", timeout=30_000)
    screenshot(page, "live-list-completed")
    assert polls == [], "the list polled while its stream was open"


def test_card_says_so_when_its_job_is_deleted_elsewhere(page: Page, live: Stack) -> None:
    # Given a job page following the stream of a running job
    job_id = live.submit(document("slow:6"))
    live.wait(job_id, {"running"})
    polls = record_polls(page, f"/jobs/{job_id}/status")
    page.goto(f"{live.base_url}/jobs/{job_id}")
    region = page.locator("[data-live-stream]")
    expect(region).to_have_attribute("data-live", "streaming")
    # When the job is deleted from somewhere else (another tab, a script)
    assert live.http.delete(f"/ai-jobs/{job_id}").status_code == 204
    # Then the card says so at once and the stream ends, with no polling for a job that is gone
    expect(page.locator("[role=status]")).to_have_attribute("data-status", "deleted", timeout=5_000)
    expect(page.locator("[role=status]")).to_contain_text("deleted")
    expect(region).to_have_attribute("data-live", "ended")
    screenshot(page, "live-card-deleted")
    assert polls == []


def test_batch_page_follows_its_jobs_live_without_polling(page: Page, live: Stack) -> None:
    # Given a batch of a quick and a six-second document
    batch_id = live.submit_batch({"quick.txt": document(), "slow.txt": document("slow:6")})
    polls = record_polls(page, f"/batches/{batch_id}/card")
    # When its page is open
    page.goto(f"{live.base_url}/batches/{batch_id}")
    region = page.locator("[data-live-stream]")
    expect(region).to_have_attribute("data-live", "streaming")
    # Then the card reaches "2 of 2 done" from the stream, which then ends, and it never polled
    status = page.locator(f"[data-batch-id='{batch_id}']")
    expect(status).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(status).to_have_attribute("data-done", "2")
    expect(region).to_have_attribute("data-live", "ended")
    assert polls == [], "the batch card polled while its stream was open"
    assert page.locator("[data-poll]").count() == 0


def test_upload_page_card_follows_its_stream_without_polling(page: Page, live: Stack, tmp_path: Path) -> None:
    # Given the upload page, watched for the card's polls (they carry ?since=; the first read does not)
    page.goto(f"{live.base_url}/")
    polls = record_polls(page, "/status?since=")
    path = tmp_path / "report.txt"
    path.write_bytes(document("slow:3"))
    # When a slow document is uploaded through the form
    page.set_input_files("#file", str(path))
    page.get_by_role("button", name="Upload and start").click()
    region = page.locator("#submission")
    expect(region).to_have_attribute("data-live", "streaming")
    # (the server's streams last an hour: one that ends after 30 s open is taken as ended by the server)
    assert page.evaluate("window.quireLive.longLivedMs") == 30_000
    # Then its card goes on to Completed from the stream, which then ends, without polling
    expect(region.locator("[role=status]")).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(region).to_have_attribute("data-live", "ended")
    assert polls == [], "the upload page's card polled while its stream was open"
    # And the next upload's card follows its own job's stream
    path.write_bytes(document("slow:3"))
    page.set_input_files("#file", str(path))
    page.get_by_role("button", name="Upload and start").click()
    expect(region).to_have_attribute("data-live", "streaming")
    job_id = region.locator("[role=status]").get_attribute("data-job-id")
    assert region.get_attribute("data-live-stream") == f"/jobs/{job_id}/stream"
    expect(region.locator("[role=status]")).to_have_attribute("data-status", "completed", timeout=30_000)
    assert polls == []


def test_card_reopens_its_stream_when_the_server_ends_it_after_its_lifetime(page: Page, live: Stack) -> None:
    # Given a web process that ends every stream after 6 s (the page it serves takes a stream that
    # ends after half that for one ended by its lifetime, not a broken one), and a long job
    web = live.another_web(QUIRE_STREAM_MAX_S="6")
    job_id = live.submit(document("slow:60"))
    live.wait(job_id, {"running"})
    polls = record_polls(page, f"/jobs/{job_id}/status")
    streams = record_polls(page, f"/jobs/{job_id}/stream")
    page.goto(f"{web}/jobs/{job_id}")
    region = page.locator("[data-live-stream]")
    expect(region).to_have_attribute("data-live", "streaming")
    assert page.evaluate("window.quireLive.longLivedMs") == 3000
    # When the server ends the stream
    deadline = time.monotonic() + 20
    while len(streams) < 2 and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    # Then the page opened a fresh one at once, stayed live without polling, and shows the next change
    assert len(streams) >= 2, "the page did not reopen its stream"
    assert streams[1] - streams[0] > 5, gaps(streams)
    expect(region).to_have_attribute("data-live", "streaming")
    assert polls == [], "the card polled instead of reopening its stream"
    assert live.http.post(f"/ai-jobs/{job_id}/cancel").status_code == 200
    expect(page.locator("[role=status]")).to_have_attribute("data-status", "cancelled", timeout=5_000)
