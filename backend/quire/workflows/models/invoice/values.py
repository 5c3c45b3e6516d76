"""Values printed on invoices: money amounts, dates, currencies, and identifiers that are neither.

Month names come from the Unicode CLDR through `babel`, amounts are converted by babel's
`parse_decimal` once the document's decimal mark is known. A value is read only where it stands
alone: `DE136695976` is a VAT ID, never an amount, and `+33 2 99 83 51 51` is a phone number.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import cache

from babel.dates import get_month_names
from babel.numbers import NumberFormatError, get_territory_currencies, parse_decimal

LANGUAGES = ("en", "de", "fr", "nl", "es", "it", "pl", "pt", "sv", "da", "nb", "fi")
_SPACES = "\u00a0\u202f\u2009 "

CURRENCY_SYMBOLS = {"€": "EUR", "$": "USD", "US$": "USD", "£": "GBP", "¥": "JPY", "R$": "BRL", "zł": "PLN", "A$": "AUD",
                    "C$": "CAD", "₹": "INR"}  # fmt: skip
CURRENCY_CODES = frozenset(["EUR", "USD", "GBP", "CHF", "CAD", "AUD", "JPY", "SEK", "NOK", "DKK", "PLN", "CZK",
                            "HUF", "BRL", "INR", "MYR", "SGD", "NZD", "ZAR", "MXN", "CNY", "HKD",
                            "RON", "BGN"])  # fmt: skip
_CURRENCY = re.compile(
    r"(?<![A-Za-z])(?:"
    + "|".join(sorted(CURRENCY_CODES, key=len, reverse=True))
    + r")(?![A-Za-z])|"
    + "|".join(re.escape(symbol) for symbol in sorted(CURRENCY_SYMBOLS, key=len, reverse=True))
)

# A money amount: optional sign, thousands groups, and a decimal part of two digits; or a whole
# number that a currency sign or code sits right next to. Nothing glued to letters or other digits.
_NUMBER = r"\d{1,3}(?:[.,'\u2019\u00a0\u202f\u2009 ]\d{3})+(?:[.,]\d{2})?|\d+[.,]\d{2}|\d+"
_AMOUNT = re.compile(
    r"(?<![\w.,/])(?P<sign>[-\u2212(])?\s?(?P<pre>" + _CURRENCY.pattern + r")?\s?(?P<num>" + _NUMBER + r")"
    r"(?P<trail>-)?(?:\s?(?P<post>" + _CURRENCY.pattern + r"))?(?![\w/]|[.,]\d|\s?%)"
)

# Identifiers that look numeric: tax and VAT numbers, bank accounts, phone numbers, register numbers.
_IDENTIFIER_LABELS = re.compile(
    r"\b(?:ust|vat|tva|btw|iva|mwst|nip|nif|cif|cnpj|cpf|abn|gst|hst|siret|siren|rcs|krs|regon|kvk|p\.?\s?iva|"
    r"partita|codice|steuer|st\.?-?nr|tax\s?(?:id|no|number|reg)|id|iban|bic|swift|blz|konto|account|acct|"
    r"routing|sort\s?code|tel|tél|phone|fon|fax|mobile|handy|telefon|kunden|customer|client|order|bestell|"
    r"auftrag|commande|pedido|ordine|zam[oó]w|po\b|ref|reference|referenz|référence|hrb|hra|amtsgericht|"
    r"registergericht|handelsregister|reg\.?\s?no|company\s?(?:no|number)|page|seite|pagina|página|strona)",
    re.I,
)
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b")
VAT_ID = re.compile(r"\b(?:ATU|DE|FR|NL|ES|IT|PL|PT|BE|LU|IE|GB|DK|SE|FI|CZ|SK|HU|RO|BG|HR|SI|EL|CY|MT|EE|LV|LT|CHE)"
                    r"[\s-]?[0-9A-Z]{2}[\s.]?\d{3}[\s.]?\d{3,6}(?:[\s.]?[0-9A-Z]{1,3})?\b")  # fmt: skip
PHONE = re.compile(r"(?:\+|\b00)\d{1,3}[\s./-]?\(?\d{1,5}\)?(?:[\s./-]?\d{2,5}){2,5}")
EMAIL_OR_URL = re.compile(r"\S+@\S+\.\w+|\b(?:https?://|www\.)\S+", re.I)


def fold(text: str) -> str:
    """Lower case without accents, one character for one, so positions in the folded text are positions
    in the printed text; characters without a plain-letter form (`€`, `ł`) stay as they are."""
    return "".join(_fold_char(ch) for ch in text)


@cache
def _fold_char(ch: str) -> str:
    plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
    return (plain[:1] or ch).lower()


def is_identifier_context(text: str) -> bool:
    """True when the phrase names an identifier (VAT ID, IBAN, phone, customer number, page, ...)."""
    return bool(_IDENTIFIER_LABELS.search(text) or IBAN.search(text) or VAT_ID.search(text) or PHONE.search(text))


def strip_identifiers(text: str) -> str:
    """The text with IBANs, VAT IDs, phone numbers, emails and URLs blanked out."""
    for pattern in (EMAIL_OR_URL, IBAN, VAT_ID, PHONE):
        text = pattern.sub(" ", text)
    return text


@dataclass(frozen=True, slots=True)
class Amount:
    value: Decimal
    currency: str | None


def decimal_mark_of(text: str) -> str | None:
    """`,` or `.` when the printed amounts decide it (a two-digit tail after one mark only), else None."""
    commas = len(re.findall(r"(?<![\d.,])\d{1,3}(?:\.\d{3})*,\d{2}(?![\d%])", text))
    points = len(re.findall(r"(?<![\d.,])\d{1,3}(?:,\d{3})*\.\d{2}(?![\d%])", text))
    if commas == points:
        return None
    return "," if commas > points else "."


def _to_decimal(number: str, decimal_mark: str) -> Decimal | None:
    cleaned = re.sub(rf"[{_SPACES}'\u2019]", "", number)
    if "," in cleaned and "." in cleaned:
        decimal_mark = "," if cleaned.rfind(",") > cleaned.rfind(".") else "."
    elif re.search(r"[.,]\d{2}$", cleaned):
        decimal_mark = cleaned[-3]
    elif re.search(r"[.,]\d{3}$", cleaned):
        decimal_mark = "." if cleaned[-4] == "," else ","  # 1,000 or 1.000: a thousands group
    try:
        return parse_decimal(cleaned, locale="de" if decimal_mark == "," else "en", strict=False)
    except NumberFormatError:
        return None


def amounts_in(text: str, decimal_mark: str = ".") -> list[Amount]:
    """Every money amount in the text, left to right, identifiers and percentages excluded."""
    found: list[Amount] = []
    for match in _AMOUNT.finditer(strip_identifiers(text)):
        number = match.group("num")
        currency_text = match.group("pre") or match.group("post")
        has_decimals = bool(re.search(r"[.,]\d{2}$", number))
        if not has_decimals and not currency_text:
            continue  # a bare whole number is a count, a year or an identifier
        if not has_decimals and len(re.sub(r"\D", "", number)) > 9:
            continue
        value = _to_decimal(number, decimal_mark)
        if value is None:
            continue
        if match.group("sign") in ("-", "\u2212", "(") or match.group("trail"):
            value = -value
        found.append(Amount(value, currency_of(currency_text) if currency_text else None))
    return found


def currency_of(text: str) -> str | None:
    text = text.strip()
    if text.upper() in CURRENCY_CODES:
        return text.upper()
    return CURRENCY_SYMBOLS.get(text)


def currencies_in(text: str) -> list[str]:
    return [code for code in (currency_of(m.group(0)) for m in _CURRENCY.finditer(text)) if code]


def bank_currency(text: str) -> str | None:
    """The currency of the country of the first IBAN printed: where the payment goes, from CLDR's territory data."""
    for match in IBAN.finditer(text):
        try:
            currencies = get_territory_currencies(match.group(0)[:2])
        except ValueError:  # not a territory babel knows
            continue
        if currencies:
            return str(currencies[0])
    return None


