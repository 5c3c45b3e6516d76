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
from typing import Literal

from babel import Locale, UnknownLocaleError
from babel.dates import get_day_names, get_month_names
from babel.numbers import NumberFormatError, get_territory_currencies, parse_decimal

from quire.workflows.models.invoice.layout import Line

LANGUAGES = ("en", "de", "fr", "nl", "es", "it", "pl", "pt", "sv", "da", "nb", "fi")
_SPACES = "\u00a0\u202f\u2009 "

CURRENCY_SYMBOLS = {"€": "EUR", "$": "USD", "US$": "USD", "£": "GBP", "¥": "JPY", "R$": "BRL", "zł": "PLN", "A$": "AUD",
                    "AU$": "AUD", "C$": "CAD", "CA$": "CAD", "₹": "INR", "RM": "MYR", "S$": "SGD", "NZ$": "NZD",
                    "HK$": "HKD", "Rs": "INR",
                    "Rs.": "INR", "Kč": "CZK", "₱": "PHP", "₺": "TRY", "₪": "ILS", "฿": "THB", "₩": "KRW", "₫": "VND",
                    "₦": "NGN"}  # fmt: skip
# Codes that are also words or abbreviations on invoices ("PHP 8 upgrade", "AED pads", "ILS approach", "TRY OUR
# APP"): a sighting of one of them names its currency only beside an amount or in brackets of its own ("AED
# 1,250.00", "Total (AED)").
_LOOSE_CODES = frozenset(["AED", "SAR", "QAR", "KWD", "OMR", "PHP", "THB", "IDR", "TRY", "ILS", "EGP", "NGN", "KES",
                          "TWD", "KRW", "VND", "ISK", "CLP", "COP", "ARS", "UAH", "LKR", "PKR", "BDT", "NPR", "XOF",
                          "XAF", "TND", "MAD", "GHS", "TZS", "UGX", "PEN", "UYU"])  # fmt: skip
CURRENCY_CODES = frozenset(["EUR", "USD", "GBP", "CHF", "CAD", "AUD", "JPY", "SEK", "NOK", "DKK", "PLN", "CZK",
                            "HUF", "BRL", "INR", "MYR", "SGD", "NZD", "ZAR", "MXN", "CNY", "HKD",
                            "RON", "BGN"]) | _LOOSE_CODES  # fmt: skip
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
    # Greece's tax and register numbers, a document's tax-office mark (ΜΑΡΚ), a code (κωδικός).  # noqa: RUF003
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
    parts = unicodedata.normalize("NFKD", ch)
    plain = parts.encode("ascii", "ignore").decode()
    if plain:
        return plain[0].lower()
    if len(parts) > 1 and all(unicodedata.combining(mark) for mark in parts[1:]):
        ch = parts[0]  # a letter and its accents: "ά" -> "α", "й" -> "и"  # noqa: RUF003
    return "\u03c3" if ch == "\u03c2" else ch.lower()


# OCR misreads the D and N of the Malaysian form "Sdn Bhd" (private limited) as O, U, 0 or M: "SON BHD".
_OCR_SDN = re.compile(r"(?<!&\s)(?<![\w&])S[OU0][NM]\b\.?(?=\s*[B38]HD\b)|(?<![\w&])SD[M]\b\.?(?=\s*[B38]HD\b)")
# And the B of BHD as 3 or 8: "SDN 3HD".
_OCR_BHD = re.compile(r"(?<=\bSDN\s)[38](?=HD\b)|(?<=\bSDN\.\s)[38](?=HD\b)|(?<=\bSDN)[38](?=HD\b)")


# And the letters o of the Polish "Sp. z o.o." as zeros: "Sp. z 0.0.".
_OCR_ZOO = re.compile(r"(?<=\b[Ss][Pp]\.\s[Zz]\s)(?:0\.\s?[0Oo]|[Oo]\.\s?0)\.")


def repair_company_form(name: str) -> str:
    """A company form as it is spelled, where OCR misread a letter of it that no other form has."""
    letters = "O.O." if name.isupper() else "o.o."
    return _OCR_ZOO.sub(letters, _OCR_BHD.sub("B", _OCR_SDN.sub("SDN", name)))


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
        found.append(code)
    return found


# An amount right after a currency code, or right before it, or the code alone in brackets.
_AMOUNT_AFTER = re.compile(r"\s?-?\d[\d,.'\u00a0 ]*[.,]\d{2}(?!\d)|\s?\)")
_AMOUNT_BEFORE = re.compile(r"(?:\d[.,]\d{2}|\()\s?$")


