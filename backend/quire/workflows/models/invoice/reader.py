"""Invoice fields from a page layout: collect every labelled candidate, check the amounts, then choose.

A value belongs to the label in its own phrase, to the right of it on the same line, or just below
it. Each candidate gets a score from how strongly its label names the field and where the value
stands; the amounts are chosen together so that subtotal + tax = total where the page allows it.
A field whose best score stays under `ABSTAIN_BELOW` is left empty and named for review.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Any

from quire.workflows.models.invoice.labels import (
    NUMBER_WORDS,
    PAYABLE,
    PAYMENT,
    LabelMatch,
    language_votes,
    match_labels,
    ocr_repaired,
)
from quire.workflows.models.invoice.layout import Line, Phrase
from quire.workflows.models.invoice.values import (
    CURRENCY,
    EMAIL_OR_URL,
    Amount,
    amounts_in,
    bank_currency,
    country_currency,
    currencies_in,
    dates_in,
    day_first_votes,
    decimal_mark_of,
    dollar_currency,
    fold,
    is_identifier_context,
)
from quire.workflows.models.invoice.vendor import find_vendor

ABSTAIN_BELOW = 0.5
REVIEW_BELOW = 0.75
AMOUNT_FIELDS = ("subtotal", "tax", "total")
ADJUSTMENTS = ("charge", "discount", "withholding", "rounding")
PAYMENT_MIN_SCORE = 0.15
# Cash paid may be the total rounded to 0.05 without a printed rounding line.
_CASH_ROUNDING = Decimal("0.05")
# A printed total the payment lines vouch for is given without review.
PAYMENT_CONFIRMS = 0.8
# Cash rounding moves a total by at most half a unit (a whole krona, 0.05 of a ringgit or a franc).
_MAX_ROUNDING = Decimal("0.5")
DATE_FIELDS = ("issue_date", "due_date")
_RELATION = {"same": 1.0, "right": 0.9, "below": 0.75}
_NUMBER_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-/._]*\d[A-Za-z0-9\-/._]*|\d+")
_CENT = Decimal("0.01")
# A tax label that names the sum of the tax lines rather than the tax at one rate.
# A tax rate and the amount it is levied on: "19% auf 200,00", "7% of 275.00", "3 % s/ 37,42", "21% sobre 100".
_RATE_BASE = re.compile(
    r"\d{1,2}(?:[.,]\d{1,2})?\s*%\s*(?:auf|von|on|of|over|sur|s/|su|sobre|op|over|de|od|na|z)\s+"
    r"(?:[A-Z]{3}\s?|[€$£]\s?)?-?\d[\d.,'\u00a0 ]*\d(?:\s?(?:[A-Z]{3}|[€$£]))?(?![\d.,]*\s*%)",
    re.I,
)
# A tax rate as printed in a tax table's row ("6%", "7,0 %"); OCR may leave only the sign ("SR@O%").
_RATE = re.compile(r"(?<![\d.,])(\d{1,2}(?:[.,]\d{1,3})?)\s*%")
# Words of rows that take a rate of an amount without being a tax.
_NOT_A_TAX_ROW = re.compile(
    r"rabatt|discount|coupon|promo|skonto|remise|descuento|sconto|korting|rabat|desconto|off\b|servi|bedienung|"
    r"\btips?\b|gratuity|trinkgeld|pourboire|propina|mancia|fooi"
)
# How far a row's tax may stand from its rate of the amount taxed, beyond a cent: amounts rounded per line.
_RATE_SLACK = Decimal("0.0005")
# Taxes levied side by side on one sale, each under its own name: India's central, state and union-territory GST,
# Canada's federal and provincial taxes, the United States' state, county and city sales taxes. The first ones
# are never words of anything else, so where one follows another tax's amount in a phrase, a second tax starts.
_SIDE_BY_SIDE = ("cgst", "sgst", "utgst", "igst", "pst", "qst", "hst", "tvq", "tvh")
_SPLIT_TAXES = frozenset({*_SIDE_BY_SIDE, "gst", "tps", "state", "county", "city", "local"})
_SECOND_TAX = re.compile(r"(?<=\d)\s+(?=(?:" + "|".join(_SIDE_BY_SIDE) + r")\b)", re.I)
# Per-rate tax lines further apart than this belong to different blocks (a VAT table and a footer).
_TAX_BLOCK_LINES = 8
_TAX_SUM = re.compile(r"total|summe|gesamt|betrag|totaal|totale|razem|yhteensa|\bi\s+alt\b|insgesamt|sum\b|suma\b")
# A document series: one to four capitals ("FT", "A", "INV"), printed before a number that starts with a digit;
# never a currency code or the abbreviation of another number's name ("USD 12345", "REF 12345", "PO 4500").
_SERIES = re.compile(r"[A-Z]{1,4}")
_NOT_A_SERIES = frozenset(
    {"REF", "PO", "REA", "VAT", "TAX", "ABN", "GST", "NIF", "CIF", "ID", "NO", "NR", "NUM", "TEL", "FAX"}
)
_NUMBER_WORD = re.compile(r"(?:\bnr|\bno|n[°º]|num(?:ber|mer|ero)|#)\.?\s*:?$")
# The fields whose labels, read as printed, vouch for their OCR, and how sure OCR must be of such a label: a
# payment or adjustment word misread into another ("CHANGE" as "CHARGE") keeps OCR's doubt.
_LABEL_READ_FIELDS = frozenset({"invoice_number", *DATE_FIELDS, *AMOUNT_FIELDS})
_LABEL_READ_AT_LEAST = 0.6
# The word after a payable total's label that says by when it is owed, the date right after it ("Amount due by",
# "Montant à payer avant le", "Zu zahlen bis"); not "au", "voor" or "until", which also start a period ("au 30/06",
# "voor de periode 01-04 t/m 30-06").
_DUE_ON = re.compile(
    r"(?:on|by|before|bis(?:\s+(?:zum|am))?|le|avant\s+le|entro\s+il|antes\s+de(?:l)?|do|at[eé])\s+", re.I
)
# How far above a table's totals row its column heads are looked for, how many lines a head may stack, and how
# many lines' height apart the heads of one row may start or end (they are one header row).
_HEAD_LINES = 15
_HEAD_WORDS = 3
_HEAD_ROW_SPREAD = 2
# An amount grouped by a plain space with a decimal point ("2 112.50"), no currency before it.
_SPACE_GROUPED = re.compile(r"(?<![\d.,$€£])(?<![$€£]\s)\b\d{1,3} \d{3}\.\d{2}(?!\d)")
# A group head over several columns that leaves each column's own head standing: it says they are amounts (or
# names a currency).
_AMOUNT_GROUP = re.compile(
    r"(?:amounts?|totals?|betr(?:ae|a)ge?|summen|montants?|totaux|importes?|importi|bedragen|kwoty|valores|"
    r"prices?|preise|prix|precios?|prezzi|prijzen|ceny|pre[cç]os)\b"
)
# A head's words after its label that still leave it a head: a currency ("Brutto EUR"), nothing else.
_HEAD_NOTE = re.compile(rf"\(?(?:{CURRENCY.pattern})\)?", re.I)
# Column heads of a line-item table, which a grid of document fields ("Invoice No. | Date | Amount Due") lacks.
_ITEM_COLUMN = re.compile(
    r"(?:description|qty|quantity|unit|price|item|article|product|artikel|menge|bezeichnung|beschreibung|einzelpreis|"
    r"designation|quantite|prix|descripcion|cantidad|concepto|precio|descrizione|quantita|prezzo|omschrijving|aantal|"
    r"prijs|opis|ilosc|cena|descricao|quantidade|pos\b|position)"
)


def evidence(confidence: float, text: str, page: int | None = None, bbox: list[float] | None = None) -> dict[str, Any]:
    """One field's evidence, as the invoice result's `fields` map holds it."""
    return {"confidence": round(confidence, 2), "page": page, "text": text[:300], "bbox": bbox}


@dataclass(frozen=True, slots=True)
class Candidate:
    field: str
    value: Any
    score: float
    label: Phrase
    source: Phrase
    line: int
    # One of several amounts after its label, with nothing to tell which is its own: given for sure only when
    # sums from other lines vouch for it (`_check_and_derive`).
    unsure: bool = False

    def evidence(self, confidence: float, has_layout: bool) -> dict[str, Any]:
        same = self.label is self.source
        text = self.source.text if same else f"{self.label.text} {self.source.text}"
        if not has_layout:
            return evidence(confidence, text)
        parts = [self.label, self.source] if self.label.page == self.source.page else [self.source]
        box = [
            round(min(p.x0 for p in parts), 1),
            round(min(p.y0 for p in parts), 1),
            round(max(p.x1 for p in parts), 1),
            round(max(p.y1 for p in parts), 1),
        ]
        return evidence(confidence, text, self.source.page, box)


def _neighbours(lines: list[Line], index: int, phrase: Phrase) -> list[tuple[str, Phrase]]:
    """Phrases that may hold the value of a label: to its right on its line, then just below it."""
    line = lines[index]
    found: list[tuple[str, Phrase]] = []
    right = [p for p in line.phrases if p.x0 >= phrase.x1 - 1]
    found += [("right", p) for p in right[:2]]
    labels = sum(1 for p in line.phrases if match_labels(p.text))
    if labels >= 3 and any(_ITEM_COLUMN.match(fold(p.text)) for p in line.phrases):
        return found  # a line-item table's header: the values below are column entries, not this label's value
    for below in lines[index + 1 : index + 4]:
        if below.page != line.page or below.y0 - line.y1 > 3 * max(phrase.height, 8.0):
            break
        for candidate in below.phrases:
            if _overlaps(candidate, phrase) and not match_labels(candidate.text):
                found.append(("below", candidate))
                return found
    return found


def _invoice_number(text: str, numbered: bool = False) -> str | None:
    """The invoice number in a label's value; a date-shaped one only after a number word ("Faktura nr 12/05/2024")."""
    text = re.sub(r"^(?:#|no\.?|nr\.?|n[°º]\.?|num(?:ber|\.)?|number)\s*:?\s*", "", text.strip(), flags=re.I)
    # "(Selbst ausgestellte Rechnung) (389) Nr. 47110818": the number is what follows a number sign, not a code
    named = re.search(r"(?:^|\s)(?:#|no\.|nr\.|n[°º]\.?|number|nummer)\s*:?\s*(?=\S*\d)", text, flags=re.I)
    if named is not None:
        text = text[named.end() :]
    dates = dates_in(text, True)
    if dates and text.startswith(dates[0].text) and not numbered:
        return None  # a date, not a number
    tokens = text.split()[:2]
    for index, token in enumerate(tokens):
        token = token.strip(".,:;()[]")
        if _NUMBER_TOKEN.fullmatch(token) and len(token) >= 3 and not EMAIL_OR_URL.search(token):
            if amounts_in(token) and re.search(r"[.,]\d{2}$", token):
                return None
            # A series code printed before the number is part of it ("FT 2024/315", "A 1234", "INV 0042").
            series = tokens[0] if index == 1 and _series(tokens[0], token) else None
            return f"{series} {token.rstrip('._-')}" if series else token.rstrip("._-")
    return None


