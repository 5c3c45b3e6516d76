"""The rough edges a new user hits, each as a flow in the browser: addresses that can be reloaded and
shared, a remembered workflow, size limits said before uploading, tokens that are not minted twice,
plain words instead of internal names, and a page that helps keyboard users."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from backend.tests.integration.stack import Stack, document
from e2e.conftest import sign_in
from e2e.test_browser import STATUS, expect_status, open_job, write_document

INTERNAL_NAMES = ("invoice_summary", "document_summary", "dead_letter", "invalid_input", "budget")


def test_status_filter_keeps_an_address_that_reloads_as_the_page(page: Page, live: Stack) -> None:
    live.wait(live.submit(document("rejected")))
    page.goto("/jobs")
    page.select_option("#status-filter", "dead_letter")
    expect(page).to_have_url(re.compile(r"/jobs\?status=dead_letter$"))
    expect(page.locator("#jobs-table .badge").first).to_have_text("Failed")
    page.reload()
    expect(page.get_by_role("heading", name="Your jobs")).to_be_visible()
    expect(page.locator("#status-filter")).to_have_value("dead_letter")
    expect(page.locator("link[rel=stylesheet]")).to_have_count(1)


def test_the_last_workflow_is_remembered(page: Page, tmp_path: Path) -> None:
    page.goto("/")
    page.select_option("#workflow", "invoice_summary")
    page.set_input_files("#file", str(write_document(tmp_path)))
    page.get_by_role("button", name="Upload and start").click()
    expect(page.locator(f"#submission {STATUS}")).to_have_count(1)
    # The form is ready for the next invoice, and keeps the choice across a reload too.
    expect(page.locator("#workflow")).to_have_value("invoice_summary")
    expect(page.locator("#file")).to_have_value("")
    page.reload()
    expect(page.locator("#workflow")).to_have_value("invoice_summary")
    page.select_option("#workflow", "document_summary")


def test_size_limit_is_checked_before_upload_and_a_413_is_explained(page: Page, tmp_path: Path) -> None:
    big = tmp_path / "huge.pdf"
    with big.open("wb") as out:  # sparse: 26 MB that costs no disk and is never sent
        out.truncate(26 * 1024 * 1024)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if r.method == "POST" else None)
    page.goto("/")
    page.set_input_files("#file", str(big))
    expect(page.locator("#upload-error")).to_contain_text("larger than the 25 MB limit")
    page.get_by_role("button", name="Upload and start").click()
    expect(page.locator("#upload-error")).to_contain_text("larger than the 25 MB limit")
    assert requests == []
    # A server that answers 413 anyway (a proxy with a lower limit, say) gets the same plain words.
    page.route("**/ai-jobs", lambda route: route.fulfill(status=413, body="Request Entity Too Large"))
    page.evaluate("document.querySelector('form[data-upload-form]').dataset.maxBytes = '0'")
    small = write_document(tmp_path)
    page.set_input_files("#file", str(small))
    page.get_by_role("button", name="Upload and start").click()
    expect(page.locator("#upload-error")).to_contain_text("larger than the 25 MB limit")
    assert "Entity" not in page.locator("#upload-error").inner_text()


def test_a_413_without_javascript_is_a_friendly_page(browser: Browser, live: Stack, tmp_path: Path) -> None:
    context = browser.new_context(java_script_enabled=False, base_url=live.base_url)
    page = context.new_page()
    sign_in(page, live.base_url)
    big = tmp_path / "huge.txt"
    big.write_bytes(b"a" * (26 * 1024 * 1024))
    page.goto("/")
    page.set_input_files("#file", str(big))
    page.get_by_role("button", name="Upload and start").click()
    expect(page.get_by_role("heading", name="File too large")).to_be_visible()
    expect(page.locator("main")).to_contain_text("Files can be up to 25 MB")
    context.close()


def test_token_creation_redirects_and_offers_a_copy_button(browser: Browser, live: Stack) -> None:
    context = browser.new_context(base_url=live.base_url)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.base_url)
    page = context.new_page()
    live.create_user("tokens@example.com")
    sign_in(page, live.base_url, "tokens@example.com")
    page.goto("/settings")
    before = page.locator("tr[data-token-id]").count()
    page.get_by_label("Token name").fill("billing script")
    page.get_by_role("button", name="Create token").click()
    expect(page).to_have_url(re.compile(r"/settings$"))
    token = page.locator("[data-new-token]").inner_text()
    assert token
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == token
    page.reload()
    expect(page.locator("[data-new-token]")).to_have_count(0)
    expect(page.locator("tr[data-token-id]")).to_have_count(before + 1)
    context.close()


def test_delete_lands_on_the_list_with_a_message(page: Page, live: Stack) -> None:
    job_id = live.submit(document())
    live.wait(job_id)
    open_job(page, job_id)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"/jobs$"))
    expect(page.locator("[data-notice]")).to_contain_text("Deleted doc.txt")
    page.reload()
    expect(page.locator("[data-notice]")).to_have_count(0)


def test_people_see_plain_words_and_technical_details_stay_folded(page: Page, live: Stack, tmp_path: Path) -> None:
    text = b"Acme Supplies Ltd\nSubtotal: 100.00 EUR\nVAT: 19.00 EUR\nTotal: 150.00 EUR\n"
    invoice = live.submit(text, "invoice_summary")
    rejected = live.submit(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")
    live.wait(invoice)
    live.wait(rejected)
    for job_id in (invoice, rejected):
        open_job(page, job_id)
        shown = page.locator("main").inner_text()
        for name in (*INTERNAL_NAMES, job_id if job_id == invoice else "sha256"):
            assert name not in shown, (name, shown)
        page.get_by_text("Technical details").click()
        expect(page.locator("[data-job-id-shown]")).to_have_text(job_id)
    page.goto("/jobs")
    shown = page.locator("main").inner_text()
    assert "Invoice breakdown" in shown
    for name in INTERNAL_NAMES:
        assert name not in shown, name


def test_sign_in_page_says_what_quire_does_and_unknown_pages_are_a_real_404(browser: Browser, live: Stack) -> None:
    context = browser.new_context(base_url=live.base_url)
    page = context.new_page()
    page.goto("/login")
    expect(page.locator(".lede")).to_contain_text("summary")
    response = page.goto("/no/such/page")
    assert response is not None
    assert response.status == 404
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    assert "Not Found" not in page.locator("main").inner_text()
    context.close()


def test_skip_link_focus_ring_and_focus_on_the_new_status(page: Page, tmp_path: Path) -> None:
    page.goto("/")
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineWidth")
    assert outline == "3px"
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    page.set_input_files("#file", str(write_document(tmp_path)))
    page.get_by_role("button", name="Upload and start").click()
    expect_status(page, "completed")
    focused = page.evaluate("document.activeElement.getAttribute('role')")
    assert focused == "status"
