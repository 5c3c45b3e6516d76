"""Where a label's value stands: to its right on its line (or a little lower, beside a label of two lines), or under
it in its column; not the first row of a table's column of amounts or dates, and only the words of a run-together
row of values that stand under the label's own head.
"""

from __future__ import annotations

import re

from quire.workflows.models.invoice.dates import dates_in
from quire.workflows.models.invoice.labels import AMOUNT_FIELDS, DATE_FIELDS, match_labels
from quire.workflows.models.invoice.layout import HeadPart, Line, Phrase, overlaps, piece
from quire.workflows.models.invoice.values import AMOUNT_TEXT, fold

# Column heads of a line-item table, which a grid of document fields ("Invoice No. | Date | Amount Due") lacks.
_ITEM_COLUMN = re.compile(
    r"(?:description|qty|quantity|unit|price|item|article|product|artikel|menge|bezeichnung|beschreibung|einzelpreis|"
    r"designation|quantite|prix|descripcion|cantidad|concepto|precio|descrizione|quantita|prezzo|omschrijving|aantal|"
    r"prijs|opis|ilosc|cena|descricao|quantidade|pos\b|position)"
)


def neighbours(lines: list[Line], index: int, phrase: Phrase, field: str) -> list[tuple[str, Phrase]]:
    """Phrases that may hold the value of a label: to its right on its line, then just below it."""
    line = lines[index]
    found: list[tuple[str, Phrase]] = []
    right = [p for p in line.phrases if p.x0 >= phrase.x1 - 1] if not isinstance(phrase, HeadPart) else []
    if not right and not isinstance(phrase, HeadPart) and index + 1 < len(lines) and lines[index + 1].page == line.page:
        # A value set a little lower, level with a label printed over two lines ("Totaal te crediteren /" over
        # "Total à créditer", "EUR -1.912,65" between them): the next line's, beside the label and starting above
        # its foot.
        after = lines[index + 1].phrases
        # Nothing of the next line under the label itself: that would be a row of its own ("Delivery date ...").
        right = (
            [p for p in after if p.x0 >= phrase.x1 - 1 and p.y0 < phrase.y1]
            if not any(overlaps(p, phrase) for p in after)
            else []
        )
    found += [("right", p) for p in right[:2]]
    labels = sum(1 for p in line.phrases if match_labels(p.text))
    if labels >= 3 and any(_ITEM_COLUMN.match(fold(p.text)) for p in line.phrases):
        return found  # a line-item table's header: the values below are column entries, not this label's value
    for at, below in enumerate(lines[index + 1 : index + 4], start=index + 1):
        if below.page != line.page or below.y0 - line.y1 > 3 * max(phrase.height, 8.0):
            break
        for candidate in below.phrases:
            if overlaps(candidate, phrase) and not match_labels(candidate.text):
                if field in AMOUNT_FIELDS and _column_goes_on(lines, at, candidate):
                    return found
                if field not in DATE_FIELDS or not _dates_go_on(lines, at, candidate):
                    found.append(("below", candidate if field in _NAMES else under_own_head(line, phrase, candidate)))
                return found
    return found


# The fields whose values are names, which may run on under the next head of a grid.
_NAMES = ("vendor", "buyer")


