"""Operator pages in the browser: an admin sees every page; screenshots of each are kept."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Browser, expect

from backend.tests.integration.stack import Stack, document
from e2e.conftest import screenshot, sign_in


def _dead_again(view: dict[str, Any]) -> bool:
    """Whether the job went back to dead letter after its latest replay."""
    types = [event["type"] for event in view["events"]]
    if "replayed" not in types or view["status"] != "dead_letter":
        return False
    after = types[len(types) - 1 - types[::-1].index("replayed") :]
    return "dead_letter" in after


def test_operator_pages(browser: Browser, live: Stack) -> None:
    live.create_user("ops-admin@example.com", admin=True)
    dead = live.submit(document("crash"), max_attempts=1)
    live.wait(dead)
    unreadable = live.submit(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")
    live.wait(unreadable)
    live.wait(live.submit(document()))
    malformed = live.submit(document("malformed"))
    live.wait(malformed)
    context = browser.new_context(base_url=live.base_url)
    page = context.new_page()
    sign_in(page, live.base_url, "ops-admin@example.com")
    page.get_by_role("link", name="Operations").click()
    expect(page.get_by_role("heading", name="Operations")).to_be_visible()
    expect(page.locator("[data-worker]")).not_to_have_count(0)
    screenshot(page, "admin-overview")
    page.get_by_role("link", name="Failed jobs").click()
    group = page.locator('[data-fingerprint="internal_error:document_summary@1"]')
    expect(group).to_be_visible()
    # System failures can be replayed; rejected documents are counted apart and offer no replay.
    system = page.locator("[data-group-kind=system]")
    rejected = page.locator("[data-group-kind=rejected]")
    expect(system.locator('[data-fingerprint^="invalid_input"]')).to_have_count(0)
    rejected_group = rejected.locator('[data-fingerprint="invalid_input:document_summary@1"]')
    expect(rejected_group).to_contain_text("We could not read this document")
    expect(rejected.get_by_role("button")).to_have_count(0)
    assert int(rejected.locator("[data-rejected-count]").inner_text()) >= 1
    assert "invalid_input" not in rejected.inner_text()
    screenshot(page, "admin-dead-letters")
    group.get_by_role("button", name="Replay group…").click()
    expect(page.get_by_role("heading")).to_contain_text("Replay")
    screenshot(page, "admin-confirm-replay")
    # Confirmed, the replay is recorded for the workers and its progress is on the failed-jobs page.
    page.get_by_role("button", name="Replay 1 job").click()
    replay = page.locator("tr[data-replay]").first
    expect(replay).to_contain_text("of 1 replayed")
    screenshot(page, "admin-group-replay")
    # Replayed, it crashes again: the list shows it once it is back in dead letter. The job was in
    # dead letter before the replay too, so wait for a dead letter that comes after the replay.
    deadline = time.monotonic() + 30
    while not _dead_again(live.job(dead)):
        assert time.monotonic() < deadline, live.job(dead)["events"]
        time.sleep(0.05)
    page.goto("/admin/jobs?status=dead_letter")
    expect(page.locator(f"tr[data-job-id='{dead}']")).to_be_visible()
    screenshot(page, "admin-jobs")
    # Searched by creation date (UTC unless it says otherwise); a date that is not one is said so
    page.goto("/admin/jobs?status=dead_letter&created_from=2000-01-01&created_to=2999-01-01")
    expect(page.locator(f"tr[data-job-id='{dead}']")).to_be_visible()
    page.goto("/admin/jobs?created_from=yesterday")
    expect(page.locator("[data-error-page='400']")).to_contain_text("is not a date")
    page.goto("/admin/jobs?status=dead_letter")
    page.locator(f"tr[data-job-id='{dead}'] a").click()
    expect(page.locator("td code").filter(has_text="FakeCrash")).not_to_have_count(0)
    screenshot(page, "admin-job-history")
    # A malformed answer's evidence: the validator's findings and the raw answer, for operators.
    page.goto(f"/admin/jobs/{malformed}")
    expect(page.locator("td code").filter(has_text="validation: title: Field required")).to_be_visible()
    with page.expect_download() as download:
        page.get_by_role("link", name="raw-answer-attempt-1.json").click()
    assert download.value.suggested_filename == "raw-answer-attempt-1.json"
    screenshot(page, "admin-job-evidence")
    context.close()
