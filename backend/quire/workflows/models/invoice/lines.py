"""Line items from table rows whose arithmetic checks out, and the one-paragraph summary of an invoice."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

_SPACES = "\u00a0\u202f\u2009"
_CURRENCY_RE = re.compile(r"US\$|[€$£¥]|\b(?:EUR|USD|GBP|CHF|CAD|AUD|JPY|SEK)\b")
_AMOUNT_RE = re.compile(
    rf"-?\d{{1,3}}(?:[,.'\u2019 {_SPACES}]\d{{3}})+(?:[.,]\d{{1,2}})?(?!\d)|-?\d+(?:[.,]\d{{1,2}})?(?!\d)"
)


def parse_amount(text: str) -> Decimal | None:
    """A money amount written as 1,234.56 or 1.234,56 or 1 234,56 or 1'234.56, as a Decimal."""
    found = _AMOUNT_RE.findall(_CURRENCY_RE.sub(" ", text))
    if not found:
        return None
    raw = found[-1]  # the amount is the last number on a line (after any rate or count)
    for ch in f"'\u2019 {_SPACES}":
        raw = raw.replace(ch, "")
    if "," in raw and "." in raw:
        decimal_mark = "," if raw.rfind(",") > raw.rfind(".") else "."
    elif raw.count(",") == 1 and re.search(r",\d{1,2}$", raw):
        decimal_mark = ","
    elif raw.count(".") == 1 and re.search(r"\.\d{1,2}$", raw):
        decimal_mark = "."
    else:
        decimal_mark = ""
    thousands = {",", "."} - {decimal_mark}
    for mark in thousands:
        raw = raw.replace(mark, "")
    try:
        return Decimal(raw.replace(",", ".")) if decimal_mark else Decimal(raw)
    except InvalidOperation:
        return None


def _is_number(token: str) -> bool:
    return bool(re.fullmatch(r"-?\d+(?:[.,'\u2019]\d{3})*(?:[.,]\d{1,4})?", token))


def line_item(line: str) -> dict[str, Any] | None:
    """A table row `description quantity unit-price amount` whose arithmetic checks out."""
    cleaned = _CURRENCY_RE.sub(" ", line.replace("|", " "))
    tokens = [t for t in re.split(rf"[\s{_SPACES}]+", cleaned) if t and t not in {"x", "\u00d7", "@", "="}]
    if len(tokens) < 4:
        return None
    # The last three numbers, read right to left; each may be spread over several tokens
    # (1 234,56), and the longest reading is tried first so thousands groups stay whole.
    tail = tokens[-9:]
    offset = len(tokens) - len(tail)
    for amount_start in range(max(len(tail) - 3, 2), len(tail)):
        amount = _whole_number(tail[amount_start:])
        if amount is None:
            continue
        for unit_start in range(max(amount_start - 3, 1), amount_start):
            unit = _whole_number(tail[unit_start:amount_start])
            if unit is None:
                continue
            for qty_start in range(max(unit_start - 3, 0), unit_start):
                qty = _whole_number(tail[qty_start:unit_start])
                if qty is None or qty <= 0:
                    continue
                description = " ".join(tokens[: offset + qty_start]).strip(" -:")
                if abs(qty * unit - amount) <= Decimal("0.01") and re.search(r"[^\W\d_]", description):
                    return {"description": description, "quantity": qty, "unit_price": unit, "amount": amount}
    return None


def _whole_number(tokens: list[str]) -> Decimal | None:
    chunk = " ".join(tokens)
    if len(tokens) == 1 and _is_number(chunk):
        return parse_amount(chunk)
    if len(tokens) > 1 and re.fullmatch(r"-?\d{1,3}(?: \d{3})+(?:[.,]\d{1,2})?", chunk):
        return parse_amount(chunk)
    return None


def describe(fields: dict[str, Any]) -> str:
    """One plain paragraph about the invoice, from its fields."""
    credit = fields.get("document_type") == "credit_note"
    parts = [f"{'Credit note' if credit else 'Invoice'} {fields['invoice_number'] or '(no number found)'}"]
    if fields["vendor"]:
        parts.append(f"from {fields['vendor']}")
    if fields["issue_date"]:
        parts.append(f"dated {fields['issue_date']}")
    sentence = " ".join(parts)
    if fields["total"] is not None:
        # A credit note's amounts are given negative (or, from an e-invoice, as its XML states them): said as a credit.
        total, tax = fields["total"], fields["tax"]
        if credit:
            total, tax = abs(total), None if tax is None else abs(tax)
        sentence += f" {'credits' if credit else 'totals'} {fields['currency'] or ''} {total:,.2f}".replace("  ", " ")
        if tax is not None:
            sentence += f", including {tax:,.2f} tax"
    sentence += "."
    if fields["due_date"]:
        sentence += f" {'It is due' if credit else 'Payment is due'} on {fields['due_date']}."
    if fields["line_items"]:
        count = len(fields["line_items"])
        sentence += f" It lists {count} line item{'s' if count != 1 else ''}."
    return sentence
