"""Batches and review in Chromium: drop files and a ZIP, pick a folder, watch the batch, retry, review, export."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from backend.tests.documents import zip_of
from backend.tests.integration.stack import Stack, document
from e2e.conftest import screenshot
from e2e.test_browser import open_job

CORPUS = Path(__file__).resolve().parents[1] / "backend" / "tests" / "corpus" / "zugferd" / "pdf"
SUMMARY = "[data-summary]"


def drop(page: Page, files: dict[str, bytes]) -> None:
    """Drop files on the upload zone as a person dragging them from their desktop would."""
    payload = [{"name": name, "data": base64.b64encode(data).decode()} for name, data in files.items()]
    transfer = page.evaluate_handle(
        """(files) => {
            const transfer = new DataTransfer();
            for (const f of files) {
                const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
                transfer.items.add(new File([bytes], f.name));
            }
            return transfer;
        }""",
        payload,
    )
    page.dispatch_event("[data-dropzone]", "drop", {"dataTransfer": transfer})


def drop_folder(page: Page, folder: str, files: dict[str, bytes]) -> None:
    """Drop a folder on the upload zone. A script cannot make the directory entry a browser gives a
    dropped folder, so the drop carries entries of the same shape (the File and Directory Entries
    API: `isDirectory`, `createReader().readEntries`, `file`) over real files; `files` maps paths
    inside the folder (with subfolders) to their bytes."""
    payload = [{"path": path, "data": base64.b64encode(data).decode()} for path, data in files.items()]
    transfer = page.evaluate_handle(
        """([folder, files]) => {
            const directory = (name) => ({ name, isFile: false, isDirectory: true, children: [] });
            const root = directory(folder);
            for (const f of files) {
                const parts = f.path.split("/");
                let at = root;
                for (const part of parts.slice(0, -1)) {
                    let next = at.children.find((c) => c.isDirectory && c.name === part);
                    if (!next) at.children.push((next = directory(part)));
                    at = next;
                }
                const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
                const file = new File([bytes], parts[parts.length - 1]);
                at.children.push({ name: file.name, isFile: true, isDirectory: false, file: (ok) => ok(file) });
            }
            const withReaders = (entry) => {
                if (entry.isDirectory) {
                    entry.children.forEach(withReaders);
                    entry.createReader = () => {
                        let given = false;  // the entries in one read, then none: the end
                        return { readEntries: (ok) => ok(given ? [] : ((given = true), entry.children)) };
                    };
                }
                return entry;
            };
            const transfer = new DataTransfer();
            Object.defineProperty(transfer, "items", {
                value: [{ kind: "file", webkitGetAsEntry: () => withReaders(root) }],
            });
            return transfer;
        }""",
        [folder, payload],
    )
    page.dispatch_event("[data-dropzone]", "drop", {"dataTransfer": transfer})


def batch_id_of(page: Page) -> str:
    page.wait_for_url(re.compile(r"/batches/[0-9a-f]+$"))
    return page.url.rsplit("/", 1)[-1]


def test_dropped_files_and_a_zip_become_a_batch_whose_page_follows_it_live(page: Page) -> None:
    # Given the upload page with the invoice workflow
    page.goto("/")
    page.get_by_label("Workflow").select_option("invoice_summary")
    # When two invoices, a slow document and a ZIP (one invoice, one unsupported file) are dropped
    archive = zip_of({"d07.pdf": (CORPUS / "d07.pdf").read_bytes(), "tool.bin": b"\x00\x01\x02" * 100})
    drop(
        page,
        {
            "d01.pdf": (CORPUS / "d01.pdf").read_bytes(),
            "d36.pdf": (CORPUS / "d36.pdf").read_bytes(),  # a credit note
            "slow.txt": document("slow:3"),
            "march.zip": archive,
        },
    )
    expect(page.locator("#file-count")).to_have_text("4 files chosen: they will be one batch.")
    page.get_by_role("button", name="Upload and start").click()
    # Then the batch page opens at once and says how far the batch is, live, without reloading
    batch_id = batch_id_of(page)
    page.evaluate("window.__notReloaded = true")
    status = page.locator(f"[data-batch-id='{batch_id}']")
    expect(status).to_have_attribute("data-total", "4")
    expect(page.locator("[data-rejected='march.zip/tool.bin']")).to_contain_text("not supported")
    expect(status).to_have_attribute("data-status", "running")
    expect(page.locator(SUMMARY)).to_contain_text(re.compile(r"^[0-3] of 4 done"))
    expect(status).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(page.locator(SUMMARY)).to_contain_text("4 of 4 done")
    assert page.evaluate("window.__notReloaded") is True
    # And the items are listed with their key invoice fields
    rows = page.locator(".batch-items tbody tr")
    expect(rows).to_have_count(4)
    expect(page.locator(".batch-items tr", has_text="d01.pdf").locator("[data-total]")).not_to_be_empty()
    # And the credit note is marked as one, so nobody pays it with the invoices
    expect(page.locator(".batch-items tr", has_text="d36.pdf").locator("[data-credit-note]")).to_have_text(
        "credit note"
    )
    expect(page.locator(".batch-items tr", has_text="d01.pdf").locator("[data-credit-note]")).to_have_count(0)
    screenshot(page, "batch-completed")
    # And, its page closed, the batch is found again from the jobs list's link to the owner's batches
    page.goto("/jobs")
    page.get_by_role("link", name="your batches").click()
    listed = page.locator(f"tr[data-batch-id='{batch_id}']")
    expect(listed).to_contain_text("4 of 4 done")
    expect(listed.locator("[data-status='completed']")).to_have_text("Finished")
    screenshot(page, "batches-list")
    listed.get_by_role("link").click()
    expect(page.locator(f"[data-batch-id='{batch_id}']")).to_have_attribute("data-total", "4")


def test_a_folder_becomes_a_batch_and_its_failed_document_is_retried_in_one_action(page: Page, tmp_path: Path) -> None:
    # Given a folder of three documents, one of which fails until it is tried again
    folder = tmp_path / "november"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_bytes(document())
    (folder / "flaky.txt").write_bytes(document("flaky:3"))
    page.goto("/")
    page.get_by_label("Workflow").select_option("document_summary")
    # When the folder is chosen and submitted
    page.set_input_files("#folder", str(folder))
    expect(page.locator("#file-count")).to_have_text("3 files chosen: they will be one batch.")
    page.get_by_role("button", name="Upload and start").click()
    batch_id = batch_id_of(page)
    status = page.locator(f"[data-batch-id='{batch_id}']")
    # Then it finishes with one document needing attention
    expect(status).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(page.locator(SUMMARY)).to_have_text("3 of 3 done, 1 needs attention")
    expect(page.locator(".batch-items tr[data-status=dead_letter]")).to_contain_text("flaky.txt")
    # When the person retries the failed ones
    page.get_by_role("button", name="Retry 1 failed").click()
    # Then the batch finishes again with nothing left to look at
    expect(page.locator(SUMMARY)).to_have_text("3 of 3 done", timeout=30_000)
    expect(page.locator(".batch-items tr[data-status=completed]")).to_have_count(3)


def test_reviewing_a_field_shows_in_the_json_and_the_export_and_keeps_the_artifact(page: Page, live: Stack) -> None:
    # Given a completed invoice
    job_id = live.submit((CORPUS / "d05.pdf").read_bytes(), workflow="invoice_summary")
    machine = live.wait(job_id)
    artifact = machine["artifact"]
    open_job(page, job_id)
    # When the person puts the cursor in the total, its box on the page preview is highlighted
    total = page.locator("#review-total")
    total.focus()
    expect(page.locator("svg[data-page='1'] rect[data-box=total]")).to_have_class(re.compile(r"\bactive\b"))
    # When they correct the total and save
    total.fill("4242.42")
    page.get_by_role("button", name="Save review").click()
    page.wait_for_url(f"**/jobs/{job_id}")
    # Then the field says it was corrected, and who reviewed it
    expect(page.locator(".invoice-fields tr[data-field=total]")).to_have_attribute("data-state", "corrected")
    read_as = page.request.get(artifact["url"]).json()["result"]["total"]
    expect(page.locator(".invoice-fields tr[data-field=total] [data-machine]")).to_have_text(f"read as {read_as}")
    expect(page.locator("#review-total")).to_have_accessible_description(f"read as {read_as}")
    expect(page.locator(".invoice-fields tr[data-field=vendor]")).to_have_attribute("data-state", "confirmed")
    expect(page.locator("[data-reviewed-by]")).to_contain_text("owner@example.com")
    expect(page.locator("[data-review-count]")).to_have_count(0)
    screenshot(page, "invoice-reviewed")
    # And the JSON view shows the reviewed values, with the machine's artifact unchanged
    view = page.request.get(f"/ai-jobs/{job_id}").json()
    assert view["review"]["fields"]["total"] == "4242.42"
    assert view["review"]["by"] == "owner@example.com"
    assert view["artifact"]["sha256"] == artifact["sha256"]
    stored = page.request.get(artifact["url"]).body()
    assert hashlib.sha256(stored).hexdigest() == artifact["sha256"]
    assert read_as != "4242.42"
    # And the spreadsheet of the person's jobs carries the reviewed value
    exported = page.request.get("/ai-jobs/export.csv", params={"status": "completed"})
    rows = list(csv.DictReader(io.StringIO(exported.body().decode("utf-8-sig"))))
    row = next(r for r in rows if r["Job link"].endswith(f"/jobs/{job_id}"))
    assert row["Total"] == "4242.42"
    assert row["Reviewed"] == "yes"


def test_without_javascript_several_files_post_as_a_batch(browser: Browser, live: Stack, signed_in_state: str) -> None:
    context = browser.new_context(base_url=live.base_url, storage_state=signed_in_state, java_script_enabled=False)
    page = context.new_page()
    page.goto("/")
    page.get_by_label("Workflow").select_option("document_summary")
    page.set_input_files(
        "#file",
        [
            {"name": "one.txt", "mimeType": "text/plain", "buffer": document()},
            {"name": "two.txt", "mimeType": "text/plain", "buffer": document()},
        ],
    )
    page.get_by_role("button", name="Upload and start").click()
    batch_id = batch_id_of(page)
    expect(page.locator(f"[data-batch-id='{batch_id}']")).to_have_attribute("data-total", "2")
    context.close()


def test_a_dropped_folder_with_a_subfolder_becomes_one_batch_of_its_documents(page: Page) -> None:
    # Given the upload page
    page.goto("/")
    page.get_by_label("Workflow").select_option("invoice_summary")
    # When a folder with an invoice, a text file, a subfolder with another invoice and a hidden
    # file (the desktop's own) is dropped
    drop_folder(
        page,
        "april",
        {
            "d01.pdf": (CORPUS / "d01.pdf").read_bytes(),
            "notes.txt": document(),
            "scans/d02.pdf": (CORPUS / "d02.pdf").read_bytes(),
            ".DS_Store": b"\x00\x00\x00\x01Bud1",
        },
    )
    # Then its three documents (not the hidden file) are chosen as one batch
    expect(page.locator("#file-count")).to_have_text("3 files chosen: they will be one batch.")
    page.get_by_role("button", name="Upload and start").click()
    batch_id = batch_id_of(page)
    status = page.locator(f"[data-batch-id='{batch_id}']")
    expect(status).to_have_attribute("data-total", "3")
    expect(status).to_have_attribute("data-status", "completed", timeout=30_000)
    names = page.locator(".batch-items tbody tr")
    expect(names).to_have_count(3)
    for name in ("d01.pdf", "notes.txt", "d02.pdf"):
        expect(page.locator(".batch-items", has_text=name)).to_be_visible()
