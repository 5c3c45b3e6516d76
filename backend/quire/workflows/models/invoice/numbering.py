"""An invoice's number in the value of its label: a token with a digit, after a number word or sign, with the series
code printed before it ("FT 2024/315"); never a date, an amount, an address or a kind's code. And the Portuguese
invoice codes whose count the page's ATCUD repeats, which confirm a label's number or stand in for a missing one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from quire.workflows.models.invoice.currency import iban_shaped
from quire.workflows.models.invoice.dates import dates_in
from quire.workflows.models.invoice.layout import Line, Phrase
from quire.workflows.models.invoice.values import EMAIL_OR_URL, IBAN, amounts_in, currencies_in

# The word before a number sign that makes it another thing's number: an order's, a customer's, a contract's, an
# account's ("Pedido nº", "Order No.", "Kunden-Nr."), not a reference ("Invoice Ref. No." is the invoice's).
_OTHER_DOCUMENT = re.compile(
    r"(?:order|bestell\w*|auftrag\w*|commande|pedido|ordine|encomenda|zam[oó]wieni\w*|po|customer|kunden\w*|client\w*|"
    r"cliente|contract|vertrag\w*|contrat|contrato|contratto|account|konto)\W*",
    re.I,
)
# A token of an invoice number: letters, digits and the marks between them, with a digit in it.
_NUMBER_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-/._]*\d[A-Za-z0-9\-/._]*|\d+")

# A document series: one to four capitals ("FT", "A", "INV"), printed before a number that starts with a digit (or
# is a series with letters, a slash and a count: `_SERIES_AND_COUNT`); never a currency code or the abbreviation of
# another number's name ("USD 12345", "REF 12345", "PO 4500").
_SERIES = re.compile(r"[A-Z]{1,4}")


_NOT_A_SERIES = frozenset(
    {"REF", "PO", "REA", "VAT", "TAX", "ABN", "GST", "NIF", "CIF", "ID", "NO", "NR", "NUM", "TEL", "FAX"}
)

# A number printed in groups of digits, three groups or more ("10 4471 8826 03").
_SPACED_NUMBER = re.compile(r"\d{1,6}(?: \d{1,6}){2,}")
# The number sign "№" folds to a lone "n" ("Рахунок № 17" -> "рахунок n").
NUMBER_WORD = re.compile(r"(?:\bnr|\bno|n[°º]|\bn|num(?:ber|mer|ero)|#)\.?\s*:?$")


# The kind of an Italian e-invoice (FatturaPA's TipoDocumento, "TD01" to "TD29"), printed beside the word for invoice
# ("FATTURA DIFFERITA TD24"): a code of the kind, no number.
_DOCUMENT_TYPE = re.compile(r"TD\d{2}")


# A series named by its word before the number sign, as Romanian, Lithuanian and Spanish invoices print it ("Seria ATP
# nr. 0004521", "Serija RYL Nr. 2503148762", "Serie B Nº 0145"): the series and the number.
_SERIES_WORD = re.compile(
    r"^seri(?:ja|a|e)\b\s*:?\s*(?P<series>(?-i:[A-Z]{1,6}))\s*,?\s*(?:nr\.?|no\.?|n[°º]\.?|num[aă]r(?:ul)?)\s*:?\s*(?=\d)",
    re.I,
)
# A bank account's number as Hungary, Croatia, Serbia and others print it: three groups of eight digits, or a bank's
# three digits, the account's and two check digits ("11700024-20123456-00000000", "160-0000000123456-78"); two groups
# of eight are as often an invoice's own ("20240315-00000123").
_BANK_ACCOUNT = re.compile(r"\d{8}-\d{8}-\d{8}|\d{3}-\d{10,13}-\d{2}")
# The date a number is "of", printed right after it ("Nr. 17 vom 05.03.2024", "№ 17 від 12 березня 2025").
_DATED = re.compile(r"\s*(?:vom|from|of|dated|du|del|de|z\s+dnia|z\s+dne|ze\s+dne|od|від|от|din)\s+(?=\d)", re.I)


def invoice_number(text: str, numbered: bool = False) -> str | None:
    """The invoice number in a label's value; a date-shaped one only after a number word ("Faktura nr 12/05/2024")."""
    named_series = _SERIES_WORD.match(text.strip())
    if named_series is not None:
        number = invoice_number(text.strip()[named_series.end() :], numbered=True)
        return f"{named_series['series'].upper()} {number}" if number else None
    text = re.sub(r"^(?:#|no\.?|nr\.?|n[°º]\.?|num(?:ber|\.)?|number|č\.)\s*:?\s*", "", text.strip(), flags=re.I)
    # "(Selbst ausgestellte Rechnung) (389) Nr. 47110818": the number is what follows a number sign, not a code
    named = re.search(r"(?:^|\s)(?:#|no\.|nr\.|n[°º]\.?|number|nummer)\s*:?\s*(?=\S*\d)", text, flags=re.I)
    if named is not None:
        before = text[: named.start()].split()
        if before and _OTHER_DOCUMENT.fullmatch(before[-1]):
            return None  # "... Pedido nº CV-2025-118734", "Kunden-Nr. 4471": another thing's number, not this one's
        text = text[named.end() :]
    dates = dates_in(text, True)
    if dates and text.startswith(dates[0].text) and not numbered:
        return None  # a date, not a number
    if _SPACED_NUMBER.fullmatch(text.strip()) and not dates:
        return text.strip()  # "N° de facture : 10 4471 8826 03": one number printed in groups, and nothing else
    tokens = text.split()[:2]
    for index, token in enumerate(tokens):
        token = token.strip(".,:;()[]")
        # Three characters at least, or two after a number word with nothing else ("Invoice Number: 58": a
        # freelancer's count; not "12 / 2024", nor the "88" of an address under a number too short to be read).
        after = text.split(maxsplit=index + 1)[index + 1] if len(text.split()) > index + 1 else ""
        dated = _DATED.match(after)
        of = after[dated.end() :] if dated else ""
        alone = text.strip().strip(".,:;") == token or bool((day := dates_in(of, True)) and of.startswith(day[0].text))
        short = numbered and len(token) == 2 and alone
        if _DOCUMENT_TYPE.fullmatch(token):
            continue
        account = " ".join(text.split()[index:])
        if _BANK_ACCOUNT.fullmatch(token) or (IBAN.fullmatch(account) and iban_shaped(account)):
            return None  # "Számlaszám: 11700024-20123456-00000000", "Broj računa: HR12 2340...": an account's
        if _NUMBER_TOKEN.fullmatch(token) and (len(token) >= 3 or short) and not EMAIL_OR_URL.search(token):
            if amounts_in(token) and re.search(r"[.,]\d{2}$", token):
                return None
            # A series code printed before the number is part of it ("FT 2024/315", "A 1234", "INV 0042").
            series = tokens[0] if index == 1 and _series(tokens[0], token) else None
            return f"{series} {token.rstrip('._-')}" if series else token.rstrip("._-")
    return None


