"""Every labelled value of a page, scored: the candidates the reader chooses from.

A value belongs to the label in its own phrase, to the right of it on the same line, or just below it; a
totals row under headed columns takes each column's head (`columns`). A candidate's score says how strongly its
label names the field, where the value stands, and how surely both were read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from quire.workflows.models.invoice.columns import by_column, column_currency
from quire.workflows.models.invoice.dates import dates_in, place_and_date
from quire.workflows.models.invoice.labelled import TRANSLATION, Labelled
from quire.workflows.models.invoice.labels import (
    ADJUSTMENTS,
    AMOUNT_FIELDS,
    DATE_FIELDS,
    PAYABLE,
    PAYMENT,
    RECEIPT_LABEL,
    TICKET,
    WEAK_WEIGHT,
    LabelMatch,
    match_labels,
    ticket_number,
)
from quire.workflows.models.invoice.layout import Line, Phrase, overlaps
from quire.workflows.models.invoice.lexicon import NUMBER_WORDS
from quire.workflows.models.invoice.neighbours import neighbours
from quire.workflows.models.invoice.numbering import DOCUMENT_CODE, NUMBER_WORD, counted_codes, invoice_number, is_atcud
from quire.workflows.models.invoice.values import (
    AMOUNT_TEXT,
    CURRENCY,
    CURRENCY_CODES,
    amounts_in,
    currencies_in,
    fold,
)

ABSTAIN_BELOW = 0.5
# A field given with less confidence than this is listed in `needs_review`.
REVIEW_BELOW = 0.75
# The confidence of a value given for a person to check: just under the review line.
FOR_REVIEW = REVIEW_BELOW - 0.05


_RELATION = {"same": 1.0, "right": 0.9, "below": 0.75}


# A tax rate and the amount it is levied on: "19% auf 200,00", "7% of 275.00", "3 % s/ 37,42", "21% sobre 100",
# "5% (domestic fuel) on £184.28".
_RATE_BASE = re.compile(
    r"\d{1,2}(?:[.,]\d{1,2})?\s*%\s*(?:\([^()\d]{1,30}\)\s*)?(?:auf|von|on|of|over|sur|s/|su|sobre|op|over|de|od|na|z)\s+"
    r"(?:[A-Z]{3}\s?|[€$£]\s?)?-?\d[\d.,'\u00a0 ]*\d(?:\s?(?:[A-Z]{3}|[€$£]))?(?![\d.,]*\s*%)",
    re.I,
)


# A tax rate as printed in a tax table's row ("6%", "7,0 %"); OCR may leave only the sign ("SR@O%").
RATE = re.compile(r"(?<![\d.,])(\d{1,2}(?:[.,]\d{1,3})?)\s*%")


# The fields whose labels, read as printed, vouch for their OCR, and how sure OCR must be of such a label (but see
# `_LABEL_SPELT_OUT`): a payment or adjustment word misread into another ("CHANGE" as "CHARGE") keeps OCR's doubt.
_LABEL_READ_FIELDS = frozenset({"invoice_number", *DATE_FIELDS, *AMOUNT_FIELDS})


_LABEL_READ_AT_LEAST = 0.6

# A number's or date's label of this many letters or more, read as printed, vouches for its value however unsure OCR
# says it was of the label ("Invoice No:" read perfectly at 0.01 beside a rule), for review: one letter misread can
# still make one label of another ("Invoice To:" as "Invoice No:"). A shorter one read unsurely ("Date") vouches
# for nothing.
_LABEL_SPELT_OUT = 7


# The word after a payable total's label that says by when it is owed, the date right after it ("Amount due by",
# "Montant à payer avant le", "Zu zahlen bis"); not "au", "voor" or "until", which also start a period ("au 30/06",
# "voor de periode 01-04 t/m 30-06").
_DUE_ON = re.compile(
    r"(?:on|by|before|bis(?:\s+(?:zum|am))?|le|avant\s+le|entro\s+il|antes\s+de(?:l)?|do|at[eé])\s+", re.I
)


# What a tax or a total is of, in words: a rate on what it taxes ("@ 13% on fees and disbursements"), or what a
# total adds up, its tax last ("Fees, disbursements and HST", "Goods, services & VAT").
_SAYS_WHAT_OF = re.compile(
    # "@ 13% on fees", "/ VAT 8.1% auf CHF 8'782.28", "- United Kingdom (20% on £108.68)": a rate and what it is
    # of, in words or as an amount.
    r"(?:^|[\s(])(?:@|at|zu|à|a|al)?\s*\d{1,2}(?:[.,]\d{1,3})?\s*%\s+(?:on|of|auf|von|sur|su|sobre|op|over|van|na|od)\s+"
    r"(?:[^\d]*|(?:[A-Z]{3}|[^\w\s])?\s*\d[\d'\u2019.,\u00a0 ]*)\)?$|"
    r"(?:\band|&|\bplus|\bund|\bet|\by|\be|\ben|\bog|\boch|\bi)\s+(?:the\s+)?"
    r"(?:vat|gst|hst|pst|qst|tax(?:es)?|sales\s+tax|tva|mwst|ust|iva|btw|moms|mva|alv|dph|ptu)\.?\s*:?$",
    re.I,
)
# Whether an amount includes a tax, after its label ("Subtotaal excl. BTW", "Total (incl. 19% MwSt.)"): no words of
# a sentence.
_QUALIFIED = re.compile(
    r"\(?\b(?:excl|incl|inc|inkl|exkl|including|excluding|inclusief|exclusief|hors|ohne|mit|zzgl|sans|avec|sin|con|senza|met|"
    r"zonder|bez)\b\.?\s*"
    r"(?:\d{1,2}(?:[.,]\d+)?\s*%\s*)?(?:vat|btw|mwst|ust|tva|iva|gst|hst|tax|taxes|moms|mva|alv|dph|ptu)\b\.?\)?",
    re.I,
)
# Where a tax label says its tax is ("GST included in total $4.36", "TVA incluse dans le prix"): no words of a sentence.
_INCLUDED_IN = re.compile(
    r"\b(?:included|incl\.?)\s+in\s+(?:the\s+)?(?:total|price|prices|amount)\b|"
    r"\binclus[e]?s?\s+dans\s+le\s+(?:total|prix)\b|\bincluid[oa]s?\s+en\s+el\s+(?:total|precio|importe)\b|"
    r"\binclus[oa]\s+nel\s+(?:totale|prezzo)\b|\bim\s+(?:gesamt)?(?:betrag|preis)\s+enthalten\b|"
    r"\binbegrepen\s+in\s+(?:het\s+)?(?:totaal|bedrag)\b",
    re.I,
)
# The amount a rate is levied on, after its word: "on €1,230.49", "sur 100,00", "auf 500,00 €", "su € 5.750,00".
_BASE_OF = re.compile(r"\s*(?:on|of|sur|auf|su|sobre|op)\s+\S{0,4}\d", re.I)
# A law's article a label cites ("Spese escluse art. 15 DPR 633/72", "§ 19 UStG"): no words of a sentence.
_CITATION = re.compile(r"(?:\b(?i:art)[a-z]*\.?|§+)\s*\d+[\w/.-]*(?:\s+[A-Z][A-Za-z]{1,5}\.?(?:\s*\d[\d/.-]*)?)?")
# An amount grouped by a plain space with a decimal point ("2 112.50"), no currency sign or code before it
# ("USD 1 234.56" is one amount: no count stands between a currency and its amount). The code is a word of its
# own: "IRON 2 112.50" ends in RON and is still a count and an amount.
_SPACE_GROUPED = re.compile(
    r"(?<![\d.,$€£])(?<![$€£]\s)(?<!\b(?:" + "|".join(sorted(CURRENCY_CODES)) + r")\s)\b\d{1,3} \d{3}\.\d{2}(?!\d)"
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
    # sums from other lines vouch for it (`check_and_derive`).
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


def phrase_evidence(confidence: float, phrase: Phrase, has_layout: bool) -> dict[str, Any]:
    """The evidence of a value read from one phrase, where it stands on the page when the page has a layout."""
    return evidence(confidence, phrase.text, *((phrase.page, list(phrase.bbox)) if has_layout else (None, None)))


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
        return invoice_number(text, numbered)
    return None


def read_candidates(
    lines: list[Line], labelled: Labelled, mark: str, day_first: bool, currency: str | None = None
) -> dict[str, list[Candidate]]:
    """A candidate per labelled phrase: from its longest label, or the next one when that reads no value
    ("Due payable: 571.04 €" names no date, so it is read as a total). `currency` is the one the page is
    written in, when it shows one."""
    found: dict[str, list[Candidate]] = {}
    for index, phrase, matches in labelled:
        for match in matches:
            if match.field not in ("vendor", "buyer") and _read_label(
                lines, index, phrase, match, mark, day_first, currency, found
            ):
                break
    # A ticket's number ("Ticket No. 48213" on a help desk's bill) only where no other label names a number.
    numbered = [c for c in found.get("invoice_number", []) if not TICKET.search(fold(c.label.text))]
    if any(c.score >= ABSTAIN_BELOW for c in numbered):
        found["invoice_number"] = numbered
    found["invoice_number"] = _counted_numbers(lines, found.get("invoice_number", []))
    if not any(c.score >= ABSTAIN_BELOW for c in found.get("issue_date", [])):
        found.setdefault("issue_date", []).extend(_letter_dates(lines, day_first))
    return found


def _letter_dates(lines: list[Line], day_first: bool) -> list[Candidate]:
    """The dates of a letter's place-and-date lines in the top part of its first page, that no label names."""
    found = []
    for index, line in enumerate(lines):
        if line.page != 1 or line.y0 > _LETTER_HEAD * line.page_height:
            continue
        for phrase in line.phrases:
            if (dated := place_and_date(phrase.text, day_first)) is not None and not match_labels(phrase.text):
                score = _PLACE_DATE_SCORE * phrase.confidence
                found.append(Candidate("issue_date", dated.value, score, phrase, phrase, index))
    return found


