"""Subtotal, tax and total chosen together: strong labels, the payable total last and largest, sums that add up;
tax printed per rate added up; a cash-rounding line after the total."""

from __future__ import annotations

import itertools
import re
from decimal import Decimal

from quire.workflows.models.invoice.candidates import ABSTAIN_BELOW, RATE, Candidate
from quire.workflows.models.invoice.columns import column_head
from quire.workflows.models.invoice.labelled import SIDE_BY_SIDE, Labelled
from quire.workflows.models.invoice.labels import AMOUNT_FIELDS, PAYMENT, match_labels
from quire.workflows.models.invoice.layout import Line, Phrase
from quire.workflows.models.invoice.values import Amount, amounts_in, fold

# Cash rounding moves a total by at most half a unit (a whole krona, 0.05 of a ringgit or a franc).
_MAX_ROUNDING = Decimal("0.5")


CENT = Decimal("0.01")


_SPLIT_TAXES = frozenset({*SIDE_BY_SIDE, "gst", "tps", "state", "county", "city", "local"})


# Per-rate tax lines further apart than this belong to different blocks (a VAT table and a footer).
_TAX_BLOCK_LINES = 8


# Words of rows that take a rate of an amount without being a tax.
NOT_A_TAX_ROW = re.compile(
    r"rabatt|discount|coupon|promo|skonto|remise|descuento|sconto|korting|rabat|desconto|off\b|servi|bedienung|"
    r"\btips?\b|gratuity|trinkgeld|pourboire|propina|mancia|fooi"
)


# How far a row's tax may stand from its rate of the amount taxed, beyond a cent: amounts rounded per line.
RATE_SLACK = Decimal("0.0005")


# A tax added up from a table's tax column, no row of which names the tax: surer than nothing, not sure.
_TAX_COLUMN_SUM = 0.6


# A tax label that names the sum of the tax lines rather than the tax at one rate.
_TAX_SUM = re.compile(r"total|summe|gesamt|betrag|totaal|totale|razem|yhteensa|\bi\s+alt\b|insgesamt|sum\b|suma\b")


def amount_value(candidate: Candidate | None) -> Decimal | None:
    return None if candidate is None else candidate.value.value


def net_charges(
    found: dict[str, list[Candidate]], subtotal: Candidate | None = None, total: Candidate | None = None
) -> Decimal:
    """Freight, shipping and the like less discounts and withheld income tax, each printed amount counted once:
    what lies between subtotal + tax and total. One printed above the subtotal (the one given, else the first) is
    a row the subtotal adds up already ("Delivery & setup | 1 x $85.00 | $85.00" among the items, "Discount 3%"
    over "Total excl. VAT"); one beside it on its line ("Subtotal | Freight | VAT | Total" in a row) is not. With the
    total given, a rounding line above it counts too ("Round Off (+) 0.20" over "Grand Total")."""
    firsts = (c.line for c in found.get("subtotal", []) if c.score >= ABSTAIN_BELOW)
    subtotal_at = subtotal.line if subtotal is not None else min(firsts, default=-1)

    def counted(field: str) -> list[Candidate]:
        return [c for c in found.get(field, []) if c.score >= ABSTAIN_BELOW and c.line >= subtotal_at]

    added = {c.value.value for c in counted("charge")}
    if total is not None:
        added |= {c.value.value for c in counted("rounding") if c.line < total.line}
    taken = {abs(c.value.value) for f in ("discount", "withholding") for c in counted(f)}
    return sum(added, Decimal(0)) - sum(taken, Decimal(0))


# A total of this bill's own charges ("Total Current Charges", "Total charges for this period", "New charges").
_OWN_CHARGES = re.compile(
    r"\b(?:current|new|this\s+(?:period|bill|invoice|month)|deze\s+factuur)\b|\blaufend|\baktuell|\bcourant|"
    # The bill's own, named: "Total de la facture TTC", "Summe dieser Rechnung", "Totale della fattura".
    r"\b(?:de\s+(?:la|cette|esta)\s+factura?e?|dieser\s+rechnung|della\s+fattura|di\s+questa\s+fattura)\b"
)


def earlier_balances(found: dict[str, list[Candidate]]) -> list[Candidate]:
    """The balances earlier bills left open that this one prints ("Previous balance 29.98")."""
    return [c for c in found.get("earlier", []) if c.value.value != 0 and c.score >= ABSTAIN_BELOW]


