"""The `local` provider: deterministic, offline answers computed from the text itself."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from quire.documents.extract import Document
from quire.workflows.models import Task

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-ZÀ-ÖØ-Þ0-9])")

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
ALL_STOPWORDS = frozenset().union(*STOPWORDS.values())


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def sentences(text: str) -> list[str]:
    flat = re.sub(r"\s+", " ", text).strip()
    return [s.strip() for s in _SENTENCE_END.split(flat) if len(words(s)) >= 3]


def detect_language(tokens: list[str]) -> str:
    scores = {lang: sum(1 for t in tokens if t in stop) for lang, stop in STOPWORDS.items()}
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] > 0 else "und"


def _content_words(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t not in ALL_STOPWORDS and len(t) > 2]


def _title(document: Document) -> str:
    for line in document.text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line and not line.lower().startswith("quire-fake:"):
            return line[:200]
    return document.filename


def summarize(document: Document) -> dict[str, Any]:
    """An extractive summary: the sentences whose words the document uses most, in reading order."""
    tokens = words(document.text)
    content = _content_words(tokens)
    frequency = Counter(content)
    candidates = sentences(document.text)

    def score(sentence: str) -> float:
        terms = _content_words(words(sentence))
        return sum(frequency[t] for t in terms) / (len(terms) + 4) if terms else 0.0

    ranked = sorted(range(len(candidates)), key=lambda i: (-score(candidates[i]), i))
    chosen = sorted(ranked[:3])
    key_points = [candidates[i] for i in sorted(ranked[:5])]
    summary = " ".join(candidates[i] for i in chosen) or document.text[:500]
    return {
        "title": _title(document),
        "summary": summary,
        "key_points": key_points,
        "keywords": [word for word, _ in frequency.most_common(8)],
        "language": detect_language(tokens),
        "word_count": len(tokens),
        "page_count": document.pages,
    }


class LocalProvider:
    """Answers each task with a deterministic algorithm; needs no network and no model files."""

    name = "local"
    model_name = "quire-local-extractive-1"
    tasks: dict[str, Callable[[Document], dict[str, Any]]] = {"document_summary": summarize}

    def answer(self, task: Task, document: Document, schema: type[BaseModel]) -> dict[str, Any]:
        return self.tasks[task.name](document)