# Countries besides the United States that write their currency as a bare "$", by the tax or business number
# their invoices must print (the Australian ABN, Canada's GST/HST and QST numbers, the NZBN, Singapore's UEN,
# Mexico's RFC). A country's name is no such sign: a Toronto company may well bill in US dollars.
_DOLLAR_COUNTRIES = {
    "AUD": re.compile(r"\bA\.?B\.?N\b"),
    # The business number's GST account ("78123 4567 RT0001") is Canadian whatever the tax is called.
    "CAD": re.compile(r"\bGST\s*/\s*HST\b|\bHST\b|\bQST\b|\bTPS\b|\bTVQ\b|\b\d{5}\s?\d{4}\s?RT\s?\d{4}\b"),
    "NZD": re.compile(r"\bNZBN\b"),
    "SGD": re.compile(r"\bUEN\b"),
    "MXN": re.compile(r"\bRFC\b"),
}


# The signs of one dollar each ("US$", "CA$", "A$", ...), from the symbols table: a page that prints one says which
# dollar it means.
_OWN_DOLLAR_SIGN = "|".join(
    re.escape(sign) for sign, code in CURRENCY_SYMBOLS.items() if sign.endswith("$") and sign != "$" and code != "BRL"
)


# A sentence that names the dollar in words ("All prices are in US dollars", "amounts in Canadian dollars").
_NAMED_DOLLARS = {
    "USD": re.compile(r"\b(?:U\.?S\.?|united\s+states|american)\s+dollars?\b", re.I),
    "AUD": re.compile(r"\baustralian\s+dollars?\b", re.I),
    "CAD": re.compile(r"\bcanadian\s+dollars?\b", re.I),
    "NZD": re.compile(r"\bnew\s+zealand\s+dollars?\b", re.I),
    "SGD": re.compile(r"\bsingapore\s+dollars?\b", re.I),
    "HKD": re.compile(r"\bhong\s+kong\s+dollars?\b", re.I),
}


def dollar_currency(text: str) -> str | None:
    """The dollar a page means by a bare "$": US dollars unless the page names itself as from one (and only
    one) of the other countries that write "$"; None when it prints a dollar code or names no such country."""
    if re.search(r"\bUSD\b|US\$", text):
        return None
    found = [code for code, sign in _DOLLAR_COUNTRIES.items() if sign.search(text)]
    return found[0] if len(found) == 1 else None


def named_dollar(text: str) -> str | None:
    """The dollar a page names in words, when it names one only: an Australian shop that writes "All prices
    are in US dollars" means US dollars by its "$"."""
    if re.search(rf"\b(?:USD|CAD|AUD|NZD|SGD|HKD)\b|{_OWN_DOLLAR_SIGN}", text):
        return None  # a printed code says which dollar; a sentence may name another ("approx. 1,580 Canadian dollars")
    named = [code for code, words in _NAMED_DOLLARS.items() if words.search(text)]
    return named[0] if len(named) == 1 else None


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


# Company forms that exist in one country only, so a name that carries one says where its company is.
_COUNTRY_FORMS = {
    # Sdn Bhd and its short form S/B (private limited), with OCR's SON, SDM, SUN for SDN; Berhad (public).
    "MY": re.compile(r"\bs[dou0][nm]\.?\s*[b38]hd\b|\bberhad\b|(?<![\w/])s/b\b", re.I),
    "AU": re.compile(r"\bpty\.?\s*ltd\b", re.I),
    # And India's GST registration number, which every Indian tax invoice prints ("GSTIN: 27AABCS1429B1Z5").
    "IN": re.compile(
        r"\bpvt\.?\s*ltd\b|\bprivate\s+limited\b|\bGSTIN\b|\b\d{2}[A-Z]{5}\d{4}[A-Z][A-Z\d]Z[A-Z\d]\b", re.I
    ),
    "SG": re.compile(r"\bpte\.?\s*ltd\b", re.I),
    "PL": re.compile(r"\bsp\.\s?z\s?o\.?\s?o\b", re.I),
    "BR": re.compile(r"\bltda\b", re.I),
    # The Nordic forms, register and VAT numbers and payment systems, which tell apart the crowns each of these
    # countries writes "kr". Sweden's company form "AB" is left out: it is also a German word ("ab Werk") and a
    # Canadian province.
    "DK": re.compile(
        r"\bApS\b|\bA/S\b|\bCVR(?:-?\s?nr\.?)?\s*:?\s*(?:DK\s?)?\d{2}\s?\d{2}\s?\d{2}\s?\d{2}\b|\bDK\s?\d{8}\b"
    ),
    "SE": re.compile(
        r"\b[Aa]ktiebolag(?:et)?\b|\b[Oo]rg(?:anisations)?\.?\s*-?\s*(?:nr|nummer)\.?\s*:?\s*\d{6}-\d{4}\b|"
        r"\b(?:[Bb]ankgiro|[Pp]lusgiro)\b|\bF-skatt|\bSE\s?\d{10}01\b"
    ),
    "NO": re.compile(
        r"\b(?:NO\s?)?\d{3}\s?\d{3}\s?\d{3}\s?MVA\b|\b[Ff]oretaksregisteret\b|"
        r"\b[Oo]rg(?:anisasjons)?\.?\s*-?\s*(?:nr|nummer)\.?\s*:?\s*(?:NO\s?)?\d{3}\s?\d{3}\s?\d{3}\b"
    ),
    "FI": re.compile(r"\bOyj?\b|\bY-tunnus\b"),
}
# The crowns' sign beside an amount, which Sweden, Denmark, Norway and Iceland share ("1 250,00 kr", "kr. 500");
# not the German "Kr." of a district's name.
CROWNS = re.compile(r"\d\s?kr\.?(?![^\W\d_])|(?<![^\W\d_])kr\.?\s?\d", re.I)
_CROWN_CURRENCIES = frozenset({"SEK", "DKK", "NOK", "ISK"})


