"""Which currency a sign shared by several means: a bare "$" by the tax numbers a country's invoices print, "kr" by
the country's forms and addresses, and any amount by its bank's IBAN country or the country the issuer names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from babel import Locale
from babel.numbers import get_territory_currencies
from stdnum import iban

from quire.workflows.models.invoice.values import CURRENCY_CODES, CURRENCY_SYMBOLS, IBAN, LANGUAGES, fold

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


def iban_shaped(number: str) -> bool:
    """Whether a number, spaces left out, has an IBAN's length and layout for its country, whatever its check digits."""
    number = re.sub(r"\s", "", number)
    return len(number) > 4 and iban.is_valid(
        number[:2] + iban.calc_check_digits(number) + number[4:], check_country=False
    )


def bank_currency(text: str) -> str | None:
    """The currency of the country of the first IBAN printed: where the payment goes, from CLDR's territory data. An
    IBAN is one by its country's length and layout, whatever its check digits (a sample invoice's are often made up):
    "PH122504004417" on a receipt is a Philippine-looking code, and the Philippines has no IBANs."""
    for match in IBAN.finditer(text):
        # The pattern's last group may hold the word after the number ("... 3201 BIC"): the number without it too.
        numbers = (
            re.sub(r"\s", "", printed) for printed in (match.group(0), re.sub(r"\s+\S{1,4}$", "", match.group(0)))
        )
        if not any(map(iban_shaped, numbers)):
            continue
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
    # Central and Eastern Europe's and Turkey's forms and tax numbers, in the countries with a currency of their own:
    # a Czech VAT number, Hungarian company forms and tax number, a Romanian tax code and trade register number, a
    # Bulgarian company's register code and forms, a Ukrainian company's code and forms, a Serbian tax number, a
    # Turkish tax number and forms.
    "CZ": re.compile(r"\bDI[CČ]\s*:?\s*CZ\s?\d{8,10}\b"),
    "HU": re.compile(r"\b(?:Kft|Zrt|Nyrt)\.(?!\w)|\b[Aa]dósz[aá]m\b"),
    "RO": re.compile(r"\b(?:CIF|CUI)\s*:?\s*RO\s?\d{2,10}\b|\bJ\d{2}/\d{1,6}/\d{4}\b"),
    "BG": re.compile(r"\bЕИК\b|\bЕООД\b|\bООД\b"),
    "UA": re.compile(r"ЄДРПОУ|\bФОП\b|\bТОВ\b"),
    "RS": re.compile(r"\bPIB\s*:?\s*\d{9}\b"),
    "TR": re.compile(r"\bVKN\b|\bA\.\s?Ş\.|\bLtd\.?\s*Şti\b"),
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
