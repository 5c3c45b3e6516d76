"""A table's totals row read by its column heads: "Total | 24.99 | 5.00 | 29.99" under "Montant HT | TVA |
Montant TTC" gives each amount the field its head names; and the currency a column's head names ("USD | AED
equivalent")."""

from __future__ import annotations

import re
from typing import Any

from quire.workflows.models.invoice.labels import AMOUNT_FIELDS, LabelMatch, match_labels
from quire.workflows.models.invoice.layout import Line, Phrase, overlaps, piece
from quire.workflows.models.invoice.values import (
    CURRENCY,
    CURRENCY_CODES,
    CURRENCY_NOTE,
    amounts_in,
    currencies_in,
    fold,
)

# How far above a table's totals row its column heads are looked for, how many lines a head may stack, and how
# many lines' height apart the heads of one row may start or end (they are one header row).
_HEAD_LINES = 15


_HEAD_WORDS = 3


_HEAD_ROW_SPREAD = 2


# A group head over several columns that leaves each column's own head standing: it says they are amounts (or
# names a currency).
_AMOUNT_GROUP = re.compile(
    r"(?:amounts?|totals?|betr(?:ae|a)ge?|summen|montants?|totaux|importes?|importi|bedragen|kwoty|valores|"
    r"prices?|preise|prix|precios?|prezzi|prijzen|ceny|pre[cç]os)\b"
)


def column_head(
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
        over = [p for p in above.phrases if overlaps(p, value)]
        text = len(over) == 1 and not re.search(r"\d", over[0].text)
        group = text and sum(1 for other in row if overlaps(over[0], other)) > 1
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
    found = _amount_head(" ".join(p.text for p in stacked))
    if found is None and len(stacked) == 1:
        # Heads a PDF's text ran together ("Net £ VAT %" over a net and a rate column): the words over the value.
        heads = stacked[0].text
        words = list(re.finditer(r"\S+", heads))
        over_value = [w for w in words if overlaps(piece(stacked[0], w.start(), w.end(), Phrase), value)]
        if over_value and len(over_value) < len(words):
            # Only where the words beyond start a label of their own: "Gross | weight" is one head, no amount's.
            beyond = heads[over_value[-1].end() :].strip() or heads[: over_value[0].start()].strip()
            if match_labels(beyond):
                found = _amount_head(heads[over_value[0].start() : over_value[-1].end()])
    return None if found is None else (found, stacked[0], stacked[-1])


def _amount_head(text: str) -> LabelMatch | None:
    """The amount label a column's head is, whose words after it may name a currency ("Brutto EUR"), nothing else."""
    matches = match_labels(text)
    noted = matches and (not matches[0].rest or CURRENCY_NOTE.fullmatch(matches[0].rest))
    return matches[0] if matches and noted and matches[0].field in AMOUNT_FIELDS else None


def by_column(lines: list[Line], index: int, phrase: Phrase, mark: str) -> list[tuple[LabelMatch, Phrase, Any]]:
    """The amounts of a table's totals row with the field each column's head names ("Total | 24.99 | 5.00 |
    29.99" under "Montant HT | TVA | Montant TTC"); empty unless two columns are headed by different fields in
    one header row."""
    row = [p for p in lines[index].phrases if p.x0 >= phrase.x1 - 1 and "%" not in p.text]
    headed: list[tuple[LabelMatch, Phrase, Any]] = []
    tops: list[Phrase] = []
    bottoms: list[Phrase] = []
    for value in row:
        amounts = amounts_in(value.text, mark)
        found = column_head(lines, index, value, row) if len(amounts) == 1 else None
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


# How far above a row its column's head is looked for.
_COLUMN_HEAD_LINES = 8
# The words a column's head may print beside its currency (folded): an equivalent's, or an amount's ("Montant TTC").
_MONEY_WORD = (
    r"(?:equivalent[e]?|equiv|gegenwert|tegenwaarde|rownowartosc|contre|valeur|amounts?|betrag|montant|importe|"
    r"importo|bedrag|kwota|valor|totals?|ttc|ht|brutto|netto|gross|net|in)"
)
_CURRENCY_HEAD = re.compile(rf"(?:{_MONEY_WORD}(?: {_MONEY_WORD})*)?")


def column_currency(lines: list[Line], index: int, value: Phrase) -> str | None:
    """The one currency the head of a value's column names ("USD", "AED equivalent", "Amount (EUR)"): the
    nearest text above the value that overlaps it, past the column's other values; None when it names no
    currency, or several."""
    for above in reversed(lines[max(0, index - _COLUMN_HEAD_LINES) : index]):
        if above.page != lines[index].page:
            return None
        over = [p for p in above.phrases if overlaps(p, value)]
        if len(over) != 1:
            return None
        if not re.search(r"\d", over[0].text):
            # A code that is also a word ("AED") is a currency at the head of a column of amounts ("Amount in AED").
            words = set(over[0].text.split())
            codes = set(currencies_in(over[0].text)) or words & CURRENCY_CODES
            others = " ".join(re.findall(r"[^\W\d_]+", fold(CURRENCY.sub(" ", over[0].text))))
            # The currency alone, or with a word that says the column is money ("CAD hours" are no dollars).
            return codes.pop() if len(codes) == 1 and _CURRENCY_HEAD.fullmatch(others) else None
    return None