def _series(code: str, number: str) -> bool:
    return (
        _SERIES.fullmatch(code) is not None
        and number[:1].isdigit()
        and code not in _NOT_A_SERIES
        and not currencies_in(code)
    )


def _parse(field: str, text: str, mark: str, day_first: bool, numbered: bool = False) -> Any:
    if field == "tax":
        text = _RATE_BASE.sub(" ", text)  # "MwSt 19% auf 200,00": the amount taxed, not the tax
    if field in AMOUNT_FIELDS or field in ADJUSTMENTS or field in PAYMENT:
        found = amounts_in(text, mark)
        return found[-1] if found else None
    if field in DATE_FIELDS:
        dates = dates_in(text, day_first)
        return dates[0].value if dates else None
    if field == "invoice_number":
        return _invoice_number(text, numbered)
    return None


Labelled = list[tuple[int, Phrase, tuple[LabelMatch, ...]]]


def _labelled(lines: list[Line]) -> Labelled:
    """Every phrase that starts with a label, with its line index and its labels, the longest first; a label
    wrapped over two lines of a narrow box ("SUB" over "TOTAL") counts as one."""
    found: Labelled = []
    for index, line in enumerate(lines):
        for phrase in (part for whole in line.phrases for part in _tax_parts(whole)):
            matches = match_labels(phrase.text)
            if not matches and phrase.confidence < 1.0 and (repaired := ocr_repaired(phrase.text)) is not None:
                matches = match_labels(repaired)  # OCR read "TATAL 78.10": the label as printed, the value as read
            wrapped = _wrapped_label(lines, index, phrase)
            if wrapped is not None and len(wrapped[1][0].label) > max((len(m.label) for m in matches), default=0):
                found.append((index, *wrapped))
            elif matches:
                found.append((index, phrase, matches))
    return found