# A number written as its series, a slash and its count, the series with letters first ("PV2025/742" of "FT PV2025/742",
# as Portugal's certified programs print a document's code, its series and its number).
_SERIES_AND_COUNT = re.compile(r"[A-Z]{1,4}\d[A-Z\d]*/\d+")


def _series(code: str, number: str) -> bool:
    return (
        _SERIES.fullmatch(code) is not None
        and (number[:1].isdigit() or _SERIES_AND_COUNT.fullmatch(number) is not None)
        and code not in _NOT_A_SERIES
        and not currencies_in(code)
    )


# Portugal's unique document code (ATCUD, which its invoices must print): the series' validation code of eight
# letters and digits or more, a dash, and the document's count in its series ("ATCUD: JF7K3MQD-1873"); never the
# document's number itself. An invoice's, a receipt-invoice's, a credit or a debit note's code on the same page that
# ends in that count ("FT 2025A/1873": its kind, its series, a slash, the count) is likely the document's own; a
# guide's ("GR", "GT") or an order's is another document's.
_ATCUD_CODE = re.compile(r"[A-Z0-9]{8,}-(\d+)")
_ATCUD = re.compile(rf"\bATCUD\b\s*:?\s*(?:{_ATCUD_CODE.pattern}\b|$)")
DOCUMENT_CODE = re.compile(r"(?<![\w/.-])(?:FT|FS|FR|NC|ND) ?[A-Z0-9][A-Z0-9._-]{0,11}/(\d+)(?![\w/-])")


def is_atcud(value: str, text: str) -> bool:
    """Whether a value read from `text` is the code of the ATCUD printed there, no number of the document."""
    return any(found[0].endswith(value) for found in _ATCUD.finditer(text) if found[1] is not None)


def counted_codes(lines: list[Line]) -> Iterator[tuple[str, Phrase, float]]:
    """Each invoice's, receipt-invoice's, credit or debit note's code whose count an ATCUD on its page repeats, with its
    phrase and how sure OCR was of the two readings together."""
    counts: dict[tuple[int, int], float] = {}
    for line in lines:
        for index, phrase in enumerate(line.phrases):
            if (found := _ATCUD.search(phrase.text)) is None:
                continue
            count, read = found[1], phrase.confidence
            if count is None and index + 1 < len(line.phrases):  # "ATCUD | JF7K3MQD-1873": the code beside its label
                beside = line.phrases[index + 1]
                code = _ATCUD_CODE.fullmatch(beside.text.strip())
                count, read = (code[1], min(read, beside.confidence)) if code else (None, read)
            if count is not None:
                key = (line.page, int(count))
                counts[key] = max(read, counts.get(key, 0.0))
    if not counts:
        return
    for line in lines:
        for phrase in line.phrases:
            for code in DOCUMENT_CODE.finditer(phrase.text):
                if (counted := counts.get((line.page, int(code[1])))) is not None:
                    yield code[0], phrase, min(phrase.confidence, counted)
