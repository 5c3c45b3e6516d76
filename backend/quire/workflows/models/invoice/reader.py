"""Invoice fields from a page layout: collect every labelled candidate, check the amounts, then choose.

The steps, each in its own module: the labels on the page (`labelled`), a scored candidate for each
labelled value (`candidates`, with `columns` for a totals row under headed columns), the amounts
chosen together so that subtotal + tax = total where the page allows it (`amounts`), and second
readings of the total from other lines (`checks`). This module runs them, adds the dates, currency
and vendor, and decides: a field whose confidence stays under `ABSTAIN_BELOW` is left empty and
named for review.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from typing import Any

from quire.workflows.models.invoice.amounts import (
    after_rounding,
    before_payments,
    before_withholding,
    choose_amounts,
    earlier_balances,
    included,
    net_charges,
    per_rate_tax,
    tax_column_sums,
    tax_sums,
    without_earlier_balance,
)
from quire.workflows.models.invoice.candidates import (
    ABSTAIN_BELOW,
    FOR_REVIEW,
    REVIEW_BELOW,
    Candidate,
    best,
    evidence,
    phrase_evidence,
    read_candidates,
)
from quire.workflows.models.invoice.checks import (
    PRINTED_DERIVED,
    check_and_derive,
    contradicted,
    payment_check,
    printed_elsewhere,
    tax_table_check,
    total_outranked,
    total_rivalled,
)
from quire.workflows.models.invoice.currency import (
    CROWNS,
    bank_currency,
    country_currency,
    crown_currency,
    dollar_currency,
    named_dollar,
)
from quire.workflows.models.invoice.dates import dates_in, day_first_votes, month_in_doubt, terms_days, weekday_votes
from quire.workflows.models.invoice.kind import CREDIT_LABEL, credit_note
from quire.workflows.models.invoice.labelled import Labelled, labelled_phrases
from quire.workflows.models.invoice.labels import (
    AMOUNT_FIELDS,
    DATE_FIELDS,
    INVOICE_WORDS,
    PAYMENT,
    RECEIPT_LABEL,
    RECEIPT_WEIGHT,
    TAX_INCLUDED,
    WEAK_WEIGHT,
    language_votes,
    ocr_repaired,
)
from quire.workflows.models.invoice.layout import Line
from quire.workflows.models.invoice.values import (
    currencies_in,
    decimal_mark_of,
    fold,
    is_identifier_context,
    named_for_sure,
    stated_currency,
)
from quire.workflows.models.invoice.vendor import find_vendor

# A printed total the payment lines vouch for is given without review.
PAYMENT_CONFIRMS = 0.8


def _currency_sightings(lines: list[Line]) -> dict[str, float]:
    """Each currency printed, counted by how sure the reading was: a `¥` OCR found in a smudge weighs little
    beside the `RM` printed with every amount."""
    seen: dict[str, float] = {}
    for phrase in (p for line in lines for p in line.phrases):
        text = (ocr_repaired(phrase.text) or phrase.text) if phrase.confidence < 1.0 else phrase.text
        for code in currencies_in(text):
            seen[code] = seen.get(code, 0.0) + phrase.confidence
    return seen


def _decide_day_first(lines: list[Line], language: str, currency: str | None) -> tuple[bool, bool]:
    """Whether the page writes its dates day first, and whether anything on it says so: its unambiguous dates,
    dotted dates, dates after their weekday's name, its language or its currency. An English page with no currency
    printed is only guessed to be American."""
    texts = [line.text for line in lines]
    day, month = day_first_votes(texts)
    if day != month:
        return day > month, True
    if any(re.search(r"\b\d{1,2}\.\d{1,2}\.\d{2,4}\b", t) for t in texts):
        return True, True
    day, month = weekday_votes(texts, language)
    if day != month:
        return day > month, True
    return not (language == "en" and currency in (None, "USD", "CAD")), not (language == "en" and currency is None)


# A date whose day and month could be either way round ("04/09/2024").
_EITHER_WAY = re.compile(r"(?<!\d)(0?[1-9]|1[0-2])[/-](0?[1-9]|1[0-2])[/-](?:\d{4}|\d{2})(?!\d)")


def _own_number(candidates: list[Candidate]) -> list[Candidate]:
    """A credit note's own number, where its label says so ("Nummer der Gutschrift", "Avoir n°") as surely as an
    invoice number's label does, and before it: that invoice is the one credited. A weaker or later credit note's
    number is another document's (a credit in a list of open items)."""
    own = [c for c in candidates if CREDIT_LABEL.search(fold(c.label.text))]
    if not own or len(own) == len(candidates):
        return candidates
    first = max(own, key=lambda c: (c.score, -c.line))
    rival = max((c for c in candidates if c not in own), key=lambda c: (c.score, -c.line))
    # A credit note prints its own number first; one listed after the invoice's number is another document.
    return own if first.score >= rival.score and first.line < rival.line else candidates


