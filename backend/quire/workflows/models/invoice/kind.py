"""What kind of document a page is: an invoice, or a credit note whose amounts are owed to the reader.

A credit note says so in its title ("CREDIT NOTE", "AVOIR", "Creditnota", "Nota di credito"), a line of its own
printed larger than its text (or, on a page of plain text, one of its first lines), or in the label of its own
number ("Credit Note No."). Many print their amounts positive, as an e-invoice credit note does; given as printed,
a total like an invoice's could be paid by mistake, so a credit note's amounts are given negative.

Other titles name a correction, which may credit or charge more: a German "Rechnungskorrektur", a Spanish
"factura rectificativa", a Polish "faktura korygująca". A German "Gutschrift" is a credit note, or the title the
law asks of a self-billed invoice (the buyer bills itself on the seller's behalf, and pays it). Such a document
is a credit note when it prints a negative total, and is otherwise read as the invoice it may be.

An e-invoice printed by a viewer names its kind by its type code: 381, 261 (self-billed) and 396 (factored) are
credit notes, whatever the title.

A page titled as an invoice before any such title is an invoice that names a credit note ("Credit note CN-77"
among its references), as is a line that pairs the words with a value ("Credit note: CN-77").
"""

from __future__ import annotations

import re
from decimal import Decimal
from statistics import median

from quire.workflows.models.invoice.layout import Line, Phrase
from quire.workflows.models.invoice.values import fold

# Credit notes' names, in the reader's languages, as folded text (lower case, without accents).
_CREDIT = (
    r"(?:tax\s+)?credit\s*(?:note|memo|invoice)|stornorechnung|(?:facture\s+d\W?)?avoir|note\s+de\s+credit|credit\s*nota|"
    r"credit\s*factuur|nota\s+(?:de\s+|di\s+)?credito|factura\s+de\s+abono|kredit\s*nota|kreditfaktura|hyvityslasku|"
    r"dobropis|πιστωτικο(?:\s+(?:τιμολογιο|σημειωμα))?"
)
# Names of a document that credits or corrects, or (a "Gutschrift") may be a self-billed invoice.
_CORRECTION = (
    r"gutschrift|rechnungskorrektur|korrekturrechnung|factura\s+rectificativa|faktura\s+korygujaca|korekta\s+faktury|"
    r"faktura\s+korekta|opravny\s+danovy\s+doklad"
)
# Invoices' titles: a page that prints one of these first is an invoice.
_INVOICE = (
    r"(?:(?:tax|vat|gst|commercial|sales)\s+)?invoice|rechnung|facture|factura|fattura|factuur|faktura(?:\s+vat)?|"
    r"fatura|lasku|τιμολογιο"
)
# A title, perhaps with its number after it ("Credit Note No. CN-00417", "Avoir n° AV-2025-014", "Nota di credito
# n. 12/2025"), but no label's colon: "Credit note: CN-77" is a reference on an invoice.
_NUMBER = r"(?:\s*(?:no|nr|n|num|number|nummer|#|αρ)?\s*[.°º]*\s*[\w/.-]*\d[\w/.-]*)?[^\w:]*"  # noqa: RUF001
_TITLE_PART = re.compile(rf"(?:{_CREDIT}|{_CORRECTION}){_NUMBER}")
_CREDIT_PART = re.compile(rf"(?:{_CREDIT}){_NUMBER}")
_INVOICE_PART = re.compile(rf"(?:{_INVOICE}){_NUMBER}")
# A title in two languages, or two names for the one document: "CREDITNOTA / NOTE DE CRÉDIT", "CREDIT NOTE/AVOIR",
# "Gutschrift – Rechnungskorrektur". A slash inside a number ("12/2025") parts nothing.  # noqa: RUF003
_BETWEEN = re.compile(r"\s*/\s*(?=\D)|\s+[–-]\s+|\s*\|\s*")  # noqa: RUF001
# The label of a credit note's own number; `CREDIT_LABEL` also finds a correction's.
_CREDIT_NUMBER = re.compile(rf"\b(?:{_CREDIT})|credit\s*(?:no\b|number|#)|\bc/n\b|hyvitys")
CREDIT_LABEL = re.compile(rf"{_CREDIT_NUMBER.pattern}|\b(?:{_CORRECTION})|korekt|korygujac")
# The type code of an e-invoice as a viewer prints it (EN 16931's BT-3, UNTDID 1001): 381 a credit note, 261 a
# self-billed one, 396 a factored one ("BT-3 | Rechnungsart | 381 - Gutschrift", "Invoice type code: 381").
_CREDIT_CODES = "381|261|396"
_TYPE_CODE = re.compile(
    r"(?:\bbt-3\b|rechnungsart|rechnungstyp|(?:invoice|document)\s+type(?:\s+code)?|type\s+de\s+(?:facture|document)|"
    rf"tipo\s+(?:de\s+)?(?:documento|factura|fattura)|documentsoort|factuursoort)[\s:|=\u2013-]*(?:{_CREDIT_CODES})"
    r"(?!\d)(?!\s*[^\W\d_]*\s*[:#])"  # the code alone or before its name, not another label's value
)
_CODE = re.compile(rf"(?<!\d)(?:{_CREDIT_CODES})(?!\d)")  # the phrase the code stands in, the evidence
# A title stands out: at least this much taller than the page's usual text.
_LARGER = 1.2
# On a page of plain text, where every line is as high as the next, a title is one of its first lines.
_TOP_LINES = 10


def _title(text: str) -> str | None:
    """Which title the words are: an invoice's, a credit note's ("credit"), a correction's, or none (None)."""
    parts = _BETWEEN.split(fold(text).strip())
    if all(_INVOICE_PART.fullmatch(part) for part in parts):
        return "invoice"
    if not all(_TITLE_PART.fullmatch(part) for part in parts):
        return None
    return "credit" if any(_CREDIT_PART.fullmatch(part) for part in parts) else "correction"


def credit_note(lines: list[Line], number_label: Phrase | None, total: Decimal | None) -> Phrase | None:
    """The printed words that make the document a credit note, or None for an invoice. `number_label` is the label
    of the number read as the document's own, `total` the total as printed."""
    first = [line for line in lines if line.page == lines[0].page] if lines else []
    heights = [p.height for line in first for p in line.phrases]
    usual = median(heights) if heights else 0.0
    uniform = bool(heights) and max(heights) - min(heights) < 0.5
    credited = total is not None and total < 0
    for index, line in enumerate(first):
        if len(line.phrases) != 1:
            continue  # a title is a line of its own, not one of a row of column heads
        phrase = line.phrases[0]
        if not (index < _TOP_LINES if uniform else phrase.height >= _LARGER * usual):
            continue
        kind = _title(phrase.text)
        if kind == "invoice":
            break
        if kind == "credit" or (kind == "correction" and credited):
            return phrase
    if number_label is not None:
        label = fold(number_label.text)
        if _CREDIT_NUMBER.search(label) or (credited and CREDIT_LABEL.search(label)):
            return number_label
    for line in lines:
        if _TYPE_CODE.search(fold(line.text)):
            return next((p for p in reversed(line.phrases) if _CODE.search(p.text)), line.phrases[-1])
    return None
