"""Values printed on invoices: money amounts, the currency signs and codes beside them, and identifiers that are
neither (dates are in `dates`, which currency a shared sign means in `currency`).

Amounts are converted by babel's `parse_decimal` once the document's decimal mark is known. A value is read only
where it stands alone: `DE136695976` is a VAT ID, never an amount, and `+33 2 99 83 51 51` is a phone number.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from babel.numbers import NumberFormatError, parse_decimal

from quire.workflows.models.invoice.layout import Line

LANGUAGES = ("en", "de", "fr", "nl", "es", "it", "pl", "pt", "sv", "da", "nb", "fi")
_SPACES = "\u00a0\u202f\u2009 "

CURRENCY_SYMBOLS = {"€": "EUR", "$": "USD", "US$": "USD", "£": "GBP", "¥": "JPY", "R$": "BRL", "zł": "PLN", "A$": "AUD",
                    "AU$": "AUD", "C$": "CAD", "CA$": "CAD", "₹": "INR", "RM": "MYR", "S$": "SGD", "NZ$": "NZD",
                    "HK$": "HKD", "Rs": "INR",
                    "Rs.": "INR", "Kč": "CZK", "₱": "PHP", "₺": "TRY", "₪": "ILS", "฿": "THB", "₩": "KRW", "₫": "VND",
                    "₦": "NGN", "Ft": "HUF", "lei": "RON", "Lei": "RON", "лв": "BGN", "лв.": "BGN", "грн": "UAH",
                    "грн.": "UAH", "₴": "UAH", "Rp": "IDR", "Rp.": "IDR"}  # fmt: skip
# Codes that are also words or abbreviations on invoices ("PHP 8 upgrade", "AED pads", "ILS approach", "TRY OUR
# APP"): a sighting of one of them names its currency only beside an amount or in brackets of its own ("AED
# 1,250.00", "Total (AED)").
_LOOSE_CODES = frozenset(["AED", "SAR", "QAR", "KWD", "OMR", "PHP", "THB", "IDR", "TRY", "ILS", "EGP", "NGN", "KES",
                          "TWD", "KRW", "VND", "ISK", "CLP", "COP", "ARS", "UAH", "LKR", "PKR", "BDT", "NPR", "XOF",
                          "XAF", "TND", "MAD", "GHS", "TZS", "UGX", "PEN", "UYU"])  # fmt: skip
CURRENCY_CODES = frozenset(["EUR", "USD", "GBP", "CHF", "CAD", "AUD", "JPY", "SEK", "NOK", "DKK", "PLN", "CZK",
                            "HUF", "BRL", "INR", "MYR", "SGD", "NZD", "ZAR", "MXN", "CNY", "HKD",
                            "RON", "BGN", "RSD"]) | _LOOSE_CODES  # fmt: skip
# The signs several currencies write (`$`, `¥`, `Rs`): read from such a sign alone, the currency is a guess that
# the page's country, a code or a sign of its own (`US$`, `₹`) must settle.
_SHARED_SYMBOLS = frozenset(["$", "¥", "Rs", "Rs."])


# A currency's own label and its code: "Währung: EUR", "Currency USD", "Devise : EUR", "Valuta: SEK".
_STATED_CURRENCY = re.compile(
    r"^(?:currency|w[aä]hrung|devise|monnaie|valuta|munt|moneda|divisa|waluta|moeda|valuutta)\s*:?\s*([A-Z]{3})$",
    re.I,
)


def stated_currency(lines: Iterable[Line]) -> str | None:
    """The currency a text layer states under its own label, when it states one only; OCR'd phrases are left
    out (a misread letter makes another code)."""
    stated: set[str] = set()
    for line in lines:
        phrases = [p for p in line.phrases if p.confidence >= 1.0]
        # The label and its code in one phrase, or the code in the phrase after it ("Währung | : EUR").
        for place, here in enumerate(phrases):
            after = phrases[place + 1].text if place + 1 < len(phrases) else ""
            for text in (here.text, f"{here.text} {after}"):
                found = _STATED_CURRENCY.match(" ".join(text.split()))
                if found and found.group(1).upper() in CURRENCY_CODES:
                    stated.add(found.group(1).upper())
    return stated.pop() if len(stated) == 1 else None


_SHARED_CURRENCIES = frozenset(CURRENCY_SYMBOLS[s] for s in _SHARED_SYMBOLS)


def named_for_sure(text: str, currency: str) -> bool:
    """True when the page writes `currency` in a way no other currency is written: its code, or a sign of its
    own (`€`, `£`, `₹`, `US$`, `zł`); a `$` or `¥` alone says less."""
    if currency not in _SHARED_CURRENCIES:
        return True
    if re.search(rf"(?<![^\W\d_]){currency}(?![^\W\d_])", text):
        return True
    own = [s for s, code in CURRENCY_SYMBOLS.items() if code == currency and s not in _SHARED_SYMBOLS]
    return any(s in text for s in own)


# A symbol with letters in it ("RM", "Rs", "R$") is a symbol only where it does not touch other letters:
# "RM" in "FORMAT" or "Rs" in "Hours" is part of a word. `€`, `$`, `£` are signs unless a word runs on from them
# (OCR reads the "Š" of "školení" as "$").
CURRENCY = re.compile(
    r"(?<![^\W\d_])(?:"
    + "|".join(sorted(CURRENCY_CODES, key=len, reverse=True))
    + "|"
    + "|".join(re.escape(s) for s in sorted(CURRENCY_SYMBOLS, key=len, reverse=True) if re.search(r"[^\W\d_]", s))
    + r")(?![^\W\d_])|"
    + "(?:"
    + "|".join(re.escape(s) for s in sorted(CURRENCY_SYMBOLS, key=len, reverse=True) if not re.search(r"[^\W\d_]", s))
    + r")(?![^\W\d_]{2})"
)
# A phrase that is, or holds, an amount with two decimals ("15,300.00", "1'234.50", "€ 12,00"); not a date
# ("15.04.2024").
AMOUNT_TEXT = re.compile(r"[^\d\n]{0,4}(?<![\d.,])\d[\d.,'\u2019 ]*?[.,]\d{2}(?![.,]?\d)[^\d\n]{0,4}")
# A currency a column head names after its label ("Brutto EUR", "Total documento (EUR)"): a note, no other word.
CURRENCY_NOTE = re.compile(rf"\(?(?:{CURRENCY.pattern})\)?", re.I)
# OCR reads a zero as the letter O in amounts ("RMO.55", "O.25"): a lone O before a decimal part is a zero.
_OCR_ZERO = re.compile(r"(?:(?<![^\W\d_])|(?<=RM))[Oo](?=\d*[.,]\d{2}(?!\d))")

# A money amount: optional sign, thousands groups, and a decimal part of two digits; or a whole
# number that a currency sign or code sits right next to. Nothing glued to letters or other digits.
# Indian grouping puts a comma after the thousands and then every two digits: 1,47,972.00 (lakh, crore).
_NUMBER = (
    r"\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d{2})?|"
    r"\d{1,3}(?:[.,'\u2019\u00a0\u202f\u2009 ]\d{3})+(?:[.,]\d{2})?|\d+[.,]\d{2}|\d+"
)
_AMOUNT = re.compile(
    r"(?<![\w.,/])(?P<sign>[-\u2212(])?\s?(?P<pre>" + CURRENCY.pattern + r")?\s?(?P<num>" + _NUMBER + r")"
    r"(?P<trail>-)?(?:\s?(?P<post>" + CURRENCY.pattern + r"))?(?![\w/]|[.,]\d|\s?%)"
)

# Greece's tax number (ΑΦΜ) and business register (ΓΕΜΗ), with their dots or without.
GREEK_REGISTERS = r"\u0391\.?\u03a6\.?\u039c|\u0393\.?\u0395\.?\u039c\.?\u0397"
# Identifiers that look numeric: tax and VAT numbers, bank accounts, phone numbers, register numbers.
_IDENTIFIER_LABELS = re.compile(
    r"\b(?:ust|vat|tva|btw|iva|mwst|nip|nif|cif|cnpj|cpf|abn|gst|hst|siret|siren|rcs|krs|regon|kvk|p\.?\s?iva|"
    r"partita|codice|steuer|st\.?-?nr|tax\s?(?:id|no|number|reg)|id|iban|bic|swift|blz|konto|account|acct|"
    r"routing|sort\s?code|tel|tél|phone|fon|fax|mobile|handy|telefon|kunden|customer|client|order|bestell|"
    r"auftrag|commande|pedido|ordine|zam[oó]w|po\b|ref|reference|referenz|référence|hrb|hra|amtsgericht|"
    r"registergericht|handelsregister|reg\.?\s?no|company\s?(?:no|number)|page|seite|pagina|página|strona|"
    # Greece's tax and register numbers, a document's tax-office mark (ΜΑΡΚ), a code (κωδικός).
    rf"(?:{GREEK_REGISTERS}|\u039c\u0391\u03a1\u039a)\b|\u03ba\u03c9\u03b4(?:\u03b9\u03ba|\.))",
    re.I,
)
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b")
VAT_ID = re.compile(r"\b(?:ATU|DE|FR|NL|ES|IT|PL|PT|BE|LU|IE|GB|DK|SE|FI|CZ|SK|HU|RO|BG|HR|SI|EL|CY|MT|EE|LV|LT|CHE)"
                    r"[\s-]?[0-9A-Z]{2}[\s.]?\d{3}[\s.]?\d{3,6}(?:[\s.]?[0-9A-Z]{1,3})?\b")  # fmt: skip
PHONE = re.compile(r"(?:\+|\b00)\d{1,3}[\s./-]?\(?\d{1,5}\)?(?:[\s./-]?\d{2,5}){2,5}")
EMAIL_OR_URL = re.compile(r"\S+@\S+\.\w+|\b(?:https?://|www\.)\S+", re.I)


def fold(text: str) -> str:
    """Lower case without accents, one character for one, so positions in the folded text are positions
    in the printed text; characters without a plain-letter form (`€`, `ł`) stay as they are. Letters of other
    scripts lose their accents too, and Greek's final sigma is the sigma it is ("Σύνολος" -> "συνολοσ")."""
    return "".join(_fold_char(ch) for ch in text)