def crown_currency(text: str, *hints: str | None) -> str | None:
    """The crowns a page means by "kr" beside its amounts: those of the one Nordic country the hints name (the
    currencies of the country its company forms, register numbers, addresses or payment systems name, and of
    its IBAN's country); None when it prints no such "kr" or the hints do not name one such country."""
    if not CROWNS.search(text):
        return None
    named = {hint for hint in hints if hint in _CROWN_CURRENCIES}
    return named.pop() if len(named) == 1 else None


# Postal addresses whose shape names their country: a US state and ZIP code ("Medford, OR 97501"),
# a Canadian province and postal code ("ON M5V 2T6"), a British postcode ("SW1A 1AA").
_COUNTRY_ADDRESSES = {
    "US": re.compile(
        r"\b(?:A[LKZR]|C[AOT]|D[EC]|FL|GA|HI|I[DLNA]|K[SY]|LA|M[EDAINSOT]|N[EVHJMYCD]|O[HKR]|PA|RI|S[CD]|T[NX]|UT|"
        r"V[TA]|W[AVIY])\s+\d{5}(?:-\d{4})?\b"
    ),
    "CA": re.compile(r"\b(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT)\s+[A-Z]\d[A-Z]\s?\d[A-Z]\d\b"),
    "GB": re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s\d[ABD-HJLNP-UW-Z]{2}\b"),
}
_POSTCODE = re.compile(r"\b\d{4,6}\b")


@cache
def _country_names() -> dict[str, str]:
    """Folded country name -> ISO territory, for the countries whose currency the reader knows, in the
    reader's languages and Malay; names shorter than five letters are left out (too often part of a word)."""
    names: dict[str, str] = {}
    for language in (*LANGUAGES, "ms"):
        for code, name in Locale.parse(language).territories.items():
            if len(code) != 2 or len(name) < 5 or not _territory_currency(code):
                continue
            names.setdefault(fold(name), code)
    return names


@cache
def _territory_currency(territory: str) -> str | None:
    try:
        currencies = get_territory_currencies(territory)
    except ValueError:
        return None
    return str(currencies[0]) if currencies and currencies[0] in CURRENCY_CODES else None


@cache
def _country_at_end() -> re.Pattern[str]:
    """A country name ending a folded phrase, as a whole word."""
    names = sorted((re.escape(name) for name in _country_names()), key=len, reverse=True)
    return re.compile(r"(?<![a-z])(" + "|".join(names) + r")$")


def _named_country(phrase: str) -> str | None:
    """The country a phrase names as the last part of an address ("51200 Kuala Lumpur, Malaysia") or alone
    ("Deutschland / Germany"); a country in a sentence ("Made in China") is no address."""
    folded = fold(phrase).strip(" .,;")
    ending = _country_at_end().search(folded)
    if ending is None:
        return None
    parts = [part.strip(" .,;()") for part in re.split(r"\s*[/,]\s*", folded)]
    if all(part in _country_names() for part in parts if part):
        codes = {_country_names()[part] for part in parts if part}
        return codes.pop() if len(codes) == 1 else None
    return _country_names()[ending.group(1)] if _POSTCODE.search(folded) else None


