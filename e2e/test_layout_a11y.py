"""Every page at a phone's and a laptop's size: no sideways scrolling, and no accessibility
violation of serious or critical impact found by axe-core (run from its npm package inside the
page), in the light theme and in the dark one. The themes differ only in colour, so the dark one
is checked by axe's colour rules alone."""

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


# axe's rules that look at colours: the only ones whose answer can change with the theme.
COLOUR_RULES = json.dumps(["color-contrast", "link-in-text-block"])
INK = "getComputedStyle(document.body).color"


def overflow(page: Page) -> list[str]:
    """Sideways overflow of the page as it is now."""
    wider = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if wider <= 0:
        return []
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .slice(0, 3).map(e => e.tagName + '.' + e.className)"""
    )
    return [f"{wider}px wider than the screen: {wide}"]


def violations(page: Page, run_only: str) -> list[str]:
    """Serious or critical axe findings on the page as it is now (axe is already in the page)."""
    result: dict[str, Any] = page.evaluate(f"() => axe.run(document, {{runOnly: {run_only}}})")
    found = []
    for violation in result["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = [node["target"] for node in violation["nodes"][:3]]
            found.append(f"{violation['id']} ({violation['impact']}): {json.dumps(targets)}")
    return found


def sweep(browser: Browser, live: Stack, state: str | None, paths: list[str]) -> list[str]:
    """Each page loaded once, then looked at in each size and each theme."""
    failures = []
    context = browser.new_context(base_url=live.base_url, storage_state=state)
    page = context.new_page()
    for path in paths:
        # The pages are whole when loaded: a finished job's page polls for nothing.
        page.goto(path, wait_until="load")
        # Evaluated through the DevTools protocol, so the page's CSP (script-src 'self') still holds.
        page.evaluate(AXE.read_text("utf-8"))
        for name, viewport in VIEWPORTS.items():
            page.set_viewport_size(viewport)
            page.emulate_media(color_scheme="light")
            light = page.evaluate(INK)
            found = [f"[{name}] {p}" for p in overflow(page)]
            found += [f"[{name}, light] {p}" for p in violations(page, f"{{type: 'tag', values: {RULE_TAGS}}}")]
            page.emulate_media(color_scheme="dark")
            assert page.evaluate(INK) != light, f"{path}: the dark theme did not take"
            found += [f"[{name}, dark] {p}" for p in violations(page, f"{{type: 'rule', values: {COLOUR_RULES}}}")]
            failures += [f"{path} {p}" for p in found]
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
