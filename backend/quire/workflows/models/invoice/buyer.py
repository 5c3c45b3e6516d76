"""The buyer's block, which never names the issuer: the phrases beside and under a bill-to label, under a
return-address line, or over a person's or a department's line at the buyer ("Attn:", "Accounts Payable").
"""

from __future__ import annotations

import re

from quire.workflows.models.invoice.labels import match_labels
from quire.workflows.models.invoice.layout import Line, Phrase

# A letter's return-address line: name, street and town in one small line, split by dots or bars; its postcode no
# part of an amount ("Traslado IVA 002 · Base 8,268.00 · Importe 1322.880000" is a tax line) nor of a word
# ("10000mAh"), but perhaps with a Dutch postcode's letters ("1015CJ").
RETURN_ADDRESS = re.compile(r"^([^·|•]{3,60}?)\s*[·|•]\s*[^·|•]+[·|•]\s*.*(?<![\w.,])\d{4,5}(?:[A-Z]{2})?\b(?![.,]\d)")
# A line addressed to a person at the buyer: "t.a.v.", "z. Hd.", "Attn:", "à l'attention de", "all'attenzione di".
_ATTENTION = re.compile(
    r"^(?:t\.\s?a\.\s?v\.|ter\s+attentie\s+van|z\.\s?hd\.?|zu\s+h[aä]nden|attn\.?:?|att(?:\.:?|:)|attention:|"
    r"[aà]\s+l['\u2019]\s?attention|"
    r"all['\u2019]\s?attenzione|a\s+la\s+atenci[oó]n)(?=\s|$)",
    re.I,
)
# The payer's department under its company's name ("Accounts Payable"): that company is the buyer.
_PAYER_DEPARTMENT = re.compile(
    r"^\s*(?:attn:?\s*|attention:?\s*)?(?:(?:accounts?\s+payable|kreditorenbuchhaltung|comptabilit[eé]\s+fournisseurs|"
    r"crediteurenadministratie)\b|"
    # Its buying department: "Service Achats", "Purchasing Dept.", "Abteilung Einkauf / Frau Meier", "Ufficio Acquisti";
    # alone or before a person, not a company's name or a tagline ("Procurement Partners Ltd", "Procurement services").
    r"(?:service\s+(?:des\s+)?achats|direction\s+des\s+achats|purchasing|procurement|(?:abteilung\s+)?einkauf|"
    r"(?:afdeling\s+)?inkoop|departamento\s+de\s+compras|ufficio\s+acquisti|dzia[lł]\s+zakup[oó]w)"
    r"(?:\s+(?:dep(?:artmen)?t\.?|team|zentrale))?\s*(?:[-\u2013,:/]|$))",
    re.I,
)
_DEPARTMENT = re.compile(
    r"account|receivable|payable|billing|finance|invoic|debiteur|crediteur|administrati|buchhaltung|comptabilit|"
    r"contabilidad|contabilit|ksi[eę]gowo",
    re.I,
)
# The holder of the account a transfer goes to, named beside its IBAN ("Titulaire du compte : NETPRESSE"): the
# issuer, unless the page speaks of a direct debit, where the account printed is the buyer's. Weaker than a name
# with a company form at the top: a factoring bank may hold the account. ("Account name" is left out: on many bills
# it is the customer's account with the issuer.)
ACCOUNT_HOLDER = re.compile(
    r"(?:^|[|·•\u2013-]\s*)(?:account\s+holder|beneficiary(?:\s+name)?|kontoinhaber(?:in)?|beg[uü]nstigter|"
    r"titulaire\s+du\s+compte|b[eé]n[eé]ficiaire|rekeninghouder|ten\s+name\s+van|titular\s+de\s+la\s+cuenta|"
    r"beneficiario|intestatario(?:\s+(?:del\s+)?conto)?|titular\s+da\s+conta|favorecido|benefici[aá]rio|"
    r"w[lł]a[sś]ciciel\s+rachunku)\s*:\s*(?P<name>[^:|·•\u2013]+?)\s*(?:$|[|·•\u2013]|\s{2,})",
    re.I,
)
# Phrases on one line this many letter heights apart stand in different columns.
_COLUMN_GAP = 8


def buyer_block(lines: list[Line]) -> set[Phrase]:
    """The buyer's name and address: a bill-to label, what follows it on its line, and the phrases under it
    (or under a return-address line) in its column."""
    block: set[Phrase] = set()
    for index, line in enumerate(lines):
        for phrase in line.phrases:
            matches = match_labels(phrase.text)
            if (_ATTENTION.match(phrase.text) and not _DEPARTMENT.search(phrase.text)) or _PAYER_DEPARTMENT.match(
                phrase.text
            ):
                # "t.a.v. mevrouw J. van Dam", "Attn: Jane Doe", "Accounts Payable": the company above it in its column
                # is the buyer. (Another department, "Attn: Accounts Receivable", is as often the seller's.)
                block.add(phrase)
                # The company right above it in its column (the line above in reading order may be another column's).
                over = (
                    [p for p in other.phrases if abs(p.x0 - phrase.x0) < 10 and phrase.y0 - p.y1 < 2 * phrase.height]
                    for other in reversed(lines[max(0, index - 3) : index])
                    if other.page == line.page
                )
                block.update(next((found for found in over if found), []))
            elif matches and matches[0].field == "buyer":
                block.update(_beside(lines, index, phrase))
            elif not RETURN_ADDRESS.match(phrase.text):
                continue
            above = line
            for below in lines[index + 1 : index + 6]:
                if below.page != line.page or below.y0 - above.y1 > 3 * max(phrase.height, 8.0):
                    break  # an address block is printed line under line: what stands far below is not in it
                column = [p for p in below.phrases if p.x0 < phrase.x0 + 120 and p.x1 > phrase.x0 - 5]
                if any(_names_the_seller(p.text) for p in column):
                    break  # "Remit to:", "Kontoinhaber:" under the address: the seller's part begins
                block.update(column)
                above = below
    return block


def _beside(lines: list[Line], index: int, label: Phrase) -> list[Phrase]:
    """A label and the phrases that follow it on its line, up to another party's label ("Bill To: | From:"), or a
    gap wide enough to start another column: after the label's value, or at once where the label heads a column
    whose value starts under it ("Kunde" over the buyer's name at the left margin, the issuer's at the right one)."""
    line = lines[index]
    under = next((other for other in lines[index + 1 : index + 2] if other.page == line.page), None)
    heads_column = under is not None and any(abs(p.x0 - label.x0) < label.height for p in under.phrases)
    found = [label]
    for other in (p for p in line.phrases if p.x0 > label.x0):
        wide = other.x0 - found[-1].x1 > _COLUMN_GAP * max(label.height, 8.0)
        if (wide and (heads_column or len(found) > 1)) or _names_the_seller(other.text):
            break
        found.append(other)
    return found


def _names_the_seller(text: str) -> bool:
    """True for a phrase that opens with a seller, payee or account-holder label."""
    matches = match_labels(text)
    return bool((matches and matches[0].field == "vendor") or ACCOUNT_HOLDER.match(text))
