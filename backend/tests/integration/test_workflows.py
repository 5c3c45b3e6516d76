"""Real workflows end to end: the OpenAI-compatible provider against a real local server, an
invoice PDF through the local provider, and no database connection held during a model call."""

from __future__ import annotations

import json
import random
import string
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url

from backend.tests.conftest import ONE_DATABASE, ScratchDatabase, make_database
from backend.tests.documents import make_invoices, render
from backend.tests.integration.conftest import fresh_redis_url, running_stack
from backend.tests.integration.fake_openai import API_KEY, FakeOpenAI
from backend.tests.integration.stack import Stack, document, event_types
from quire.queue.embedded_redis import EmbeddedRedis

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "zugferd"


@pytest.fixture(scope="module")
def openai_stack(
    redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, FakeOpenAI]]:
    provider = FakeOpenAI().start()
    root = tmp_path_factory.mktemp("openai")
    database = make_database("sqlite", root)
    stack = Stack(
        root,
        database,
        fresh_redis_url(redis_server),
        QUIRE_MODEL_PROVIDER="openai",
        QUIRE_OPENAI_BASE_URL=provider.base_url,
        QUIRE_OPENAI_API_KEY=API_KEY,
        QUIRE_OPENAI_MODEL="test-model-1",
    )
    stack.start()
    yield stack, provider
    stack.stop()
    provider.stop()
    database.drop()


def _at(event: dict[str, str]) -> datetime:
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00"))


@pytest.mark.parametrize(
    ("scenario", "limits", "status", "codes"),
    [
        ("valid", {}, "completed", []),
        ("malformed", {}, "dead_letter", ["malformed_output"]),
        ("refusal", {}, "dead_letter", ["upstream_rejected"]),
        ("unauthorized", {}, "dead_letter", ["upstream_rejected"]),
        ("server_error", {"max_attempts": 2}, "dead_letter", ["upstream_unavailable"] * 2),
        ("rate_limited", {"max_attempts": 2}, "dead_letter", ["rate_limited"] * 2),
        ("hang", {"timeout_s": 0.5, "max_attempts": 1}, "dead_letter", ["timeout"]),
    ],
)
def test_openai_provider_outcomes(
    openai_stack: tuple[Stack, FakeOpenAI], scenario: str, limits: dict[str, float], status: str, codes: list[str]
) -> None:
    stack, provider = openai_stack
    job_id = stack.submit(document(words=f"\nopenai-scenario: {scenario}\n"), **limits)
    view = stack.wait(job_id, timeout=30)
    assert view["status"] == status, view["events"]
    assert [e["code"] for e in view["errors"]] == codes
    # The key went to the provider, and nowhere else.
    assert provider.requests[-1]["auth"] == f"Bearer {API_KEY}"
    assert API_KEY not in str(view)
    assert API_KEY not in stack.logs("worker") + stack.logs("web")
    if scenario == "valid":
        result = stack.http.get(view["artifact"]["url"]).json()
        assert result["result"]["title"] == "Model title"
        assert result["provenance"]["provider"] == "openai"
        assert result["provenance"]["model"] == "test-model-1"
        request = provider.requests[-1]["body"]
        assert request["model"] == "test-model-1"
        assert request["response_format"]["json_schema"]["strict"] is True
        schema = request["response_format"]["json_schema"]["schema"]
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(schema["properties"])
    if scenario == "rate_limited":
        # Retry-After: 1 was honoured between the attempts.
        failed, second = view["events"][2], view["events"][3]
        assert (failed["type"], second["type"]) == ("queued", "running")
        assert (_at(second) - _at(failed)).total_seconds() >= 1.0


def test_a_retry_that_would_start_after_the_deadline_dead_letters_at_once(
    openai_stack: tuple[Stack, FakeOpenAI],
) -> None:
    stack, provider = openai_stack
    # Given a provider that answers 429 with Retry-After: one hour, and a job due in 60 s (its own word in
    # letters only: the document's hex nonce may hold digits that redaction takes for a phone number)
    own = "".join(random.choices(string.ascii_lowercase, k=24))
    data = document(words=f"\nopenai-scenario: rate_limited_long\n{own}\n")
    started = time.monotonic()
    job_id = stack.submit(data, max_attempts=3, deadline_s=60)
    # When the first attempt fails, the retry would start after the deadline
    view = stack.wait(job_id, timeout=20)
    # Then the job is dead-lettered at once instead of waiting for a retry that could not run
    assert time.monotonic() - started < 10
    assert view["status"] == "dead_letter", view["events"]
    assert event_types(view) == ["queued", "running", "dead_letter"]
    assert view["error"]["code"] == "deadline_exceeded"
    assert "rate_limited" in view["events"][-1]["detail"]
    assert sum(own in r["body"]["messages"][-1]["content"] for r in provider.requests) == 1


