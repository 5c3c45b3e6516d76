"""Where the issuer names itself at the top and at the foot of a page: the largest name in the first page's
letterhead, the legal name printed under a trade name, and the company over the register entry of a legal footer.
"""

from __future__ import annotations

import re
import statistics

from quire.workflows.models.invoice.layout import Line, Phrase, overlaps
from quire.workflows.models.invoice.names import FORM, initials_hold, looks_like_name
from quire.workflows.models.invoice.values import GREEK_REGISTERS, VAT_ID, fold

# The company register and VAT numbers a legal footer prints beside the issuer's name.
LEGAL_IDS = re.compile(
    rf"{VAT_ID.pattern}|\b(?:HRB|HRA|RCS|KvK|KRS|REGON|Companies\s+House|Reg(?:istered)?\.?\s+No|Org\.?\s?nr|CVR|Y-tunnus|"
    rf"IČO|Foretaksregisteret|{GREEK_REGISTERS})\b"
)
# A letterhead: the largest type in the top part of the first page, this much larger than the page's usual type.
# It outranks a name with a company form near it (0.8), which on such a page is as often the buyer's.
_LETTERHEAD_TOP = 0.15
_LETTERHEAD_SIZE = 1.25
LETTERHEAD_SCORE = 0.82
# The name a letterhead's monogram stands for is printed larger than the page's usual type too, if less large.
_SPELLED_OUT_SIZE = 1.15
# A letterhead chosen over a company name that scores this much is given for review.
LETTERHEAD_CONTESTED = 0.75
# A legal footer: the company's name on one of the last lines of a page, with its register entry or tax number
# on its own line or the two under it.
_FOOTER_LINES = 6
_REGISTER = re.compile(
    rf"{LEGAL_IDS.pattern}|\b(?:Amtsgericht|Handelsregister|Registergericht|SIRE[NT]|NIF|CIF|P\.\s?IVA|Partita\s+IVA|"
    r"R\.E\.A\.|UID|MWST|USt-?Id|TVA|BTW|NIP|VAT\s+(?:No|Reg)|[Cc]apital(?:\s+social)?\s+(?:de\s+)?\d)"
)
# Words that tie a name to another company than the issuer: "Authorised dealer for Bosch AG", "Franchisee of
# Subway IP LLC", "Operated by Smith Foods Ltd", "Partner von ...".
# (Lower case only: "de", "del" and "des" stand inside names, "Casa del Libro S.L.".)
_SAYS_WHOSE = re.compile(r"\b(?:for|of|by|von|für|par|voor|door)\s")
# A trade name's company is printed at most this many lines under it (and as many of the letterhead's heights).
_LEGAL_NAME_LINES = 2


def spelled_out_under(lines: list[Line], index: int, phrase: Phrase, text: str, buyer: set[Phrase]) -> Phrase | None:
    """The line just under a logo's short name that spells it out: "GREENLEAF" over "Greenleaf Landscaping"."""
    short = fold(text).strip()
    line = lines[index]
    for below in lines[index + 1 : index + 2]:
        if below.page != line.page or below.y0 - line.y1 > 2 * max(phrase.height, 8.0):
            return None
        for other in below.phrases:
            longer = fold(other.text).strip()
            named = longer.startswith(short + " ") and looks_like_name(other.text) and len(other.text.split()) <= 6
            if named and other not in buyer:
                return other
    return None


def letterhead_of(lines: list[Line], buyer: set[Phrase]) -> Phrase | None:
    """A letterhead's name: the one phrase printed largest at the top of the first page's text layer, clearly
    larger than the page's usual type, that reads as a name without a company form (a freelancer, a shop, a
    brand). None when something else there is as large (a title), or the page is a scan, whose type sizes OCR
    measures too roughly to compare."""
    first = [p for line in lines if line.page == 1 for p in line.phrases]
    top = [p for line in lines if line.page == 1 and line.y0 < _LETTERHEAD_TOP * line.page_height for p in line.phrases]
    if len(first) < 5 or not top or any(p.confidence < 1.0 for p in first):
        return None
    tallest = max(top, key=lambda p: p.height)
    usual = statistics.median(p.height for p in first)
    if tallest.height < _LETTERHEAD_SIZE * usual or any(p is not tallest and p.height >= tallest.height for p in top):
        return None
    text = tallest.text
    if re.fullmatch(r"[^\W\d_]{2,4}", text):
        # A logo's monogram ("LdV"): the name it stands for, printed beside it ("Studio Lieke de Vries").
        spelled = [
            p for p in top
            if p is not tallest and p not in buyer and p.height >= _SPELLED_OUT_SIZE * usual
            and initials_hold(text, p.text)
        ]  # fmt: skip
        if spelled and looks_like_name(spelled[0].text) and len(spelled[0].text.split()) <= 6:
            return spelled[0]
    if tallest in buyer or FORM.search(text) or not looks_like_name(text) or len(text.split()) > 6:
        return None
    return tallest


def legal_name_under(
    lines: list[Line], letterhead: Phrase | None, scored: list[tuple[float, str, Phrase]]
) -> tuple[float, str, Phrase] | None:
    """The company a letterhead's trade name belongs to, printed right under it: "BAR LA ESQUINA" over
    "Hostelería Ruiz e Hijos, S.L.", "PARKING CITY-WEST" over "Parkhaus City-West AG". It is the issuer in law.
    Right under means on one of the next two lines of the letterhead's column (a tagline may stand between; a
    title's lines in another column do not count), at most two of the letterhead's heights below it, and across
    its width: a client's company is printed further down or aside."""
    if letterhead is None:
        return None

    def column_lines(item: tuple[float, str, Phrase]) -> int:
        return sum(
            1
            for line in lines[letterhead.line + 1 : item[2].line + 1]
            if any(overlaps(p, letterhead) for p in line.phrases)
        )

    under = [
        item for item in scored
        if item[2] is not letterhead and FORM.search(item[1]) and item[2].page == letterhead.page
        and not _SAYS_WHOSE.search(item[1])
        and item[2].line > letterhead.line and column_lines(item) <= _LEGAL_NAME_LINES
        and item[2].y0 - letterhead.y1 <= _LEGAL_NAME_LINES * letterhead.height
        and overlaps(item[2], letterhead)
    ]  # fmt: skip
    return min(under, key=lambda item: item[2].line, default=None)


def legal_footer(lines: list[Line], scored: list[tuple[float, str, Phrase]]) -> tuple[float, str, Phrase] | None:
    """The company named in a page's legal footer, over its register entry or tax number: "Heller Lebensmittel
    GmbH & Co. KG" over "Amtsgericht Köln HRA 31877", at the foot of a receipt headed by its shop's name. The
    issuer in law, where the letterhead is a trade name."""
    last = {line.page: index for index, line in enumerate(lines)}
    for item in sorted(scored, key=lambda item: -item[2].line):
        phrase = item[2]
        if not FORM.search(item[1]) or last[phrase.page] - phrase.line >= _FOOTER_LINES:
            continue
        beside = [p for line in lines[phrase.line : phrase.line + 3] if line.page == phrase.page for p in line.phrases]
        if any(overlaps(p, phrase) and _REGISTER.search(p.text) for p in beside):
            return item
    return None