def _tax_parts(phrase: Phrase) -> list[Phrase]:
    """A phrase that prints two taxes levied side by side ("CGST 9% 90.00 SGST 9% 90.00") as one phrase each,
    their boxes shared out by their length; any other phrase as it is."""
    cuts = [m.start() for m in _SECOND_TAX.finditer(phrase.text)]
    if not cuts:
        return [phrase]
    bounds = [0, *cuts, len(phrase.text)]
    width = (phrase.x1 - phrase.x0) / max(len(phrase.text), 1)
    return [
        replace(phrase, text=phrase.text[start:end].strip(), x0=phrase.x0 + start * width, x1=phrase.x0 + end * width)
        for start, end in itertools.pairwise(bounds)
    ]


def _wrapped_label(lines: list[Line], index: int, phrase: Phrase) -> tuple[Phrase, tuple[LabelMatch, ...]] | None:
    """A one-word phrase and the word left-aligned just under it, when together they are a whole label and
    nothing else: the label of the value to the right of the first line."""
    if index + 1 >= len(lines) or not re.fullmatch(r"[^\W\d_]{2,12}", phrase.text):
        return None
    below = lines[index + 1]
    if below.page != phrase.page or below.y0 - phrase.y1 > phrase.height:
        return None
    for other in below.phrases:
        if abs(other.x0 - phrase.x0) <= 2 and re.fullmatch(r"[^\W\d_]{2,12}:?", other.text):
            joined = f"{phrase.text} {other.text}"
            matches = match_labels(joined)
            if matches and not matches[0].rest and matches[0].field in (*AMOUNT_FIELDS, *DATE_FIELDS):
                box = Phrase(joined, phrase.page, min(phrase.x0, other.x0), phrase.y0, max(phrase.x1, other.x1),
                             other.y1, phrase.line, min(phrase.confidence, other.confidence))  # fmt: skip
                return box, matches
    return None


def _candidates(lines: list[Line], labelled: Labelled, mark: str, day_first: bool) -> dict[str, list[Candidate]]:
    """A candidate per labelled phrase: from its longest label, or the next one when that reads no value
    ("Due payable: 571.04 €" names no date, so it is read as a total)."""
    found: dict[str, list[Candidate]] = {}
    for index, phrase, matches in labelled:
        for match in matches:
            if match.field not in ("vendor", "buyer") and _read_label(
                lines, index, phrase, match, mark, day_first, found
            ):
                break
    return found


def _overlaps(a: Phrase, b: Phrase) -> bool:
    return a.x0 < b.x1 + 2 and a.x1 > b.x0 - 2


def _column_head(
    lines: list[Line], index: int, value: Phrase, row: list[Phrase]
) -> tuple[LabelMatch, Phrase, Phrase] | None:
    """The amount label heading a value's column, with the first and last phrase of the head: the text nearest
    above the value that overlaps it, past the column's other values, read whole with the lines stacked close over
    it ("Montant" over "EUR TTC"; "Gross" over "weight" and "Gewicht" over "brutto" are no amount heads). A head
    over several of the row's columns is a group's: only a group of amounts ("Amounts" over "Net | Gross") leaves
    the column's own head standing ("Weight" over "Net | Gross" makes them weights). None when that text names
    something else, or nothing."""
    stacked: list[Phrase] = []
    for at in range(index - 1, max(-1, index - 1 - _HEAD_LINES), -1):
        above = lines[at]
        if above.page != lines[index].page:
            break
        over = [p for p in above.phrases if _overlaps(p, value)]
        text = len(over) == 1 and not re.search(r"\d", over[0].text)
        group = text and sum(1 for other in row if _overlaps(over[0], other)) > 1
        amounts_group = (
            _AMOUNT_GROUP.match(fold(over[0].text).strip()) or currencies_in(over[0].text) if group else None
        )
        if group and (not stacked or not amounts_group):
            return None  # a group's head with no head of the column's own under it, or a group of no amounts
        if stacked and (
            not text or group or stacked[0].y0 - over[0].y1 > stacked[0].height or len(stacked) == _HEAD_WORDS
        ):
            break  # the head ends at the column's values, at a wider text or a group's head, at a gap, or in lines
        if text and not group:
            stacked.insert(0, over[0])
    if not stacked:
        return None
    matches = match_labels(" ".join(p.text for p in stacked))
    if matches and matches[0].field in AMOUNT_FIELDS and (not matches[0].rest or _HEAD_NOTE.fullmatch(matches[0].rest)):
        return matches[0], stacked[0], stacked[-1]
    return None


def _by_column(lines: list[Line], index: int, phrase: Phrase, mark: str) -> list[tuple[LabelMatch, Phrase, Any]]:
    """The amounts of a table's totals row with the field each column's head names ("Total | 24.99 | 5.00 |
    29.99" under "Montant HT | TVA | Montant TTC"); empty unless two columns are headed by different fields in
    one header row."""
    row = [p for p in lines[index].phrases if p.x0 >= phrase.x1 - 1 and "%" not in p.text]
    headed: list[tuple[LabelMatch, Phrase, Any]] = []
    tops: list[Phrase] = []
    bottoms: list[Phrase] = []
    for value in row:
        amounts = amounts_in(value.text, mark)
        found = _column_head(lines, index, value, row) if len(amounts) == 1 else None
        if found is not None:
            headed.append((found[0], value, amounts[0]))
            tops.append(found[1])
            bottoms.append(found[2])
    if len({head.field for head, _, _ in headed}) < 2:
        return []
    # Heads of one header row start level or end level (a head may run on for more lines than the others).
    height = _HEAD_ROW_SPREAD * max(p.height for p in tops + bottoms)
    level = max(p.y0 for p in tops) - min(p.y0 for p in tops) <= height
    return headed if level or max(p.y1 for p in bottoms) - min(p.y1 for p in bottoms) <= height else []


