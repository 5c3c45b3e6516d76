"""The browser experience in a real Chromium: upload, live status, downloads, errors and their actions."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from backend.tests.integration.stack import Stack, document
from backend.tests.scans import encode, page_images
from e2e.conftest import screenshot, sign_in

STATUS = "[role=status][data-status]"


def write_document(tmp_path: Path, mode: str = "success", name: str = "report.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(document(mode))
    return path


def upload(page: Page, path: Path) -> str:
    """Upload through the form with JavaScript; returns the job id shown once the job is accepted."""
    page.goto("/")
    page.set_input_files("#file", str(path))
    page.get_by_role("button", name="Upload and start").click()
    status = page.locator(f"#submission {STATUS}")
    expect(status).to_have_count(1)
    job_id = status.get_attribute("data-job-id")
    assert job_id
    return job_id


def open_job(page: Page, job_id: str) -> None:
    page.goto(f"/jobs/{job_id}")
    expect(page.locator(STATUS)).to_have_attribute("data-job-id", job_id)


def expect_status(page: Page, status: str, timeout: float = 20_000) -> None:
    expect(page.locator(STATUS).first).to_have_attribute("data-status", status, timeout=timeout)


def test_success_flow_shows_progress_live_status_and_verified_downloads(page: Page, tmp_path: Path) -> None:
    # Given the upload page, watched for progress labels and for reloads
    page.goto("/")
    page.evaluate(
        """() => {
            window.__labels = [];
            window.__notReloaded = true;
            const label = document.getElementById('upload-progress-label');
            new MutationObserver(() => window.__labels.push(label.textContent))
                .observe(label, {childList: true, characterData: true, subtree: true});
        }"""
    )
    # When a slow document is uploaded
    page.set_input_files("#file", str(write_document(tmp_path, "slow:1.5")))
    page.get_by_role("button", name="Upload and start").click()
    # Then the page shows upload progress and "Queued" at once, then the status changes live
    expect(page.locator(f"#submission {STATUS}")).to_have_count(1)
    labels = page.evaluate("window.__labels")
    assert any(re.match(r"Uploading… \d+%", text) for text in labels), labels
    assert "Queued" in labels
    expect_status(page, "running")
    screenshot(page, "upload-running")
    expect_status(page, "completed")
    assert page.evaluate("window.__notReloaded") is True
    screenshot(page, "upload-completed")
    # And each artifact downloads with the sha256 the page shows
    links = page.locator("#submission a[data-artifact]")
    expect(links).to_have_count(2)
    for i in range(2):
        link = links.nth(i)
        shown = page.locator(f"[data-artifact-sha256='{link.get_attribute('data-artifact')}']").text_content()
        with page.expect_download() as info:
            link.click()
        data = Path(info.value.path()).read_bytes()
        assert hashlib.sha256(data).hexdigest() == shown
        assert info.value.suggested_filename == link.get_attribute("data-artifact")
    # And the recent jobs list below shows the finished job
    expect(page.locator("#recent-jobs tr").nth(1).locator(".badge")).to_have_text("Completed")


def test_job_page_shows_result_timeline_and_details(page: Page, live: Stack) -> None:
    job_id = live.submit(document())
    live.wait(job_id)
    open_job(page, job_id)
    expect(page.locator(".result h3")).to_contain_text("Quarterly operations report")
    expect(page.locator(".timeline li")).to_have_count(3)
    # Times are shown in the viewer's time zone, not as raw ISO strings.
    assert "T" not in page.locator(".timeline time").first.inner_text()
    screenshot(page, "job-completed")


@pytest.mark.parametrize(
    ("mode", "limits", "code", "title", "action"),
    [
        ("malformed", {}, "malformed_output", "could not be used", "Try again"),
        ("rejected", {}, "upstream_rejected", "refused this document", "Upload a different file"),
        ("slow:2", {"timeout_s": 0.2, "max_attempts": 1}, "timeout", "It took too long", "Try again"),
        ("always_fail", {"max_attempts": 3}, "upstream_unavailable", "unavailable", "Try again"),
        ("crash", {"max_attempts": 1}, "internal_error", "Something went wrong", "Try again"),
    ],
)
def test_each_failure_shows_its_banner_and_its_action_works(
    page: Page, live: Stack, mode: str, limits: dict[str, float], code: str, title: str, action: str
) -> None:
    job_id = live.submit(document(mode), **limits)
    open_job(page, job_id)
    expect_status(page, "dead_letter")
    banner = page.locator(f".banner[data-error-code={code}]")
    expect(banner).to_contain_text(title)
    expect(banner).to_contain_text(job_id)
    assert "Traceback" not in page.content()
    screenshot(page, f"failed-{code}")
    if code == "upstream_unavailable":
        # Every retry is on the timeline with its error.
        expect(page.locator(".timeline li[data-event=running]")).to_have_count(3)
        expect(page.locator(".timeline li[data-event=queued] .event-detail")).to_have_count(2)
    banner.get_by_role("link", name=action).or_(banner.get_by_role("button", name=action)).click()
    if action == "Try again":
        expect(page.locator(".timeline li[data-event=replayed]")).to_have_count(1)
        expect_status(page, "dead_letter")
    else:
        expect(page).to_have_url(re.compile(r"/$"))


def test_unreadable_upload_is_explained(page: Page, tmp_path: Path) -> None:
    broken = tmp_path / "scan.pdf"
    broken.write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")
    job_id = upload(page, broken)
    expect_status(page, "dead_letter")
    banner = page.locator(".banner[data-error-code=invalid_input]")
    expect(banner).to_contain_text("damaged or incomplete")
    screenshot(page, "failed-invalid_input")
    banner.get_by_role("link", name="Upload a different file").click()
    expect(page).to_have_url(re.compile(r"/$"))
    assert job_id


def test_an_address_no_page_answers_says_so_without_offering_to_sign_in_again(page: Page) -> None:
    # Given someone signed in, at an address nothing answers, or one that only takes a form's post
    for address, status in (("/no-such-page", "404"), ("/settings/nothing", "404")):
        page.goto(address)
        # Then the page says so, and its header does not ask them to sign in as if they were signed out
        expect(page.locator(f"[data-error-page='{status}']")).to_be_visible()
        expect(page.get_by_role("link", name="Sign in")).to_have_count(0)
        expect(page.get_by_role("navigation").get_by_role("link", name="Your jobs")).to_be_visible()
    # And a settings form's address opened by itself leads to the settings page
    page.goto("/settings/webhooks")
    expect(page).to_have_url(re.compile(r"/settings$"))


def test_unsupported_file_is_refused_before_any_job(page: Page, tmp_path: Path) -> None:
    binary = tmp_path / "program.exe"
    binary.write_bytes(b"MZ\x90\x00\x03\x00\x00\x00\x04\x00binary")
    page.goto("/")
    page.set_input_files("#file", str(binary))
    page.get_by_role("button", name="Upload and start").click()
    expect(page.locator("#upload-error")).to_contain_text("not supported")
    expect(page.get_by_role("button", name="Upload and start")).to_be_enabled()
    screenshot(page, "upload-refused")


def test_try_again_after_dead_letter_completes_a_flaky_job(page: Page, live: Stack) -> None:
    job_id = live.submit(document("flaky:3"), max_attempts=3)
    open_job(page, job_id)
    expect_status(page, "dead_letter")
    page.get_by_role("button", name="Try again").click()
    expect_status(page, "completed")
    expect(page.locator(".timeline li[data-event=running]")).to_have_count(4)
    expect(page.locator("a[data-artifact]")).to_have_count(2)


def test_cancel_a_running_job(page: Page, live: Stack) -> None:
    job_id = live.submit(document("slow:5"))
    open_job(page, job_id)
    expect_status(page, "running")
    page.get_by_role("button", name="Cancel").click()
    expect_status(page, "cancelled")
    expect(page.locator(".banner[data-error-code=cancelled]")).to_contain_text("cancelled")
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)
    screenshot(page, "cancelled")


def test_delete_from_the_job_page(page: Page, live: Stack) -> None:
    job_id = live.submit(document())
    live.wait(job_id)
    open_job(page, job_id)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"/jobs$"))
    assert live.http.get(f"/ai-jobs/{job_id}").status_code == 404


def test_jobs_list_filters_and_follows_live_status(page: Page, live: Stack) -> None:
    slow = live.submit(document("slow:1.5"))
    page.goto("/jobs")
    row = page.locator(f"tr[data-job-id='{slow}'] .badge")
    expect(row).to_have_text("Completed", timeout=20_000)
    page.select_option("#status-filter", "dead_letter")
    expect(page).to_have_url(re.compile(r"status=dead_letter"))
    badges = page.locator("#jobs-table .badge")
    expect(badges.first).to_have_text("Failed")
    assert set(badges.all_inner_texts()) == {"Failed"}
    screenshot(page, "jobs-list")


def test_works_without_javascript(browser: Browser, live: Stack, tmp_path: Path) -> None:
    context = browser.new_context(java_script_enabled=False, base_url=live.base_url)
    page = context.new_page()
    sign_in(page, live.base_url)  # the plain login form works without JavaScript too
    page.goto("/")
    page.set_input_files("#file", str(write_document(tmp_path, "slow:1")))
    page.get_by_role("button", name="Upload and start").click()
    # The plain form post redirects to the job page, which refreshes itself until the job is done.
    expect(page).to_have_url(re.compile(r"/jobs/[\w-]+$"))
    expect(page.get_by_role("link", name="Refresh now")).to_be_visible()
    expect(page.locator(STATUS)).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(page.locator("a[data-artifact]")).to_have_count(2)
    screenshot(page, "no-javascript-completed")
    context.close()


def test_keyboard_only_upload(page: Page, tmp_path: Path) -> None:
    page.goto("/")
    path = write_document(tmp_path)
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "file":
            break
    assert page.evaluate("document.activeElement.id") == "file"
    # Space on the focused input opens the chooser. Chromium has been seen to miss the first press
    # while Playwright starts intercepting choosers, so a press that opens nothing is made again.
    for tries_left in reversed(range(3)):
        try:
            with page.expect_file_chooser(timeout=10_000) as chooser:
                page.keyboard.press("Space")
            break
        except PlaywrightTimeoutError:
            if not tries_left:
                raise
            assert page.evaluate("document.activeElement.id") == "file"
    chooser.value.set_files(str(path))
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "folder"  # or a whole folder, for a batch
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "workflow"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "language"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Upload and start"
    page.keyboard.press("Enter")
    expect_status(page, "completed")


def test_hostile_names_and_text_are_shown_escaped(page: Page, tmp_path: Path) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    hostile = tmp_path / "<img src=x onerror=alert(1)>.pdf"
    hostile.write_text("<script>alert(2)</script>\n\nThe quarterly report shows that revenue grew in every region.\n")
    job_id = upload(page, hostile)
    expect_status(page, "completed")
    open_job(page, job_id)
    expect(page.locator("h1")).to_have_text("<img src=x onerror=alert(1)>.pdf")
    expect(page.locator(".result h3")).to_have_text("<script>alert(2)</script>")
    page.goto("/jobs")
    expect(page.locator(f"tr[data-job-id='{job_id}'] a")).to_have_text("<img src=x onerror=alert(1)>.pdf")
    assert dialogs == []
    assert page.locator("img[src=x]").count() == 0
    screenshot(page, "escaped-hostile-names")


def test_every_page_sends_a_strict_content_security_policy(page: Page, live: Stack) -> None:
    job_id = live.submit(document())
    live.wait(job_id)
    for path in ["/", "/jobs", f"/jobs/{job_id}", "/settings", "/jobs?status=completed"]:
        response = page.goto(path)
        assert response is not None
        csp = response.headers.get("content-security-policy", "")
        assert "default-src 'self'" in csp, path
        assert "script-src 'self'" in csp, path
        assert "frame-ancestors 'none'" in csp, path


def test_invoice_fields_are_shown_beside_their_evidence(page: Page, live: Stack) -> None:
    # Given a real invoice PDF (its e-invoice XML removed, so only the printed page can be read)
    corpus = Path(__file__).resolve().parents[1] / "backend" / "tests" / "corpus" / "zugferd" / "pdf"
    job_id = live.submit((corpus / "d05.pdf").read_bytes(), workflow="invoice_summary")
    live.wait(job_id)
    # When its owner opens the job page
    open_job(page, job_id)
    # Then each field is shown with the printed text it was read from
    total = page.locator(".invoice-fields tr[data-field=total]")
    expect(total.get_by_role("textbox")).to_have_value("571.04")  # the value to confirm or correct
    expect(total).to_contain_text("Gesamtbetrag: 571,04 €")
    expect(page.locator(".invoice-fields tr[data-field=vendor]")).to_contain_text("Bei Spiel GmbH")
    expect(page.locator("[data-check=totals_add_up]")).to_contain_text("add up")
    screenshot(page, "invoice-fields")


def test_an_unsure_field_is_marked_for_review(page: Page, live: Stack, tmp_path: Path) -> None:
    job_id = live.submit(
        b"Acme Supplies Ltd\nSubtotal: 100.00 EUR\nVAT: 19.00 EUR\nTotal: 150.00 EUR\n", "invoice_summary"
    )
    live.wait(job_id)
    open_job(page, job_id)
    expect(page.locator("[data-needs-review]")).to_contain_text("Total")
    expect(page.locator(".invoice-fields tr[data-field=total].needs-review")).to_have_count(1)
    expect(page.locator("[data-check=totals_add_up]")).to_contain_text("✘")


def test_a_scanned_invoice_shows_its_reading_progress_then_its_fields(page: Page, tmp_path: Path) -> None:
    # Given a three-page scan (TIFF) of a real German invoice
    corpus = Path(__file__).resolve().parents[1] / "backend" / "tests" / "corpus" / "zugferd" / "pdf"
    scan = tmp_path / "scan.tif"
    scan.write_bytes(encode(page_images((corpus / "d05.pdf").read_bytes(), dpi=150, pages=1) * 3, "TIFF", dpi=150))
    page.goto("/")
    # Watched for every value the job card's progress bar shows (the card replaces itself as it polls)
    page.evaluate(
        """() => {
            window.__progress = [];
            new MutationObserver(() => document.querySelectorAll('.job-progress progress').forEach(bar => {
                const shown = `${bar.value}/${bar.max}`;
                if (window.__progress.at(-1) !== shown) window.__progress.push(shown);
            })).observe(document.getElementById('submission'), {childList: true, subtree: true});
        }"""
    )
    # When it is uploaded as an invoice, naming its language
    page.set_input_files("#file", str(scan))
    page.select_option("#workflow", "invoice_summary")
    page.select_option("#language", "de")
    page.get_by_role("button", name="Upload and start").click()
    # Then the card shows a progress bar with the page being read, which advances
    bar = page.locator("#submission .job-progress")
    expect(bar).to_contain_text(re.compile(r"Reading page \d of 3"), timeout=30_000)
    screenshot(page, "ocr-progress")
    expect_status(page, "completed", timeout=60_000)
    shown = page.evaluate("window.__progress")
    assert len(shown) >= 2, shown
    assert all(value.endswith("/3") for value in shown), shown
    # And the invoice's fields, read from the scanned page, with its searchable PDF to download
    submission = page.locator("#submission")
    expect(submission.locator(".invoice-fields caption")).to_contain_text("from the scanned page")
    expect(submission.locator(".invoice-fields tr[data-field=total] input")).to_have_value("571.04")
    expect(submission.locator("a[data-artifact='invoice_summary-searchable.pdf']")).to_have_count(1)
    screenshot(page, "ocr-completed")
