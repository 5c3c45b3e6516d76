"""Where a page's labels stand: each phrase that starts with one, a label wrapped over two lines of a narrow box,
two taxes printed side by side in one phrase."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from quire.workflows.models.invoice.labels import AMOUNT_FIELDS, DATE_FIELDS, LabelMatch, match_labels, ocr_repaired
from quire.workflows.models.invoice.layout import HeadPart, Line, Phrase, overlaps, piece
from quire.workflows.models.invoice.values import AMOUNT_TEXT, CURRENCY_NOTE

# Taxes levied side by side on one sale, each under its own name: India's central, state and union-territory GST,
# Canada's federal and provincial taxes, the United States' state, county and city sales taxes. The first ones
# are never words of anything else, so where one follows another tax's amount in a phrase, a second tax starts.
SIDE_BY_SIDE = ("cgst", "sgst", "utgst", "igst", "pst", "qst", "hst", "tvq", "tvh")


# The end of a sentence in running text: four words or more, the last a word of four small letters or more and its
# full stop, then a capital ("Total incl. GST", "amount payable incl. VAT" end none).
# Found by its last word alone, then the words before it counted: one pass, however long the line.
_SENTENCE_STOP = re.compile(r"(?<=\s)(?!(?:incl|excl|inkl|exkl|zzgl|approx|resp|bzgl)\.)[a-z]{4,}\.\s+(?=[A-Z])")
_SENTENCE_WORDS = 3
# "includes GST of $3.33": the tax a sentence says the total includes, and its amount right after it.
_INCLUDES_TAX = re.compile(
    r"\bincludes\s+(?:\d{1,2}(?:[.,]\d+)?\s*%\s*)?(?:vat|gst|sst|tax)\s+(?:of\s+)?[^\s\d]{0,3}\s?\d[\d,.']*[.,]\d{2}\b",
    re.I,
)
_SECOND_TAX = re.compile(r"(?<=\d)\s+(?=(?:" + "|".join(SIDE_BY_SIDE) + r")\b)", re.I)


# The most words a phrase of column heads run together is split into heads from, the fields such heads may name,
# and how strongly each must name its field.
_HEAD_WORDS = 8
_HEAD_FIELDS = frozenset({"invoice_number", *DATE_FIELDS, "vendor", "buyer"})
_HEAD_WEIGHT = 0.9
# A later "label: value" pair in a phrase: its label's most words, and the fields read from such pairs.
_PAIR_LABEL_WORDS = 4
_PAIR_FIELDS = frozenset({"invoice_number", *DATE_FIELDS})
# The most separators (colons, number signs) a phrase of pairs has: a header line prints a handful.
_PAIRS_MOST = 16

Labelled = list[tuple[int, Phrase, tuple[LabelMatch, ...]]]


# A bilingual label's translation in another script, before it ("請求書番号 Invoice No. HC-240312-07") or between it
# and its value ("Subtotal excl. VAT المجموع غير شامل الضريبة 75,000.00"): Arabic, Hebrew, Chinese, Japanese and
# Korean letters, which no label of the lexicon is written in.
TRANSLATION = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_TRANSLATION_FIRST = re.compile(rf"^(?:(?:{TRANSLATION.pattern})[\s()\uff08\uff09]*)+(?=[^\W\d_])")


def labelled_phrases(lines: list[Line]) -> Labelled:
    """Every phrase that starts with a label, with its line index and its labels, the longest first; a label
    wrapped over two lines of a narrow box ("SUB" over "TOTAL") counts as one."""
    found: Labelled = []
    for index, line in enumerate(lines):
        pieces = [
            (reading, in_passing)
            for whole in line.phrases
            for parts, in_passing in (
                (_tax_parts(whole), False),
                (_sentences(whole), True),
                (_included_tax(whole), False),
                (_later_pairs(whole), False),
                (_after_translation(whole), False),
            )
            for part in parts
            for reading in (part, *_heads(part, lines[index + 1 : index + 3]))
        ]
        for phrase, in_passing in pieces:
            matches = match_labels(phrase.text)
            if in_passing:
                # Small print states dates in passing; its amounts are examples, fees and other invoices' sums.
                if dated := tuple(m for m in matches if m.field in DATE_FIELDS):
                    found.append((index, phrase, dated))
                continue
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
    return [piece(phrase, start, end, Phrase) for start, end in itertools.pairwise(bounds)]


def _sentences(phrase: Phrase) -> list[Phrase]:
    """The second and later sentences of a phrase of running text, each as a phrase of its own: small print that
    states a date in passing ("Payment terms: 14 days from date of invoice. Payment due by 28/05/2024.") names it
    with a label that starts its sentence, not the phrase."""
    cuts: list[int] = []
    for stop in _SENTENCE_STOP.finditer(phrase.text):
        start = cuts[-1] if cuts else 0
        if stop.start() >= start and len(phrase.text[start : stop.start()].split()) >= _SENTENCE_WORDS:
            cuts.append(stop.end())
    bounds = [*cuts, len(phrase.text)]
    return [piece(phrase, start, end, Phrase) for start, end in itertools.pairwise(bounds)]


def _included_tax(phrase: Phrase) -> list[Phrase]:
    """The words from "includes GST" to the amount after them, when a sentence says in passing which tax its total
    includes ("The total of your fare includes GST of $3.33"), as a phrase of its own."""
    found = _INCLUDES_TAX.search(phrase.text)
    return [piece(phrase, found.start(), found.end(), Phrase)] if found is not None and found.start() else []


def _later_pairs(phrase: Phrase) -> list[Phrase]:
    """The second and later "label: value" pairs of a phrase that prints several in a row ("Sposób płatności: przelew
    Termin płatności: 29.05.2024", "Kunde: 4711 Rechnungsdatum: 03.03.2024"), each a phrase of its own: a label of
    a date or a number that a value, not the phrase, comes before. The first pair is the phrase's own reading. A
    label that ends in a number sign after a value starts a pair too: a till receipt's row of codes ("ST# 0412 OP# 27
    TE# 03 TRANS# 08871")."""
    cuts: list[int] = []
    # A colon between digits is a time's ("10:15:30"), no label's.
    colons = [(m.start(), m.start()) for m in re.finditer(r"(?<!\d):|:(?!\d)", phrase.text)][1:]
    signs = [(m.start(), m.end()) for m in re.finditer(r"#", phrase.text) if m.start()]
    if len(colons) + len(signs) > _PAIRS_MOST:
        return []  # a long row of codes or data, no labels and their values
    for end, label_end in sorted(colons + signs):
        sign = label_end > end
        words = list(re.finditer(r"[^\s:]+", phrase.text[:end]))
        # The longest run of the last words before the colon that is a whole label, a value before it.
        for count in range(min(_PAIR_LABEL_WORDS, len(words) - 1), 0, -1):
            start = words[-count].start()
            label = _whole_label(phrase.text[start:label_end])
            # A weak label ("Date") after a word is part of a longer one no lexicon knows ("Delivery Date"); after a
            # value with a figure ("PO: 4500123 Date:") it starts a pair, as a number sign's label does only there.
            weak = not re.search(r"\d", words[-count - 1].group(0)) and (
                sign or (label is not None and label.weight < 1.0)
            )
            if label is not None and label.field in _PAIR_FIELDS and not weak and (not cuts or start > cuts[-1]):
                cuts.append(start)
                break
    bounds = [*cuts, len(phrase.text)]
    return [piece(phrase, start, end, Phrase) for start, end in itertools.pairwise(bounds)]


def _after_translation(phrase: Phrase) -> list[Phrase]:
    """A bilingual label whose translation comes first ("発行日 Issue Date 2024年3月12日"): the phrase from the
    label on."""
    first = _TRANSLATION_FIRST.match(phrase.text)
    return [piece(phrase, first.end(), len(phrase.text), Phrase)] if first is not None else []


def _heads(phrase: Phrase, below: list[Line]) -> list[HeadPart]:
    """The column heads in a header phrase that is two or more whole labels run together, as a PDF's text glues
    heads printed close ("CLIENTE Nº FACTURA" over "534 | 1707024", "Invoice Date Invoice No."): one part each,
    their boxes shared out by their length, each reading the value under it (the phrase itself is read as before).
    Heads of amounts ("MwSt-Betrag Rechnungsbetrag EUR" over "2.025,09 | 12.683,47") only over one row of as many
    amounts (`below`: the next two lines), each part then standing over its own: a run of amount heads over a
    table's rows ("Net Amount VAT Amount") or over fewer values cannot place them safely. None for any other
    phrase: a value, one label, words that are not all labels, a head named weakly."""
    words = list(re.finditer(r"\S+", phrase.text))
    if not 2 <= len(words) <= _HEAD_WORDS or re.search(r"\d", phrase.text) or _whole_label(phrase.text):
        return []
    parts: list[tuple[int, int]] = []
    named: set[str] = set()
    start = 0
    while start < len(words):
        if parts and start == len(words) - 1 and CURRENCY_NOTE.fullmatch(words[start].group(0)):
            parts[-1] = (parts[-1][0], words[start].end())  # the last head's currency ("Rechnungsbetrag EUR")
            break
        # The longest run of words from here that is a whole label, nothing after it.
        spans = ((words[start].start(), words[end - 1].end()) for end in range(len(words), start, -1))
        found = next(((span, head) for span in spans if (head := _whole_label(phrase.text[span[0] : span[1]]))), None)
        if found is None or found[1].field not in (*_HEAD_FIELDS, *AMOUNT_FIELDS) or found[1].weight < _HEAD_WEIGHT:
            return []  # words that are not all labels, or a head of something else, or one named weakly
        parts.append(found[0])
        named.add(found[1].field)
        start = next(i for i, word in enumerate(words) if word.end() == found[0][1]) + 1
    heads = [piece(phrase, start, end, HeadPart) for start, end in parts]
    if named <= _HEAD_FIELDS:
        return heads
    values = _amounts_under(phrase, below)
    if len(values) != len(heads):
        return []
    return [replace(head, x0=value.x0, x1=value.x1) for head, value in zip(heads, values, strict=True)]


def _amounts_under(phrase: Phrase, below: list[Line]) -> list[Phrase]:
    """The phrases of the next line under a phrase, left to right, when each is one amount and nothing else, and
    the line after holds no amount under the phrase (that would make them a table's first row)."""
    if not below or below[0].page != phrase.page or below[0].y0 - phrase.y1 > 2 * phrase.height:
        return []
    under = sorted((p for p in below[0].phrases if overlaps(p, phrase)), key=lambda p: p.x0)
    if not all(AMOUNT_TEXT.fullmatch(p.text) for p in under):
        return []
    after = below[1] if len(below) > 1 else None
    close = after is not None and after.page == phrase.page and after.y0 - below[0].y1 <= 2 * phrase.height
    if close and after is not None and any(overlaps(p, phrase) and AMOUNT_TEXT.search(p.text) for p in after.phrases):
        return []
    return under


def _whole_label(text: str) -> LabelMatch | None:
    """The label `text` is, with nothing after it; None when it is none, or a label with more words."""
    found = match_labels(text)
    return found[0] if found and not found[0].rest else None


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
            if _labels_a_value(lines[index], phrase) and _labels_a_value(below, other):
                return None  # "Fecha 12/03/2024" over "Vencimiento 11/04/2024": two labels, each with its value
            joined = f"{phrase.text} {other.text}"
            matches = match_labels(joined)
            if matches and not matches[0].rest and matches[0].field in (*AMOUNT_FIELDS, *DATE_FIELDS):
                box = Phrase(joined, phrase.page, min(phrase.x0, other.x0), phrase.y0, max(phrase.x1, other.x1),
                             other.y1, phrase.line, min(phrase.confidence, other.confidence))  # fmt: skip
                return box, matches
    return None


def _labels_a_value(line: Line, phrase: Phrase) -> bool:
    """The phrase is a whole label by itself and something stands to its right on its line."""
    return _whole_label(phrase.text.rstrip(":")) is not None and any(p.x0 > phrase.x1 for p in line.phrases)
