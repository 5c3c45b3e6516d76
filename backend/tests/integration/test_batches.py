"""Batches through the API on real web and worker processes: mixed files, ZIPs, retries, review, export."""

from __future__ import annotations

import csv
import io
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from backend.tests.documents import zip_of
from backend.tests.integration.stack import PASSWORD, Stack, document, event_types, http_client, sha256
from backend.tests.integration.test_security import browser_session, csrf

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "zugferd" / "pdf"
BINARY = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4
CORRUPT_PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> broken beyond repair \x00\x01\x02"
Files = list[tuple[str, tuple[str, bytes, str]]]


def wait_batch(stack: Stack, batch_id: str, status: str = "completed", timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        response = stack.http.get(f"/batches/{batch_id}")
        assert response.status_code == 200, response.text
        view: dict[str, Any] = response.json()
        if view["status"] == status:
            return view
        if time.monotonic() > deadline:
            raise AssertionError(f"batch {batch_id} still {view['status']}: {view['counts']}")
        time.sleep(0.1)


# Real invoices besides those the mixed batch names, so that it holds 50 documents in all.
MORE_INVOICES = ["d03.pdf", "d07.pdf", *(f"d{n:02d}.pdf" for n in range(9, 46))]


def mixed_files() -> tuple[Files, bytes]:
    """50 documents: 42 invoices, a corrupt PDF, an unsupported file, a document that fails until
    retried, and a ZIP with two more invoices, a ZIP inside it (one more invoice, refused), an
    unsupported entry and a path-traversal name."""
    flaky = document("flaky:3")
    archive = zip_of(
        {
            "march/d04.pdf": (CORPUS / "d04.pdf").read_bytes(),
            "march/d05.pdf": (CORPUS / "d05.pdf").read_bytes(),
            "march/inner.zip": zip_of({"d06.pdf": (CORPUS / "d06.pdf").read_bytes()}),
            "march/tool.bin": BINARY,
            "../../escape.txt": document(),
        }
    )
    files: Files = [
        ("file", ("d01.pdf", (CORPUS / "d01.pdf").read_bytes(), "application/pdf")),
        ("file", ("d02.pdf", (CORPUS / "d02.pdf").read_bytes(), "application/pdf")),
        ("file", ("d08.pdf", (CORPUS / "d08.pdf").read_bytes(), "application/pdf")),
        ("file", ("broken.pdf", CORRUPT_PDF, "application/pdf")),
        ("file", ("setup.exe", BINARY, "application/octet-stream")),
        ("file", ("notes.txt", flaky, "text/plain")),
        ("file", ("march.zip", archive, "application/zip")),
        *[("file", (name, (CORPUS / name).read_bytes(), "application/pdf")) for name in MORE_INVOICES],
    ]
    return files, flaky


def test_a_mixed_batch_counts_retries_reviews_and_exports(shared_stack: Stack) -> None:
    stack = shared_stack
    files, _ = mixed_files()
    # When the files are posted as one batch
    response = stack.http.post("/batches", data={"workflow": "invoice_summary"}, files=files)
    # Then it is accepted at once, each good file a job, each bad one listed with its reason
    assert response.status_code == 202, response.text
    accepted = response.json()
    batch_id = accepted["batch_id"]
    assert response.headers["location"] == accepted["status_url"] == f"/batches/{batch_id}"
    assert len(files) - 1 + 5 == 50  # the ZIP's five entries count as documents, the ZIP itself not
    assert sorted(job["filename"] for job in accepted["jobs"]) == sorted([
        "broken.pdf", "d01.pdf", "d02.pdf", "d04.pdf", "d05.pdf", "d08.pdf", "notes.txt", *MORE_INVOICES,
    ])  # fmt: skip
    assert {job["status"] for job in accepted["jobs"]} == {"queued"}
    reasons = {item["filename"]: item["reason"] for item in accepted["rejected"]}
    inner, tool, escape = "march.zip/march/inner.zip", "march.zip/march/tool.bin", "march.zip/../../escape.txt"
    assert set(reasons) == {"setup.exe", inner, tool, escape}
    assert "archive inside an archive" in reasons[inner]
    assert "not supported" in reasons[tool]
    assert "leaves the archive" in reasons[escape]
    assert "not supported" in reasons["setup.exe"]  # the single-upload sentence for an unsupported type

    # When every job has finished
    view = wait_batch(stack, batch_id)
    # Then the counts add up: the corrupt PDF and the flaky document failed, the rest completed
    assert view["total"] == 46
    assert view["done"] == 46
    assert view["counts"] == {"queued": 0, "running": 0, "completed": 44, "dead_letter": 2, "cancelled": 0}
    by_name = {item["filename"]: item for item in view["items"]}
    assert by_name["broken.pdf"]["error"] == "invalid_input"
    assert by_name["notes.txt"]["status"] == "dead_letter"
    assert view["needs_attention"] >= 2
    assert by_name["d01.pdf"]["values"]["total"] is not None
    assert by_name["d01.pdf"]["status_url"] == f"/ai-jobs/{by_name['d01.pdf']['job_id']}"

    # When the failed ones are retried in one action
    retried = stack.http.post(f"/batches/{batch_id}/retry")
    assert retried.status_code == 200, retried.text
    view = wait_batch(stack, batch_id)
    # Then both were replayed: the flaky document now completes, the corrupt PDF fails again, as it must
    for name in ("notes.txt", "broken.pdf"):
        assert "replayed" in event_types(stack.job(by_name[name]["job_id"]))
    assert view["counts"]["completed"] == 45
    assert view["counts"]["dead_letter"] == 1
    assert stack.job(by_name["notes.txt"]["job_id"])["status"] == "completed"

    # Given a person's review of one invoice, with values a spreadsheet would run as formulas
    invoice = by_name["d01.pdf"]
    job_id = invoice["job_id"]
    before = stack.job(job_id)
    artifact = before["artifact"]
    original = stack.http.get(artifact["url"]).content
    review = {"vendor": '=HYPERLINK("http://evil.example","click")', "invoice_number": "@SUM(A1)", "total": "1234.50"}
    reviewed = stack.http.post(f"/ai-jobs/{job_id}/review", json={"fields": review})
    assert reviewed.status_code == 200, reviewed.text
    # Then the job view shows the review with who and when, and the machine's artifact is unchanged
    shown = stack.job(job_id)["review"]
    assert shown["fields"] == review
    assert shown["by"] == "owner@example.com"
    assert shown["at"]
    after = stack.job(job_id)["artifact"]
    assert after["sha256"] == artifact["sha256"] == sha256(stack.http.get(after["url"]).content) == sha256(original)

    # And the CSV export has one row per job, reviewed values winning, formulas escaped
    exported = stack.http.get(f"/batches/{batch_id}/export.csv")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("text/csv")
    assert "attachment" in exported.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(exported.content.decode("utf-8-sig"))))
    assert len(rows) == 46
    row = next(r for r in rows if r["File name"] == "d01.pdf")
    assert row["Vendor"] == "'" + review["vendor"]
    assert row["Invoice number"] == "'@SUM(A1)"
    assert row["Total"] == "1234.50"
    assert row["Reviewed"] == "yes"
    assert row["Job link"].endswith(f"/jobs/{job_id}")
    other = next(r for r in rows if r["File name"] == "d02.pdf")
    machine = stack.http.get(stack.job(by_name["d02.pdf"]["job_id"])["artifact"]["url"]).json()["result"]
    assert other["Total"] == machine["total"]
    assert other["Vendor"] == (machine["vendor"] or "")
    # And each row says whether the document is an invoice or a credit note (d36 corrects an invoice by a credit)
    assert (other["Document"], row["Document"]) == ("Invoice", "Invoice")
    assert (by_name["d36.pdf"]["document_type"], by_name["d01.pdf"]["document_type"]) == ("credit_note", "invoice")
    credit = next(r for r in rows if r["File name"] == "d36.pdf")
    assert (credit["Document"], credit["Total"]) == ("Credit note", "-8.79")
    assert other["Reviewed"] == "no"
    failed = next(r for r in rows if r["File name"] == "broken.pdf")
    assert failed["Status"] == "dead_letter"
    assert failed["Total"] == ""

    # And the XLSX export holds the same rows, amounts as numbers
    workbook = openpyxl.load_workbook(io.BytesIO(stack.http.get(f"/batches/{batch_id}/export.xlsx").content))
    sheet = workbook.active
    assert sheet is not None
    table = list(sheet.iter_rows(values_only=True))
    header = list(table[0])
    assert len(table) == 47
    cells = dict(zip(header, next(r for r in table if r[0] == "d01.pdf"), strict=True))
    assert cells["Vendor"] == "'" + review["vendor"]
    assert Decimal(str(cells["Total"])) == Decimal("1234.50")

    # And the caller's own jobs export the same way, filtered by state
    dead = stack.http.get("/ai-jobs/export.csv", params={"status": "dead_letter"})
    assert dead.status_code == 200
    dead_rows = list(csv.DictReader(io.StringIO(dead.content.decode("utf-8-sig"))))
    assert dead_rows
    assert {r["Status"] for r in dead_rows} == {"dead_letter"}
    assert "broken.pdf" in {r["File name"] for r in dead_rows}
    # Dates and times without an offset are UTC; a date range keeps the jobs created in it
    later = stack.http.get("/ai-jobs/export.csv", params={"from": "2999-01-01"})
    assert later.status_code == 200
    assert list(csv.DictReader(io.StringIO(later.content.decode("utf-8-sig")))) == []
    ranged = stack.http.get("/ai-jobs/export.csv", params={"from": "2000-01-01", "to": "2999-01-01T00:00:00+02:00"})
    assert ranged.status_code == 200
    assert {r["File name"] for r in csv.DictReader(io.StringIO(ranged.content.decode("utf-8-sig")))} >= {"d01.pdf"}
    # The page's form sends empty fields for "any"; a date that is not one is a plain 400
    assert stack.http.get("/ai-jobs/export.xlsx", params={"status": "", "from": "", "to": ""}).status_code == 200
    assert stack.http.get("/ai-jobs/export.csv", params={"from": "last tuesday"}).json()["code"] == "invalid_request"

    # When a person says the credit note is an invoice, and an invoice is a credit note, naming no amount
    for name, kind in (("d36.pdf", "invoice"), ("d02.pdf", "credit_note")):
        said = stack.http.post(f"/ai-jobs/{by_name[name]['job_id']}/review", json={"fields": {"document_type": kind}})
        assert said.status_code == 200, said.text
    # Then every amount follows the kind (a credit note's negative), copied beside it as values in effect, not as
    # values the person confirmed
    credited = stack.http.get(stack.job(by_name["d36.pdf"]["job_id"])["artifact"]["url"]).json()["result"]
    review = stack.job(by_name["d36.pdf"]["job_id"])["review"]
    assert (review["fields"]["document_type"], review["fields"]["total"]) == ("invoice", "8.79")
    amounts = [name for name in ("subtotal", "tax", "total") if credited[name] is not None]
    assert sorted(review["signed"]) == sorted(amounts)
    assert all(Decimal(review["fields"][name]) == -Decimal(credited[name]) for name in amounts)
    d02 = by_name["d02.pdf"]["job_id"]
    review = stack.job(d02)["review"]
    assert review["fields"]["document_type"] == "credit_note"
    assert Decimal(review["fields"]["total"]) == -Decimal(machine["total"])
    # And the batch and its spreadsheet say the reviewed kind and amounts
    items = {item["filename"]: item for item in wait_batch(stack, batch_id)["items"]}
    assert (items["d36.pdf"]["document_type"], items["d02.pdf"]["document_type"]) == ("invoice", "credit_note")
    rows = list(
        csv.DictReader(io.StringIO(stack.http.get(f"/batches/{batch_id}/export.csv").content.decode("utf-8-sig")))
    )
    by_file = {r["File name"]: r for r in rows}
    assert (by_file["d36.pdf"]["Document"], by_file["d36.pdf"]["Total"]) == ("Invoice", "8.79")
    assert by_file["d02.pdf"]["Document"] == "Credit note"
    assert Decimal(by_file["d02.pdf"]["Total"]) == -Decimal(machine["total"])
    # When the person says the invoice is one after all, then names its total, then takes their kind back
    back = stack.http.post(f"/ai-jobs/{d02}/review", json={"fields": {"document_type": "invoice"}})
    assert back.status_code == 200, back.text
    # Then the amounts are the machine's again, and a total the person names stays theirs
    assert back.json()["review"]["fields"] == {"document_type": "invoice"}
    assert back.json()["review"]["signed"] == []
    named = stack.http.post(f"/ai-jobs/{d02}/review", json={"fields": {"total": "-5.00", "document_type": None}})
    assert named.json()["review"]["fields"] == {"total": "-5.00"}
    # A kind that is neither is refused
    bad = stack.http.post(f"/ai-jobs/{job_id}/review", json={"fields": {"document_type": "receipt"}})
    assert bad.status_code == 422, bad.text


