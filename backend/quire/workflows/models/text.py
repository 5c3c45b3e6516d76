"""Text basics shared by the local provider: words, sentences, stopwords, language."""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'\u201c(\[]?[A-Z\u00c0-\u00d6\u00d8-\u00de0-9])")

_STOPWORD_TEXT = {
    "en": """a an the and or but if of to in on at by for with from as is are was were be been being it
        its this that these those there here he she they we you i me my our your their his her them us
        not no so than then too very can will would should could may might must do does did done have has
        had having about into over under again further once all any both each few more most other some
        such only own same just also which who whom what when where why how up down out off""",
    "de": """der die das und oder aber wenn von zu in im am an auf mit für aus als ist sind war waren sein
        es ein eine einer eines einem einen nicht so dass auch bei nach vor wie wir sie er ich du ihr den
        dem des zum zur über unter durch noch nur schon sehr kann wird werden hat haben""",
    "fr": """le la les un une des et ou mais si de du au aux à en dans sur par pour avec est sont était
        être il elle ils elles nous vous je tu ce cette ces qui que quoi dont où ne pas plus ainsi aussi
        comme très peut a ont avoir leur leurs son sa ses""",
}
STOPWORDS = {lang: frozenset(text.split()) for lang, text in _STOPWORD_TEXT.items()}
ALL_STOPWORDS: frozenset[str] = frozenset().union(*STOPWORDS.values())


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(tokens: list[str]) -> list[str]:
    """Words that carry meaning: no stopwords, no short words, a plural `s` folded away (not the `s` of
    "previous", "status" or "analysis")."""
    out = []
    for token in tokens:
        if token in ALL_STOPWORDS or len(token) <= 2:
            continue
        plural = len(token) > 4 and token.endswith("s") and not token.endswith(("ss", "us", "is"))
        out.append(token[:-1] if plural else token)
    return out


def sentences(text: str) -> list[str]:
    """Sentences of running text; headings and list items count as sentences of their own."""
    found: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*\u2022]|\d+\.|#))", text):
        flat = re.sub(r"\s+", " ", block).strip().lstrip("#*-\u2022 ").strip()
        found += [s.strip() for s in _SENTENCE_END.split(flat) if len(words(s)) >= 4]
    return found


def detect_language(tokens: list[str]) -> str:
    """ISO 639-1 code of the language whose stopwords occur most; `und` when none do."""
    scores = {lang: sum(1 for t in tokens if t in stop) for lang, stop in STOPWORDS.items()}
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] > 0 else "und"