@cache
def _fold_char(ch: str) -> str:
    if ch == "\u0131":
        return "i"  # Turkish's dotless i, which has no accent to take off ("KASIM" and "Kasım" are one month)
    parts = unicodedata.normalize("NFKD", ch)
    plain = parts.encode("ascii", "ignore").decode()
    if plain:
        return plain[0].lower()
    if len(parts) > 1 and all(unicodedata.combining(mark) for mark in parts[1:]):
        ch = parts[0]  # a letter and its accents: "ά" -> "α", "й" -> "и"
    return "\u03c3" if ch == "\u03c2" else ch.lower()


# OCR misreads the D and N of the Malaysian form "Sdn Bhd" (private limited) as O, U, 0 or M: "SON BHD".
_OCR_SDN = re.compile(r"(?<!&\s)(?<![\w&])S[OU0][NM]\b\.?(?=\s*[B38]HD\b)|(?<![\w&])SD[M]\b\.?(?=\s*[B38]HD\b)")
# And the B of BHD as 3 or 8: "SDN 3HD".
_OCR_BHD = re.compile(r"(?<=\bSDN\s)[38](?=HD\b)|(?<=\bSDN\.\s)[38](?=HD\b)|(?<=\bSDN)[38](?=HD\b)")


# And the letters o of the Polish "Sp. z o.o." as zeros: "Sp. z 0.0.".
_OCR_ZOO = re.compile(r"(?<=\b[Ss][Pp]\.\s[Zz]\s)(?:0\.\s?[0Oo]|[Oo]\.\s?0)\.")


