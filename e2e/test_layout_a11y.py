"""Every page at a phone's and a laptop's size: no sideways scrolling, and no accessibility
violation of serious or critical impact found by axe-core (run from its npm package inside the
page), in the light theme and in the dark one (which includes axe's colour-contrast rule)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from backend.tests.integration.stack import Stack, document
from e2e.conftest import sign_in

AXE = Path(__file__).resolve().parents[1] / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
RULE_TAGS = json.dumps(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"])
VIEWPORTS = {"phone": {"width": 360, "height": 740}, "laptop": {"width": 1280, "height": 800}}
CORPUS = Path(__file__).resolve().parents[1] / "backend" / "tests" / "corpus" / "zugferd" / "pdf"


def problems(page: Page) -> list[str]:
    """Sideways overflow and serious or critical axe findings on the page as it is now."""
    found = []
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if overflow > 0:
        wide = page.evaluate(
            """() => [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
                .slice(0, 3).map(e => e.tagName + '.' + e.className)"""
        )
        found.append(f"{overflow}px wider than the screen: {wide}")
    # Evaluated through the DevTools protocol, so the page's CSP (script-src 'self') still holds.
    page.evaluate(AXE.read_text("utf-8"))
    run = f"() => axe.run(document, {{runOnly: {{type: 'tag', values: {RULE_TAGS}}}}})"
    result: dict[str, Any] = page.evaluate(run)
    for violation in result["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = [node["target"] for node in violation["nodes"][:3]]
            found.append(f"{violation['id']} ({violation['impact']}): {json.dumps(targets)}")
    return found


def sweep(browser: Browser, live: Stack, state: str | None, paths: list[str]) -> list[str]:
    failures = []
    for scheme in ("light", "dark"):
        for name, viewport in VIEWPORTS.items():
            context = browser.new_context(
                base_url=live.base_url, storage_state=state, viewport=viewport, color_scheme=scheme
            )
            page = context.new_page()
            for path in paths:
                # The pages are whole when loaded: a finished job's page polls for nothing, and waiting for
                # the network to stay idle half a second cost half of this test's time.
                page.goto(path, wait_until="load")
                failures += [f"{path} [{name}, {scheme}] {p}" for p in problems(page)]
            context.close()
    return failures


@pytest.fixture(scope="module")
def jobs(live: Stack) -> dict[str, str]:
    made = {
        "summary": live.submit(document()),
        "invoice": live.submit((CORPUS / "d05.pdf").read_bytes(), workflow="invoice_summary"),
        "failed": live.submit(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog"),
    }
    for job_id in made.values():
        live.wait(job_id)
    return made


def test_a_persons_pages(browser: Browser, live: Stack, signed_in_state: str, jobs: dict[str, str]) -> None:
    paths = ["/", "/jobs", "/jobs?status=completed", "/batches", "/settings", "/no/such/page"]
    paths += [f"/jobs/{job_id}" for job_id in jobs.values()]
    assert sweep(browser, live, signed_in_state, paths) == []


def test_an_invoices_fields_read_as_cards_on_a_phone(
    browser: Browser, live: Stack, signed_in_state: str, jobs: dict[str, str]
) -> None:
    context = browser.new_context(base_url=live.base_url, storage_state=signed_in_state, viewport=VIEWPORTS["phone"])
    page = context.new_page()
    page.goto(f"/jobs/{jobs['invoice']}")
    row = page.locator(".invoice-fields tr[data-field=total]")
    box = row.bounding_box()
    assert box is not None
    # The name and the value side by side, the state and the printed text under them, not a column a
    # character wide (a row used to be over 500 px tall)
    assert box["height"] < 200, box
    printed = row.locator("q").bounding_box()
    assert printed is not None
    assert printed["width"] > 150, printed
    context.close()


def test_signed_out_pages(browser: Browser, live: Stack) -> None:
    assert sweep(browser, live, None, ["/login", "/signup"]) == []


def test_operator_pages(browser: Browser, live: Stack, jobs: dict[str, str], tmp_path: Path) -> None:
    live.create_user("layout-admin@example.com", admin=True)
    context = browser.new_context(base_url=live.base_url)
    sign_in(context.new_page(), live.base_url, "layout-admin@example.com")
    state = str(tmp_path / "admin.json")
    context.storage_state(path=state)
    context.close()
    paths = ["/admin/", "/admin/dead-letters", "/admin/jobs", f"/admin/jobs/{jobs['failed']}", "/jobs"]
    assert sweep(browser, live, state, paths) == []