def _weigh_receipt_labels(labelled: Labelled, found: dict[str, list[Candidate]]) -> None:
    """A till receipt's number label ("Kassenbon Nr. 4711 05.03.2025") names the document's own number and date on a
    page that has no invoice's label; beside one ("Rechnung ... Quittung Nr. 77 vom 05.03.2025") it cites a receipt,
    and its number is for review. Its date was read weakly (`candidates`)."""
    receipts = {
        id(phrase)
        for _, phrase, matches in labelled
        if any(m.field == "invoice_number" and RECEIPT_LABEL.match(m.label) for m in matches)
    }
    if not receipts:
        return
    invoice = any(
        m.field == "invoice_number"
        and not RECEIPT_LABEL.match(m.label)
        and (m.weight >= 1.0 or m.label in INVOICE_WORDS)
        for _, _, matches in labelled
        for m in matches
    )
    for field, factor in (
        (("invoice_number", WEAK_WEIGHT / RECEIPT_WEIGHT),)
        if invoice
        else (("issue_date", RECEIPT_WEIGHT / WEAK_WEIGHT),)
    ):
        found[field] = [
            replace(c, score=c.score * factor) if id(c.label) in receipts else c for c in found.get(field, [])
        ]


def _either_way(candidate: Candidate) -> bool:
    match = _EITHER_WAY.search(candidate.source.text)
    return match is not None and int(match[1]) != int(match[2])