def _amounts_after(line: Line, phrase: Phrase, rest: str, mark: str) -> set[Decimal]:
    """The different amounts printed one after another after a label, in its phrase and the phrases after it on
    its line ("Total amount | 100.00 | 19.00 | 119.00", "Total | $ | 100.00 | $ | 19.00"), up to the first
    words ("davon MwSt", "Amount paid"); a currency, a rate or a count between them is stepped over. An amount
    in another printed currency is the same sum restated ("100.00 EUR | 117.65 USD"), not a rival."""
    found: set[Decimal] = set()
    currency: str | None = None
    pending: str | None = None  # a currency printed in a phrase of its own, for the amount after it
    for text in [rest, *(p.text for p in line.phrases if p.x0 >= phrase.x1 - 1)]:
        words = re.sub(CURRENCY.pattern, "", _RATE.sub("", text), flags=re.I)
        if re.search(r"[^\W\d_]", words):
            break
        amounts = amounts_in(text, mark)
        if not amounts and (codes := currencies_in(text)):
            pending = codes[0]
        for amount in amounts:
            printed = amount.currency or pending
            currency = currency or printed
            if printed in (None, currency):
                found.add(amount.value)
        pending = pending if not amounts else None
    return found


def _read_label(
    lines: list[Line],
    index: int,
    phrase: Phrase,
    match: LabelMatch,
    mark: str,
    day_first: bool,
    found: dict[str, list[Candidate]],
) -> bool:
    """Add the value of one label to `found`; False when no value of its kind stands beside or below it."""
    # A label inside a sentence ("Rechnung gemäß Bestellung Nr. ...", "Total of all open invoices") has no value
    # beside it, and is no row's label.
    sentence = len(re.findall(r"[^\W\d_]{3,}", match.rest)) >= 2
    # "Total facture", "VAT 20%": a row's label, its amounts in the columns after it.
    row_label = not re.search(r"\d", _RATE.sub("", match.rest)) and not sentence
    if match.field in AMOUNT_FIELDS and row_label and (columns := _by_column(lines, index, phrase, mark)):
        # A totals row under headed columns: each column's head, not the row's label, says what its amount is. A
        # tax row ("VAT 19% | 850,00 | 161,50" under "Net | VAT") gives its tax only: its net is one rate's part.
        taken = [(head, source, amount) for head, source, amount in columns
                 if match.field != "tax" or head.field == "tax"]  # fmt: skip
        for head, source, amount in taken:
            # As sure as the weaker of the two labels: a weak row label ("Total") under a strong head stays weak.
            score = 0.9 * min(head.weight, match.weight) * min(phrase.confidence, source.confidence)
            found.setdefault(head.field, []).append(Candidate(head.field, amount, score, phrase, source, index))
        return bool(taken)
    sources: list[tuple[str, str, Phrase]] = []
    if match.rest:
        sources.append(("same", match.rest, phrase))
    if match.field == "invoice_number" and match.rest:
        # "Rechnung Nr. 471102 vom 05.03.2018": the date beside a number is the date of issue.
        dates = dates_in(match.rest, day_first)
        number = _invoice_number(match.rest, bool(_NUMBER_WORD.search(match.label)))
        if dates and not (number and dates[0].text in number):  # "Faktura nr 12/05/2024" names no date
            found.setdefault("issue_date", []).append(
                Candidate("issue_date", dates[0].value, 0.8 * match.weight, phrase, phrase, index)
            )
    due = _DUE_ON.match(match.rest) if match.field == "total" and PAYABLE.search(match.label) else None
    after = match.rest[due.end() :] if due is not None else ""
    if (dates := dates_in(after, day_first)) and fold(after).startswith(fold(dates[0].text)):
        # "Total amount due on August 3, 2014 $4.11": the date the total is owed by is the due date.
        found.setdefault("due_date", []).append(
            Candidate("due_date", dates[0].value, 0.8 * match.weight, phrase, phrase, index)
        )
    if not sentence:
        sources += [(relation, p.text, p) for relation, p in _neighbours(lines, index, phrase)]
    # "Total amount | 100.00 | 19.00 | 119.00" with no heads that say which is which: the label's own amount is one
    # of them, and nothing tells which (the first is the net as often as the total). Offered for review only.
    unsure = match.field in AMOUNT_FIELDS and len(_amounts_after(lines[index], phrase, match.rest, mark)) >= 2
    if match.field == "invoice_number" and re.sub(r"[^a-z]", "", match.label) in NUMBER_WORDS:
        # "Numéro SIRET 123 456 789", "Numéro | client | C1234": a bare number word names what follows it, so only
        # a number right after it is its value.
        sources = [source for source in sources[:1] if re.match(r"\S*\d", source[1])]
    for relation, text, source in sources:
        value = _parse(match.field, text, mark, day_first, bool(_NUMBER_WORD.search(match.label)))
        if value is None:
            continue
        weight = _RELATION[relation]
        if relation == "below" and match.field not in AMOUNT_FIELDS:
            weight = 0.85  # a date or number printed under its label is a key-value grid, as usual as beside it
        # A field's label read as printed, fairly surely and alone in its phrase, vouches for its letters: the
        # lexicon matched it. Only the value's own reading counts then. A label OCR garbled ("TATAL", "TOTAL
        # PAYABLE. AHCLAT") or read unsurely, a payment word, and a value in the label's phrase keep the lower one.
        alone = (
            relation != "same"
            and match.field in _LABEL_READ_FIELDS
            and not match.rest
            and phrase.confidence >= _LABEL_READ_AT_LEAST
            and bool(match_labels(phrase.text))
        )
        read = source.confidence if alone else min(phrase.confidence, source.confidence)
        score = match.weight * weight * read
        # "TOTAL 2 112.50": a count and its amount, or 2,112.50 grouped by a space; nothing tells which.
        grouped = match.field in AMOUNT_FIELDS and _SPACE_GROUPED.search(text) is not None
        doubt = (unsure and relation in ("same", "right")) or grouped
        score = min(score, ABSTAIN_BELOW - 0.05) if doubt else score
        found.setdefault(match.field, []).append(Candidate(match.field, value, score, phrase, source, index, doubt))
        return True
    return False


def _best(candidates: list[Candidate]) -> tuple[Candidate | None, float]:
    """The highest-scoring value; its confidence drops when a different value scores nearly as high."""
    if not candidates:
        return None, 0.0
    ranked = sorted(candidates, key=lambda c: (-c.score, c.line))
    top = ranked[0]
    rival = next((c for c in ranked[1:] if c.value != top.value), None)
    confidence = top.score
    if rival is not None and rival.score >= top.score - 0.05:
        confidence *= 0.75
    return top, confidence