def without_earlier_balance(
    found: dict[str, list[Candidate]], total: Candidate | None
) -> tuple[Candidate | None, bool]:
    """A bill that prints an earlier balance left open ("Previous balance", "Past due") asks for more than its own
    total: its amount due adds that balance. Its own total is the total of this bill's charges where one is printed
    ("Total Current Charges"); with none, the total is in doubt. (The total, and whether it is in doubt.)"""
    if total is None:
        return total, False
    # A reminder's "Overdue amount" that is the amount due is this very bill, overdue: no other bill's balance.
    overdue = [c for c in earlier_balances(found) if "overdue" in fold(c.label.text)]
    if not [c for c in earlier_balances(found) if c not in overdue or c.value.value != total.value.value]:
        return total, False
    own = [c for c in found.get("total", []) if _OWN_CHARGES.search(fold(c.label.text)) and c.score >= ABSTAIN_BELOW]
    if not own:
        return total, True
    return max(own, key=lambda c: (c.score, c.line)), False


# A payment made before the bill was sent: a deposit or part payment received, a retainer or credit applied,
# money on account ...
_PAID_BEFORE = re.compile(
    r"\b(?:paid|received|applied|on\s+account|payments?\s+on\s+\w|prepaid|credited|bereits|erhalten|geleistet|"
    r"d[eé]j[aà]|re[cç]u|vers[eé]|pagad[oa]|recibid[oa]|ricevut[oa]|versat[oa]|betaald|ontvangen|wp[lł]acon|"
    r"zap[lł]acon|otrzyman)",
    re.I,
)
# ... not one the bill asks for ("Deposit required", "Payment 1 of 2 (due now)"), nor a discount ("Discount
# applied" takes its amount off the total itself).
_ASKED_FOR = re.compile(
    r"\b(?:due|required|requested|payable|f[aä]llig|[aà]\s+payer|\d+\s+of\s+\d+)\b|"
    r"discount|rabatt|skonto|remise|descuento|sconto|korting|rabat|desconto",
    re.I,
)


def before_payments(
    lines: list[Line], found: dict[str, list[Candidate]], total: Candidate | None, mark: str
) -> Candidate | None:
    """The invoice's total when the chosen one is the balance left after a payment printed above it ("Total:
    $3,600.00 / Payment on January 10 using check: $500.00 / Amount Due: $3,100.00"): the earlier, larger total the
    payment was taken off. None when there is no such pair."""
    if total is None:
        return None
    for earlier in found.get("total", []):
        larger = earlier.value.value > total.value.value
        if earlier.line >= total.line or not larger or earlier.score < ABSTAIN_BELOW:
            continue
        taken = earlier.value.value - total.value.value
        for line in lines[earlier.line + 1 : total.line]:
            paid = _PAID_BEFORE.search(line.text) and not _ASKED_FOR.search(line.text)
            if paid and any(abs(a.value) == taken for a in amounts_in(line.text, mark)):
                return earlier
    return None


def before_withholding(found: dict[str, list[Candidate]], total: Candidate | None) -> Candidate | None:
    """The invoice's total when the chosen one is what is left after income tax withheld from it, printed between
    the two ("Totale documento € 7.397,60 / Ritenuta d'acconto 20% -1.150,00 / Netto a pagare € 6.247,60"): the
    earlier, larger total. None when there is no such pair; a bill that prints only the amount left has no other."""
    if total is None:
        return None
    withheld = [c for c in found.get("withholding", []) if c.score >= ABSTAIN_BELOW]
    for earlier in found.get("total", []):
        if earlier.line >= total.line or earlier.score < ABSTAIN_BELOW:
            continue
        taken = earlier.value.value - total.value.value
        if taken > 0 and any(earlier.line < c.line < total.line and abs(c.value.value) == taken for c in withheld):
            return earlier
    return None


