"""Finding the lexicon's labels (`lexicon`) in a phrase, with what follows them and how strongly each names its field.

Labels are matched on folded text (lower case, no accents) at the start of a phrase and must end
where a word ends, so `de` never matches `Description`. The weight says how sure a label is:
`amount due` names the payable total, a bare `total` may be a column or a page total.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache, lru_cache

from quire.workflows.models.invoice.dates import dates_in
from quire.workflows.models.invoice.lexicon import LEXICON, WEAK
from quire.workflows.models.invoice.values import CURRENCY, currencies_in, fold

# The words of an order date's label ("Order date", "Bestelldatum", "Fecha del pedido"): a weak date of issue.
_ORDERED = re.compile(r"order|bestel|auftrag|commande|pedido|ordine|zamowien|pesanan")
# The payable total is named by these; other total-class labels (net, gross, page totals) rank lower.
PAYABLE = re.compile(
    r"due|payable|to\s+pay|grand|zu\s+zahlen|zahl(?:ungs)?betrag|endbetrag|endsumme|rechnungsbetrag|gesamtbetrag|brutto|ttc|"
    r"[aà]\s+payer|montant\s+du|te\s+(?:betalen|voldoen)|a\s+pagar|da\s+pagare|do\s+zap|incl|factura|fattura|documento|invoice\s+total|nota|"
    r"att\s+betala|at\s+betale|a\s+betale|maksettava|πληρωτεο|γενικο"
)
_BASE = re.compile(r"[\s\-:]*(?:base|basis|imponible|bemessungsgrundlage)\b")
# A ticket's number names the document (an e-ticket's receipt) only where no other number label does.
TICKET = re.compile(r"ticket|billet|biglietto|bilhete")
_TICKET_WEIGHT = 0.55


def ticket_number(text: str) -> bool:
    """Whether a bare "Ticket" names the number `text` starts with: a till receipt's ("TICKET 002841"), of four
    digits or more, not a count ("Ticket 2/2", "TICKET 3 ARTICLES") nor a name ("Ticket Restaurant France")."""
    number = re.match(r"[\d/-]+", text)
    return number is not None and sum(c.isdigit() for c in number[0]) >= 4


# The heading of a tax table ("Btw-specificatie", "VAT summary", "MwSt-Aufstellung"): it heads the table's rows, but
# names no tax of its own, whatever stands beside it in another column.
_TABLE_HEADING = re.compile(
    r"[\s\-:]*(?:specificatie|specification|summary|analysis|breakdown|overzicht|aufstellung|aufschlusselung|"
    r"zusammenstellung|ubersicht|recapitulatif|details?|rekapitulace|desglose|resumen|riepilogo|zestawienie|resumo|"
    r"sammanstallning|specifikation|erittely)\b"
)
# After "Total IVA", "Totale IVA", "Total VAT": the tax is included in this total ("TOTAL IVA INCLUIDO").
_INCLUDED = re.compile(r"\s*\(?(?:incl\b|incl\.|inclu|inkl|compris|compresa|inbegrepen)")
# A label of a total of something else ("Gesamtbetrag der Zuschläge", "total of discounts"); not "Total of this fee
# note", "Total of the invoice": this document's own total.
_OF = re.compile(
    r"(?:der|des|of|de|del|della|van|du)\s+"
    r"(?!(?:this|the|cette|la|le|dieser|diese[rs]?|deze|questa)\s+"
    r"(?:invoice|bill|fee\s+note|note|document|facture|rechnung|factuur|factura|fattura)\b)[a-z]"
)
# After a bare date word, the event it dates when that is not the document's issue: the works, a delivery, a
# service, an order ("Date d'exécution des travaux", "Datum der Leistung", "Date of supply", "Data di consegna").
_DATE_OF = re.compile(
    r"(?:(?:of|der|des|de|du|del|della|di|van|da|do|dos|das)\s+|d['\u2019]\s*|dell['\u2019]\s*)"
    r"(?:(?:the|la|le|el|o|a|het|de)\s+|l['\u2019]\s*)?"
    r"(?:deliver|suppl|servic|shipment|dispatch|perform|work|order|livraison|execution|intervention|travaux|prestation|"
    r"commande|expedition|leistung|lieferung|bestellung|auftrag|levering|uitvoering|bestelling|entrega|servicio|"
    r"prestacion|pedido|ejecucion|consegna|prestazion|ordine|esecuzion|intervent|spedizion|prestacao|encomenda|servico|"
    r"execucao|expedicao)"
    r"(?![a-z]*\s+(?:invoice|rechnung|facture|factura|fattura|fatura|factuur|faktur))"  # "Date of supplier invoice"
)
_BALANCE = re.compile(r"balance|paid|payment|saldo|restbetrag|solde|gezahlt|bezahlt|pago|pagato")
# What a bill asks for when it is paid late ("Amount Due After 04/01/2024", "Total due if paid after the due date",
# "Late payment amount"): the total with a late fee added, no total of this invoice.
_LATE = re.compile(
    r"\b(?:due|payable)\s+after\s+(?=\d|(?:the\s+)?due\s+date|[a-z]{3,9}\.?\s+\d)|\bif\s+(?:paid|received)\s+(?:after|late)\b|"
    r"\bafter\s+(?:the\s+)?due\s+date\b|\blate\s+(?:payment\s+)?(?:amount|total)\b"
)


@dataclass(frozen=True, slots=True)
class LabelMatch:
    field: str
    language: str
    label: str  # the label, folded (and with the words of a joined-up first word apart)
    rest: str  # what follows it in the same phrase, separators stripped
    weight: float
    # Every language whose lexicon has this very label ("total": English, French, Spanish, ...), `language` first.
    languages: tuple[str, ...]


# What brackets after a label hold when they are an amount, not a note: a decimal amount, digits alone, or digits
# with a currency ("(120.00)", "(120)", "($120)", "(JPY 12,000)", "(CHF 120.-)"); "(EUR)" and "(20%)" are notes.
_CURRENCY_IN_BRACKETS = rf"(?:{CURRENCY.pattern})"
_AMOUNT_IN_BRACKETS = (
    rf"[^)]*\d[.,]\d{{2}}(?!\d)[^)]*\)|[-\d.,\s]+\)|"
    rf"[^)]*{_CURRENCY_IN_BRACKETS}[^)]*\d|[^)]*\d[^)%]*{_CURRENCY_IN_BRACKETS}"
)


# A rate between a label and its note in brackets ("Gratuity 15% (not taxable)").
_RATE_BEFORE_NOTE = r"(?:\d{1,2}(?:[.,]\d+)?\s*%\s*(?=\())?"


@cache
def _table() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """The lexicon's patterns, compiled on first use: a fifth of a second that every process
    importing the reader (the CLI, the web app) would otherwise pay at start."""
    table: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for field, entries in LEXICON.items():
        table[field] = [
            # A label may stand behind a list's dash or bullet ("- Change 14.20"), and be followed by a note in
            # brackets ("Total (EUR)", "VAT (20%)") but not by an amount in them ("Total (120.00)": a credit). A
            # charge's or a discount's rate may stand before its note ("Gratuity 15% (not taxable)").
            (
                language,
                re.compile(
                    r"^\s*(?:[-\u2013\u2014*\u2022]\s*)?(?:"
                    + patterns
                    + r")(?![a-z\u03b1-\u03c9])\.?\s*"
                    + (_RATE_BEFORE_NOTE if field in ("charge", "discount") else "")
                    + r"(?:\((?!"
                    + _AMOUNT_IN_BRACKETS
                    + r")[^)]*\))?\s*[:#]?\s*",
                    re.I,
                ),
            )
            for language, patterns in entries
        ]
    return table


# The lexicon's languages in the order it lists them.
_LANGUAGE_ORDER = tuple(dict.fromkeys(language for entries in LEXICON.values() for language, _ in entries))
# The payment lines' fields: what was handed over, and the change given back.
PAYMENT = ("tendered", "change")
AMOUNT_FIELDS = ("subtotal", "tax", "total")
ADJUSTMENTS = ("charge", "discount", "withholding", "rounding", "earlier")
DATE_FIELDS = ("issue_date", "due_date")
# Fields tried in this order: more specific fields first where their labels share words.
ORDER = ("due_date", "invoice_number", "subtotal", "tax", "issue_date", "rounding", "total", "charge", "discount",
         "withholding", "earlier", "tendered", "change", "vendor", "buyer")  # fmt: skip


# A phrase's first word written in joined-up capitals, as some PDFs' text comes out ("TotalDue", "InvoiceNo.12");
# not a web address ("TaxJar.com").
_CAMEL = re.compile(r"^([A-Z][a-z]{2,})((?:[A-Z][a-z]+)+)(?![A-Za-z])(?!\.[A-Za-z])")


# A value glued before its label, as some PDFs' text runs come out ("993548900Factuurnummer:"): the label with
# the value after it. Only a number run into a capitalised label that ends the phrase with its colon.
_VALUE_FIRST = re.compile(r"^(?P<value>\d[\dA-Za-z/_-]*\d)(?P<label>[A-Z][^\W\d_][^\d:]{1,40}:)\s*$")


def _unglued(text: str) -> tuple[str, int]:
    """The phrase with the words of a joined-up first word apart ("TotalDue:$120.00" -> "Total Due:$120.00"), and
    where that word ends in it: a label read there must take the whole word, or it is a name ("TotalEnergies")."""
    glued = _CAMEL.match(text)
    if glued is None:
        return text, 0
    apart = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", glued.group(0))
    return apart + text[glued.end() :], len(apart)


def language_votes(matches: Iterable[LabelMatch]) -> str | None:
    """The language the labels point to: each label's vote split among the languages that have it, so that
    "Total" and "IVA" together say Spanish or Portuguese, and "Subtotal", "Tax" and "Total" say English; a
    tie goes to the language listed first."""
    votes: dict[str, float] = {}
    for match in matches:
        for language in match.languages:
            votes[language] = votes.get(language, 0.0) + 1 / len(match.languages)
    return max(votes, key=lambda language: (round(votes[language], 6), -_LANGUAGE_ORDER.index(language)), default=None)


# A label printed again in a second language after a slash, a few words without digits.
_SECOND_LANGUAGE = re.compile(r"/\s*[^\W\d_][^\d/]{0,40}")


def _rest(text: str) -> str:
    """What follows a label: without the colons, bullets and dashes around it, but a minus right after an amount
    with its decimals is its sign ("119,00-", a credit), not a dash ("03/05/2023-" is a date)."""
    rest = re.sub(r"^[\s:#.]*(?:[-\u2013]\s+)?", "", text).rstrip(" :#.\u2013")
    if _SECOND_LANGUAGE.fullmatch(rest):
        return ""  # "Invoice No. / Raqam al-Fatoorah", "Date / Fecha": the label again in another language
    return rest if re.search(r"\d[.,]\d{2}-$", rest) else rest.rstrip(" :#.-\u2013")


# "Total IVA incluido 121,00" is mostly the total with its tax, "Total VAT included £3.33" sometimes the tax it holds.
TAX_INCLUDED = re.compile(r"(?:vat|iva|gst|tax|mwst|tva|btw)\s+(?:incl|inclu)")
# A word that says the row is added or taken off, before its label: "Add: CGST @ 9%", "Less: Rebate"; or the code a
# tax rate's row is keyed by on the items ("1 = 19 % USt auf 3.380,04 €", "B = MwSt 7%").
_ADD_OR_LESS = re.compile(r"^\s*(?:(?:add|plus|less|minus)\s*:|(?:\d|[A-Z])\s*=)\s*", re.I)
# The heading of a payment-terms sentence, when the sentence after it starts with a label of its own
# ("Zahlungsbedingungen: Zahlbar bis 21.05.2025 ohne Abzug", "Payment terms: payable by 21 May 2025").
_TERMS_HEADING = re.compile(
    r"^\s*(?:payment\s+terms|terms(?:\s+of\s+payment)?|zahlungsbedingung(?:en)?|conditions?\s+de\s+(?:paiement|r[eè]glement)|"
    r"modalit[eé]s\s+de\s+paiement|condiciones\s+de\s+pago|condizioni\s+di\s+pagamento|termini\s+di\s+pagamento|"
    r"betalingsvoorwaarden|betalingscondities|warunki\s+p[lł]atno[sś]ci|condi[cç][oõ]es\s+de\s+pagamento)\s*:\s*(?=\S)",
    re.I,
)


# How strongly a bare, weak label ("Date", "Total", "Tax") names its field.
WEAK_WEIGHT = 0.6


# A till receipt's number label ("Receipt:", "Scontrino n.", "Paragon fiskalny nr"): an invoice cites a receipt by it
# as often ("Scontrino n. 0045 del 01/03/2025"), so it names the document's number below an invoice's label, and the
# date beside it weakly (`candidates`).
RECEIPT_WEIGHT = 0.75
RECEIPT_LABEL = re.compile(
    r"receipt:?$|quittung|kassenbon|kwitantie|re[cç]u\s|recibo|tal[aã]o|ricevuta|scontrino|paragon|nr\.?\s+paragonu|kuitti"
)
# The words that name a document an invoice, weakly alone ("Rechnung", "Invoice"): a page that prints one is one.
INVOICE_WORDS = frozenset({"invoice", "rechnung", "facture", "factura", "fattura", "factuur", "faktura", "fatura"})
# The stars and rules a till receipt prints before its label ("*** TOTAL ***", "==TOTAL", OCR's "*#** TOTAL").
_DECORATION = re.compile(r"^[*=~]+[\s*#=~]*(?=[^\W\d_])")


@lru_cache(maxsize=8192)
def match_labels(text: str) -> tuple[LabelMatch, ...]:
    """Every field whose label starts this phrase, the longest label first.

    Cached: the reader asks about the same phrase from the candidate pass, the neighbour search and
    the vendor search, and letterheads and footers repeat on every page.
    """
    text = _DECORATION.sub("", text)
    behind = _VALUE_FIRST.match(text)
    if behind is not None and not dates_in(behind["value"], True):  # "2024-01-05Invoice No:" ends a date
        text = f"{behind['label']} {behind['value']}"
    text, glued = _unglued(text)
    text = _ADD_OR_LESS.sub("", text)
    folded = fold(text)
    if _ORDINAL_NUMBER_SIGN.match(text):
        folded = f"n°{folded[2:]}"  # "Nº 0412" is "N° 0412": folding made its sign the letter o
    late = _LATE.search(folded) is not None
    found: list[LabelMatch] = []
    for field in ORDER:
        if field == "total" and late:
            continue  # what the bill asks for when paid late
        best: LabelMatch | None = None
        for language, pattern in _table()[field]:
            match = pattern.match(folded)
            if match is not None and len(folded[: match.end()].rstrip()) < glued:
                continue  # "Total" of "TotalEnergies SE": part of a name's word, no label
            if match is not None and best is not None and folded[: match.end()].strip() == best.label:
                best = replace(best, languages=(*best.languages, language))
                continue
            # The longest label wins; of labels alike in several languages ("total"), the first language listed.
            if match is None or (best is not None and len(folded[: match.end()].strip()) <= len(best.label)):
                continue
            label = folded[: match.end()].strip()
            if field in ("vendor", "buyer") and folded[match.end() :].strip() and not re.search(r":|\sto$", label):
                continue  # "Lieferant GmbH" is a name; a party label stands alone, ends with a colon or "to"
            bare = re.sub(r"[^a-z\u0131\u03b1-\u03c9\u0430-\u045f.# ]", "", label).strip(" .")  # Latin, Greek, Cyrillic
            weight = WEAK_WEIGHT if bare in WEAK.get(field, set()) else 1.0
            if field == "invoice_number" and TICKET.search(label):
                weight = _TICKET_WEIGHT  # a travel ticket's, or a support ticket's: below a bare "Number"
            if field == "invoice_number" and RECEIPT_LABEL.match(label):
                # A till receipt's own number, or on an invoice the receipt it cites: below an invoice's number; a
                # bare "Receipt:" names no number at all ("Receipt: VISA 4521").
                weight = WEAK_WEIGHT if label.rstrip(":") == "receipt" else RECEIPT_WEIGHT
            rest = _rest(text[match.end() :])
            if field == "invoice_number" and bare == "ticket" and rest and not ticket_number(rest):
                continue  # "TICKET CLIENT", "Ticket Shop Berlin GmbH": a bare "Ticket" names only a number after it
            if field == "issue_date" and _ORDERED.search(label):
                weight = 0.55  # the order's date: the invoice's only when the page prints no other, not even "Date"
            if field == "total":
                weight = 1.0 if PAYABLE.search(label) else weight
                weight = 0.5 if _BALANCE.search(folded[: match.end() + 12]) else weight
            if field == "issue_date" and weight == WEAK_WEIGHT and _DATE_OF.match(folded[match.end() :].lstrip()):
                weight = 0.3  # "Date d'exécution des travaux : 27 et 28 mars": the date of something else
            if field in ("total", "subtotal", "tax") and _OF.match(folded[match.end() :]):
                weight = 0.3  # "Gesamtbetrag der Zuschläge", "total of discounts": a total of something else
            if field == "tax" and folded.startswith("tota") and _INCLUDED.match(folded[match.end() :]):
                continue  # "Total IVA incluido": the total, tax included
            if field == "tax" and _TABLE_HEADING.match(folded[match.end() :]):
                weight = 0.3  # "Btw-specificatie | Subtotaal excl. btw | € 282,03": a table's heading, no tax
            if field in ("tax", "withholding") and _BASE.match(folded[match.end() :]):
                weight = 0.3  # "I.G.I.C. - Base 92,00", "IVA base imponible": the amount taxed, not the tax
            best = LabelMatch(
                field,
                language,
                label,
                rest,
                weight,
                # A bare "Ticket" is printed in every language ("TICKET 002841" on a French till receipt).
                () if bare == "ticket" else (language,),
            )
        if best is not None:
            found.append(best)
    heading = _TERMS_HEADING.match(text) if not found else None
    if heading is not None:
        # Only a label whose value follows it in the sentence: "Terms: Due on receipt" names no date, and the date
        # on the next line is another one.
        inner = match_labels(text[heading.end() :])
        return tuple(m for m in inner if m.rest and (m.field not in DATE_FIELDS or dates_in(m.rest, True)))
    return tuple(sorted(found, key=lambda m: -len(m.label)))


# The first words of amount and date labels, which OCR misreads by one letter ("TATAL", "ROUNRING", "Tota2").
_OCR_HEADS = ("total", "subtotal", "rounding", "amount", "balance", "invoice", "receipt", "netto", "brutto", "summe",
              "gesamt", "betrag", "rechnung", "datum", "importe", "factura", "fattura", "facture", "montant",
              "totaal", "bedrag", "debit", "credit")  # fmt: skip


# The number sign printed with the ordinal indicator ("Nº", U+00BA) rather than the degree sign, starting a phrase.
_ORDINAL_NUMBER_SIGN = re.compile(r"[Nn]\u00ba(?![^\W\d_])")
# The number sign "Nº" as OCR reads it when its small raised o looks like a digit.
_OCR_NUMBER_SIGN = re.compile(r"N[29]")


def _one_letter_off(a: str, b: str) -> bool:
    """True when `a` is `b` with one character read as another; a letter added or dropped is not counted,
    since that makes other words ("Summer", "Dates")."""
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1


@lru_cache(maxsize=8192)
def ocr_repaired(text: str) -> str | None:
    """The phrase with its first word spelled as the label word OCR misread one letter of, or None when the
    first word is no such misreading. Only words of five letters or more: shorter ones are too often words; and the
    number sign read as "N2" before a number.

    Cached like `match_labels`: the label pass and the currency sightings both ask about every OCR'd phrase."""
    first, _, rest = text.partition(" ")
    if _OCR_NUMBER_SIGN.fullmatch(first) and rest[:1].isdigit():
        return f"N° {rest}"  # the number sign "Nº" read as "N2" before a number ("N2 004812")
    head = re.match(r"[^\W_]+", first)
    if head is None or len(head.group(0)) < 5:
        return None
    word = fold(head.group(0))
    for size in (3, 2):
        # OCR read a tight "Total RM" as one word ("TotalRM", "SUBTOTALEUR"): the label, then the currency.
        label, code = head.group(0)[:-size], head.group(0)[-size:]
        if code.isupper() and label.isalpha() and fold(label) in _OCR_HEADS and currencies_in(code):
            return f"{label} {code}{first[head.end() :]} {rest}".rstrip()
    if word in _OCR_HEADS:
        return None
    for label in _OCR_HEADS:
        if _one_letter_off(word, label):
            spelled = label.upper() if head.group(0).isupper() else label
            return f"{spelled}{first[head.end() :]} {rest}".rstrip()
    return None
