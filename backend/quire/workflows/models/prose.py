"""Which parts of a document are prose worth summarising.

A summary picks sentences, so whatever reaches the picker must be running text. Extracted text
also carries markup, code, tables, running headers and footers, reference lists and boilerplate
repeated on every page; each is recognised here by how it looks, line by line, and left out.
What remains is cleaned of inline decoration (Markdown links and emphasis, citation keys) and
split into sentences that read on their own.
"""

from __future__ import annotations

import re
from collections import Counter

from quire.workflows.models.text import ALL_STOPWORDS, words

# A heading after which a document lists its sources rather than says anything.
_REFERENCES = re.compile(
    r"^\s*(?:#+\s*)?(?:\d+(?:\.\d+)*\.?\s+)?(?:references|bibliography|works cited|literature cited|"
    r"literatur|sources|further reading|acknowledge?ments?|author contributions)\s*:?\s*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_MARKUP = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>|<!--|-->|&[a-z]+;|^\s*<\?")
_CODE_START = re.compile(
    r"^\s*(?:def|class|import|from\s+\S+\s+import|return|#include|#define|var|let|const|function|public|"
    r"private|static|void|int|elif|else:|try:|except|\$|>>>|\.\.\.|%|@\w+|[\w.]+\s*=\s*\S|[\w.]+\(.*\)\s*;?$)",
)
_CODE_END = re.compile(r"(?:[{};]|\)\s*:|=>|->)\s*$")
_CODE_MARKS = re.compile(r"==|!=|<=|>=|=>|->|::|\(\)|\w\.\w+\(|\[\w*\]|\w_\w")
_PAGE_MARK = re.compile(r"^\s*(?:page\s*)?\d+(?:\s*(?:/|of)\s*\d+)?\s*$|^\s*-\s*\d+\s*-\s*$", re.IGNORECASE)
_REFERENCE_ENTRY = re.compile(
    r"^\s*(?:\[\d+\]|\d+\.\s+[A-Z][a-z]+,\s+[A-Z]\.|[A-Z][a-z]+,\s+[A-Z]\.(?:\s?[A-Z]\.)*,?\s|.*\bdoi:|.*\(\d{4}[a-z]?\)\.)"
)
_URL = re.compile(r"https?://\S+|www\.\S+")
# Inline decoration that is not part of a sentence's words.
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)(?:\{[^}]*\})?")
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_CITATION = re.compile(r"\s*\[@[^\]]*\]|\s*\[\d+(?:[,\u2013-]\s*\d+)*\]|\\(?:ref|autoref|cite|label)\{[^}]*\}")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\u201d\u2019]*\s+(?=[\"'\u201c(\[]?[A-Z\u00c0-\u00de0-9])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|al|fig|figs|eq|no|dr|mr|mrs|ms|st|approx|resp|sec)\.$", re.I)

# Code inside a sentence: an identifier with underscores, a call, a TeX command, an operator.
_CODE_IN_SENTENCE = re.compile(r"\w_\w|\w\(\)|\w\.\w+\(|\\[A-Za-z@]+|[{}<>|=]|\$\w")
_BULLET = re.compile(r"^[*\-\u2022\u25e6\u2013>]\s+|^\d+[.)]\s+")
# Generated documentation ends each heading with a pilcrow (the permalink); extraction can glue the
# heading to the paragraph after it.
_PILCROW = "\u00b6"

MIN_WORDS = 6
MAX_WORDS = 70


def _letters_share(line: str) -> float:
    visible = [c for c in line if not c.isspace()]
    return sum(c.isalpha() for c in visible) / len(visible) if visible else 0.0


def is_prose_line(line: str) -> bool:
    """A line of running text, as opposed to markup, code, a table row or a page number."""
    stripped = line.strip()
    if not stripped or _PAGE_MARK.match(stripped):
        return False
    if _MARKUP.search(stripped) or stripped.count("|") >= 2:
        return False
    if "\t" in line or len(re.findall(r"\S {3,}\S", stripped)) >= 2:
        return False  # columns of a table, as PDF and DOCX extraction lay them out
    if _CODE_START.match(stripped) or _CODE_END.search(stripped) or len(_CODE_MARKS.findall(stripped)) >= 2:
        return False
    if _REFERENCE_ENTRY.match(stripped):
        return False
    tokens = stripped.split()
    digits = sum(any(c.isdigit() for c in t) for t in tokens)
    return _letters_share(_URL.sub("", stripped)) >= 0.7 and digits <= max(2, len(tokens) // 3)


def _boilerplate(lines: list[str]) -> set[str]:
    """Short lines that come back again and again (running headers and footers, notices on each
    page), compared with their digits masked so "Page 3 of 17" and "Page 4 of 17" count as one."""
    masked = Counter(_mask(line) for line in lines if 0 < len(line.strip()) <= 120)
    return {key for key, count in masked.items() if count >= 3}


def _mask(line: str) -> str:
    return re.sub(r"\d+", "#", " ".join(line.split()).lower())


def _without_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for i in range(1, min(len(lines), 200)):
            if lines[i].strip() in ("---", "..."):
                return lines[i + 1 :]
    return lines


def prose_paragraphs(text: str) -> list[str]:
    """The document's running text, paragraph by paragraph, with everything else left out."""
    lines = _without_front_matter(text.splitlines())
    repeated = _boilerplate(lines)
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False
    in_references = False

    def close() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for raw in _pilcrow_split(lines):
        line = raw.strip()
        if _FENCE.match(line):
            in_fence = not in_fence
            close()
            continue
        if in_fence:
            continue
        if _REFERENCES.match(line) and any(re.search(r"[.!?]", p) for p in (*paragraphs, *current)):
            # Sources are listed after at least one sentence: a title that wraps onto a line of
            # its own ("Natural Sciences Citations and" / "References") is no reference list.
            in_references = True
            close()
            continue
        if line.startswith("#") or not line:
            # A heading ends a reference list; a blank line ends a paragraph.
            in_references = in_references and not line.startswith("#")
            close()
            continue
        if in_references or _mask(line) in repeated or not is_prose_line(_clean(line)):
            close()
            continue
        if _BULLET.match(line):
            close()  # a list item is a paragraph of its own
            line = _BULLET.sub("", line)
        if current and re.search(r"[a-z]-$", current[-1]) and line[:1].islower():
            current[-1] = current[-1][:-1] + line  # a word hyphenated across a line break
        else:
            current.append(line)
    close()
    return paragraphs


def _pilcrow_split(lines: list[str]) -> list[str]:
    """Each heading marked by a pilcrow on a line of its own, so that it ends the paragraph before."""
    out: list[str] = []
    for line in lines:
        if _PILCROW not in line:
            out.append(line)
            continue
        parts = line.split(_PILCROW)
        for part in parts[:-1]:
            out += ["", "# " + part.strip(), ""]
        out.append(parts[-1])
    return out


def _clean(text: str) -> str:
    text = _MD_IMAGE.sub("", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _CITATION.sub("", text)
    text = _EMPHASIS.sub("", text)
    return re.sub(r"\s+", " ", text).strip()


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of one paragraph; a split after an abbreviation ("e.g.", "et al.") is undone."""
    pieces = _SENTENCE_END.split(paragraph)
    merged: list[str] = []
    for piece in pieces:
        if merged and _ABBREVIATION.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return [s.strip() for s in merged if s.strip()]


def is_sentence(sentence: str) -> bool:
    """A sentence that reads on its own: a capital first, an end stop, a sensible length, and the
    function words of real language rather than a list of terms or numbers."""
    tokens = words(sentence)
    if not MIN_WORDS <= len(tokens) <= MAX_WORDS:
        return False
    if not (sentence[0].isupper() or sentence[0] in "\"'\u201c(") or sentence[-1] not in ".!?\"'\u201d)":
        return False
    if sentence.endswith(":") or _URL.search(sentence) or _letters_share(sentence) < 0.75:
        return False
    if _CODE_IN_SENTENCE.search(sentence):
        return False
    function_words = sum(1 for t in tokens if t in ALL_STOPWORDS)
    return function_words / len(tokens) >= 0.1


def prose_sentences(text: str) -> list[str]:
    """Every sentence of the document's prose, in order, cleaned of inline decoration."""
    found: list[str] = []
    for paragraph in prose_paragraphs(text):
        found += [s for s in split_sentences(_clean(paragraph)) if is_sentence(s)]
    return found