def after_rounding(
    lines: list[Line], labelled: Labelled, found: dict[str, list[Candidate]], total: Candidate | None
) -> tuple[Candidate, str] | None:
    """The total as paid when a cash-rounding line follows it ("Total 16.31 / Rounding Adj -0.01 / Balance Due
    16.30"): the total-class amount on the lines just below the rounding line, or the total plus the rounding."""
    if total is None:
        return None
    rounding_lines = [i for i, _, matches in labelled if matches[0].field == "rounding" and i > total.line]
    for index in rounding_lines:
        if index - total.line > 3 or lines[index].page != lines[total.line].page:
            continue
        below = [
            c for field in ("total", "subtotal") for c in found.get(field, [])
            if index < c.line <= index + 3 and lines[c.line].page == lines[index].page
        ]  # fmt: skip
        for candidate in sorted(below, key=lambda c: c.line):
            if 0 < abs(candidate.value.value - total.value.value) <= _MAX_ROUNDING:
                return candidate, candidate.source.text
        for rounding in (c for c in found.get("rounding", []) if c.line == index):
            if 0 < abs(rounding.value.value) <= _MAX_ROUNDING:
                paid = Amount(total.value.value + rounding.value.value, total.value.currency)
                return Candidate("total", paid, total.score, total.label, rounding.source, index), "total + rounding"
    return None


# A tax line that says its tax is part of the total ("VAT 20% incl.", "enth. MwSt", "dont TVA", "di cui IVA",
# "Includes GST"): a receipt's prices include it, so its subtotal may be the total itself.
_INCLUDED = re.compile(
    r"\b(?:incl\.?|inkl\.?|includ\w*|inclu[ií]d\w*|inclus\w*|enth\.?|enthalten\w*|darin|davon|dont|di\s+cui|waarvan|"
    r"inbegrepen|w\s+tym|varav|heraf|herav|josta|sisaltaa)(?!\w)"
)
# ... unless it says the opposite ("IVA (no incluido)", "VAT not included", "nicht enthalten").
_NOT_INCLUDED = re.compile(
    r"\b(?:no|not|non|nicht|niet|nao|nie|ikke|inte|ei)\s*\(?\s*(?:incl|includ|inclu|enth|inbegrep|wliczon)"
)


def included(tax: Candidate | None) -> bool:
    """True when the tax line says its tax is already in the total."""
    if tax is None:
        return False
    text = fold(tax.label.text)
    return bool(_INCLUDED.search(text)) and not _NOT_INCLUDED.search(text)


def adds_up(sub: Decimal, tax: Decimal, total: Decimal, charges: Decimal, inside: bool = False) -> bool:
    """Subtotal + tax (+ charges) = total; or, for a tax `inside` the total, a subtotal that is the total."""
    if inside and abs(sub - total) <= CENT:
        return True
    return abs(sub + tax - total) <= CENT or (charges != 0 and abs(sub + tax + charges - total) <= CENT)


def choose_amounts(
    found: dict[str, list[Candidate]], line_count: int, tax_sums: list[Candidate]
) -> dict[str, tuple[Candidate | None, float]]:
    """Subtotal, tax and total chosen together: strong labels, the payable total last and largest, sums that add up
    (with the charges and discounts printed under the subtotal). Of two subtotals that both add up ("Subtotal"
    over "Discount" over "Total excl. VAT"; "Goods | Freight | Net amount" in a row), the later: the amount the tax is
    of."""
    charges: dict[tuple[Candidate | None, Candidate | None], Decimal] = {}
    options: dict[str, list[tuple[Candidate | None, float]]] = {}
    totals = found.get("total", [])
    largest = max((c.value.value for c in totals), default=None)
    for field in AMOUNT_FIELDS:
        ranked: dict[Decimal, tuple[Candidate, float]] = {}
        for candidate in found.get(field, []) + (tax_sums if field == "tax" else []):
            rank = candidate.score
            if field == "total":
                rank += 0.1 * candidate.line / max(line_count, 1)
                rank += 0.1 if candidate.value.value == largest else 0.0
            if field == "tax" and candidate.value.value < 0:
                rank -= 0.3
            # A printed tax total the per-rate lines above it add up to ("SUMA PTU" under "PTU A", "PTU B").
            printed = all(candidate is not whole for whole in tax_sums)
            if field == "tax" and printed and any(whole.value.value == candidate.value.value for whole in tax_sums):
                rank += 0.05
            value = candidate.value.value
            if value not in ranked or ranked[value][1] < rank:
                ranked[value] = (candidate, rank)
        best = sorted(ranked.values(), key=lambda pair: -pair[1])[:5]
        options[field] = [(c, r) for c, r in best] + [(None, 0.0)]
    chosen: tuple[tuple[Candidate | None, float], ...] = ((None, 0.0),) * 3
    best_rank = -1.0
    for combo in itertools.product(*(options[f] for f in AMOUNT_FIELDS)):
        (sub, sub_rank), (tax, tax_rank), (total, total_rank) = combo
        rank = sub_rank + tax_rank + 1.5 * total_rank
        values = [amount_value(sub), amount_value(tax), amount_value(total)]
        if all(v is not None for v in values):
            s, t, g = (v for v in values if v is not None)
            if (sub, total) not in charges:
                charges[sub, total] = net_charges(found, sub, total)
            if adds_up(s, t, g, charges[sub, total], included(tax)):
                rank += 0.8 + (0.01 * _reading_order(sub) / max(line_count, 1) if sub else 0.0)
            else:
                rank -= 0.6
            rank -= 0.5 if abs(t) >= abs(g) > 0 else 0.0
            rank -= 0.5 if abs(t) > abs(s) else 0.0
        elif values[0] is not None and values[2] is not None:
            rank -= 0.4 if abs(values[0]) > abs(values[2]) else 0.0
        if rank > best_rank:
            best_rank, chosen = rank, combo
    return dict(zip(AMOUNT_FIELDS, chosen, strict=True))


