"""Redaction before a third-party model: what is found, what is kept, and what comes back."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from backend.tests.integration.fake_openai import API_KEY, FakeOpenAI
from quire.documents.extract import Document
from quire.settings import Settings
from quire.workflows.document_summary import TASK, DocumentSummary
from quire.workflows.models.openai import OpenAIProvider, leading_text
from quire.workflows.models.redaction import Redaction

ALL = ("email", "phone", "iban", "card")
REGIONS = ("US", "GB", "DE", "FR")


def redact(text: str, kinds: tuple[str, ...] = ALL) -> tuple[str, Redaction]:
    redaction = Redaction(kinds, REGIONS)  # type: ignore[arg-type]
    return redaction.redact(text), redaction


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        ("jane.doe@example.com", "[EMAIL_1]"),
        ("Søren.Ø@example.dk", "[EMAIL_1]"),
        ("+1 415 555 2671", "[PHONE_1]"),
        ("(415) 555-2671", "[PHONE_1]"),
        ("+44 20 7946 0958", "[PHONE_1]"),
        ("030 901820", "[PHONE_1]"),
        ("DE89 3704 0044 0532 0130 00", "[IBAN_1]"),
        ("GB82WEST12345698765432", "[IBAN_1]"),
        ("4111 1111 1111 1111", "[CARD_1]"),
        ("5500-0000-0000-0004", "[CARD_1]"),
        ("378282246310005", "[CARD_1]"),
    ],
)
def test_each_kind_is_found_and_replaced(value: str, placeholder: str) -> None:
    text, redaction = redact(f"See {value}, then reply.")
    assert text == f"See {placeholder}, then reply."
    assert redaction.restore(text) == f"See {value}, then reply."


@pytest.mark.parametrize(
    "lookalike",
    [
        "DE88 3704 0044 0532 0130 00",  # IBAN check digits wrong
        "GB83WEST12345698765432",
        "4111 1111 1111 1112",  # fails Luhn
        "1234567812345678",
        "Invoice 2024-03-15",
        "order 20240315",
        "total 1.234,56 EUR",
        "user at example dot com",
    ],
)
def test_lookalikes_that_fail_their_checks_are_kept(lookalike: str) -> None:
    text, redaction = redact(f"Keep {lookalike} here.")
    assert text == f"Keep {lookalike} here."
    assert sum(redaction.counts.values()) == 0


def test_an_iban_is_found_between_other_codes() -> None:
    # A reference that looks like an IBAN's start, and a currency code run into its last group
    text, _ = redact("Ref AB12 DE89 3704 0044 0532 0130 00 EUR paid.")
    assert text == "Ref AB12 [IBAN_1] EUR paid."


def test_one_value_keeps_one_placeholder_and_every_occurrence_counts() -> None:
    text, redaction = redact(
        "a@example.com, b@example.com, A@Example.com; IBAN DE89370400440532013000 = DE89 3704 0044 0532 0130 00."
    )
    assert text == "[EMAIL_1], [EMAIL_2], [EMAIL_1]; IBAN [IBAN_1] = [IBAN_1]."
    assert redaction.report() == {"email": 3, "phone": 0, "iban": 2, "card": 0}


def test_only_the_chosen_kinds_are_redacted() -> None:
    text, redaction = redact("jane@example.com, 4111 1111 1111 1111", kinds=("card",))
    assert text == "jane@example.com, [CARD_1]"
    assert redaction.report() == {"card": 1}


def test_restore_walks_the_whole_answer_and_leaves_unknown_placeholders() -> None:
    _, redaction = redact("jane@example.com and 4111 1111 1111 1111")
    answer = {"a": ["[EMAIL_1]", {"b": "card [CARD_1], [CARD_2], [IBAN_1]"}], "n": 3, "z": None}
    assert redaction.restore(answer) == {
        "a": ["jane@example.com", {"b": "card 4111 1111 1111 1111, [CARD_2], [IBAN_1]"}],
        "n": 3,
        "z": None,
    }


def test_text_is_cut_at_a_line_break_so_no_detail_is_cut_in_two() -> None:
    text = "x" * 30 + "\ncall jane@example.com\ntail"
    assert leading_text(text, 1000) == text
    # A limit inside the address cuts at the line break before it
    assert leading_text(text, text.index("example")) == "x" * 30
    assert leading_text("y" * 50, 10) == "y" * 10


@pytest.fixture
def provider() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


def _settings(server: FakeOpenAI, redact: str) -> Settings:
    return Settings(
        openai_base_url=server.base_url,
        openai_api_key=API_KEY,
        redact=redact,  # type: ignore[arg-type]  # read from the environment as a comma-separated string
    )


DOCUMENT = Document(
    text="Write to jane@example.com or call +1 415 555 2671.\nopenai-scenario: echo\n",
    filename="from-jane@example.com.txt",
    content_type="text/plain",
    sha256="0" * 64,
)


def test_the_openai_provider_sends_placeholders_and_validates_the_restored_answer(provider: FakeOpenAI) -> None:
    model = OpenAIProvider(_settings(provider, "email,phone,iban,card"), timeout_s=5)
    answer = model.answer(TASK, DOCUMENT, DocumentSummary)
    sent = json.dumps(provider.requests[-1]["body"])
    assert "jane@example.com" not in sent
    assert "415 555 2671" not in sent
    assert "[EMAIL_1]" in sent
    summary = DocumentSummary.model_validate(answer).summary
    assert summary == "Details: from-jane@example.com.txt jane@example.com +1 415 555 2671."
    assert model.redacted == {"email": 2, "phone": 1, "iban": 0, "card": 0}


def test_with_redaction_off_the_document_goes_as_it_is(provider: FakeOpenAI) -> None:
    model = OpenAIProvider(_settings(provider, ""), timeout_s=5)
    model.answer(TASK, DOCUMENT, DocumentSummary)
    assert "jane@example.com" in json.dumps(provider.requests[-1]["body"])
    assert model.redacted is None