def _counted_numbers(lines: list[Line], labelled: list[Candidate]) -> list[Candidate]:
    """The numbers labels name, less the ATCUD read as one, and the document codes the page's ATCUD counts
    (`counted_codes`): to confirm a label's number, or where no label names one surely. A label naming another number
    surely outweighs the count; one naming a document code of another count contradicts it, and both are left for a
    person to choose (a credit note's own number beside the invoice it corrects, whose ATCUD it may quote)."""
    named = [c for c in labelled if not is_atcud(c.value, c.source.text)]
    counted = list(counted_codes(lines))
    if not counted:
        return named
    codes = {code for code, _, _ in counted}
    contradicted = [c for c in named if DOCUMENT_CODE.fullmatch(c.value) and c.value not in codes]
    conflict = any(c.score >= ABSTAIN_BELOW for c in contradicted)
    if conflict:
        named = [replace(c, score=min(c.score, FOR_REVIEW)) if c in contradicted else c for c in named]
    values = {c.value for c in named}
    sure = not conflict and any(c.score >= REVIEW_BELOW for c in named)
    cap = FOR_REVIEW if conflict else 1.0
    return named + [
        Candidate("invoice_number", code, min(_COUNTED_CODE * read, cap), phrase, phrase, phrase.line)
        for code, phrase, read in counted
        if not sure or code in values
    ]


