"""Second readings of the chosen amounts (sums that add up, payment lines, a tax table, a rival total) and the
amounts derived from the other two."""

from __future__ import annotations

import itertools
import re
from decimal import Decimal
from typing import Any

from quire.workflows.models.invoice.amounts import CENT, NOT_A_TAX_ROW, adds_up, included, levied_on
from quire.workflows.models.invoice.candidates import FOR_REVIEW, RATE, Candidate, evidence
from quire.workflows.models.invoice.labels import AMOUNT_FIELDS, PAYMENT, match_labels
from quire.workflows.models.invoice.layout import Line, Phrase, overlaps
from quire.workflows.models.invoice.values import CURRENCY, amounts_in, fold

PAYMENT_MIN_SCORE = 0.15


# Cash paid may be the total rounded to 0.05 without a printed rounding line.
_CASH_ROUNDING = Decimal("0.05")


def payment_check(found: dict[str, list[Candidate]], total: Candidate | None) -> bool | None:
    """Whether the payment lines printed under a printed total say the same amount was paid.

    True when cash tendered less the change printed just under it, an amount tendered with no change (a
    card is charged the total, exact cash needs none), or all of them together (a payment split between
    card and cash) is the total. False when cash less change is another amount, by more than cash rounding.
    None when no amount is tendered under the total on its page, or only amounts tendered that are not the
    total (a gift card, a second card): nothing to check then.
    """
    if total is None:
        return None

    def under(candidate: Candidate) -> bool:
        # OCR reads these short lines unsurely ("- CHANGE" at 0.18): they only check a total read elsewhere.
        page = candidate.label.page == total.label.page
        return page and candidate.line > total.line and candidate.score >= PAYMENT_MIN_SCORE

    tendered = [c for c in found.get("tendered", []) if under(c) and c.value.value > 0]
    changes = [c for c in found.get("change", []) if under(c) and c.value.value >= 0]
    if not tendered:
        return None
    net: set[Decimal] = set()
    paired: set[int] = set()
    for change in changes:  # each change line goes with the amount tendered nearest above it
        given = max((t for t in tendered if 0 < change.line - t.line <= 3), key=lambda t: t.line, default=None)
        if given is not None and 0 < change.value.value < given.value.value:
            net.add(given.value.value - change.value.value)
            paired.add(given.line)
    alone = {t.value.value for t in tendered if t.line not in paired}
    due = total.value.value
    if due in net or (not net and due in alone) or due == sum(net | alone, Decimal(0)):  # or split between them
        return True
    if not net or any(abs(due - paid) <= _CASH_ROUNDING for paid in net):
        return None  # nothing to check, or cash rounding the receipt does not print
    return False


def tax_table_check(lines: list[Line], total: Candidate | None, mark: str) -> bool:
    """True when the rows of a tax table on the total's page, all of them together, add up to the total: the amount
    taxed and its tax in each ("SR @ 6% 10.94 0.66"; "B= 7,0% 2,32 0,16 2,48", the gross after them).

    A row names a rate ("%") and a tax is named on it or in the table's head just above; its tax is that rate of
    the amount taxed, where the rate can be read; rows of discounts, charges and totals are no tax rows. A second
    reading of the total from other lines, like the payment lines."""
    if total is None or total.value.value <= 0:
        return False
    grosses: list[Decimal] = []
    for index, line in enumerate(lines):
        if line.page != total.label.page or index == total.line or "%" not in line.text:
            continue
        named = {m.field for p in line.phrases for m in match_labels(p.text)}
        if named & {"total", "subtotal", "discount", "charge", "withholding", "rounding", *PAYMENT}:
            continue
        if NOT_A_TAX_ROW.search(fold(line.text)) or not any(
            m.field == "tax" for above in lines[max(0, index - 3) : index + 1] for p in above.phrases
            for m in match_labels(p.text)
        ):  # fmt: skip
            continue  # a discount or a service charge; or no tax named on the row or in the table's head above it
        rate = RATE.search(line.text)
        values = [amount.value for amount in amounts_in(line.text, mark)]
        for taxed, tax in itertools.pairwise(values):
            percent = None if rate is None else Decimal(rate.group(1).replace(",", "."))
            if 0 <= tax < taxed and (percent is None or levied_on(percent, taxed, tax)):
                grosses.append(taxed + tax)
                break
    due = total.value.value
    return bool(grosses) and abs(sum(grosses, Decimal(0)) - due) <= CENT


def contradicted(
    found: dict[str, list[Candidate]], chosen: dict[str, tuple[Candidate | None, float]], charges: Decimal
) -> bool:
    """True when the best printed subtotal and tax, left out of the choice, do not add up to the chosen total
    ("Total (excl. GST) 28.58 / GST 1.72 / Total 36.30": one of them was misread)."""
    total = chosen["total"][0]
    if total is None or (chosen["subtotal"][0] is not None and chosen["tax"][0] is not None):
        return False
    best = {  # the phrase the total was read from is not also its subtotal ("Net Total" after a rounding line)
        field: max(
            (c for c in found.get(field, []) if c.score >= 0.3 and not c.unsure and c.source is not total.source),
            key=lambda c: c.score,
            default=None,
        )
        for field in ("subtotal", "tax")
    }
    sub, tax = (chosen[f][0] or best[f] for f in ("subtotal", "tax"))
    if sub is None or tax is None:
        return False
    return not adds_up(sub.value.value, tax.value.value, total.value.value, charges, included(tax))


