"""Who issued the invoice: a company named in the letterhead or the legal footer, never the bill-to block.

Candidates are phrases that carry a company form (GmbH, B.V., S.A.R.L., Ltd, Inc., sp. z o.o., ...),
the value of a seller label, and the first name-like phrase at the top of the first page. The
buyer's block (the lines under a bill-to label) and labels or sentences never qualify.
"""

from __future__ import annotations

import re
from collections import Counter

from quire.workflows.models.invoice.labels import match_labels
from quire.workflows.models.invoice.layout import Line, Phrase
from quire.workflows.models.invoice.values import EMAIL_OR_URL, amounts_in, dates_in, fold

_FORMS = (
    r"gmbh(?:\s*&\s*co\.?\s*kg)?|ag|kg|ug(?:\s*\(haftungsbeschr[aä]nkt\))?|e\.\s?k\.|ohg|gbr|inc\.?|incorporated|llc|l\.l\.c\.|"
    r"ltd\.?|limited|llp|lp\.?|l\.p\.|plc|corp\.?|corporation|co\.|pty\.?\s*ltd\.?|"
    r"s\.?\s?a\.?\s?r\.?\s?l\.?|sas|s\.a\.s\.?|sa|s\.a\.|sasu|eurl|sarl|sl|s\.l\.u?\.?|slu|s\.?p\.?a\.?|s\.?r\.?l\.?s?|"
    r"s\.n\.c\.|b\.?v\.?|n\.?v\.?|vof|sp\.\s?z\s?o\.?\s?o\.?|s\.?c\.?|ltda\.?|eireli|me|s/a|oy|ab|as|a/s|aps|gie"
)
_FORM = re.compile(rf"(?<![\w.])(?:{_FORMS})(?![\w])", re.I)
_NOT_A_NAME = re.compile(
    r"^(?:tax\s+)?invoice|^rechnung|^facture|^factura|^fattura|^factuur|^faktura|^fatura|^receipt|^quittung|^page|^seite|"
    r"^p[aá]gina|^thank|^danke|^merci|^gracias|^grazie|^bedankt|^dzi[eę]kujemy|^obrigado|^original|^copy|^kopie|^duplicate",
    re.I,
)
_SENTENCE = re.compile(
    r"\b(?:is|are|the|der|die|das|le|la|les|el|il|de\s+la|please|bitte|veuillez|if|wenn|for)\b", re.I
)


def _buyer_block(lines: list[Line]) -> set[int]:
    """Lines under a bill-to label (and that label's own line): the buyer's name and address."""
    block: set[int] = set()
    for index, line in enumerate(lines):
        for phrase in line.phrases:
            matches = match_labels(phrase.text)
            if not matches or matches[0].field != "buyer":
                continue
            block.add(index)
            for offset, below in enumerate(lines[index + 1 : index + 6], start=1):
                if below.page != line.page:
                    break
                if any(p.x0 < phrase.x0 + 120 and p.x1 > phrase.x0 - 5 for p in below.phrases):
                    block.add(index + offset)
    return block


def _name_of(text: str) -> str:
    """The company name in a phrase: up to and including its company form, labels and bullets removed."""
    text = re.sub(r"^[^:]{0,25}:\s*", "", text) if ":" in text[:26] and match_labels(text) else text
    text = re.split(r"\s[•●·|\u2013-]\s|,\s(?=\d)|\s{2,}", text)[0]
    forms = list(_FORM.finditer(text))
    if forms:
        text = text[: forms[-1].end()]
    return text.strip(" ,;:-").strip()


def _looks_like_name(text: str) -> bool:
    folded = fold(text)
    if len(text) < 3 or len(text) > 80 or not re.search(r"[^\W\d_]{2}", text):
        return False
    if _NOT_A_NAME.search(folded) or EMAIL_OR_URL.search(text) or match_labels(text):
        return False
    if amounts_in(text) or dates_in(text, True) or sum(ch.isdigit() for ch in text) > 3:
        return False
    return not (_SENTENCE.search(text) and len(text.split()) > 5)


def find_vendor(lines: list[Line]) -> tuple[str, float, Phrase] | None:
    """The issuer's name, a confidence and the phrase it was read from; None when nothing qualifies."""
    buyer = _buyer_block(lines)
    scored: list[tuple[float, str, Phrase]] = []
    names = Counter(
        _name_of(p.text).casefold()
        for i, line in enumerate(lines)
        if i not in buyer
        for p in line.phrases
        if _FORM.search(p.text)
    )
    for index, line in enumerate(lines):
        if index in buyer:
            continue
        position = line.y0 / max(line.page_height, 1.0)
        for phrase in line.phrases:
            matches = match_labels(phrase.text)
            if matches and matches[0].field == "vendor":
                rest = matches[0].rest or next((p.text for p in line.phrases if p.x0 > phrase.x1), "")
                below = [
                    p for other in lines[index + 1 : index + 5] if other.page == line.page
                    for p in other.phrases if abs(p.x0 - phrase.x0) < 30 and ":" not in other.text
                ]  # fmt: skip
                for text, source in [(rest, phrase)] + [(p.text, p) for p in below]:
                    if _looks_like_name(text):
                        scored.append((0.85, _name_of(text), source))
                        break
                continue
            if not _FORM.search(phrase.text):
                continue
            name = _name_of(phrase.text)
            if (
                not _looks_like_name(name)
                or len(name.split()) > 8
                or not re.search(r"[^\W\d_]{2}", _FORM.sub("", name))
            ):
                continue  # a company form alone ("SARL au capital de ...") names nobody
            score = 0.55
            score += 0.25 if line.page == 1 and position < 0.3 else 0.1 if position > 0.8 else 0.0
            score += 0.1 if names[name.casefold()] > 1 else 0.0
            score -= 0.15 if line.page > 1 else 0.0
            scored.append((score, name, phrase))
    if not scored:
        for index, line in enumerate(lines[:8]):
            if line.page != 1:
                break
            for phrase in line.phrases:
                if index not in buyer and _looks_like_name(phrase.text) and len(phrase.text.split()) <= 6:
                    scored.append((0.5, phrase.text.strip(), phrase))
                    break
            if scored:
                break
    if not scored:
        return None
    score, name, phrase = max(scored, key=lambda item: item[0])
    return name, min(score, 0.95), phrase