# The weight of a document code an ATCUD counts: the count vouches for it as a label beside it would, where OCR lost
# the label or the page prints none.
_COUNTED_CODE = 0.95

# A letter's place and date ("Tours, le 3 avril 2025") in the top part of its first page dates the invoice where no
# label does, for review (a word before a comma may be no town: "Intervention, le 27 mars").
_LETTER_HEAD = 0.4
_PLACE_DATE_SCORE = 0.55


def _amounts_after(
    lines: list[Line], index: int, phrase: Phrase, rest: str, mark: str, own: str | None
) -> set[Decimal]:
    """The different amounts printed one after another after a label, in its phrase and the phrases after it on
    its line ("Total amount | 100.00 | 19.00 | 119.00", "Total | $ | 100.00 | $ | 19.00"), up to the first
    words ("davon MwSt", "Amount paid"); a currency, a rate or a count between them is stepped over. An amount
    in another currency printed beside it is the same sum restated ("100.00 EUR | 117.65 USD"), not a rival; so
    is one in a column headed by another currency, after the amount of a column headed by the page's `own`
    ("2,723.00 | 10,000.22" under "USD | AED equivalent" on a bill in dollars)."""
    found: set[Decimal] = set()
    currency: str | None = None
    pending: str | None = None  # a currency printed in a phrase of its own, for the amount after it
    after = [(rest, None), *((p.text, p) for p in lines[index].phrases if p.x0 >= phrase.x1 - 1)]
    for text, source in after:
        words = re.sub(CURRENCY.pattern, "", RATE.sub("", TRANSLATION.sub("", text)), flags=re.I)
        if re.search(r"[^\W\d_]", words):
            break
        amounts = amounts_in(text, mark)
        if not amounts and (codes := currencies_in(text)):
            pending = codes[0]
        for amount in amounts:
            head = column_currency(lines, index, source) if source is not None and own is not None else None
            if currency is None and amount.currency is None and pending is None and head != own:
                head = None  # the first column is in another currency than the page's: which is owed is unclear
            printed = amount.currency or pending or head
            currency = currency or printed
            if printed in (None, currency):
                found.add(amount.value)
        pending = pending if not amounts else None
    return found