def under_own_head(heads: Line, head: Phrase, value: Phrase) -> Phrase:
    """The words of a value under a row of heads that belong to `head`, when the value runs on under the heads
    beside it (a PDF's text glues values printed close: "2025-03-11 2025-04-10 EUR" under "Data | Vencimento |
    Moeda") and each of those heads lines up with one of its words (their left edges, centres or right edges), as a
    grid's columns do. Else the value as it is: one that only runs wider than its head ("12 March 2025" under
    "Date", reaching under "Terms") keeps its words."""
    others = [p for p in heads.phrases if overlaps(p, value) and not overlaps(p, head)]
    if not others:
        return value
    columns = sorted([head, *others], key=lambda p: p.x0)
    words = list(re.finditer(r"\S+", value.text))
    boxes = [piece(value, word.start(), word.end(), Phrase) for word in words]
    near = 1.5 * (value.x1 - value.x0) / max(len(value.text), 1)  # a character and a half
    firsts: list[int] = []
    for column in columns:
        # The first column starts the value; each next one starts after the last one's first word.
        at = next((i for i, box in enumerate(boxes) if _lined_up(box, column, near)), None)
        if at is None or (firsts and at <= firsts[-1]) or (not firsts and at != 0):
            return value
        if firsts and re.fullmatch(r"\d{1,3}", words[at - 1].group(0)) and re.match(r"\d{3}(?!\d)", words[at].group(0)):
            return value  # "8 844,00": a number grouped by a space, not two columns' values
        firsts.append(at)
    # A column a word is centred or right-aligned in is that one word: a longer value is left-aligned.
    for number, (column, at) in enumerate(zip(columns, firsts, strict=True)):
        end = firsts[number + 1] if number + 1 < len(firsts) else len(words)
        if end - at > 1 and abs(boxes[at].x0 - column.x0) > near:
            return value
    # No cut inside a date ("12 March | 2025" where a head happens to line up with the year).
    cuts = [words[at].start() for at in firsts[1:]]
    for printed in dates_in(value.text, True):
        start = value.text.find(printed.text)
        if any(start < cut < start + len(printed.text) for cut in cuts):
            return value
    own = columns.index(head)
    end = firsts[own + 1] if own + 1 < len(firsts) else len(words)
    return piece(value, words[firsts[own]].start(), words[end - 1].end(), Phrase)


def _lined_up(word: Phrase, head: Phrase, near: float) -> bool:
    """Whether a word stands in a head's column: left-aligned, centred or right-aligned with it."""
    centres = abs((word.x0 + word.x1) / 2 - (head.x0 + head.x1) / 2)
    return min(abs(word.x0 - head.x0), centres, abs(word.x1 - head.x1)) <= near


def _next_in_column(lines: list[Line], index: int, value: Phrase, rows: int, reach: float) -> Phrase | None:
    """The first phrase under `value` in its column, within `rows` lines and `reach` of its heights."""
    for after in lines[index + 1 : index + 1 + rows]:
        if after.page != value.page or after.y0 - value.y1 > reach * max(value.height, 8.0):
            return None
        for phrase in after.phrases:
            if overlaps(phrase, value):
                return phrase
    return None


def _column_goes_on(lines: list[Line], index: int, value: Phrase) -> bool:
    """Whether an amount under a head has another, different amount right under it (or starting a phrase OCR ran on
    into the next column): the head's column of rows ("Total Tax Amount" over a tax table's rows), whose first row is
    no value of the head's own."""
    own = AMOUNT_TEXT.search(value.text)
    # Three lines: a row's description may wrap, and a skewed scan may put a row's rate on a line of its own.
    phrase = _next_in_column(lines, index, value, 3, 4) if own is not None else None
    if own is None or phrase is None:
        return False
    below = AMOUNT_TEXT.match(phrase.text.strip())
    if below is None or match_labels(phrase.text):
        # Words under the value (a label, a table's heads): a stack of labels and values, or another block.
        return False
    # Another amount: the next row. The same one is a one-row table's totals row repeating its row.
    return _digits(below.group(0)) != _digits(own.group(0))


# A phrase that starts with a date in figures ("2024-02-06", "06.02.2024", "2/6/24").
_DATE_FIRST = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4}(?!\d)")


def _dates_go_on(lines: list[Line], index: int, value: Phrase) -> bool:
    """Whether a date under a head starts a column of dates: a line-item table's "Date" column ("2024-02-06 | JW |
    Review draft lease" over "2024-02-07 | KO | ..."), whose first row's date is no date of the document's."""
    phrase = _next_in_column(lines, index, value, 2, 3) if _DATE_FIRST.match(value.text.strip()) else None
    return phrase is not None and _DATE_FIRST.match(phrase.text.strip()) is not None  # a folio's rows share dates


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)