def repair_name(name: str, ocr: bool = False) -> str:
    """A name with the letters OCR misread as it is spelled: a company form's letter that no other form has ("SON
    BHD", "Sp. z 0.0."), and, in a name OCR read (`ocr`), the letter O read as a zero in a word of letters ("HAI-0
    RAYA BHD", "S.r.0."): a text layer's "Zer0 GmbH" is spelled so."""
    letters = "O.O." if name.isupper() else "o.o."
    name = _OCR_ZOO.sub(letters, _OCR_BHD.sub("B", _OCR_SDN.sub("SDN", name)))
    return re.sub(r"\S+", lambda word: _zero_as_o(word[0]), name) if ocr else name


def _zero_as_o(word: str) -> str:
    """A word of two letters or more whose only digits are single zeros, with the zeros read as the letter O: a
    capital at the word's start ("0'Neill"), else in the case of the letter before it. "B2B0", "100" and "0.I." stay.
    """
    letters = re.findall(r"[^\W\d_]", word)
    if "0" not in word or "00" in word or re.search(r"[1-9]", word) or len(letters) < 2:
        return word

    def letter(at: re.Match[str]) -> str:
        before = re.findall(r"[^\W\d_]", word[: at.start()])
        return "o" if before and before[-1].islower() else "O"

    return re.sub("0", letter, word)


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
    for match in _AMOUNT.finditer(_OCR_ZERO.sub("0", strip_identifiers(text))):
        number = match.group("num")
        currency_text = match.group("pre") or match.group("post")
        has_decimals = bool(re.search(r"[.,]\d{2}$", number))
        if not has_decimals and (not currency_text or currency_text.strip() in _LOOSE_CODES):
            continue  # a bare whole number is a count, a year or an identifier ("PHP 8": a version, no amount)
        if not has_decimals and currency_text.strip() in _LOOSE_SIGNS and len(re.sub(r"\D", "", number)) < 3:
            continue  # "6 Ft" is six feet; forints are hundreds at least
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
    if text in CURRENCY_CODES:
        return text
    return CURRENCY_SYMBOLS.get(text)


