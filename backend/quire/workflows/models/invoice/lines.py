"""Line items from table rows whose arithmetic checks out, and the one-paragraph summary of an invoice.

(Version 1 of the invoice workflow read every field with the rules below; version 2 keeps its row
reader and its summary sentence, and reads the fields from the layout in `reader`.)"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from quire.documents.extract import Document
from quire.workflows.models.text import detect_language, words

_SPACES = "\u00a0\u202f\u2009"
_LABELS: dict[str, list[str]] = {
    # Order matters where labels share words: subtotal and tax before total, due before issue date.
    "subtotal": [
        r"sub\s*-?\s*total", r"net\s+(?:amount|total)", r"total\s+(?:excl\.?|before)\s+(?:vat|tax)",
        r"zwischensumme", r"netto\s*(?:betrag|summe)?", r"summe\s+netto", r"gesamt\s+netto",
        r"sous\s*-?\s*total", r"total\s+h\.?t\.?", r"montant\s+h\.?t\.?",
    ],
    "tax": [
        r"total\s+tva", r"(?:sales\s+)?tax", r"vat", r"gst", r"mwst\.?", r"ust\.?", r"mehrwertsteuer",
        r"umsatzsteuer", r"tva",
    ],
    "total": [
        r"total\s+due", r"amount\s+due", r"balance\s+due", r"grand\s+total", r"total\s+amount",
        r"total\s+t\.?t\.?c\.?", r"montant\s+total", r"net\s+[àa]\s+payer", r"total\s+[àa]\s+payer",
        r"gesamtbetrag", r"rechnungsbetrag", r"gesamtsumme", r"endbetrag", r"zu\s+zahlen", r"total", r"gesamt",
    ],
    "invoice_number": [
        r"invoice\s*(?:no\.?|number|num\.?|nr\.?|#|id)", r"rechnungs\s*-?\s*(?:nr\.?|nummer)",
        r"rechnung\s*(?:nr\.?|nummer|#)", r"n[°ºo]\.?\s*(?:de\s+)?facture", r"num[ée]ro\s+de\s+facture",
        r"facture\s*(?:n[°ºo]\.?|num[ée]ro)",
    ],
    "due_date": [
        r"due\s+date", r"payment\s+due(?:\s+date)?", r"due\s+(?:by|on)", r"due", r"pay\s+by",
        r"f[äa]llig(?:keitsdatum|\s+am|\s+bis)?", r"zahlbar\s+bis", r"zahlungsziel",
        r"date\s+d['\u2019]\s*[ée]ch[ée]ance", r"[ée]ch[ée]ance", r"[àa]\s+payer\s+(?:avant\s+)?le",
    ],
    "issue_date": [
        r"invoice\s+date", r"date\s+of\s+issue", r"issue\s+date", r"issued(?:\s+on)?", r"rechnungsdatum",
        r"ausstellungsdatum", r"datum", r"date\s+de\s+(?:la\s+)?facture", r"date\s+d['\u2019]\s*[ée]mission",
        r"date\s+de\s+facturation", r"date",
    ],
    "vendor": [
        r"from", r"vendor", r"seller", r"supplier", r"issued\s+by", r"billed\s+by", r"von", r"verk[äa]ufer",
        r"lieferant", r"rechnungssteller", r"fournisseur", r"[ée]metteur", r"vendeur", r"de",
    ],
}  # fmt: skip
_FIELD_RE = {
    # A label must end where a word ends: `de` is a label, `Description` is not.
    field: re.compile(
        r"^\s*(?:" + "|".join(patterns) + r")(?![^\W\d_])\s*(?:\(.*?\))?\s*[:#.\-]?\s*(?P<value>.*)$", re.I
    )
    for field, patterns in _LABELS.items()
}
_TITLES = re.compile(r"^\s*(?:tax\s+)?(?:invoice|rechnung|facture)\b\s*$", re.I)
_BILL_TO = re.compile(r"^\s*(?:bill(?:ed)?\s+to|to|an|rechnungsempf[äa]nger|factur[ée]\s+[àa]|client)\b", re.I)

_CURRENCIES = {
    "€": "EUR", "EUR": "EUR", "$": "USD", "US$": "USD", "USD": "USD", "£": "GBP", "GBP": "GBP",
    "CHF": "CHF", "CAD": "CAD", "AUD": "AUD", "JPY": "JPY", "¥": "JPY", "SEK": "SEK",
}  # fmt: skip
_CURRENCY_RE = re.compile(r"US\$|[€$£¥]|\b(?:EUR|USD|GBP|CHF|CAD|AUD|JPY|SEK)\b")
_PERCENT_RE = re.compile(r"\d+(?:[.,]\d+)?\s*%")
_AMOUNT_RE = re.compile(
    rf"-?\d{{1,3}}(?:[,.'\u2019 {_SPACES}]\d{{3}})+(?:[.,]\d{{1,2}})?(?!\d)|-?\d+(?:[.,]\d{{1,2}})?(?!\d)"
)

_MONTHS = {
    1: "jan january januar janvier", 2: "feb february februar fév févr février fev fevr fevrier",
    3: "mar march mär märz maerz mars", 4: "apr april avr avril", 5: "may mai", 6: "jun june juni juin",
    7: "jul july juli juil juillet", 8: "aug august aou août aout", 9: "sep sept september septembre",
    10: "oct october okt oktober octobre", 11: "nov november novembre", 12: "dec december dez dezember déc décembre",
}  # fmt: skip
_MONTH_BY_NAME = {name: number for number, names in _MONTHS.items() for name in names.split()}
_MONTH_NAME = "|".join(sorted(_MONTH_BY_NAME, key=len, reverse=True))
_DATE_PATTERNS = [
    ("ymd", re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")),
    ("dmy_dot", re.compile(r"(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4})")),
    ("slash", re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})")),
    ("d_month_y", re.compile(rf"(\d{{1,2}})(?:st|nd|rd|th|er)?\.?\s+({_MONTH_NAME})\.?,?\s+(\d{{4}})", re.I)),
    ("month_d_y", re.compile(rf"({_MONTH_NAME})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})", re.I)),
]


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


def parse_date(text: str, month_first: bool) -> date | None:
    """A date in ISO, European, US or written-out form; slashed dates follow `month_first`."""
    for kind, pattern in _DATE_PATTERNS:
        match = pattern.search(text)
        if not match:
            continue
        a, b, c = match.groups()
        try:
            if kind == "ymd":
                return date(int(a), int(b), int(c))
            if kind == "dmy_dot":
                return date(int(c), int(b), int(a))
            if kind == "d_month_y":
                return date(int(c), _MONTH_BY_NAME[b.lower()], int(a))
            if kind == "month_d_y":
                return date(int(c), _MONTH_BY_NAME[a.lower()], int(b))
            first, second = int(a), int(b)
            if first > 12 or (not month_first and second <= 12):
                return date(int(c), second, first)
            return date(int(c), first, second)
        except (ValueError, KeyError):
            continue
    return None


def detect_currency(text: str) -> str | None:
    found = Counter(_CURRENCIES[m.group(0)] for m in _CURRENCY_RE.finditer(text))
    return found.most_common(1)[0][0] if found else None


def _labelled(lines: list[str]) -> dict[str, str]:
    """The value after the first label of each field, one field per line."""
    values: dict[str, str] = {}
    for i, line in enumerate(lines):
        for field, pattern in _FIELD_RE.items():
            match = pattern.match(line)
            if match is None:
                continue
            value = match.group("value").strip()
            if not value and i + 1 < len(lines):
                value = lines[i + 1].strip()  # label above its value
            if field not in values and value:
                values[field] = value
            break
    return values


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


def _vendor(lines: list[str], labelled: dict[str, str]) -> str | None:
    if "vendor" in labelled:
        return labelled["vendor"]
    for line in lines:
        stripped = line.strip().strip("#*").strip()
        if not stripped or _TITLES.match(stripped) or _BILL_TO.match(stripped):
            continue
        if any(pattern.match(stripped) for pattern in _FIELD_RE.values()):
            continue
        if re.search(r"[^\W\d_]{2}", stripped):
            return stripped
    return None


def _money(value: str | None) -> Decimal | None:
    return None if value is None else parse_amount(_PERCENT_RE.sub(" ", value))


def read_invoice(document: Document) -> dict[str, Any]:
    """The fields of an invoice, read by rules from its text."""
    lines = [line.strip() for line in document.text.splitlines() if line.strip()]
    labelled = _labelled(lines)
    currency = detect_currency(labelled.get("total", "")) or detect_currency(document.text)
    month_first = currency == "USD"
    items = [item for item in (line_item(line) for line in lines) if item is not None]
    subtotal, tax, total = (_money(labelled.get(k)) for k in ("subtotal", "tax", "total"))
    if subtotal is None and items:
        subtotal = sum((item["amount"] for item in items), Decimal("0"))
    if total is None and subtotal is not None and tax is not None:
        total = subtotal + tax
    if tax is None and total is not None and subtotal is not None and total >= subtotal:
        tax = total - subtotal
    number_match = re.search(r"[A-Za-z0-9][A-Za-z0-9\-/._]*\d[A-Za-z0-9\-/._]*", labelled.get("invoice_number", ""))
    issue = parse_date(labelled.get("issue_date", ""), month_first)
    due = parse_date(labelled.get("due_date", ""), month_first)
    vendor = _vendor(lines, labelled)
    fields = {
        "vendor": vendor,
        "invoice_number": number_match.group(0).rstrip("._-") if number_match else None,
        "issue_date": issue.isoformat() if issue else None,
        "due_date": due.isoformat() if due else None,
        "currency": currency,
        "subtotal": subtotal,
        "tax": tax,
        "total": total,
        "line_items": items,
        "language": detect_language(words(document.text)),
    }
    fields["summary"] = describe(fields)
    return fields


def describe(fields: dict[str, Any]) -> str:
    """One plain paragraph about the invoice, from its fields."""
    parts = [f"Invoice {fields['invoice_number'] or '(no number found)'}"]
    if fields["vendor"]:
        parts.append(f"from {fields['vendor']}")
    if fields["issue_date"]:
        parts.append(f"dated {fields['issue_date']}")
    sentence = " ".join(parts)
    if fields["total"] is not None:
        sentence += f" totals {fields['currency'] or ''} {fields['total']:,.2f}".replace("  ", " ")
        if fields["tax"] is not None:
            sentence += f", including {fields['tax']:,.2f} tax"
    sentence += "."
    if fields["due_date"]:
        sentence += f" Payment is due on {fields['due_date']}."
    if fields["line_items"]:
        count = len(fields["line_items"])
        sentence += f" It lists {count} line item{'s' if count != 1 else ''}."
    return sentence