def _reading_order(candidate: Candidate) -> float:
    """Where a candidate's value stands in reading order: its line, then (within the line) how far right."""
    return candidate.line + min(candidate.source.x0, 9_999) / 10_000


TaxSum = tuple[Candidate, frozenset[int]]


def tax_sums(found: dict[str, list[Candidate]]) -> list[TaxSum]:
    """Tax printed per rate on lines near each other ("USt 7%: 19,25" ... "USt 19%: 38,00") added up, each
    with the lines it sums: a candidate for the tax when the page prints no tax total."""
    # One candidate a printed tax label: two taxes may share a line ("CGST 9% 90.00    SGST 9% 90.00").
    per_label: dict[tuple[int, float], Candidate] = {}
    for candidate in found.get("tax", []):
        if candidate.score < ABSTAIN_BELOW or _TAX_SUM.search(fold(candidate.label.text)):
            continue
        key = (candidate.line, candidate.label.x0)
        if key not in per_label or per_label[key].score < candidate.score:
            per_label[key] = candidate
    clusters: list[list[Candidate]] = []
    for key in sorted(per_label):
        candidate = per_label[key]
        line = candidate.line
        last = clusters[-1][-1] if clusters else None
        if last is not None and last.label.page == candidate.label.page and line - last.line <= _TAX_BLOCK_LINES:
            clusters[-1].append(candidate)
        else:
            clusters.append([candidate])
    sums: list[TaxSum] = []
    for cluster in clusters:
        # The same tax printed twice counts once, under one name or two ("USt 19%" in the table, "MwSt 19%" under
        # it); only the taxes levied side by side on one sale count twice when equal (India's central and state
        # GST at equal rates: "CGST @ 9% 11,286.00", "SGST @ 9% 11,286.00").
        distinct = {(_split_tax(c.label.text), c.value.value): c for c in cluster}
        _drop_their_sum(distinct)
        if len(distinct) < 2:
            continue
        first, last = cluster[0], cluster[-1]
        summed = sum((value for _, value in distinct), Decimal(0))
        score = 0.95 * min(c.score for c in cluster)
        names = [name for name, _ in distinct]
        if len(names) == len(set(names)) and set(names) <= _CENTRAL_AND_STATE:
            # India's central and state (or union-territory) GST, one line each: together they are the tax, surer
            # than either part alone. (Other taxes' names are printed twice for one tax: "HST 13%", "GST/HST".)
            score = max(c.score for c in cluster) + 0.05
        whole = Candidate("tax", Amount(summed, first.value.currency), score, first.label, last.source, last.line)
        sums.append((whole, frozenset(c.line for c in cluster)))
    return sums


_CENTRAL_AND_STATE = frozenset({"cgst", "sgst", "utgst"})