def _amount_value(candidate: Candidate | None) -> Decimal | None:
    return None if candidate is None else candidate.value.value


def _charges(found: dict[str, list[Candidate]]) -> Decimal:
    """Freight, shipping and the like less discounts and withheld income tax, each printed amount counted once:
    what lies between subtotal + tax and total."""
    added = {c.value.value for c in found.get("charge", []) if c.score >= ABSTAIN_BELOW}
    taken = {
        abs(c.value.value) for f in ("discount", "withholding") for c in found.get(f, []) if c.score >= ABSTAIN_BELOW
    }
    return sum(added, Decimal(0)) - sum(taken, Decimal(0))


def _after_rounding(
    lines: list[Line], labelled: Labelled, found: dict[str, list[Candidate]], total: Candidate | None
) -> tuple[Candidate, str] | None:
    """The total as paid when a cash-rounding line follows it ("Total 16.31 / Rounding Adj -0.01 / Balance Due
    16.30"): the total-class amount on the lines just below the rounding line, or the total plus the rounding."""
    if total is None:
        return None
    rounding_lines = [i for i, _, matches in labelled if matches[0].field == "rounding" and i > total.line]
    for index in rounding_lines:
        if index - total.line > 3 or lines[index].page != lines[total.line].page:
            continue
        below = [
            c for field in ("total", "subtotal") for c in found.get(field, [])
            if index < c.line <= index + 3 and lines[c.line].page == lines[index].page
        ]  # fmt: skip
        for candidate in sorted(below, key=lambda c: c.line):
            if 0 < abs(candidate.value.value - total.value.value) <= _MAX_ROUNDING:
                return candidate, candidate.source.text
        for rounding in (c for c in found.get("rounding", []) if c.line == index):
            if 0 < abs(rounding.value.value) <= _MAX_ROUNDING:
                paid = Amount(total.value.value + rounding.value.value, total.value.currency)
                return Candidate("total", paid, total.score, total.label, rounding.source, index), "total + rounding"
    return None


def _adds_up(sub: Decimal, tax: Decimal, total: Decimal, charges: Decimal) -> bool:
    return abs(sub + tax - total) <= _CENT or (charges != 0 and abs(sub + tax + charges - total) <= _CENT)


def _choose_amounts(
    found: dict[str, list[Candidate]], line_count: int, charges: Decimal, tax_sums: list[Candidate]
) -> dict[str, tuple[Candidate | None, float]]:
    """Subtotal, tax and total chosen together: strong labels, the payable total last and largest, sums that add up."""
    options: dict[str, list[tuple[Candidate | None, float]]] = {}
    totals = found.get("total", [])
    largest = max((c.value.value for c in totals), default=None)
    for field in AMOUNT_FIELDS:
        ranked: dict[Decimal, tuple[Candidate, float]] = {}
        for candidate in found.get(field, []) + (tax_sums if field == "tax" else []):
            rank = candidate.score
            if field == "total":
                rank += 0.1 * candidate.line / max(line_count, 1)
                rank += 0.1 if candidate.value.value == largest else 0.0
            if field == "tax" and candidate.value.value < 0:
                rank -= 0.3
            value = candidate.value.value
            if value not in ranked or ranked[value][1] < rank:
                ranked[value] = (candidate, rank)
        best = sorted(ranked.values(), key=lambda pair: -pair[1])[:5]
        options[field] = [(c, r) for c, r in best] + [(None, 0.0)]
    chosen: tuple[tuple[Candidate | None, float], ...] = ((None, 0.0),) * 3
    best_rank = -1.0
    for combo in itertools.product(*(options[f] for f in AMOUNT_FIELDS)):
        (sub, sub_rank), (tax, tax_rank), (total, total_rank) = combo
        rank = sub_rank + tax_rank + 1.5 * total_rank
        values = [_amount_value(sub), _amount_value(tax), _amount_value(total)]
        if all(v is not None for v in values):
            s, t, g = (v for v in values if v is not None)
            rank += 0.8 if _adds_up(s, t, g, charges) else -0.6
            rank -= 0.5 if abs(t) >= abs(g) > 0 else 0.0
            rank -= 0.5 if abs(t) > abs(s) else 0.0
        elif values[0] is not None and values[2] is not None:
            rank -= 0.4 if abs(values[0]) > abs(values[2]) else 0.0
        if rank > best_rank:
            best_rank, chosen = rank, combo
    return dict(zip(AMOUNT_FIELDS, chosen, strict=True))


TaxSum = tuple[Candidate, frozenset[int]]


def _tax_sums(found: dict[str, list[Candidate]]) -> list[TaxSum]:
    """Tax printed per rate on lines near each other ("USt 7%: 19,25" ... "USt 19%: 38,00") added up, each
    with the lines it sums: a candidate for the tax when the page prints no tax total."""
    # One candidate a printed tax label: two taxes may share a line ("CGST 9% 90.00    SGST 9% 90.00").
    per_label: dict[tuple[int, float], Candidate] = {}
    for candidate in found.get("tax", []):
        if candidate.score < ABSTAIN_BELOW or _TAX_SUM.search(fold(candidate.label.text)):
            continue
        key = (candidate.line, candidate.label.x0)
        if key not in per_label or per_label[key].score < candidate.score:
            per_label[key] = candidate
    clusters: list[list[Candidate]] = []
    for key in sorted(per_label):
        candidate = per_label[key]
        line = candidate.line
        last = clusters[-1][-1] if clusters else None
        if last is not None and last.label.page == candidate.label.page and line - last.line <= _TAX_BLOCK_LINES:
            clusters[-1].append(candidate)
        else:
            clusters.append([candidate])
    sums: list[TaxSum] = []
    for cluster in clusters:
        # The same tax printed twice counts once, under one name or two ("USt 19%" in the table, "MwSt 19%" under
        # it); only the taxes levied side by side on one sale count twice when equal (India's central and state
        # GST at equal rates: "CGST @ 9% 11,286.00", "SGST @ 9% 11,286.00").
        distinct = {(_split_tax(c.label.text), c.value.value): c for c in cluster}
        _drop_their_sum(distinct)
        if len(distinct) < 2:
            continue
        first, last = cluster[0], cluster[-1]
        summed = sum((value for _, value in distinct), Decimal(0))
        score = 0.95 * min(c.score for c in cluster)
        whole = Candidate("tax", Amount(summed, first.value.currency), score, first.label, last.source, last.line)
        sums.append((whole, frozenset(c.line for c in cluster)))
    return sums