# Personal details a document may hold, each as written, and lookalikes whose checksums fail.
EMAILS = ["jane.doe@example.com", "Billing@Example.co.uk", "ops+alerts@quire-test.org"]
PHONES = ["+1 415 555 2671", "+49 30 901820", "+44 20 7946 0958", "(415) 555-2671"]
IBANS = ["DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "FR14 2004 1010 0505 0001 3M02 606"]
CARDS = ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005"]
LOOKALIKES = ["DE88 3704 0044 0532 0130 00", "GB83WEST12345698765432", "4111 1111 1111 1112", "5500 0000 0000 0005"]


def _customer_file(scenario: str) -> bytes:
    return (
        f"Customer file q{uuid.uuid4().hex}q.\n\n"
        f"Write to {EMAILS[0]} or {EMAILS[1]}; alerts go to {EMAILS[2]}.\n"
        f"Call {PHONES[0]} in the US, {PHONES[1]} in Berlin, {PHONES[2]} in London, or {PHONES[3]}.\n"
        f"Pay to {IBANS[0]} EUR, to {IBANS[1]} or to {IBANS[2]}.\n"
        f"Cards on file: {CARDS[0]} (exp 12/28), {CARDS[1]} and {CARDS[2]}.\n"
        f"Not ours: accounts {LOOKALIKES[0]} and {LOOKALIKES[1]}, cards {LOOKALIKES[2]} and {LOOKALIKES[3]}.\n"
        f"openai-scenario: {scenario}\n"
    ).encode()


def _compact(value: str) -> str:
    return "".join(ch for ch in value if ch.isalnum())


def test_personal_details_never_reach_the_model_and_come_back_in_the_result(
    openai_stack: tuple[Stack, FakeOpenAI],
) -> None:
    stack, provider = openai_stack
    # Given a document with several email addresses, phone numbers, IBANs and card numbers
    data = _customer_file("echo")
    marker = data.split()[2].decode()
    # When it is summarised by the openai provider, whose answer echoes what it was sent
    view = stack.wait(stack.submit(data))
    assert view["status"] == "completed", view["events"]
    # Then no request the provider received holds any of those details, in any spelling
    bodies = [json.dumps(r["body"]) for r in provider.requests if marker in json.dumps(r["body"])]
    assert len(bodies) == 1
    for value in EMAILS + PHONES + IBANS + CARDS:
        assert value not in bodies[0], value
        assert value.lower() not in bodies[0].lower(), value
    for value in IBANS + CARDS:
        assert _compact(value) not in _compact(bodies[0]), value
    # while lookalikes that fail their checksums are kept as they are
    for value in LOOKALIKES:
        assert value in bodies[0], value
    # And the placeholders in the answer are the real values again in the result
    document = stack.http.get(view["artifact"]["url"]).json()
    summary = document["result"]["summary"]
    for value in EMAILS + IBANS + CARDS + PHONES[:3]:
        assert value in summary, value
    assert "[" not in summary
    # And provenance counts what was redacted, never the values
    assert document["provenance"]["redacted"] == {"email": 3, "phone": 4, "iban": 3, "card": 3}
    assert "jane.doe" not in json.dumps(document["provenance"])
    assert "jane.doe" not in stack.logs("worker")


@pytest.fixture(scope="module", params=ONE_DATABASE)
def local_stack(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """A web and a worker with the offline `local` provider (reading is the same on either database)."""
    root = tmp_path_factory.mktemp(f"local-{request.param}")
    with running_stack(request.param, redis_server, root, QUIRE_MODEL_PROVIDER="local") as stack:
        yield stack


def _invoice_job(stack: Stack, filename: str, data: bytes, content_type: str) -> dict[str, Any]:
    response = stack.http.post(
        "/ai-jobs", data={"workflow": "invoice_summary"}, files={"file": (filename, data, content_type)}
    )
    assert response.status_code == 202, response.text
    return stack.wait(response.json()["job_id"])


def test_invoice_pdf_becomes_a_completed_job_with_the_right_total(local_stack: Stack) -> None:
    invoice = next(i for i in make_invoices(36) if i.doc_type == "pdf")
    data, filename = render(invoice, variant=0)
    view = _invoice_job(local_stack, filename, data, "application/pdf")
    assert view["status"] == "completed", view["events"]
    assert {a["name"] for a in view["artifacts"]} == {"invoice_summary.json", "invoice_summary.md"}
    result = local_stack.http.get(view["artifact"]["url"]).json()
    assert Decimal(result["result"]["total"]) == invoice.total
    assert result["result"]["invoice_number"] == invoice.number
    assert result["result"]["source"] == "text"
    assert result["result"]["fields"]["total"]["page"] == 1
    assert result["provenance"]["workflow_version"] == "2"
    assert result["provenance"]["provider"] == "local"
    assert result["provenance"]["input_sha256"] == view["input"]["sha256"]
    report = local_stack.http.get(f"/ai-jobs/{view['job_id']}/artifacts/invoice_summary.md").text
    assert f"{invoice.total:,.2f}" in report


@pytest.mark.parametrize(
    ("folder", "name"),
    [("xml", "XML-Rechnung__UBL__EN16931_Einfach.ubl.xml"), ("factur-x", "EN16931_Einfach_DueDate.pdf")],
)
def test_an_einvoice_is_read_exactly_from_its_xml(local_stack: Stack, folder: str, name: str) -> None:
    # Given a real e-invoice (UBL XML) and a real Factur-X PDF from the ZUGFeRD corpus
    data = (CORPUS / folder / name).read_bytes()
    twin = name if folder == "xml" else f"XML-Rechnung__CII__{Path(name).stem}.cii.xml"
    expected = json.loads((CORPUS / "xml" / "expected.json").read_text())[twin]
    # When it is uploaded as any file would be
    view = _invoice_job(local_stack, name, data, "application/octet-stream")
    # Then the job completes with the XML's values, marked as read from the e-invoice
    assert view["status"] == "completed", view["events"]
    result = local_stack.http.get(view["artifact"]["url"]).json()["result"]
    assert result["source"] == "einvoice"
    for field in ("invoice_number", "issue_date", "currency"):
        assert result[field] == expected[field]
    assert Decimal(result["total"]) == Decimal(expected["total"])
    assert result["needs_review"] == []


@pytest.mark.parametrize(
    "payload",
    [
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">&x;</Invoice>',
        b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]><l>&d;</l>',
    ],
    ids=["xxe", "billion-laughs"],
)
def test_hostile_xml_ends_in_invalid_input_and_the_worker_carries_on(local_stack: Stack, payload: bytes) -> None:
    view = _invoice_job(local_stack, "invoice.xml", payload, "application/xml")
    assert view["status"] == "dead_letter"
    assert [e["code"] for e in view["errors"]] == ["invalid_input"]
    assert "root:" not in json.dumps(view)
    # The same worker still completes the next job.
    data = (CORPUS / "xml" / "XML-Rechnung__CII__EN16931_Einfach.cii.xml").read_bytes()
    assert _invoice_job(local_stack, "next.xml", data, "application/xml")["status"] == "completed"


@pytest.mark.postgres
def test_a_slow_model_call_holds_no_database_connection(redis_server: EmbeddedRedis, tmp_path: Path) -> None:
    database: ScratchDatabase = make_database("postgresql", tmp_path)
    stack = Stack(tmp_path, database, fresh_redis_url(redis_server))
    try:
        stack.start()
        job_id = stack.submit(document("slow:3"))
        stack.wait(job_id, {"running"})
        time.sleep(1.3)
        url = make_url(database.url).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(url) as conn:
            # A transaction held across the model call would be over a second old by now; the short
            # ones of the heartbeat and recovery may be caught open at any moment, so age tells them apart.
            held = conn.execute(
                "SELECT state, query, now() - xact_start FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
                "AND xact_start < now() - interval '0.75 seconds'"
            ).fetchall()
        assert held == [], held
        assert stack.job(job_id)["status"] == "running"
        assert event_types(stack.wait(job_id)) == ["queued", "running", "completed"]
    finally:
        stack.stop()
        database.drop()