def tax_column_sums(lines: list[Line], mark: str) -> list[TaxSum]:
    """The tax of a table with a row per rate whose rows name no tax, only its column's head does ("Satz | Netto
    CHF | MWST CHF" over "3.8 % | 852.60 | 32.40" and "8.1 % | 177.06 | 14.34"): the column added up, each row's
    tax being its rate of another amount on the row (the net, or the gross that holds it). A candidate for the tax
    as the per-rate lines are (the items' tax column added up too); none where a row under the same head is labelled
    (its tax is read from the label), and none where the rows above some row add up to the rows from it on: the
    items' tax, then the tax by rate again under them, would be counted twice."""
    columns: dict[tuple[int, float, float], list[tuple[int, Phrase, Amount]]] = {}
    heads: dict[tuple[int, float, float], Phrase] = {}
    labelled_heads: set[tuple[int, float, float]] = set()
    for index, line in enumerate(lines):
        rates = [Decimal(r.group(1).replace(",", ".")) for r in RATE.finditer(line.text)]
        if not rates or NOT_A_TAX_ROW.search(fold(line.text)):
            continue
        named = {m.field for p in line.phrases for m in match_labels(p.text)} & {*AMOUNT_FIELDS, *PAYMENT}
        row = [p for p in line.phrases if "%" not in p.text]
        values = [(p, found[0]) for p in row if len(found := amounts_in(p.text, mark)) == 1]
        for value, amount in values:
            tax = amount.value
            head = column_head(lines, index, value, row)
            if head is None or head[0].field != "tax":
                continue
            key = (line.page, round(head[1].x0, 1), round(head[1].y0, 1))
            heads[key] = head[1]
            if named:
                labelled_heads.add(key)
            elif any(_levied(rate, other.value, tax) for rate in rates for p, other in values if p is not value):
                columns.setdefault(key, []).append((index, value, amount))
    sums: list[TaxSum] = []
    for key, rows in columns.items():
        taxes = [amount.value for _, _, amount in rows]
        twice = any(sum(taxes[:cut], Decimal(0)) == sum(taxes[cut:], Decimal(0)) for cut in range(1, len(taxes)))
        if len(rows) < 2 or key in labelled_heads or twice:
            continue
        last, source, amount = rows[-1]
        summed = Amount(sum(taxes, Decimal(0)), amount.currency)
        whole = Candidate("tax", summed, _TAX_COLUMN_SUM, heads[key], source, last)
        sums.append((whole, frozenset(index for index, _, _ in rows)))
    return sums


def levied_on(rate: Decimal, amount: Decimal, tax: Decimal) -> bool:
    """Whether `tax` is `rate` percent of `amount`, within a cent and the rounding of amounts per line."""
    return abs(amount * rate / 100 - tax) <= CENT + amount * RATE_SLACK


def _levied(rate: Decimal, amount: Decimal, tax: Decimal) -> bool:
    """Whether `tax` is `rate` percent of `amount`, or the tax a gross `amount` at that rate holds."""
    held = amount * rate / (100 + rate)
    return 0 < tax < amount and (levied_on(rate, amount, tax) or abs(held - tax) <= CENT + amount * RATE_SLACK)


def _drop_their_sum(taxes: dict[tuple[str, Decimal], Candidate]) -> None:
    """Take out a tax line that is the sum of the others printed with them ("CGST 9.00", "SGST 9.00", "GST 18.00";
    "State tax 6.25", "Sales tax 6.25"): a total of the parts under another name, not one more tax."""
    for key in list(taxes):
        others = [other for other in taxes if other != key]
        if not others or key[1] != sum((value for _, value in others), Decimal(0)):
            continue
        if len(others) >= 2 or (not key[0] and all(name for name, _ in others)):
            del taxes[key]
            return


def _split_tax(label: str) -> str:
    """The name of one of the taxes levied side by side ("CGST @ 9%", "Add: Output CGST @ 9%" -> "cgst"), else "" (any
    other tax line)."""
    word = re.match(r"(?:(?:add|plus)\s*:\s*)?(?:output\s+)?([^\W\d_]+)", fold(label))
    return word.group(1) if word and word.group(1) in _SPLIT_TAXES else ""


def per_rate_tax(
    chosen: dict[str, tuple[Candidate | None, float]], sums: list[TaxSum], charges: Decimal
) -> tuple[Candidate | None, float]:
    """One rate's tax line chosen as the tax while the page prints others beside it is only part of the tax:
    unless subtotal + that line = total, it is left for review."""
    tax, confidence = chosen["tax"]
    if tax is None or not any(tax.line in lines and tax is not whole for whole, lines in sums):
        return tax, confidence
    sub, total = (amount_value(chosen[f][0]) for f in ("subtotal", "total"))
    if sub is not None and total is not None and adds_up(sub, tax.value.value, total, charges, included(tax)):
        return tax, confidence
    return tax, min(confidence, ABSTAIN_BELOW - 0.05)