def country_currency(phrases: Iterable[str]) -> str | None:
    """The currency of the country a document names by its addresses and company forms, when every such
    sign points to one currency; None when none does or they disagree (a US seller billing a UK buyer)."""
    phrases = list(phrases)
    text = " | ".join(phrases)  # one search per sign; the bars keep phrases apart
    countries = [code for code, form in _COUNTRY_FORMS.items() if form.search(text)]
    countries += [code for code, shape in _COUNTRY_ADDRESSES.items() if shape.search(text)]
    countries += [code for code in map(_named_country, phrases) if code]
    found = {currency for currency in map(_territory_currency, countries) if currency}
    return found.pop() if len(found) == 1 else None


@cache
def _month_numbers() -> dict[str, int]:
    names: dict[str, int] = {}
    # Greek's too, and Czech's in full (its short names "led", "pro", "lis" are words of other languages).
    both: tuple[Literal["wide", "abbreviated"], ...] = ("wide", "abbreviated")
    widths = {**dict.fromkeys((*LANGUAGES, "el"), both), "cs": both[:1]}
    for language, kinds in widths.items():
        for width in kinds:
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context, language).items():
                    names.setdefault(fold(name).rstrip("."), number)
    names.update({"sept": 9, "mrz": 3, "maerz": 3, "juil": 7, "janner": 1, "jaenner": 1})  # Austria's "Jänner"
    return names


@cache
def _date_patterns() -> list[tuple[str, re.Pattern[str]]]:
    month = "|".join(sorted((re.escape(n) for n in _month_numbers()), key=len, reverse=True))
    day = r"(\d{1,2})(?:(?:st|nd|rd|th)(?:\s+of)?|er|e|º|°)?"  # "5th of March"; not "Week 1 of March 2023"
    year = r"(\d{4}|\d{2})(?![\d])"
    return [
        ("ymd", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
        ("dot", re.compile(r"(?<![\d.])(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4}|\d{2})(?![\d.]\d)")),
        ("slash", re.compile(r"(?<![\d/.-])(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})(?![\d/-])")),
        (
            "d_month_y",
            re.compile(rf"(?<!\d){day}\.?[\s-]*(?:de\s+)?({month})\.?,?[\s-]*(?:de\s+|del\s+)?{year}", re.I),
        ),
        # The day and the year apart ("March 5, 2023", "Mar 5 2023"): "March 2023" is a month, not March 20.
        ("month_d_y", re.compile(rf"\b({month})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:\s*,\s*|\s+){year}", re.I)),
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


# A weekday's name before a date in digits, with a comma or a space: "Wed 04/09/2024", "Rabu, 10-05-2017".
_WEEKDAY_DATE = re.compile(r"(?<![^\W\d_])([^\W\d_]{3,13})\.?,?\s+(\d{1,2})([/-])(\d{1,2})\3(\d{4}|\d{2})(?![\d/-])")


def weekday_votes(texts: Iterable[str], language: str) -> tuple[int, int]:
    """(day-first, month-first) evidence from dates printed after the name of their weekday, where the name holds
    in one order only ("Rabu, 10-05-2017": 10 May 2017 was a Wednesday, 5 October a Thursday). Names of the page's
    language, and of Malay and Indonesian, whose receipts print the weekday before the date."""
    names = _weekday_numbers(language)
    day, month = 0, 0
    for text in texts:
        for name, a, _, b, year in _WEEKDAY_DATE.findall(fold(text)):
            weekday = names.get(name)
            if weekday is None or a == b:
                continue
            as_day_first = _make(_year(year), int(b), int(a))
            as_month_first = _make(_year(year), int(a), int(b))
            day_holds = as_day_first is not None and as_day_first.weekday() == weekday
            month_holds = as_month_first is not None and as_month_first.weekday() == weekday
            if day_holds and not month_holds:
                day += 1
            elif month_holds and not day_holds:
                month += 1
    return day, month


@cache
def _weekday_numbers(language: str) -> dict[str, int]:
    """A language's weekday names, full and short (of three letters or more), and Malay's and Indonesian's, folded:
    Monday is 0."""
    names: dict[str, int] = {}
    for each in dict.fromkeys((language, "ms", "id")):
        for width in ("wide", "abbreviated"):
            try:
                days = get_day_names(width, "format", each)
            except UnknownLocaleError:  # a language babel does not know
                continue
            for number, name in days.items():
                key = fold(name).rstrip(".")
                if len(key) >= 3:
                    names.setdefault(key, number)
    return names