def _drop_their_sum(taxes: dict[tuple[str, Decimal], Candidate]) -> None:
    """Take out a tax line that is the sum of the others printed with them ("CGST 9.00", "SGST 9.00", "GST 18.00";
    "State tax 6.25", "Sales tax 6.25"): a total of the parts under another name, not one more tax."""
    for key in list(taxes):
        others = [other for other in taxes if other != key]
        if not others or key[1] != sum((value for _, value in others), Decimal(0)):
            continue
        if len(others) >= 2 or (not key[0] and all(name for name, _ in others)):
            del taxes[key]
            return


def _split_tax(label: str) -> str:
    """The name of one of the taxes levied side by side ("CGST @ 9%" -> "cgst"), else "" (any other tax line)."""
    word = re.match(r"[^\W\d_]+", fold(label))
    return word.group(0) if word and word.group(0) in _SPLIT_TAXES else ""


def _per_rate_tax(
    chosen: dict[str, tuple[Candidate | None, float]], sums: list[TaxSum], charges: Decimal
) -> tuple[Candidate | None, float]:
    """One rate's tax line chosen as the tax while the page prints others beside it is only part of the tax:
    unless subtotal + that line = total, it is left for review."""
    tax, confidence = chosen["tax"]
    if tax is None or not any(tax.line in lines and tax is not whole for whole, lines in sums):
        return tax, confidence
    sub, total = (_amount_value(chosen[f][0]) for f in ("subtotal", "total"))
    if sub is not None and total is not None and _adds_up(sub, tax.value.value, total, charges):
        return tax, confidence
    return tax, min(confidence, ABSTAIN_BELOW - 0.05)


def _currency_sightings(lines: list[Line]) -> dict[str, float]:
    """Each currency printed, counted by how sure the reading was: a `¥` OCR found in a smudge weighs little
    beside the `RM` printed with every amount."""
    seen: dict[str, float] = {}
    for phrase in (p for line in lines for p in line.phrases):
        text = (ocr_repaired(phrase.text) or phrase.text) if phrase.confidence < 1.0 else phrase.text
        for code in currencies_in(text):
            seen[code] = seen.get(code, 0.0) + phrase.confidence
    return seen


def _decide_day_first(lines: list[Line], language: str, currency: str | None) -> bool:
    texts = [line.text for line in lines]
    day, month = day_first_votes(texts)
    if day != month:
        return day > month
    if any(re.search(r"\b\d{1,2}\.\d{1,2}\.\d{2,4}\b", t) for t in texts):
        return True
    return not (language == "en" and currency in (None, "USD", "CAD"))


def read_layout(lines: list[Line], has_layout: bool) -> dict[str, Any]:
    """Fields, evidence, checks and the fields to review, from the lines of an invoice."""
    text = "\n".join(line.text for line in lines)
    mark = decimal_mark_of(text) or "."
    currencies = _currency_sightings(lines)
    currency = max(currencies, key=lambda code: currencies[code]) if currencies else None
    country = country_currency(p.text for line in lines for p in line.phrases)
    if currency is not None and country is not None and currency != country and currencies[currency] < 1.0:
        currency = None  # one unsure sighting (OCR's `€` in a smudge) against the country the page names
    labelled = _labelled(lines)
    # Payment words ("Bar", "Resto", "Card") name no language as surely as invoice labels do.
    language = language_votes(matches[0] for _, _, matches in labelled if matches[0].field not in PAYMENT) or "en"
    # A bare "$" on a page that prints an Australian ABN is the Australian dollar, and dates day first there.
    dollar = dollar_currency(text)
    day_first = _decide_day_first(lines, language, (dollar if currency == "USD" else None) or currency or country)
    found = _candidates(lines, labelled, mark, day_first)

    chosen: dict[str, tuple[Candidate | None, float]] = {
        field: _best(found.get(field, [])) for field in ("invoice_number", *DATE_FIELDS)
    }
    charges = _charges(found)
    sums = _tax_sums(found)
    chosen.update(_choose_amounts(found, len(lines), charges, [whole for whole, _ in sums]))
    for field in AMOUNT_FIELDS:  # the choice's rank may exceed a candidate's score; an unsure one stays unsure
        candidate, confidence = chosen[field]
        if candidate is not None and candidate.unsure:
            chosen[field] = (candidate, min(confidence, ABSTAIN_BELOW - 0.05))
    rounded = _after_rounding(lines, labelled, found, chosen["total"][0])
    if rounded is not None:
        before = chosen["total"][0]
        assert before is not None
        charges += rounded[0].value.value - before.value.value
        chosen["total"] = (rounded[0], chosen["total"][1])
    chosen["tax"] = _per_rate_tax(chosen, sums, charges)
    if chosen["issue_date"][0] is None:
        chosen["issue_date"] = _first_date(lines, day_first)
    if chosen["issue_date"][0] is None:
        chosen["issue_date"] = _lone_date(lines, day_first)
    issue, confidence = chosen["issue_date"]
    if issue is not None and chosen["due_date"][0] is None and _only_date(lines, day_first) == issue.value:
        # A receipt prints one date, perhaps twice: with no other date to mistake it for, it is the date of issue.
        chosen["issue_date"] = (issue, max(confidence, 0.65))

    values: dict[str, Any] = {}
    fields: dict[str, dict[str, Any]] = {}
    for field, (candidate, confidence) in chosen.items():
        if candidate is None:
            continue
        value = candidate.value.value if field in AMOUNT_FIELDS else candidate.value
        values[field] = value
        fields[field] = candidate.evidence(min(confidence, 1.0), has_layout)

    unsure = {field for field in AMOUNT_FIELDS if (picked := chosen[field][0]) is not None and picked.unsure}
    checks = _check_and_derive(values, fields, charges, unsure)
    total = chosen["total"][0]
    # Sums that disagree with the total: an amount was misread somewhere, which the payment lines may settle.
    misread = checks["totals_add_up"] is False or _contradicted(found, chosen, charges)
    # Another total as strong as this one (on another page, or larger after it): which one is owed depends on
    # how the bill is built, which no payment line settles.
    confirmed = checks["totals_add_up"] and all(chosen[f][0] is not None for f in AMOUNT_FIELDS)
    rivalled = (not confirmed and _rivalled(found, total)) or _outranked(found, total, rounded is not None)
    paid = _payment_check(found, total)
    if paid is not None:
        checks["payment_matches_total"] = paid
    tabled = _tax_table_check(lines, total, mark)
    if tabled:
        checks["tax_table_matches_total"] = True
    if paid or (tabled and paid is None and not misread):
        # The payment lines under the total say the same amount was paid (or, where the printed sums do not
        # disagree, the tax table's rows add up to it): a second reading of it, from other lines.
        misread = False
        fields["total"]["confidence"] = max(fields["total"]["confidence"], PAYMENT_CONFIRMS)
    elif paid is False:
        # Cash tendered less the change is another amount: one of the lines was misread, a person looks.
        fields["total"]["confidence"] = min(fields["total"]["confidence"], REVIEW_BELOW - 0.05)
    if "total" in fields and (misread or rivalled):
        # A wrong total is the worst answer this reader can give: when the amounts disagree, a person decides.
        fields["total"]["confidence"] = min(fields["total"]["confidence"], ABSTAIN_BELOW - 0.05)
    if total is not None and total.value.currency:
        currency = total.value.currency
    if currency == "USD":
        currency = dollar or currency
    if currency:
        values["currency"] = currency
        seen = currencies.get(currency, 1.0)  # 1.0: the total's own sign, or a bare "$" read as its country's dollar
        fields["currency"] = evidence(0.9 if seen > 1.5 else 0.7 if seen >= 0.3 else 0.45, currency)
    elif banked := bank_currency(text):
        values["currency"] = banked
        fields["currency"] = evidence(0.6, f"IBAN {banked}")
    elif country is not None:
        # No currency printed: the one of the country the addresses and company forms name, for review.
        values["currency"] = country
        fields["currency"] = evidence(0.55, f"country {country}")
    vendor = find_vendor(lines)
    if vendor is not None:
        name, confidence, phrase = vendor
        values["vendor"] = name
        where = (phrase.page, list(phrase.bbox)) if has_layout else (None, None)
        fields["vendor"] = evidence(confidence, phrase.text, *where)
    return {"values": values, "fields": fields, "checks": checks, "language": language}


