"""Lines and phrases of a page, built from its words' boxes, so values can be paired with labels by position.

A PDF's text layer (or OCR) gives words with boxes; text formats give lines only, and then each
line becomes a row of phrases split where the text has a wide gap (two spaces, a tab, a `|`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import TypeVar

from quire.documents.words import Word

_TEXT_GAP = re.compile(r"\s{2,}|\t|\s\|\s|\|")
# The business terms of the European e-invoice standard (EN 16931), which viewers of e-invoices print beside their
# labels ("BT-1 Rechnungsnummer", "Verkäufer (BG-4)"): a label's annotation, never a value, on a page that prints
# several (a lone "BT-482" may be an invoice's number).
_TERM_CODE = re.compile(r"(?<![\w/-])\(?(?:BT|BG)-\d{1,3}(?:/\d{1,3})*\)?[:.]?(?![\w/-])")
_TERM_CODES_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words that stand together on one line: a label, a value, or a label with its value."""

    text: str
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    line: int  # index of its line in reading order across the document
    confidence: float = 1.0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (round(self.x0, 1), round(self.y0, 1), round(self.x1, 1), round(self.y1, 1))


@dataclass(frozen=True, slots=True)
class HeadPart(Phrase):
    """One of several column heads a PDF's text ran together into one phrase: its value is the one printed
    under it, never one to the right (that is the next head's, or a value of the whole phrase)."""


@dataclass(frozen=True, slots=True)
class Line:
    phrases: tuple[Phrase, ...]
    page: int
    y0: float
    y1: float
    page_height: float

    @property
    def text(self) -> str:
        return "  ".join(p.text for p in self.phrases)


def overlaps(a: Phrase, b: Phrase) -> bool:
    return a.x0 < b.x1 + 2 and a.x1 > b.x0 - 2


P = TypeVar("P", bound=Phrase)


def piece(phrase: Phrase, start: int, end: int, kind: type[P]) -> P:
    """The characters `start:end` of a phrase as a phrase of their own, its box the share of the whole's
    width their length takes."""
    width = (phrase.x1 - phrase.x0) / max(len(phrase.text), 1)
    kept = {f.name: getattr(phrase, f.name) for f in fields(Phrase) if f.name not in ("text", "x0", "x1")}
    return kind(phrase.text[start:end].strip(), x0=phrase.x0 + start * width, x1=phrase.x0 + end * width, **kept)


def _rows(words: Sequence[Word]) -> list[list[Word]]:
    """Words of one page grouped into rows whose vertical centres are close, each sorted left to right."""
    rows: list[list[Word]] = []
    for word in sorted(words, key=lambda w: ((w.y0 + w.y1) / 2, w.x0)):
        centre = (word.y0 + word.y1) / 2
        height = max(word.y1 - word.y0, 1.0)
        if rows:
            last = rows[-1]
            last_centre = sum((w.y0 + w.y1) / 2 for w in last) / len(last)
            if abs(centre - last_centre) <= 0.45 * height:
                last.append(word)
                continue
        rows.append([word])
    return [sorted(row, key=lambda w: w.x0) for row in rows]


# A table's rule as OCR reads it: bars and nothing else.
_RULE = re.compile(r"[|\u00a6]+")


def _phrases(row: list[Word], line: int) -> list[Phrase]:
    """Split a row where the gap between two words is wider than its letters are high (one and a half times on a text
    layer, twice on OCR's words): far wider than a space. A bar OCR read from a table's rule parts the columns on its
    sides too ("Wartość netto | Stawka | Kwota VAT"), and is no word of either."""
    groups: list[list[Word]] = [[]]
    previous: Word | None = None
    for word in row:
        if word.confidence < 1.0 and _RULE.fullmatch(word.text):
            if groups[-1]:
                groups.append([])
            continue
        if previous is not None and groups[-1]:
            height = max(min(previous.y1 - previous.y0, word.y1 - word.y0), 1.0)
            # A text layer spaces words exactly, so a gap of one and a half letters' height parts two columns ("Art.
            # 73" and "Numero documento" heading a grid); OCR's boxes are looser, and parts only at twice the height.
            wide = 1.5 if min(previous.confidence, word.confidence) >= 1.0 else 2.0
            if word.x0 - previous.x1 > wide * height:
                groups.append([])
        groups[-1].append(word)
        previous = word
    groups = [group for group in groups if group] or [row[:1]]
    return [
        Phrase(
            text=" ".join(w.text for w in group),
            page=group[0].page,
            x0=min(w.x0 for w in group),
            y0=min(w.y0 for w in group),
            x1=max(w.x1 for w in group),
            y1=max(w.y1 for w in group),
            line=line,
            confidence=_confidence(group),
        )
        for group in groups
    ]


def _confidence(group: list[Word]) -> float:
    """How sure OCR is of a phrase: its least certain word, leaving out marks with no letter or digit
    (`=`, `:`, `|`), which OCR reads unsurely and which change no value."""
    telling = [w.confidence for w in group if any(ch.isalnum() for ch in w.text)]
    return min(telling or [w.confidence for w in group])


# A speck OCR read as a dot, a quote or a bar stuck to a word's first letter (".Bill No: 4587", "|TOTAL"). Only on
# OCR's words: a text layer's ".NET" is printed so.
_SPECK = re.compile(r"^[.'\u2018\u2019`|,_]+(?=[^\W\d_])")


def lines_from_words(words: Iterable[Word]) -> list[Line]:
    words = [replace(w, text=_SPECK.sub("", w.text)) if w.confidence < 1.0 else w for w in words]
    codes = {word.text for word in words if _TERM_CODE.fullmatch(word.text)}
    by_page: dict[int, list[Word]] = {}
    for word in words:
        if len(codes) < _TERM_CODES_SHOWN or word.text not in codes:
            by_page.setdefault(word.page, []).append(word)
    lines: list[Line] = []
    for page in sorted(by_page):
        page_words = by_page[page]
        bottom = max(w.y1 for w in page_words) or 1.0
        for row in _rows(page_words):
            phrases = _phrases(row, len(lines))
            lines.append(Line(tuple(phrases), page, min(p.y0 for p in phrases), max(p.y1 for p in phrases), bottom))
    return lines


def lines_from_text(text: str) -> list[Line]:
    """Rows of phrases from plain text: one text line is one row 12 points high, 5 points a character."""
    lines: list[Line] = []
    if len(set(_TERM_CODE.findall(text))) >= _TERM_CODES_SHOWN:
        text = _TERM_CODE.sub(" ", text)
    raw = [line for line in text.splitlines() if line.strip()]
    for number, raw_line in enumerate(raw):
        phrases: list[Phrase] = []
        position = 0
        for part in _TEXT_GAP.split(raw_line):
            start = raw_line.find(part, position) if part else position
            position = start + len(part)
            if not part.strip():
                continue
            y0 = number * 12.0
            offset = len(part) - len(part.lstrip())
            phrases.append(
                Phrase(
                    part.strip(),
                    1,
                    (start + offset) * 5.0,
                    y0,
                    (start + len(part.rstrip())) * 5.0,
                    y0 + 10.0,
                    len(lines),
                )
            )
        if phrases:
            lines.append(Line(tuple(phrases), 1, phrases[0].y0, phrases[0].y1, max(len(raw), 1) * 12.0))
    return lines