def total_rivalled(found: dict[str, list[Candidate]], total: Candidate | None) -> bool:
    """True when another page prints a different amount under as strong a total label (a bill that restates
    earlier bills, a bundle of invoices): without sums that add up, nothing tells which one is owed."""
    if total is None:
        return False
    return any(
        c.value.value != total.value.value and c.label.page != total.label.page and c.score >= total.score - 0.05
        for c in found.get("total", [])
    )


def total_outranked(found: dict[str, list[Candidate]], total: Candidate | None, rounded: bool) -> bool:
    """True when a larger amount follows the chosen total on its page under as strong a total label: sums
    that add up may belong to one part of the bill (a rate, a period), while the amount due comes last."""
    if total is None or rounded:
        return False
    return any(
        c.value.value > total.value.value
        and c.line > total.line
        and c.label.page == total.label.page
        and c.score >= total.score
        and c.label.text != total.label.text
        for c in found.get("total", [])
    )


def check_and_derive(
    values: dict[str, Any], fields: dict[str, dict[str, Any]], charges: Decimal, unsure: set[str], inside: bool = False
) -> dict[str, bool | None]:
    """`totals_add_up`, `tax_below_total`, `due_after_issue`; a missing amount is derived from the other two.

    No tax is derived where the total equals the subtotal: an invoice that prints no tax has none to report.
    A tax `inside` the total (a receipt's "VAT incl.") agrees with a subtotal equal to the total, and no total
    is derived from it: whether the subtotal printed beside it is net or gross, the page does not say.
    Nothing is derived from an `unsure` amount (one of several after its label), and three amounts that agree
    vouch for each other only when at most one of them is unsure: unsure amounts from one row of columns agree
    whichever column they were all read from.
    """
    sub, tax, total = (values.get(f) for f in AMOUNT_FIELDS)
    printed = all(f in values for f in AMOUNT_FIELDS)
    if unsure and not printed:
        sub, tax, total = (None if f in unsure else values.get(f) for f in AMOUNT_FIELDS)
    if total is not None and sub is not None and tax is None and total - charges > sub >= 0:
        values["tax"] = tax = total - charges - sub
        fields["tax"] = evidence(0.6, "total - subtotal" + (" - charges" if charges else ""))
    elif total is None and sub is not None and tax is not None and not inside:
        values["total"] = total = sub + tax + charges
        # A total the page does not print is offered for review only: rounding, fees or a deposit may lie between.
        fields["total"] = evidence(0.45, "subtotal + tax" + (" + charges" if charges else ""))
    elif sub is None and total is not None and tax is not None and abs(tax) < abs(total):
        values["subtotal"] = sub = total - charges - tax
        fields["subtotal"] = evidence(0.45, "total - tax" + (" - charges" if charges else ""))
    checks: dict[str, bool | None] = {
        "totals_add_up": None
        if sub is None or tax is None or total is None
        else adds_up(sub, tax, total, charges, inside),
        "tax_below_total": None if tax is None or total is None else abs(tax) < abs(total) or total == 0,
        "due_after_issue": None
        if values.get("due_date") is None or values.get("issue_date") is None
        else values["due_date"] >= values["issue_date"],
    }
    # A subtotal equal to the total, beside a tax the total includes, agrees with it without any sum: it vouches
    # for nothing, and may be the gross amount where the page prints the net one elsewhere: a person looks.
    summed = not (inside and sub is not None and total is not None and abs(sub - total) <= CENT)
    if not summed and "subtotal" in fields:
        fields["subtotal"]["confidence"] = min(fields["subtotal"]["confidence"], FOR_REVIEW)
    if printed and summed and checks["totals_add_up"] and checks["tax_below_total"] and len(unsure) <= 1:
        for field in AMOUNT_FIELDS:  # three printed amounts that agree vouch for each other
            fields[field]["confidence"] = max(fields[field]["confidence"], 0.9)
    if checks["totals_add_up"] is False or checks["tax_below_total"] is False:
        for field in AMOUNT_FIELDS:
            if field in fields:
                fields[field]["confidence"] = round(fields[field]["confidence"] * 0.7, 2)
    if checks["due_after_issue"] is False:
        fields["due_date"]["confidence"] = round(fields["due_date"]["confidence"] * 0.5, 2)
    return checks


# A derived subtotal that the page prints as well, with no label (the items' sum under their column): sure enough
# not to be reviewed.
PRINTED_DERIVED = 0.8


def printed_elsewhere(
    lines: list[Line], value: Decimal, mark: str, total: Candidate, has_layout: bool
) -> Phrase | None:
    """The phrase that prints `value` (or its negative) alone, with no words but a currency, above the total on its
    page and, on a laid-out page, in the total's column: a second reading of a subtotal derived from
    the total and the tax ("1,72,838.00" under the items' Amount column). A fee's or an item's line, with words
    on it, is no such reading."""
    if value == 0:
        return None
    for line in lines[: total.line]:
        for phrase in line.phrases:
            if (
                line.page == total.source.page
                and not re.search(r"[^\W\d_]", CURRENCY.sub("", phrase.text))  # words: an item's or a fee's line
                and (not has_layout or overlaps(phrase, total.source))
                and any(abs(a.value) == abs(value) for a in amounts_in(phrase.text, mark))
            ):
                return phrase
    return None
