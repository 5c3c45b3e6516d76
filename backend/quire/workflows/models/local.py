"""The `local` provider: deterministic, offline answers computed from the text itself.

Summaries are extractive: sentences are ranked by TextRank (PageRank over a graph whose edges
are shared content words), so the chosen sentences are the ones the rest of the document keeps
coming back to. Invoices are read by the layout-aware reader in `invoice`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

from quire.documents.extract import Document
from quire.workflows.models import Task
from quire.workflows.models.invoice import read_invoice
from quire.workflows.models.text import content_words, detect_language, sentences, words

MAX_SENTENCES = 400
SUMMARY_SENTENCES = 3
KEY_POINTS = 5


def textrank(bags: list[set[str]], damping: float = 0.85, iterations: int = 40) -> list[float]:
    """PageRank scores of sentences linked by word overlap (Mihalcea and Tarau's similarity)."""
    n = len(bags)
    if n == 0:
        return []
    weights = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            shared = len(bags[i] & bags[j])
            if shared and len(bags[i]) > 1 and len(bags[j]) > 1:
                weight = shared / (math.log(len(bags[i])) + math.log(len(bags[j])))
                weights[i][j] = weights[j][i] = weight
    out = [sum(row) for row in weights]
    scores = [1.0 / n] * n
    for _ in range(iterations):
        scores = [
            (1 - damping) / n + damping * sum(weights[j][i] / out[j] * scores[j] for j in range(n) if weights[j][i])
            for i in range(n)
        ]
    return scores


def _title(document: Document) -> str:
    """A Markdown heading, or a short first line standing on its own; else the file's name."""
    lines = [line.strip() for line in document.text.splitlines()]
    lines = [line for line in lines if not line.lower().startswith("quire-fake:")]
    for i, line in enumerate(lines):
        if not line:
            continue
        heading = line.lstrip("#").strip()
        standalone = i + 1 >= len(lines) or not lines[i + 1]
        if line.startswith("#") or (len(heading) <= 120 and (standalone or not heading.endswith("."))):
            return heading.rstrip(".")[:200]
        break
    return PurePath(document.filename).stem[:200] or document.filename


def summarize(document: Document) -> dict[str, Any]:
    """Title, the most central sentences, keywords and counts of a document."""
    tokens = words(document.text)
    candidates = [s for s in sentences(document.text) if not s.lower().startswith("quire-fake:")][:MAX_SENTENCES]
    scores = textrank([set(content_words(words(s))) for s in candidates])
    ranked = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    summary = " ".join(candidates[i] for i in sorted(ranked[:SUMMARY_SENTENCES]))
    keywords = [word for word, _ in Counter(content_words(tokens)).most_common(8)]
    return {
        "title": _title(document),
        "summary": summary or " ".join(document.text.split())[:500],
        "key_points": [candidates[i] for i in sorted(ranked[:KEY_POINTS])],
        "keywords": keywords,
        "language": detect_language(tokens),
        "word_count": len(tokens),
        "page_count": document.pages,
    }


class LocalProvider:
    """Answers each task with a deterministic algorithm; needs no network and no model files."""

    name = "local"
    redacted: dict[str, int] | None = None  # nothing leaves the machine
    model_name = "quire-local-2"
    tasks: dict[str, Callable[[Document], dict[str, Any]]] = {
        "document_summary": summarize,
        "invoice_summary": read_invoice,
    }

    def answer(self, task: Task, document: Document, schema: type[BaseModel]) -> dict[str, Any]:
        return self.tasks[task.name](document)