def read_layout(lines: list[Line], has_layout: bool) -> dict[str, Any]:
    """Fields, evidence, checks and the fields to review, from the lines of an invoice."""
    text = "\n".join(line.text for line in lines)
    mark = decimal_mark_of(text) or "."
    currencies = _currency_sightings(lines)
    currency = max(currencies, key=lambda code: currencies[code]) if currencies else None
    country = country_currency(p.text for line in lines for p in line.phrases)
    if currency is not None and country is not None and currency != country and currencies[currency] < 1.0:
        currency = None  # one unsure sighting (OCR's `€` in a smudge) against the country the page names
    labelled = labelled_phrases(lines)
    # Payment words ("Bar", "Resto", "Card") name no language as surely as invoice labels do.
    language = language_votes(matches[0] for _, _, matches in labelled if matches[0].field not in PAYMENT) or "en"
    # A bare "$" on a page that prints an Australian ABN is the Australian dollar, and dates day first there.
    dollar = dollar_currency(text)
    day_first, order_known = _decide_day_first(
        lines, language, (dollar if currency == "USD" else None) or currency or country
    )
    found = read_candidates(lines, labelled, mark, day_first, currency)
    _weigh_receipt_labels(labelled, found)

    found["invoice_number"] = _own_number(found.get("invoice_number", []))
    chosen: dict[str, tuple[Candidate | None, float]] = {
        field: best(found.get(field, [])) for field in ("invoice_number", *DATE_FIELDS)
    }
    sums = tax_sums(found) + tax_column_sums(lines, mark)
    chosen.update(choose_amounts(found, len(lines), [whole for whole, _ in sums]))
    charges = net_charges(found, chosen["subtotal"][0], chosen["total"][0])
    for field in AMOUNT_FIELDS:  # the choice's rank may exceed a candidate's score; an unsure one stays unsure
        candidate, confidence = chosen[field]
        if candidate is not None and candidate.unsure:
            chosen[field] = (candidate, min(confidence, ABSTAIN_BELOW - 0.05))
    rounded = after_rounding(lines, labelled, found, chosen["total"][0])
    if rounded is not None:
        before = chosen["total"][0]
        assert before is not None
        charges += rounded[0].value.value - before.value.value
        chosen["total"] = (rounded[0], chosen["total"][1])
    chosen_total, confidence = chosen["total"]
    if chosen_total is not None and TAX_INCLUDED.search(fold(chosen_total.label.text)):
        # "Total VAT included" under a larger total: the tax that total holds, or the total after a discount.
        larger = any(
            c.value.value > chosen_total.value.value and c.score >= ABSTAIN_BELOW for c in found.get("total", [])
        )
        chosen["total"] = (chosen_total, min(confidence, FOR_REVIEW) if larger else confidence)
    paid_off = before_payments(lines, found, chosen["total"][0], mark)
    if paid_off is not None:
        chosen["total"] = (paid_off, paid_off.score)  # the balance after a deposit or part payment is no total
    elif (gross := before_withholding(found, chosen["total"][0])) is not None:
        net = chosen["total"][0]
        assert net is not None
        charges += gross.value.value - net.value.value  # the withholding is not taken off this total
        chosen["total"] = (gross, gross.score)
        paid_off = gross  # the amount due after it, with the withholding taken off, outranks it by design
    own_total, in_doubt = without_earlier_balance(found, chosen["total"][0])
    # The amount due after it adds an earlier balance, or takes a payment off: it outranks the bill's own total by
    # design.
    own_bill = paid_off is not None or (own_total is not None and not in_doubt and bool(earlier_balances(found)))
    if own_total is not None and own_total is not chosen["total"][0]:
        chosen["total"] = (own_total, own_total.score)
    elif in_doubt:
        chosen["total"] = (own_total, min(chosen["total"][1], ABSTAIN_BELOW - 0.05))
    if (after_discount := _paid_after_discount(found, chosen["total"][0])) is not None:
        chosen["total"] = (after_discount, after_discount.score)
    chosen["tax"] = per_rate_tax(chosen, sums, charges)
    labelled_issue = chosen["issue_date"][0] is not None
    if chosen["issue_date"][0] is None:
        chosen["issue_date"] = _first_date(lines, day_first)
    if chosen["issue_date"][0] is None:
        chosen["issue_date"] = _lone_date(lines, day_first)
    issue, confidence = chosen["issue_date"]
    if issue is not None and chosen["due_date"][0] is None and _only_date(lines, day_first) == issue.value:
        # A receipt prints one date, perhaps twice: with no other date to mistake it for, it is the date of issue.
        chosen["issue_date"] = (issue, max(confidence, 0.65))

    for field in DATE_FIELDS:
        candidate, confidence = chosen[field]
        # The order was guessed: a date that reads either way round is for a person to check; so is one whose month
        # name another language gives another month ("listopada" on a Croatian page).
        if candidate is not None and (
            (not order_known and _either_way(candidate)) or month_in_doubt(candidate.source.text, language)
        ):
            chosen[field] = (candidate, min(confidence, FOR_REVIEW))

    (issue, issue_confidence), (due, due_confidence) = chosen["issue_date"], chosen["due_date"]
    # Only labelled dates, and only in an order the page settles: a date read either way round stays for review.
    settled = order_known or not any(c is not None and _either_way(c) for c in (issue, due))
    terms = terms_days(t.text for t in lines) if labelled_issue and settled else set()
    if issue is not None and due is not None and (due.value - issue.value).days in terms:
        # The due date the payment terms' days after the date of issue ("14 days from date of invoice"): each date,
        # however unsurely OCR read it, is read a second time by the other and the terms.
        chosen["issue_date"] = (issue, max(issue_confidence, _TERMS_AGREE))
        chosen["due_date"] = (due, max(due_confidence, _TERMS_AGREE))

    values: dict[str, Any] = {}
    fields: dict[str, dict[str, Any]] = {}
    for field, (candidate, confidence) in chosen.items():
        if candidate is None:
            continue
        value = candidate.value.value if field in AMOUNT_FIELDS else candidate.value
        values[field] = value
        fields[field] = candidate.evidence(min(confidence, 1.0), has_layout)

    number = chosen["invoice_number"][0]
    credit = credit_note(lines, number.label if number is not None else None, values.get("total"))
    kind = "invoice" if credit is None else "credit_note"
    # The charges between the subtotal and the total (shipping, a discount) as the values give them.
    summed_charges = charges
    if credit is not None:
        # A credit note's amounts are owed to the reader: given negative however they are printed, before the sums
        # are checked (a positive subtotal and tax under a negative total add up).
        if values.get("total") is not None and values["total"] > 0:
            summed_charges = -charges  # printed with the amounts, so turned with them
        for field in AMOUNT_FIELDS:
            if values.get(field) is not None and values[field] > 0:
                values[field] = -values[field]
        fields["document_type"] = phrase_evidence(0.9, credit, has_layout)
    unsure = {field for field in AMOUNT_FIELDS if (picked := chosen[field][0]) is not None and picked.unsure}
    checks = check_and_derive(values, fields, summed_charges, unsure, included(chosen["tax"][0]))
    total = chosen["total"][0]
    # Sums that disagree with the total: an amount was misread somewhere, which the payment lines may settle.
    misread = checks["totals_add_up"] is False or contradicted(found, chosen, charges)
    # Another total as strong as this one (on another page, or larger after it): which one is owed depends on
    # how the bill is built, which no payment line settles.
    confirmed = checks["totals_add_up"] and all(chosen[f][0] is not None for f in AMOUNT_FIELDS)
    rivalled = not own_bill and (
        (not confirmed and total_rivalled(found, total)) or total_outranked(found, total, rounded is not None)
    )
    paid = payment_check(found, total)
    if paid is not None:
        checks["payment_matches_total"] = paid
    tabled = tax_table_check(lines, total, mark)
    if tabled:
        checks["tax_table_matches_total"] = True
    if paid or (tabled and paid is None and not misread):
        # The payment lines under the total say the same amount was paid (or, where the printed sums do not
        # disagree, the tax table's rows add up to it): a second reading of it, from other lines.
        misread = False
        fields["total"]["confidence"] = max(fields["total"]["confidence"], PAYMENT_CONFIRMS)
    elif paid is False:
        # Cash tendered less the change is another amount: one of the lines was misread, a person looks.
        fields["total"]["confidence"] = min(fields["total"]["confidence"], FOR_REVIEW)
    if "total" in fields and (misread or rivalled):
        # A wrong total is the worst answer this reader can give: when the amounts disagree, a person decides.
        fields["total"]["confidence"] = min(fields["total"]["confidence"], ABSTAIN_BELOW - 0.05)
    vouching = [f for f in ("tax", "total") if f in fields and fields[f]["confidence"] >= REVIEW_BELOW]
    derived = chosen["subtotal"][0] is None and "subtotal" in values and len(vouching) == 2
    printed = printed_elsewhere(lines, values["subtotal"], mark, total, has_layout) if derived and total else None
    if printed is not None:
        fields["subtotal"] = phrase_evidence(PRINTED_DERIVED, printed, has_layout)
    stated = stated_currency(lines)
    if total is not None and total.value.currency:
        currency = total.value.currency
    elif total is not None and len(named := set(currencies_in(total.label.text))) == 1 and stated is None:
        currency = named.pop()  # "Rounded Total (RM): 489.30": the total's label names its currency
    if currency == "USD":
        currency = named_dollar(text) or dollar or currency
    # Nothing on the page writes another currency: no other sign or code, no "kr" by the amounts. (The stated
    # line is itself a sighting of its code, so it cannot vouch for itself against the amounts.)
    unopposed = set(currencies) <= {stated} and not CROWNS.search(text)
    if stated is not None and (currency is None or currency == stated) and unopposed:
        # "Währung: EUR", "Currency: USD": the page says which currency it bills in, in so many words.
        values["currency"] = stated
        fields["currency"] = evidence(0.95, stated)
    elif currency:
        values["currency"] = currency
        seen = currencies.get(currency, 1.0)  # 1.0: the total's own sign, or a bare "$" read as its country's dollar
        # A sign printed beside the total on a text layer, the one sign the page prints, is read for sure as well
        # as a sign printed twice, unless the country the page names says otherwise.
        beside_total = (
            total is not None
            and total.value.currency == currency
            and total.source.confidence >= 1.0
            and country in (None, currency)
        )
        # A `$` or `¥` however often printed names its currency only with the country the page names, or its code
        # or own sign printed too ("Total $ 45.990" in Santiago is no US dollar).
        plain = named_for_sure(text, currency) or country == currency
        sure = plain and (seen > 1.5 or (beside_total and len(currencies) == 1 and seen >= 1.0))
        fields["currency"] = evidence(0.9 if sure else 0.7 if seen >= 0.3 else 0.45, currency)
    elif crowns := crown_currency(text, country, banked := bank_currency(text)):
        # "kr" printed by the amounts, and the country that writes its crowns so named by the page: sure when its
        # forms or numbers and the payee's bank agree; from one of them (the buyer's, perhaps), for review.
        values["currency"] = crowns
        fields["currency"] = evidence(0.8 if country == banked == crowns else 0.7, f"kr ({crowns})")
    elif banked:
        values["currency"] = banked
        fields["currency"] = evidence(0.6, f"IBAN {banked}")
    elif country is not None:
        # No currency printed: the one of the country the addresses and company forms name, for review.
        values["currency"] = country
        fields["currency"] = evidence(0.55, f"country {country}")
    vendor = find_vendor(lines)
    if vendor is not None:
        name, confidence, phrase = vendor
        values["vendor"] = name
        fields["vendor"] = phrase_evidence(confidence, phrase, has_layout)
    return {"values": values, "fields": fields, "checks": checks, "language": language, "document_type": kind}