def _payment_check(found: dict[str, list[Candidate]], total: Candidate | None) -> bool | None:
    """Whether the payment lines printed under a printed total say the same amount was paid.

    True when cash tendered less the change printed just under it, an amount tendered with no change (a
    card is charged the total, exact cash needs none), or all of them together (a payment split between
    card and cash) is the total. False when cash less change is another amount, by more than cash rounding.
    None when no amount is tendered under the total on its page, or only amounts tendered that are not the
    total (a gift card, a second card): nothing to check then.
    """
    if total is None:
        return None

    def under(candidate: Candidate) -> bool:
        # OCR reads these short lines unsurely ("- CHANGE" at 0.18): they only check a total read elsewhere.
        page = candidate.label.page == total.label.page
        return page and candidate.line > total.line and candidate.score >= PAYMENT_MIN_SCORE

    tendered = [c for c in found.get("tendered", []) if under(c) and c.value.value > 0]
    changes = [c for c in found.get("change", []) if under(c) and c.value.value >= 0]
    if not tendered:
        return None
    net: set[Decimal] = set()
    paired: set[int] = set()
    for change in changes:  # each change line goes with the amount tendered nearest above it
        given = max((t for t in tendered if 0 < change.line - t.line <= 3), key=lambda t: t.line, default=None)
        if given is not None and 0 < change.value.value < given.value.value:
            net.add(given.value.value - change.value.value)
            paired.add(given.line)
    alone = {t.value.value for t in tendered if t.line not in paired}
    due = total.value.value
    if due in net or (not net and due in alone) or due == sum(net | alone, Decimal(0)):  # or split between them
        return True
    if not net or any(abs(due - paid) <= _CASH_ROUNDING for paid in net):
        return None  # nothing to check, or cash rounding the receipt does not print
    return False


def _tax_table_check(lines: list[Line], total: Candidate | None, mark: str) -> bool:
    """True when the rows of a tax table on the total's page, all of them together, add up to the total: the amount
    taxed and its tax in each ("SR @ 6% 10.94 0.66"; "B= 7,0% 2,32 0,16 2,48", the gross after them).

    A row names a rate ("%") and a tax is named on it or in the table's head just above; its tax is that rate of
    the amount taxed, where the rate can be read; rows of discounts, charges and totals are no tax rows. A second
    reading of the total from other lines, like the payment lines."""
    if total is None or total.value.value <= 0:
        return False
    grosses: list[Decimal] = []
    for index, line in enumerate(lines):
        if line.page != total.label.page or index == total.line or "%" not in line.text:
            continue
        named = {m.field for p in line.phrases for m in match_labels(p.text)}
        if named & {"total", "subtotal", "discount", "charge", "withholding", "rounding", *PAYMENT}:
            continue
        if _NOT_A_TAX_ROW.search(fold(line.text)) or not any(
            m.field == "tax" for above in lines[max(0, index - 3) : index + 1] for p in above.phrases
            for m in match_labels(p.text)
        ):  # fmt: skip
            continue  # a discount or a service charge; or no tax named on the row or in the table's head above it
        rate = _RATE.search(line.text)
        values = [amount.value for amount in amounts_in(line.text, mark)]
        for taxed, tax in itertools.pairwise(values):
            levied = None if rate is None else taxed * Decimal(rate.group(1).replace(",", ".")) / 100
            if 0 <= tax < taxed and (levied is None or abs(levied - tax) <= _CENT + taxed * _RATE_SLACK):
                grosses.append(taxed + tax)
                break
    due = total.value.value
    return bool(grosses) and abs(sum(grosses, Decimal(0)) - due) <= _CENT


