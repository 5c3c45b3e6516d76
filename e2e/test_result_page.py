"""The result on the job page, beside a preview of the document, in light and dark themes."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from backend.tests.integration.stack import Stack, document
from e2e.conftest import screenshot
from e2e.test_browser import open_job

CORPUS = Path(__file__).resolve().parents[1] / "backend" / "tests" / "corpus" / "zugferd" / "pdf"


def test_an_invoice_shows_field_states_line_items_and_its_boxes_on_the_page(page: Page, live: Stack) -> None:
    job_id = live.submit((CORPUS / "d05.pdf").read_bytes(), workflow="invoice_summary")
    live.wait(job_id)
    with page.expect_response(lambda r: r.url.endswith(f"/jobs/{job_id}/preview/1")) as rendered:
        open_job(page, job_id)
    assert rendered.value.status == 200
    assert rendered.value.headers["content-type"] == "image/png"
    states = page.locator(".invoice-fields tr[data-state]")
    expect(states).to_have_count(9)  # what the document is, then its eight fields
    expect(page.locator(".invoice-fields tr[data-field=total] .state")).to_have_text("Found")
    expect(page.get_by_label("Document")).to_have_value("invoice")
    for row in states.all():
        assert row.get_attribute("data-state") in {"found", "review", "missing"}
    # The reader's box for the total is drawn on the rendered first page.
    expect(page.locator("[data-preview=pages] svg[data-page='1']")).to_be_visible()
    expect(page.locator("svg[data-page='1'] rect[data-box=total]")).to_have_count(1)
    # The downloads come after the result.
    result_box = page.locator(".result").bounding_box()
    downloads = page.get_by_role("heading", name="Downloads").bounding_box()
    assert result_box is not None
    assert downloads is not None
    assert downloads["y"] > result_box["y"]


def test_an_unsure_invoice_says_how_many_fields_need_review(page: Page, live: Stack) -> None:
    text = b"Acme Supplies Ltd\nSubtotal: 100.00 EUR\nVAT: 19.00 EUR\nTotal: 150.00 EUR\n"
    job_id = live.submit(text, "invoice_summary")
    view = live.wait(job_id)
    open_job(page, job_id)
    badge = page.locator("[data-review-count]")
    count = int(badge.get_attribute("data-review-count") or 0)
    assert count >= 1
    plural = count != 1
    expect(badge).to_have_text(f"Completed, {count} field{'s' if plural else ''} need{'' if plural else 's'} review")
    assert view["status"] == "completed"
    expect(page.locator(".invoice-fields tr[data-field=total] .state")).to_have_text("Needs review")
    # A text document's preview is its text.
    expect(page.locator(".preview-text")).to_contain_text("Acme Supplies Ltd")
    # And the list of jobs says it too, so the invoices to check stand out among the finished ones
    page.goto("/jobs")
    row = page.locator(f"tr[data-job-id='{job_id}']")
    expect(row.locator("[data-review-count]")).to_have_attribute("data-review-count", str(count))
    expect(row.locator("[data-review-count]")).to_contain_text(f"{count} field{'s' if plural else ''} to check")


def test_a_credit_note_says_not_to_pay_it_and_gives_its_amounts_negative(page: Page, live: Stack) -> None:
    # Given a credit note that prints its amounts without a sign
    text = (
        b"CREDIT NOTE\nCredit Note No: CN-2025-007\nNorthwind Traders Ltd\n"
        b"Subtotal: 100.00 EUR\nVAT 20%: 20.00 EUR\nTotal credit: 120.00 EUR\n"
    )
    job_id = live.submit(text, "invoice_summary")
    live.wait(job_id)
    open_job(page, job_id)
    # Then the page says it is a credit note, not to be paid, and its total is a credit
    expect(page.locator("[data-credit-note]")).to_contain_text("Do not pay it")
    expect(page.locator("#review-total")).to_have_value("-120.00")
    expect(page.locator(".summary-text")).to_contain_text("Credit note CN-2025-007")
    expect(page.locator(".summary-text [data-as-read]")).to_have_count(0)
    # When the person says it is an invoice after all, and saves
    page.get_by_label("Document").select_option(label="Invoice")
    page.get_by_role("button", name="Save review").click()
    page.wait_for_url(f"**/jobs/{job_id}")
    # Then the warning goes, the amounts are owed again, and the row says what the reader had read
    expect(page.locator("[data-credit-note]")).to_have_count(0)
    expect(page.locator("#review-total")).to_have_value("120.00")
    kind = page.locator(".invoice-fields tr[data-field=document_type]")
    expect(kind).to_have_attribute("data-state", "corrected")
    expect(page.get_by_label("Document")).to_have_accessible_description("read as Credit note")
    # and the reader's sentence, which still calls it a credit note, says it is the reading before the review
    expect(page.locator(".summary-text [data-as-read]")).to_have_text("As read, before the review:")


def test_a_summary_shows_title_summary_key_points_keywords_language_and_counts(page: Page, live: Stack) -> None:
    job_id = live.submit(document())
    live.wait(job_id)
    open_job(page, job_id)
    result = page.locator(".result")
    expect(result.locator("h3")).to_contain_text("Quarterly operations report")
    expect(result.locator(".summary-text")).not_to_be_empty()
    expect(result.locator("[data-keywords]")).not_to_be_empty()
    expect(result.locator("[data-language]")).to_have_text("English")
    assert int(result.locator("[data-word-count]").inner_text().replace(",", "")) > 10


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_the_job_page_in_both_themes(
    browser: Browser, live: Stack, signed_in_state: str, scheme: str
) -> None:
    invoice = live.submit((CORPUS / "d05.pdf").read_bytes(), workflow="invoice_summary")
    summary = live.submit(document())
    live.wait(invoice)
    live.wait(summary)
    viewport = {"width": 1280, "height": 800}
    context = browser.new_context(
        base_url=live.base_url, storage_state=signed_in_state, color_scheme=scheme, viewport=viewport
    )
    page = context.new_page()
    for name, job_id in (("invoice", invoice), ("summary", summary)):
        open_job(page, job_id)
        page.wait_for_load_state("networkidle")
        screenshot(page, f"job-{name}-{scheme}")
        if name == "invoice":
            # Beside the preview the field table fits its frame, and no printed text is cut a letter a line
            frame = page.locator(".invoice-fields").locator("xpath=..")
            assert frame.evaluate("f => f.scrollWidth <= f.clientWidth"), "the field table scrolls sideways"
            printed = page.locator(".invoice-fields tbody td:last-child")
            widths = printed.evaluate_all("cells => cells.map(cell => cell.getBoundingClientRect().width)")
            assert min(widths) > 120, widths
    context.close()