def test_idempotency_key_answers_a_repeat_with_the_same_batch(shared_stack: Stack) -> None:
    files: Files = [("file", (f"n{i}.txt", document(), "text/plain")) for i in range(2)]
    headers = {"Idempotency-Key": f"batch-{time.monotonic_ns()}"}
    first = shared_stack.http.post("/batches", data={"workflow": "document_summary"}, files=files, headers=headers)
    again = shared_stack.http.post("/batches", data={"workflow": "document_summary"}, files=files, headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.json()["batch_id"] == first.json()["batch_id"]
    assert {j["job_id"] for j in again.json()["jobs"]} == {j["job_id"] for j in first.json()["jobs"]}
    other: Files = [("file", ("other.txt", document(), "text/plain"))]
    conflict = shared_stack.http.post("/batches", data={"workflow": "document_summary"}, files=other, headers=headers)
    assert conflict.status_code == 409
    assert conflict.json()["code"] == "idempotency_conflict"


def test_cancel_the_rest_stops_every_unfinished_job(shared_stack: Stack) -> None:
    files: Files = [("file", (f"slow-{i}.txt", document("slow:20"), "text/plain")) for i in range(3)]
    batch_id = shared_stack.http.post("/batches", data={"workflow": "document_summary"}, files=files).json()["batch_id"]
    cancelled = shared_stack.http.post(f"/batches/{batch_id}/cancel")
    assert cancelled.status_code == 200
    view = cancelled.json()
    assert view["counts"]["cancelled"] == 3
    assert view["status"] == "completed"
    assert view["needs_attention"] == 0


def test_someone_elses_batch_does_not_exist_for_you(shared_stack: Stack) -> None:
    files: Files = [("file", ("a.txt", document(), "text/plain"))]
    batch_id = shared_stack.http.post("/batches", data={"workflow": "document_summary"}, files=files).json()["batch_id"]
    # Given another person, signed up and signed in through the forms
    email = f"stranger-{time.monotonic_ns()}@example.com"
    stranger = http_client(shared_stack.base_url, timeout=30)
    stranger.get("/signup")
    signup = {"email": email, "password": PASSWORD, "_csrf_token": csrf(stranger)}
    assert stranger.post("/signup", data=signup).status_code == 303
    stranger = browser_session(shared_stack, email)
    # Then the batch, its page, its export and its actions do not exist for them
    for path in (f"/batches/{batch_id}", f"/batches/{batch_id}/export.csv", f"/batches/{batch_id}/card"):
        assert stranger.get(path).status_code == 404
    assert stranger.get(f"/batches/{batch_id}", headers={"Accept": "text/html"}).status_code == 404
    assert stranger.post(f"/batches/{batch_id}/cancel", headers={"x-csrftoken": csrf(stranger)}).status_code == 404
    # And their list of batches, as JSON or as a page, does not name it
    listed = stranger.get("/batches")
    assert listed.status_code == 200
    assert listed.headers["content-type"].startswith("application/json")
    assert batch_id not in {item["batch_id"] for item in listed.json()["items"]}
    assert batch_id not in stranger.get("/batches", headers={"Accept": "text/html"}).text


def test_your_batches_are_listed_as_json_for_a_client_and_as_a_page_for_a_browser(shared_stack: Stack) -> None:
    files: Files = [("file", (f"b-{i}.txt", document(), "text/plain")) for i in range(2)]
    batch_id = shared_stack.http.post("/batches", data={"workflow": "document_summary"}, files=files).json()["batch_id"]
    # When a client with a token asks for its batches
    listed = shared_stack.http.get("/batches")
    # Then it gets JSON, newest first, each batch with its counts and its link
    assert listed.status_code == 200, listed.text
    newest = listed.json()["items"][0]
    assert newest["batch_id"] == batch_id
    assert newest["status_url"] == f"/batches/{batch_id}"
    assert newest["total"] == 2
    assert newest["workflow"] == "document_summary"
    assert listed.headers["vary"] == "Accept"
    # And a browser asking for HTML at the same address gets the page that lists them
    page = browser_session(shared_stack, "owner@example.com").get("/batches", headers={"Accept": "text/html"})
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["vary"] == "Accept"
    assert f'href="/batches/{batch_id}"' in page.text


ZEROS = 20 * 1024 * 1024  # compresses about 1,000 to 1


def declaring(sizes: dict[str, int]) -> bytes:
    """A ZIP whose directory declares these unpacked sizes for one-byte entries, as a crafted bomb's
    does: it must be refused from the directory alone, before anything is decompressed."""
    data = bytearray(zip_of(dict.fromkeys(sizes, b"x")))
    at = data.find(b"PK\x01\x02")
    for size in sizes.values():
        data[at + 24 : at + 28] = size.to_bytes(4, "little")  # the central header's uncompressed size
        at = data.find(b"PK\x01\x02", at + 4)
    return bytes(data)


def hostile(kind: str) -> bytes:
    """A ZIP made to hurt an unzipper."""
    if kind == "path-traversal":
        return zip_of({"../../etc/passwd.txt": b"x", "/abs.txt": b"y", "C:/windows.txt": b"z"})
    if kind == "compression-ratio":
        return zip_of({"zeros.txt": bytes(ZEROS)})
    if kind == "unpacked-size":
        return declaring({f"part-{i}/zeros.txt": ZEROS for i in range(26)})  # 520 MB declared
    return zip_of({f"{i}.txt": b"a" for i in range(10_000)})


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("path-traversal", "leaves the archive"),
        ("compression-ratio", "ZIP bomb"),
        ("unpacked-size", "may hold at most"),
        ("ten-thousand-entries", "at most 1,000"),
    ],
)
def test_hostile_archives_are_refused_plainly_and_the_server_stays_up(
    shared_stack: Stack, kind: str, expected: str
) -> None:
    archive = hostile(kind)
    started = time.monotonic()
    response = shared_stack.http.post(
        "/batches", data={"workflow": "document_summary"}, files=[("file", ("attack.zip", archive, "application/zip"))]
    )
    elapsed = time.monotonic() - started
    # A clear refusal: nothing in the archive was accepted, and each refusal says why
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] == "nothing_accepted"
    assert problem["rejected"]
    assert all(expected in item["reason"] for item in problem["rejected"]), problem["rejected"]
    # Refused from the archive's directory, without unpacking it
    assert elapsed < 10
    assert shared_stack.http.get("/healthz").status_code == 200
    job_id = shared_stack.submit(document())
    assert shared_stack.wait(job_id)["status"] == "completed"