def _contradicted(
    found: dict[str, list[Candidate]], chosen: dict[str, tuple[Candidate | None, float]], charges: Decimal
) -> bool:
    """True when the best printed subtotal and tax, left out of the choice, do not add up to the chosen total
    ("Total (excl. GST) 28.58 / GST 1.72 / Total 36.30": one of them was misread)."""
    total = chosen["total"][0]
    if total is None or (chosen["subtotal"][0] is not None and chosen["tax"][0] is not None):
        return False
    best = {  # the phrase the total was read from is not also its subtotal ("Net Total" after a rounding line)
        field: max(
            (c for c in found.get(field, []) if c.score >= 0.3 and not c.unsure and c.source is not total.source),
            key=lambda c: c.score,
            default=None,
        )
        for field in ("subtotal", "tax")
    }
    sub, tax = (chosen[f][0] or best[f] for f in ("subtotal", "tax"))
    if sub is None or tax is None:
        return False
    return not _adds_up(sub.value.value, tax.value.value, total.value.value, charges)


def _rivalled(found: dict[str, list[Candidate]], total: Candidate | None) -> bool:
    """True when another page prints a different amount under as strong a total label (a bill that restates
    earlier bills, a bundle of invoices): without sums that add up, nothing tells which one is owed."""
    if total is None:
        return False
    return any(
        c.value.value != total.value.value and c.label.page != total.label.page and c.score >= total.score - 0.05
        for c in found.get("total", [])
    )


def _outranked(found: dict[str, list[Candidate]], total: Candidate | None, rounded: bool) -> bool:
    """True when a larger amount follows the chosen total on its page under as strong a total label: sums
    that add up may belong to one part of the bill (a rate, a period), while the amount due comes last."""
    if total is None or rounded:
        return False
    return any(
        c.value.value > total.value.value
        and c.line > total.line
        and c.label.page == total.label.page
        and c.score >= total.score
        and c.label.text != total.label.text
        for c in found.get("total", [])
    )


def _only_date(lines: list[Line], day_first: bool) -> date | None:
    """The one date a document prints, or None when it prints none or several."""
    phrases = [p.text for line in lines for p in line.phrases if not is_identifier_context(p.text)]
    printed = {d.value for text in phrases for d in dates_in(text, day_first)}
    return printed.pop() if len(printed) == 1 else None


def _first_date(lines: list[Line], day_first: bool) -> tuple[Candidate | None, float]:
    """Without a date label, the first date printed in the top half of the first page, with low confidence."""
    for index, line in enumerate(lines):
        if line.page != 1 or line.y0 > line.page_height / 2:
            break
        for phrase in line.phrases:
            dates = dates_in(phrase.text, day_first)
            if dates and not is_identifier_context(phrase.text):
                return Candidate("issue_date", dates[0].value, 0.5, phrase, phrase, index), 0.5
    return None, 0.0


def _lone_date(lines: list[Line], day_first: bool) -> tuple[Candidate | None, float]:
    """The one date a document prints, wherever it stands (a receipt prints it at the foot, beside the time):
    with no other date to mistake it for, it is the date of issue."""
    only = _only_date(lines, day_first)
    if only is None:
        return None, 0.0
    for index, line in enumerate(lines):
        for phrase in line.phrases:
            printed = dates_in(phrase.text, day_first)
            if not is_identifier_context(phrase.text) and any(d.value == only for d in printed):
                return Candidate("issue_date", only, 0.65, phrase, phrase, index), 0.65
    return None, 0.0


def _check_and_derive(
    values: dict[str, Any], fields: dict[str, dict[str, Any]], charges: Decimal, unsure: set[str]
) -> dict[str, bool | None]:
    """`totals_add_up`, `tax_below_total`, `due_after_issue`; a missing amount is derived from the other two.

    No tax is derived where the total equals the subtotal: an invoice that prints no tax has none to report.
    Nothing is derived from an `unsure` amount (one of several after its label), and three amounts that agree
    vouch for each other only when at most one of them is unsure: unsure amounts from one row of columns agree
    whichever column they were all read from.
    """
    sub, tax, total = (values.get(f) for f in AMOUNT_FIELDS)
    printed = all(f in values for f in AMOUNT_FIELDS)
    if unsure and not printed:
        sub, tax, total = (None if f in unsure else values.get(f) for f in AMOUNT_FIELDS)
    if total is not None and sub is not None and tax is None and total - charges > sub >= 0:
        values["tax"] = tax = total - charges - sub
        fields["tax"] = evidence(0.6, "total - subtotal" + (" - charges" if charges else ""))
    elif total is None and sub is not None and tax is not None:
        values["total"] = total = sub + tax + charges
        # A total the page does not print is offered for review only: rounding, fees or a deposit may lie between.
        fields["total"] = evidence(0.45, "subtotal + tax" + (" + charges" if charges else ""))
    elif sub is None and total is not None and tax is not None and abs(tax) < abs(total):
        values["subtotal"] = sub = total - charges - tax
        fields["subtotal"] = evidence(0.45, "total - tax" + (" - charges" if charges else ""))
    checks: dict[str, bool | None] = {
        "totals_add_up": None if sub is None or tax is None or total is None else _adds_up(sub, tax, total, charges),
        "tax_below_total": None if tax is None or total is None else abs(tax) < abs(total) or total == 0,
        "due_after_issue": None
        if values.get("due_date") is None or values.get("issue_date") is None
        else values["due_date"] >= values["issue_date"],
    }
    if printed and checks["totals_add_up"] and checks["tax_below_total"] and len(unsure) <= 1:
        for field in AMOUNT_FIELDS:  # three printed amounts that agree vouch for each other
            fields[field]["confidence"] = max(fields[field]["confidence"], 0.9)
    if checks["totals_add_up"] is False or checks["tax_below_total"] is False:
        for field in AMOUNT_FIELDS:
            if field in fields:
                fields[field]["confidence"] = round(fields[field]["confidence"] * 0.7, 2)
    if checks["due_after_issue"] is False:
        fields["due_date"]["confidence"] = round(fields["due_date"]["confidence"] * 0.5, 2)
    return checks


def decide(reading: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The values a reader stands by, and the fields a person should look at (absent or unsure)."""
    values: dict[str, Any] = dict(reading["values"])
    review: list[str] = []
    for field in ("vendor", "invoice_number", "issue_date", "due_date", "currency", *AMOUNT_FIELDS):
        confidence = reading["fields"].get(field, {}).get("confidence", 0.0)
        if confidence < ABSTAIN_BELOW:
            if field in values:
                values[field] = None
            if field != "due_date" or field in reading["fields"]:
                review.append(field)  # an invoice without a due date is usual; one read too unsurely is not
        elif confidence < REVIEW_BELOW:
            review.append(field)
    return values, review