def _paid_after_discount(found: dict[str, list[Candidate]], total: Candidate | None) -> Candidate | None:
    """The printed total under the chosen one that a discount printed between them takes it down to, where cash less
    change is that total and not the chosen one ("Valor total 59,40 / Descontos 2,40 / Valor a pagar 57,00 /
    Dinheiro 60,00 / Troco 3,00"); None otherwise (a deposit, a withholding or an earlier balance between two totals
    is another rule's)."""
    if total is None or payment_check(found, total) is not False:
        return None
    for later in found.get("total", []):
        if later.line <= total.line or later.score < ABSTAIN_BELOW or not payment_check(found, later):
            continue
        taken = total.value.value - later.value.value
        between = (c for c in found.get("discount", []) if total.line < c.line < later.line)
        if taken > 0 and any(abs(c.value.value) == taken for c in between):
            return later
    return None


# Two dates the payment terms' days apart: sure.
_TERMS_AGREE = 0.8


def _only_date(lines: list[Line], day_first: bool) -> date | None:
    """The one date a document prints, or None when it prints none or several."""
    phrases = [p.text for line in lines for p in line.phrases if not is_identifier_context(p.text)]
    printed = {d.value for text in phrases for d in dates_in(text, day_first)}
    return printed.pop() if len(printed) == 1 else None