@cache
def _month_numbers() -> dict[str, int]:
    names: dict[str, int] = {}
    for language in LANGUAGES:
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context, language).items():
                    names.setdefault(fold(name).rstrip("."), number)
    names.update({"sept": 9, "mrz": 3, "maerz": 3, "juil": 7})
    return names


@cache
def _date_patterns() -> list[tuple[str, re.Pattern[str]]]:
    month = "|".join(sorted((re.escape(n) for n in _month_numbers()), key=len, reverse=True))
    day = r"(\d{1,2})(?:st|nd|rd|th|er|e|º|°)?"
    year = r"(\d{4}|\d{2})(?![\d])"
    return [
        ("ymd", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
        ("dot", re.compile(r"(?<![\d.])(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4}|\d{2})(?![\d.]\d)")),
        ("slash", re.compile(r"(?<![\d/.-])(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})(?![\d/-])")),
        ("d_month_y", re.compile(rf"(?<!\d){day}\.?[\s-]*(?:de\s+)?({month})\.?,?[\s-]*(?:de\s+|del\s+)?{year}", re.I)),
        ("month_d_y", re.compile(rf"\b({month})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s*{year}", re.I)),
    ]


@dataclass(frozen=True, slots=True)
class PrintedDate:
    value: date
    text: str  # as printed


def _year(text: str) -> int:
    value = int(text)
    return value + 2000 if value < 70 else value + 1900 if value < 100 else value


def _make(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def dates_in(text: str, day_first: bool) -> list[PrintedDate]:
    """Dates printed in the text, in the order they appear; `a/b/yyyy` follows `day_first` unless clear."""
    found: list[tuple[int, PrintedDate]] = []
    taken: list[range] = []
    folded = fold(text)
    for kind, pattern in _date_patterns():
        for match in pattern.finditer(folded):
            span = range(match.start(), match.end())
            if any(span.start < t.stop and t.start < span.stop for t in taken):
                continue
            a, b, c = match.groups()
            value: date | None
            if kind == "ymd":
                value = _make(int(a), int(b), int(c))
            elif kind == "dot":
                value = _make(_year(c), int(b), int(a))
            elif kind == "d_month_y":
                value = _make(_year(c), _month_numbers()[b.rstrip(".")], int(a))
            elif kind == "month_d_y":
                value = _make(_year(c), _month_numbers()[a.rstrip(".")], int(b))
            else:
                first, second = int(a), int(b)
                month_day = (second, first) if (first > 12 or (day_first and second <= 12)) else (first, second)
                value = _make(_year(c), *month_day)
            if value is not None and 1980 <= value.year <= 2100:
                taken.append(span)
                found.append((match.start(), PrintedDate(value, text[match.start() : match.end()])))
    return [printed for _, printed in sorted(found, key=lambda pair: pair[0])]


def day_first_votes(texts: Iterable[str]) -> tuple[int, int]:
    """(day-first, month-first) evidence from slashed dates whose order is unambiguous."""
    day, month = 0, 0
    for text in texts:
        for a, b in re.findall(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(?:\d{4}|\d{2})(?![\d/])", text):
            if int(a) > 12 >= int(b):
                day += 1
            elif int(b) > 12 >= int(a):
                month += 1
    return day, month