# A number grouped in thousands, alone: "1.452", "12,500".
_THOUSANDS = re.compile(r"\d{1,3}(?:[.,]\d{3})+\s*$")
# Row labels that sum a table's columns, read only through the columns' heads.
_COLUMN_SUMS = frozenset({"totals", "totaux"})


def _read_label(
    lines: list[Line],
    index: int,
    phrase: Phrase,
    match: LabelMatch,
    mark: str,
    day_first: bool,
    currency: str | None,
    found: dict[str, list[Candidate]],
) -> bool:
    """Add the value of one label to `found`; False when no value of its kind stands beside or below it."""
    if match.field == "tax" and any(
        p.x1 <= phrase.x0 and (dated := dates_in(p.text, day_first)) and dated[0].text == p.text.strip()
        for p in lines[index].phrases
    ):
        return False  # "11.03.2024 | City Tax Zürich | 1 | 2.50": a dated row of a folio or a statement, not the tax
    # A label inside a sentence ("Rechnung gemäß Bestellung Nr. ...", "Total of all open invoices") has no value
    # beside it, and is no row's label.
    sentence = (
        len(
            re.findall(
                r"[^\W\d_]{3,}",
                _QUALIFIED.sub("", _CITATION.sub("", _INCLUDED_IN.sub("", TRANSLATION.sub("", match.rest)))),
            )
        )
        >= 2
    )
    # "Total facture", "VAT 20%": a row's label, its amounts in the columns after it.
    row_label = not re.search(r"\d", RATE.sub("", match.rest)) and not sentence
    if match.field in AMOUNT_FIELDS and row_label and (columns := by_column(lines, index, phrase, mark)):
        # A totals row under headed columns: each column's head, not the row's label, says what its amount is. A
        # tax row ("VAT 19% | 850,00 | 161,50" under "Net | VAT") gives its tax only: its net is one rate's part.
        taken = [(head, source, amount) for head, source, amount in columns
                 if match.field != "tax" or head.field == "tax"]  # fmt: skip
        for head, source, amount in taken:
            # As sure as the weaker of the two labels: a weak row label ("Total") under a strong head stays weak.
            score = 0.9 * min(head.weight, match.weight) * min(phrase.confidence, source.confidence)
            found.setdefault(head.field, []).append(Candidate(head.field, amount, score, phrase, source, index))
        return bool(taken)
    if match.label in _COLUMN_SUMS:
        return False  # "Totals" sums a table's columns (hours, weights, amounts): only their heads say what
    sources: list[tuple[str, str, Phrase]] = []
    if match.rest:
        sources.append(("same", match.rest, phrase))
    if match.field == "invoice_number" and match.rest:
        # "Rechnung Nr. 471102 vom 05.03.2018": the date beside a number is the date of issue.
        dates = dates_in(match.rest, day_first)
        number = invoice_number(match.rest, bool(NUMBER_WORD.search(match.label)))
        if dates and not (number and dates[0].text in number):  # "Faktura nr 12/05/2024" names no date
            # A receipt's number label names the date of the receipt an invoice cites as often: weakly.
            weight = min(match.weight, WEAK_WEIGHT) if RECEIPT_LABEL.match(match.label) else match.weight
            found.setdefault("issue_date", []).append(
                Candidate("issue_date", dates[0].value, 0.8 * weight, phrase, phrase, index)
            )
    due = _DUE_ON.match(match.rest) if match.field == "total" and PAYABLE.search(match.label) else None
    after = match.rest[due.end() :] if due is not None else ""
    if (dates := dates_in(after, day_first)) and fold(after).startswith(fold(dates[0].text)):
        # "Total amount due on August 3, 2014 $4.11": the date the total is owed by is the due date.
        found.setdefault("due_date", []).append(
            Candidate("due_date", dates[0].value, 0.8 * match.weight, phrase, phrase, index)
        )
    if not sentence:
        sources += [(relation, p.text, p) for relation, p in neighbours(lines, index, phrase, match.field)]
    elif match.field in AMOUNT_FIELDS and _SAYS_WHAT_OF.search(match.rest):
        # Words that say what the amount is of, its amount at the end of the row: "HST @ 13% on fees and taxable
        # disbursements | 847.37", "TOTAL FEES, DISBURSEMENTS AND HST | $7,454.62". No value under them; of two
        # amounts after them ("on fees | 5,000.00 | 1,000.00"), the first is what the rate is of.
        right = [(relation, p.text, p) for relation, p in neighbours(lines, index, phrase, match.field)
                 if relation == "right" and AMOUNT_TEXT.search(p.text)]  # fmt: skip
        sources += right[-1:]
    # "Total amount | 100.00 | 19.00 | 119.00" with no heads that say which is which: the label's own amount is one
    # of them, and nothing tells which (the first is the net as often as the total). Offered for review only.
    unsure = match.field in AMOUNT_FIELDS and len(_amounts_after(lines, index, phrase, match.rest, mark, currency)) >= 2
    bare = re.sub(r"[^a-z\u03b1-\u03c9]", "", match.label)
    if match.field == "invoice_number" and bare in (*NUMBER_WORDS, "ticket"):
        # "Numéro SIRET 123 456 789", "Numéro | client | C1234": a bare number word (or a till receipt's bare
        # "TICKET") names what follows it, so only a number right after it is its value (after its series code:
        # "N.º | FT 2025A/412"), and not a count in thousands ("Colegiado n° 1.452": a member's number).
        sources = [
            source for source in sources[:1]
            if re.match(r"(?:[^\W\d_]{1,4}\s+)?\S*\d", source[1]) and not _THOUSANDS.match(source[1])
            and (bare != "ticket" or ticket_number(source[1]))
        ]  # fmt: skip
    if match.field in ("tax", "withholding") and RATE.search(phrase.text) and amounts_in(match.rest, mark):
        # "PST (7%) - materials $584.00 | $40.88", "Ritenuta d'acconto 20% su € 5.750,00 | -1.150,00": a rate, the
        # amount it is of, then the tax in a phrase of its own.
        right = [source for source in sources if source[0] == "right" and AMOUNT_TEXT.fullmatch(source[1].strip())]
        sources = right[:1] or sources
    elif match.field in ("tax", "withholding") and RATE.search(phrase.text):
        # "VAT @ 9% | on €1,230.49 | €110.74": the amount the rate is of, in a phrase of its own, is no tax.
        sources = [source for source in sources if not (source[0] == "right" and _BASE_OF.match(source[1]))]
    for relation, text, source in sources:
        value = _parse(match.field, text, mark, day_first, bool(NUMBER_WORD.search(match.label)))
        if value is None:
            continue
        weight = _RELATION[relation]
        if relation == "below" and match.field not in AMOUNT_FIELDS:
            weight = 0.85  # a date or number printed under its label is a key-value grid, as usual as beside it
        # A field's label read as printed, fairly surely and alone in its phrase, vouches for its letters: the
        # lexicon matched it. Only the value's own reading counts then. A label OCR garbled ("TATAL", "TOTAL
        # PAYABLE. AHCLAT") or read unsurely, a payment word, and a value in the label's phrase keep the lower one;
        # a number's or date's label spelt out at length vouches however unsure OCR was of it, for review only.
        alone = (
            relation != "same"
            and match.field in _LABEL_READ_FIELDS
            and not match.rest
            and bool(match_labels(phrase.text))
        )
        sure = phrase.confidence >= _LABEL_READ_AT_LEAST
        vouches = alone and (sure or _spelt_out(match))
        read = source.confidence if vouches else min(phrase.confidence, source.confidence)
        strength = match.weight
        if (
            relation == "below"
            and match.field == "issue_date"
            and _bare_date_beside_number(lines, index, match, phrase, source)
        ):
            strength = 1.0  # a bare "Datum" in a grid's heads beside "Rechnungs-Nr.": the invoice's date
        score = strength * weight * read
        if vouches and not sure:
            score = min(score, FOR_REVIEW)
        # "TOTAL 2 112.50": a count and its amount, or 2,112.50 grouped by a space; nothing tells which.
        grouped = match.field in AMOUNT_FIELDS and _SPACE_GROUPED.search(text) is not None
        doubt = (unsure and relation in ("same", "right")) or grouped
        score = min(score, ABSTAIN_BELOW - 0.05) if doubt else score
        found.setdefault(match.field, []).append(Candidate(match.field, value, score, phrase, source, index, doubt))
        return True
    return False