def currencies_in(text: str) -> list[str]:
    text = _OCR_ZERO.sub("0", text)
    found = []
    for match in CURRENCY.finditer(text):
        code = currency_of(match.group(0))
        if code is None:
            continue
        if match.group(0).strip() in _LOOSE_CODES and not (
            _AMOUNT_AFTER.match(text, match.end()) or _AMOUNT_BEFORE.search(text[: match.start()])
        ):
            continue
        sign = match.group(0).strip()
        bracketed = text[: match.start()].endswith("(") and text[match.end() : match.end() + 1] == ")"
        if (
            sign in _LOOSE_SIGNS
            and not bracketed
            and not (
                _NUMBER_AFTER.match(text, match.end())
                if sign.startswith("Rp")
                else _NUMBER_BEFORE.search(text[: match.start()])
            )
        ):
            continue  # "Ft Worth", "Lei Wang", "da Lei forniti": a word, not the forint or the leu
        found.append(code)
    return found


# Signs that are words too ("Ft" of "Ft Worth", the name "Lei", Italian's "Lei", "Rp"): a sighting only beside a
# number, as each is written: the rupiah's before it, the forint's and the leu's after a number of hundreds at least
# or with decimals ("6 Ft 120 pcs" is six feet); or in brackets, a column's or a label's ("Total de plată (lei)").
_LOOSE_SIGNS = frozenset(["Ft", "lei", "Lei", "Rp", "Rp."])
_NUMBER_AFTER = re.compile(r"\s?-?\d")
_NUMBER_BEFORE = re.compile(r"(?:\d{3}|\d[.,]\d{2})\s?$")
# An amount right after a currency code, or right before it, or the code alone in brackets.
_AMOUNT_AFTER = re.compile(r"\s?-?\d[\d,.'\u00a0 ]*[.,]\d{2}(?!\d)|\s?\)")
_AMOUNT_BEFORE = re.compile(r"(?:\d[.,]\d{2}|\()\s?$")