def _first_date(lines: list[Line], day_first: bool) -> tuple[Candidate | None, float]:
    """Without a date label, the first date printed in the top half of the first page, with low confidence."""
    for index, line in enumerate(lines):
        if line.page != 1 or line.y0 > line.page_height / 2:
            break
        for phrase in line.phrases:
            dates = dates_in(phrase.text, day_first)
            if dates and not is_identifier_context(phrase.text):
                return Candidate("issue_date", dates[0].value, 0.5, phrase, phrase, index), 0.5
    return None, 0.0


def _lone_date(lines: list[Line], day_first: bool) -> tuple[Candidate | None, float]:
    """The one date a document prints, wherever it stands (a receipt prints it at the foot, beside the time):
    with no other date to mistake it for, it is the date of issue."""
    only = _only_date(lines, day_first)
    if only is None:
        return None, 0.0
    for index, line in enumerate(lines):
        for phrase in line.phrases:
            printed = dates_in(phrase.text, day_first)
            if not is_identifier_context(phrase.text) and any(d.value == only for d in printed):
                return Candidate("issue_date", only, 0.65, phrase, phrase, index), 0.65
    return None, 0.0


def decide(reading: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The values a reader stands by, and the fields a person should look at (absent or unsure)."""
    values: dict[str, Any] = dict(reading["values"])
    review: list[str] = []
    for field in ("vendor", "invoice_number", "issue_date", "due_date", "currency", *AMOUNT_FIELDS):
        confidence = reading["fields"].get(field, {}).get("confidence", 0.0)
        if confidence < ABSTAIN_BELOW:
            if field in values:
                values[field] = None
            if field != "due_date" or field in reading["fields"]:
                review.append(field)  # an invoice without a due date is usual; one read too unsurely is not
        elif confidence < REVIEW_BELOW:
            review.append(field)
    return values, review