def _spelt_out(match: LabelMatch) -> bool:
    """Whether a number's or date's label is long enough that OCR's doubt of it matters less than its spelling."""
    return match.field not in AMOUNT_FIELDS and sum(ch.isalpha() for ch in match.label) >= _LABEL_SPELT_OUT


def _bare_date_beside_number(lines: list[Line], index: int, match: LabelMatch, head: Phrase, value: Phrase) -> bool:
    """Whether a bare date head ("Datum", "Dated"; not "Order date") stands in a row of heads that names the
    document's number strongly ("Rechnungs-Nr. | Datum") over a row of no amount: a list of other documents
    ("Rechnungs-Nr. | Datum | Betrag" over "RE-4711 | 01.02.2025 | 119,00", a credit note's reference to the invoice
    it corrects) keeps its dates weak."""
    if match.weight != WEAK_WEIGHT or match.rest:  # an order's date weighs less still
        return False
    heads = [
        found[0] for other in lines[index].phrases if not overlaps(other, head) and (found := match_labels(other.text))
    ]
    if not any(h.field == "invoice_number" and h.weight >= 1.0 and not h.rest for h in heads):
        return False
    row = next(
        (line for line in lines[index + 1 : index + 4] if line.page == value.page and line.y0 <= value.y0 <= line.y1),
        None,
    )
    return row is not None and not any(AMOUNT_TEXT.fullmatch(p.text.strip()) for p in row.phrases)


def best(candidates: list[Candidate]) -> tuple[Candidate | None, float]:
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
