"""Redaction: personal details become placeholders before text leaves for a third-party model,
and the placeholders in the model's answer become the real values again.

Four kinds, found with the libraries that know their rules: email addresses; phone numbers that
`phonenumbers` finds valid (international ones anywhere, national ones for the configured
regions); IBANs whose check digits `python-stdnum` accepts; card numbers of 13 to 19 digits that
pass the Luhn check. A lookalike that fails its check (an order number, a mistyped IBAN) is left
as it is. Each distinct value gets one placeholder such as `[EMAIL_1]` for the whole document, so
the model can refer to it and its answer can be restored exactly. The values stay in memory for
one request; only the kinds and counts are ever recorded.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import phonenumbers
from stdnum import iban, luhn

from quire.settings import RedactionKind
from quire.workflows.models.checksums import IBAN_CANDIDATE, checked_spans

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?![\w-])")
# Candidates only; a checksum decides (`checksums`). Groups may be separated by dashes.
CARD_CANDIDATE = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
PLACEHOLDER = re.compile(r"\[(EMAIL|PHONE|IBAN|CARD)_(\d+)\]")


def _valid_card(candidate: str) -> bool:
    digits = re.sub(r"\D", "", candidate)
    return 13 <= len(digits) <= 19 and luhn.is_valid(digits)


def _phone_spans(text: str, regions: Iterable[str]) -> list[tuple[int, int, str]]:
    """Valid phone numbers as (start, end, E.164), read as international numbers or in any of the
    regions; where readings overlap, the longest wins."""
    found: list[tuple[int, int, str]] = []
    for region in regions:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
            found.append((match.start, match.end, e164))
    kept: list[tuple[int, int, str]] = []
    for start, end, e164 in sorted(found, key=lambda f: (f[0], -f[1])):
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, e164))
    return kept


class Redaction:
    """One document's redaction: its placeholders, what each stands for, and counts by kind."""

    def __init__(self, kinds: Iterable[RedactionKind], phone_regions: Iterable[str] = ()) -> None:
        self.kinds = tuple(kinds)
        self.phone_regions = tuple(phone_regions)
        self.counts: Counter[RedactionKind] = Counter()
        self._values: dict[str, str] = {}
        self._placeholders: dict[tuple[RedactionKind, str], str] = {}

    def _placeholder(self, kind: RedactionKind, key: str, value: str) -> str:
        self.counts[kind] += 1
        placeholder = self._placeholders.get((kind, key))
        if placeholder is None:
            number = sum(1 for k, _ in self._placeholders if k == kind) + 1
            placeholder = f"[{kind.upper()}_{number}]"
            self._placeholders[(kind, key)] = placeholder
            self._values[placeholder] = value
        return placeholder

    def _replace(self, text: str, kind: RedactionKind, spans: Iterable[tuple[int, int, str]]) -> str:
        parts: list[str] = []
        last = 0
        for start, end, key in spans:
            parts += [text[last:start], self._placeholder(kind, key, text[start:end])]
            last = end
        return "".join(parts) + text[last:]

    def redact(self, text: str) -> str:
        """The text with every detail of the chosen kinds replaced by its placeholder.

        Emails first, then IBANs and cards (whose digits would otherwise read as phone numbers),
        phones last; a placeholder holds no digit run that a later kind could mistake for one.
        """
        if "email" in self.kinds:
            spans = [(m.start(), m.end(), m.group().lower()) for m in EMAIL.finditer(text)]
            text = self._replace(text, "email", spans)
        if "iban" in self.kinds:
            spans = [(s, e, iban.compact(text[s:e])) for s, e in checked_spans(IBAN_CANDIDATE, text, iban.is_valid)]
            text = self._replace(text, "iban", spans)
        if "card" in self.kinds:
            spans = [(s, e, re.sub(r"\D", "", text[s:e])) for s, e in checked_spans(CARD_CANDIDATE, text, _valid_card)]
            text = self._replace(text, "card", spans)
        if "phone" in self.kinds:
            text = self._replace(text, "phone", _phone_spans(text, self.phone_regions))
        return text

    def restore(self, answer: Any) -> Any:
        """The model's answer with each placeholder it echoes replaced by the real value."""
        if isinstance(answer, str):
            return PLACEHOLDER.sub(lambda m: self._values.get(m.group(), m.group()), answer)
        if isinstance(answer, list):
            return [self.restore(item) for item in answer]
        if isinstance(answer, dict):
            return {key: self.restore(value) for key, value in answer.items()}
        return answer

    def report(self) -> dict[str, int]:
        """What provenance records: how many details of each chosen kind were replaced."""
        return {kind: self.counts[kind] for kind in self.kinds}
