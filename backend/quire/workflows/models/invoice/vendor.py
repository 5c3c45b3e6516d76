"""Who issued the invoice: a company named in the letterhead or the legal footer, never the bill-to block.

Candidates are phrases that carry a company form (GmbH, B.V., S.A.R.L., Ltd, Inc., sp. z o.o., ...),
the value of a seller or payee label ("Remit to", "Make cheques payable to"), the first part of a
letter's return-address line ("IONOS SE · Elgendorfer Str. 57 · 56410 Montabaur"), names that match
the domain of the invoice's own website or email address, the sender a mailed bill's title names
("Receipt from Example, Inc."), and the first name-like phrase at the top of the first page (or the full
name spelled out under a logo's short one). The buyer's block (the lines under a bill-to label, or under a
return-address line) and labels or sentences never qualify.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter

from quire.workflows.models.checksums import has_iban
from quire.workflows.models.invoice.candidates import FOR_REVIEW
from quire.workflows.models.invoice.labels import PAYMENT, match_labels
from quire.workflows.models.invoice.layout import Line, Phrase, overlaps
from quire.workflows.models.invoice.values import (
    EMAIL_OR_URL,
    GREEK_REGISTERS,
    VAT_ID,
    amounts_in,
    dates_in,
    fold,
    repair_company_form,
)

_FORMS = (
    r"gmbh(?:\s*&\s*co\.?\s*kg)?|ag|kg|ug(?:\s*\(haftungsbeschr[aä]nkt\))?|e\.\s?k\.|ohg|gbr|inc\.?|incorporated|llc|l\.l\.c\.|"
    r"ltd\.?|limited|llp|lp\.?|l\.p\.|plc|corp\.?|corporation|pty\.?\s*ltd\.?|"
    # "& Co.", "Acme Co."; not an Irish address's county ("Naas, Co. Kildare", "NAAS, CO. KILDARE").
    r"&\s*co\.|co\.(?!\s*(?-i:[A-Z][a-z]|[A-Z]{3,}))|"
    r"s\.?\s?a\.?\s?r\.?\s?l\.?|sas|s\.a\.s\.?|sa|s\.a\.|sasu|eurl|sarl|sl|s\.l\.u?\.?|slu|s\.?p\.?a\.?|s\.?r\.?l\.?s?|"
    r"s\.n\.c\.|b\.?v\.?|n\.?v\.?|vof|sp\.\s?z\s?o\.?\s?o\.?|s\.c\.?|ltda\.?|lda\.?|eireli|me|s/a|oy|ab|as|a/s|aps|gie|"
    r"kgaa|sdn\.?\s*[b38]hd\.?|bhd\.?|berhad|s/b|pte\.?\s*ltd\.?|pvt\.?\s*ltd\.?|private\s+limited|"
    # Greece's Α.Ε., Ε.Π.Ε., Ι.Κ.Ε., Ο.Ε. and Ε.Ε., with their dots or without.  # noqa: RUF003
    r"\u03b1\.\s?\u03b5\.|\u03b5\.\s?\u03c0\.\s?\u03b5\.|\u03b9\.\s?\u03ba\.\s?\u03b5\.|[\u03bf\u03b5]\.\s?\u03b5\.|"
    r"\u03b1\u03b5|\u03b5\u03c0\u03b5|\u03b9\u03ba\u03b5|"
    r"(?-i:SE)"  # a Societas Europaea; only in capitals, where "se" is not a word
)
# A two-letter form written in small letters, without a dot, is a word ("as", "me", "sa"): "... registered under GST
# as my turnover". With its dot it is a form ("sp. z o.o.", "& co.").
_FORM = re.compile(rf"(?<![\w.])(?-i:(?![a-z]{{2}}(?![\w.])))(?:{_FORMS})(?![\w])", re.I)
_NOT_A_NAME = re.compile(
    r"^(?:(?:simplified|full)\s+)?(?:tax\s+)?invoice|^cash\s+(?:sale|bill)|^official\s+receipt|^sales\s+receipt|^rechnung|^facture|^factura|^fattura|^factuur|^faktura|^fatura|^receipt|^quittung|^page|^seite|"
    r"^p[aá]gina|^thank|^danke|^merci|^gracias|^grazie|^bedankt|^dzi[eę]kujemy|^obrigado|^original|^copy|^kopie|^duplicate|"
    # Other documents' titles, printed as large as a letterhead: pro forma and commercial invoices, credit and
    # debit notes, statements, quotes, reminders, delivery notes, receipts, corrections.
    r"^pro[\s-]?forma|^commercial\s+invoice|^self[\s-]billing|^(?:credit|debit)\s+note|^statement|^quot(?:e|ation)|"
    r"^estimate|^order\s+confirmation|^delivery\s+note|^packing\s+(?:slip|list)|^remittance|^angebot|^mahnung|"
    r"^zahlungserinnerung|^lieferschein|^gutschrift|^auftragsbest|^avoir|^devis|^bon\s+de\s+(?:livraison|commande)|"
    r"^nota\s+d[ei]\s+(?:cr[eé]dito|d[eé]bito|consegna)|^presupuesto|^albar[aá]n|^recibo|^ricevuta|^preventivo|"
    r"^offerte|^creditnota|^pakbon|^rachunek|^korekta|^paragon|^or[cç]amento|^(?:hyvitys)?lasku(?!\w)|^kvitt(?:o|ering)(?!\w)|"
    r"^kreditnota(?!\w)|^note\s+d['\u2019]?\s*honoraires|^honorar(?:note|rechnung)|^fee\s+note|^parcella|^minuta\s+de\s+honorarios|"
    r"^τιμολ[οό]γιο|^απ[οό]δειξη|^πιστωτικ[οό]|"  # noqa: RUF001  (Greek titles)
    # A department a payment goes to, not a company ("Accounts Receivable", "Billing Department").
    r"^accounts?\s+(?:receivable|payable)|^(?:billing|finance|accounting|accounts)\s+(?:dept|department)",
    re.I,
)
# OCR's noise around a misread line and the markup of banners ("*** COPY ***", "St™SC*C~CST"), and label
# colons: no company's name carries them.
_OCR_NOISE = re.compile(r"[\\*~@#%^=<>{}|]")
_NOT_IN_A_NAME = re.compile(rf"[_:]|{_OCR_NOISE.pattern}")
_SENTENCE = re.compile(
    # "der" after "van" or "von" is a family name's particle ("Van der Meulen Horeca B.V."), no article.
    r"\b(?:is|are|the|(?<!van\s)(?<!von\s)der|die|das|le|la|les|el|il|de\s+la|please|bitte|veuillez|if|wenn|for)\b",
    re.I,
)

# A street address: a house number and a comma first ("22, Jalan Perindustrian 5"), or a street word beside a number.
_HOUSE_NUMBER_FIRST = re.compile(r"^\s*(?:no\.?\s*)?\d+[a-z]?(?:[-/]\d+[a-z]?)?\s*,", re.I)
_STREET = re.compile(
    r"\b(?:street|road|rd|avenue|ave|lane|drive|boulevard|blvd|highway|jalan|jln|lorong|rue|chemin|calle|avenida|av|"
    r"plaza|via|viale|piazza|corso|ulica|ul|rua|\w*(?:stra(?:ss|ß)e|str|weg|allee|platz|straat|laan|plein|gracht))\b",
    re.I,
)
# The forms France writes before a company's name ("SAS DISTRIBUTION RHONE CENTRE"); "Co." and "AG" lead a county
# ("Co. Kildare") and a German register court ("AG Leipzig") instead.
_LEADING_FORM = re.compile(r"(?:sas|sasu|sarl|eurl|snc|selarl)\s", re.I)
# An Italian shop's owner after its name, on a line of its own: "di Donati Giulia & C. S.n.c." ("of").
# Words a name's monogram leaves out ("Chaudronnerie et Convoyage de l'Ouest": CCO).
_SMALL_WORDS = frozenset(
    {"and", "the", "of", "for", "et", "de", "des", "du", "la", "le", "les", "und", "der", "die", "das", "von", "van",
     "en", "het", "y", "e", "di", "del", "della", "da", "do", "dos", "i"}
)  # fmt: skip
_OWNED_BY = re.compile(r"^di\s+(?=[A-Z])")
_SAYS = re.compile(r"\s+(?:is|are|was|ist|est|è|es|jest|er|är)\s", re.I)
# A town, a comma, a US state's or Canadian province's code and its ZIP or postal code: "Charleston, SC 29401",
# "Calgary, AB T2T 0B6". Some codes are company forms elsewhere (Swedish AB, Brazilian ME); without the code after
# them they are a person's letters as often ("Dana Whitfield, CPA, CA", "Sarah Chen, MD").
_STATE = (
    r",\s*(?:A[BKLRZ]|BC|C[AOT]|D[CE]|FL|GA|HI|I[ADLN]|K[SY]|LA|M[ABDEINOST]|N[BCDEHJLMSTUVY]|O[HKNR]|P[AE]|QC|RI|"
    r"S[CDK]|T[NX]|UT|V[AT]|W[AIVY]|YT)"
)
_STATE_AFTER_TOWN = re.compile(rf"{_STATE}\s+(?:\d{{5}}(?:-\d{{4}})?|[A-Z]\d[A-Z]\s?\d[A-Z]\d)\s*$")
# ... and where a name read up to a company form ends in one ("Calgary, AB" of "Calgary, AB T2T 0B6"): no form.
_ENDS_IN_STATE = re.compile(rf"{_STATE}$")
_GB_POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s\d[ABD-HJLNP-UW-Z]{2}\b")
# The least OCR confidence of a phrase taken as the vendor for want of any sign that it names one.
MIN_OCR_NAME = 0.3
# Below this, a name read by OCR is given for review only: one letter misread makes another company's name.
SURE_OCR_NAME = 0.9
# A registration number in brackets after a name ("KT WONG TRADING (001904043-H)") is not part of it.
_REGISTRATION = re.compile(r"\s*[(\[][^()\[\]]*\d[^()\[\]]*[)\]]\s*$")

# "Receipt from Example, Inc.", "Rechnung von Beispiel GmbH": the title of a mailed bill names who sent it. The
# Romance, Dutch and Polish "of" also starts titles of another kind ("Reçu de paiement", "Factura de abono"), so
# after them only a name with a company form counts.
_TITLE_FROM = re.compile(
    r"^\s*(?:your\s+)?(?:invoice|receipt|bill|statement|rechnung|quittung|facture|re[cç]u|factura|recibo|fattura|"
    r"ricevuta|factuur|kwitantie|faktura|rachunek|paragon|fatura)\s+(?P<of>from|von|de|van|da|od)\s+(?P<name>\S.*)$",
    re.I,
)
# "Liam O'Connor t/as Brightside Cleaning": a sole trader's legal name, then the name it trades under. The person
# issues the invoice, where the trade name is the invoice's own (its letterhead's, or its web domain's): not a
# customer addressed the same way.
_TRADING_AS = re.compile(r"^\s*(?P<name>[^\W\d_].{1,60}?)\s+(?:t/as?|trading\s+as)\s+(?P<trade>[^\W\d_].*)$", re.I)
# "© 2024 Example, Inc. All rights reserved": the holder of a document's copyright is its issuer.
_COPYRIGHT = re.compile(r"^\s*(?:©|\(c\)|copyright)\s*(?:©\s*)?(?:\d{4}(?:\s*[-\u2013]\s*\d{4})?\s*)?,?\s*", re.I)
# A letter's return-address line: name, street and town in one small line, split by dots or bars.
_RETURN_ADDRESS = re.compile(r"^([^·|•]{3,60}?)\s*[·|•]\s*[^·|•]+[·|•]\s*.*\b\d{4,5}\b")
# The label of a party's legal name: "Razão Social: Alves & Rocha Ltda.", "Raison sociale :", "Company name:".
_NAME_LABEL = re.compile(
    r"^\s*(?:raz[aã]o\s+social|raison\s+sociale|ragione\s+sociale|raz[oó]n\s+social|denominaci[oó]n(?:\s+social)?|"
    r"(?:registered\s+|legal\s+)?company\s+name|legal\s+name|firmenname|firmierung|nazwa(?:\s+firmy)?|bedrijfsnaam|"
    r"statutaire\s+naam)\s*:\s*",
    re.I,
)
# A label that names a name ("Seller name", "Supplier's legal name:"): in a row of such labels each with its value
# ("Seller name | Van Leeuwen | Buyer name | ..."), the value is beside it.
_NAMED = re.compile(r"\bname\s*:?\s*$", re.I)
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
_HOST = re.compile(r"(?<![\w@.-])(?:[a-z0-9][a-z0-9-]*\.)+[a-z]{2,6}(?![\w-])|(?<=@)[a-z0-9.-]+\.[a-z]{2,6}")
# The company register and VAT numbers a legal footer prints beside the issuer's name.
_LEGAL_IDS = re.compile(
    rf"{VAT_ID.pattern}|\b(?:HRB|HRA|RCS|KvK|KRS|REGON|Companies\s+House|Reg(?:istered)?\.?\s+No|Org\.?\s?nr|CVR|Y-tunnus|"
    rf"IČO|Foretaksregisteret|{GREEK_REGISTERS})\b"
)
# The holder of the account a transfer goes to, named beside its IBAN ("Titulaire du compte : NETPRESSE"): the
# issuer, unless the page speaks of a direct debit, where the account printed is the buyer's. Weaker than a name
# with a company form at the top: a factoring bank may hold the account. ("Account name" is left out: on many bills
# it is the customer's account with the issuer.)
_ACCOUNT_HOLDER = re.compile(
    r"(?:^|[|·•\u2013-]\s*)(?:account\s+holder|beneficiary(?:\s+name)?|kontoinhaber(?:in)?|beg[uü]nstigter|"
    r"titulaire\s+du\s+compte|b[eé]n[eé]ficiaire|rekeninghouder|ten\s+name\s+van|titular\s+de\s+la\s+cuenta|"
    r"beneficiario|intestatario(?:\s+(?:del\s+)?conto)?|titular\s+da\s+conta|favorecido|benefici[aá]rio|"
    r"w[lł]a[sś]ciciel\s+rachunku)\s*:\s*(?P<name>[^:|·•\u2013]+?)\s*(?:$|[|·•\u2013]|\s{2,})",
    re.I,
)
_ACCOUNT_HOLDER_SCORE = 0.7
# Phrases on one line this many letter heights apart stand in different columns.
_COLUMN_GAP = 8
# A letterhead: the largest type in the top part of the first page, this much larger than the page's usual type.
# It outranks a name with a company form near it (0.8), which on such a page is as often the buyer's.
_LETTERHEAD_TOP = 0.15
_LETTERHEAD_SIZE = 1.25
_LETTERHEAD_SCORE = 0.82
# The name a letterhead's monogram stands for is printed larger than the page's usual type too, if less large.
_SPELLED_OUT_SIZE = 1.15
# A letterhead chosen over a company name that scores this much is given for review.
_LETTERHEAD_CONTESTED = 0.75
# A legal footer: the company's name on one of the last lines of a page, with its register entry or tax number
# on its own line or the two under it.
_FOOTER_LINES = 6
_REGISTER = re.compile(
    rf"{_LEGAL_IDS.pattern}|\b(?:Amtsgericht|Handelsregister|Registergericht|SIRE[NT]|NIF|CIF|P\.\s?IVA|Partita\s+IVA|"
    r"R\.E\.A\.|UID|MWST|USt-?Id|TVA|BTW|NIP|VAT\s+(?:No|Reg)|[Cc]apital(?:\s+social)?\s+(?:de\s+)?\d)"
)
# Words that tie a name to another company than the issuer: "Authorised dealer for Bosch AG", "Franchisee of
# Subway IP LLC", "Operated by Smith Foods Ltd", "Partner von ...".
# (Lower case only: "de", "del" and "des" stand inside names, "Casa del Libro S.L.".)
_SAYS_WHOSE = re.compile(r"\b(?:for|of|by|von|für|par|voor|door)\s")
# A trade name's company is printed at most this many lines under it (and as many of the letterhead's heights).
_LEGAL_NAME_LINES = 2
_DIRECT_DEBIT = re.compile(
    # "Domiciliation :" heads the bank's branch in a French bank-details block; elsewhere (Belgium) it is a debit.
    # "Domicilio fiscal" is an address, "Einzug am" a move.
    r"lastschrift|abbuch|abgebucht|bankeinzug|(?<![^\W\d_])einzug(?!s?datum|\s+am\b)|eingezogen|pr[eé]l[eè]v|"
    r"domicilia(?:ci[oó]n|zione|d[oa]|tion(?!\s*(?:bancaire\s*)?:))|domicili[eë]ring|prelie?v|incass|ge[iï]ncasseerd|"
    r"afgeschreven|adeudo|direct\s+debit|debit(?:ed)?\s+from|\bmandate?\b|\bmandato\b|mandatsreferenz|"
    r"d[eé]bito\s+(?:direto|autom[aá]tico)|polecenie\s+zap[lł]aty",
    re.I,
)


# Host parts that name a service or a mail provider, not the issuer.
# fmt: off
_NOT_THE_ISSUER = frozenset({
    "www", "mail", "email", "billing", "invoice", "invoices", "my", "mein", "app", "portal", "secure", "pay",
    "support", "help", "info", "service", "kundenservice", "gmail", "googlemail", "yahoo", "hotmail", "outlook",
    "live", "msn", "icloud", "aol", "gmx", "web", "t-online", "orange", "free", "wanadoo", "libero", "protonmail",
    "proton", "paypal", "stripe",
})
# fmt: on


def _buyer_block(lines: list[Line]) -> set[Phrase]:
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
            elif not _RETURN_ADDRESS.match(phrase.text):
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


def _label_alone(text: str) -> bool:
    """True for a phrase that is a label and nothing else ("Billing Address :")."""
    matches = match_labels(text)
    return bool(matches) and not matches[0].rest.strip()


def _names_the_seller(text: str) -> bool:
    """True for a phrase that opens with a seller, payee or account-holder label."""
    matches = match_labels(text)
    return bool((matches and matches[0].field == "vendor") or _ACCOUNT_HOLDER.match(text))


def _name_of(text: str) -> str:
    """The company name in a phrase: up to and including its company form, labels, bullets and a copyright
    sign with its years removed."""
    text = re.sub(r"^[^:]{0,25}:\s*", "", text) if ":" in text[:26] and match_labels(text) else text
    text = _COPYRIGHT.sub("", text)
    text = _OWNED_BY.sub("", text)
    text = re.split(r"\s[•●·|\u2013-]\s|,\s(?=\d)|\s{2,}", text)[0]
    forms = list(_FORM.finditer(text))
    # The last form, unless a sentence about the company starts after an earlier one ("Hartwell & Pryce LLP is a
    # limited liability partnership").
    said = next((form for form in forms if _SAYS.match(text, form.end())), None)
    if said is not None:
        text = text[: said.end()]
    elif len(forms) == 1 and _LEADING_FORM.match(text) and re.match(r"\s+[^\W\d_]{2}", text[forms[0].end() :]):
        pass  # a form that leads the name, as in France: "SAS DISTRIBUTION RHONE CENTRE"
    elif forms:
        text = text[: forms[-1].end()]
    return text.strip(" ,;:-").strip()


def _looks_like_name(text: str) -> bool:
    folded = fold(text)
    if len(text) < 3 or len(text) > 80 or not re.search(r"[^\W\d_]{2}", text):
        return False
    # A payment word starts names too ("Card Factory Ltd", "Cambio Real Estate S.L."): followed by words, it is
    # no label; alone ("Cash") or before an amount it is one.
    labelled = any(match.field not in PAYMENT or not re.search(r"[^\W\d_]", match.rest) for match in match_labels(text))
    if _NOT_A_NAME.search(folded) or EMAIL_OR_URL.search(text) or labelled or _NOT_IN_A_NAME.search(text):
        return False
    if amounts_in(text) or dates_in(text, True) or sum(ch.isdigit() for ch in text) > 3:
        return False
    if _address(text):
        return False
    return not (_SENTENCE.search(text) and len(text.split()) > 5)


# Street words that name shops and places too ("Row 34", "Square 1 Bakery"): a street only after its house number.
_NUMBERED_STREET = re.compile(
    r"(?<![\w.])\d+[a-z]?\s+(?:[^\W\d_]+\s+){1,3}(?:row|way|court|ct|place|square|sq|terrace|crescent|parkway)\b", re.I
)


def _address(text: str) -> bool:
    """A street address: a house number and a comma first, or a street word beside a number. A name that ends
    in a company form of three letters or more is none ("PLAZA 88 SDN BHD", "3M, Inc."); two-letter forms
    are words of addresses too ("12, Jalan Kg Baru", "Calle Sa Porrassa 12")."""
    forms = list(_FORM.finditer(text))
    last = forms[-1] if forms else None
    if last is not None and not text[last.end() :].strip(" .,;") and len(re.sub(r"[\W\d_]", "", last.group(0))) >= 3:
        number_only = re.match(r"^\s*\d+[^\W\d_]*,\s*$", text[: last.start()]) is not None  # "3M, Inc."
        return bool(_HOUSE_NUMBER_FIRST.match(text)) and not number_only
    if _GB_POSTCODE.search(text) or _STATE_AFTER_TOWN.search(text):
        return True  # "Bath BA1 2HN", "Calgary, AB T2T 0B6": no name carries a British postcode or a state's
    return bool(
        _HOUSE_NUMBER_FIRST.match(text)
        or (_STREET.search(text) and re.search(r"\d", text))
        or _NUMBERED_STREET.search(text)
    )


def _own_domains(lines: list[Line], buyer: set[Phrase]) -> set[str]:
    """The distinctive part of every web or email domain printed outside the buyer's block: `ionos` of mein.ionos.de."""
    found: set[str] = set()
    for phrase in (p for line in lines for p in line.phrases if p not in buyer):
        for host in _HOST.findall(phrase.text.lower()):
            labels = [label for label in host.split(".")[:-1] if label not in _NOT_THE_ISSUER]
            if labels and len(labels[0]) >= 4:
                found.add(labels[0].replace("-", ""))
    return found


def _matches_domain(name: str, domains: set[str]) -> bool:
    compact = re.sub(r"[^a-z0-9]", "", re.sub(r"^the\s+", "", fold(name)))
    return any(compact.startswith(domain) or (len(compact) >= 5 and domain.startswith(compact)) for domain in domains)


def _quoted(text: str, lines: list[Line], index: int, phrase: Phrase) -> str:
    """A payee name in quotes that runs on to the next line: `payable to “British Gas` + `Trading Ltd” and ...`."""
    opened = re.match(r"^\s*[\"“„«']\s*", text)
    if opened is None:
        return text
    if re.search(r"[\"”“»']", text[opened.end() :]) is None:
        following = next(
            (p.text for other in lines[index + 1 : index + 2] if other.page == lines[index].page
             for p in other.phrases if abs(p.x0 - phrase.x0) < 30),
            "",
        )  # fmt: skip
        text = f"{text} {following}"
    return re.split(r"[\"”“»']", text[opened.end() :])[0]


def _spelled_out(lines: list[Line], index: int, phrase: Phrase, text: str, buyer: set[Phrase]) -> Phrase | None:
    """The line just under a logo's short name that spells it out: "GREENLEAF" over "Greenleaf Landscaping"."""
    short = fold(text).strip()
    line = lines[index]
    for below in lines[index + 1 : index + 2]:
        if below.page != line.page or below.y0 - line.y1 > 2 * max(phrase.height, 8.0):
            return None
        for other in below.phrases:
            longer = fold(other.text).strip()
            named = longer.startswith(short + " ") and _looks_like_name(other.text) and len(other.text.split()) <= 6
            if named and other not in buyer:
                return other
    return None


def _account_holder(lines: list[Line], buyer: set[Phrase]) -> list[tuple[float, str, Phrase]]:
    """The holder of the account the invoice asks to be paid into, where its IBAN is printed whole beside it (its
    check digits hold: a masked one, "FR76 ****" or "DE89 XXXX", is the buyer's own)."""
    found: list[tuple[float, str, Phrase]] = []
    for index, line in enumerate(lines):
        # The label starts a phrase, or follows a dash or a bar in one: not "Bank of beneficiary: Deutsche Bank AG".
        # Its name may stand in the next phrase ("Titulaire du compte :  NETPRESSE").
        held = next(
            (
                m
                for i in range(len(line.phrases))
                if (m := _ACCOUNT_HOLDER.search("  ".join(p.text for p in line.phrases[i:]))) is not None
            ),
            None,
        )
        if held is None:
            continue
        near = " ".join(other.text for other in lines[max(0, index - 2) : index + 3] if other.page == line.page)
        page = " ".join(other.text for other in lines if other.page == line.page)
        name = _name_of(held.group("name"))
        phrase = next((p for p in line.phrases if held.group("name").strip() in p.text), line.phrases[-1])
        if has_iban(near) and not _DIRECT_DEBIT.search(page) and phrase not in buyer and _looks_like_name(name):
            found.append((_ACCOUNT_HOLDER_SCORE, name, phrase))
    return found


def _letterhead(lines: list[Line], buyer: set[Phrase]) -> Phrase | None:
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
            and _initials_hold(text, p.text)
        ]  # fmt: skip
        if spelled and _looks_like_name(spelled[0].text) and len(spelled[0].text.split()) <= 6:
            return spelled[0]
    if tallest in buyer or _FORM.search(text) or not _looks_like_name(text) or len(text.split()) > 6:
        return None
    return tallest


def _legal_name_under(
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
        if item[2] is not letterhead and _FORM.search(item[1]) and item[2].page == letterhead.page
        and not _SAYS_WHOSE.search(item[1])
        and item[2].line > letterhead.line and column_lines(item) <= _LEGAL_NAME_LINES
        and item[2].y0 - letterhead.y1 <= _LEGAL_NAME_LINES * letterhead.height
        and overlaps(item[2], letterhead)
    ]  # fmt: skip
    return min(under, key=lambda item: item[2].line, default=None)


def _legal_footer(lines: list[Line], scored: list[tuple[float, str, Phrase]]) -> tuple[float, str, Phrase] | None:
    """The company named in a page's legal footer, over its register entry or tax number: "Heller Lebensmittel
    GmbH & Co. KG" over "Amtsgericht Köln HRA 31877", at the foot of a receipt headed by its shop's name. The
    issuer in law, where the letterhead is a trade name."""
    last = {line.page: index for index, line in enumerate(lines)}
    for item in sorted(scored, key=lambda item: -item[2].line):
        phrase = item[2]
        if not _FORM.search(item[1]) or last[phrase.page] - phrase.line >= _FOOTER_LINES:
            continue
        beside = [p for line in lines[phrase.line : phrase.line + 3] if line.page == phrase.page for p in line.phrases]
        if any(overlaps(p, phrase) and _REGISTER.search(p.text) for p in beside):
            return item
    return None


def _initials_hold(short: str, name: str) -> bool:
    """Whether a monogram's letters are the initials of a name's last words, its small words counted or not ("LdV"
    of "Studio Lieke de Vries", "CCO" of "Chaudronnerie et Convoyage de l'Ouest")."""
    words = re.findall(r"[^\W\d_]+", fold(_FORM.sub("", name)))
    every = "".join(word[0] for word in words)
    main = "".join(word[0] for word in words if word not in _SMALL_WORDS and len(word) > 1)
    return any(len(initials) >= 2 and initials.endswith(fold(short)) for initials in (every, main))


def find_vendor(lines: list[Line]) -> tuple[str, float, Phrase] | None:
    """The issuer's name, a confidence and the phrase it was read from; None when nothing qualifies."""
    buyer = _buyer_block(lines)
    domains = _own_domains(lines, buyer)
    scored: list[tuple[float, str, Phrase]] = []
    names = Counter(
        _name_of(p.text).casefold() for line in lines for p in line.phrases if p not in buyer and _FORM.search(p.text)
    )
    scored += _account_holder(lines, buyer)
    letterhead = _letterhead(lines, buyer)
    # A short name whose company spells it out in full elsewhere ("ACME" over "ACME Widgets GmbH") is left to the
    # full name, which stands as high as the letterhead: wherever it is printed (in the footer), it is the
    # letterhead's company.
    short = {re.sub(r"[^a-z0-9]", "", fold(letterhead.text))} if letterhead is not None else set()
    monogram = letterhead.text if letterhead is not None and re.fullmatch(r"[^\W\d_]{2,5}", letterhead.text) else None

    def spells_out(name: str) -> bool:
        return _matches_domain(name, short) or (monogram is not None and _initials_hold(monogram, name))

    spelled_out = any(spells_out(name) for name in names)
    if letterhead is not None and not spelled_out:
        scored.append((_LETTERHEAD_SCORE, letterhead.text.strip(), letterhead))
    for index, line in enumerate(lines):
        position = line.y0 / max(line.page_height, 1.0)
        for phrase in line.phrases:
            if phrase in buyer:
                continue
            matches = match_labels(phrase.text)
            if matches and matches[0].field == "vendor":
                # "Remit To | Ship-To-Party | Ordered By": heads of columns, the name is below; but "Seller name | Van
                # Leeuwen Hydrauliek | Buyer name | ...": a name's label, the name beside it.
                right = [p for p in line.phrases if p.x0 > phrase.x1]
                pairs = _NAMED.search(phrase.text) and (len(right) < 2 or _NAMED.search(right[1].text))
                header = len(line.phrases) >= 3 and not pairs
                beside = next((p.text for p in line.phrases if p.x0 > phrase.x1 and not header), "")
                # Another label beside it ("Sold By : | Billing Address :") heads a column of its own.
                rest = matches[0].rest or ("" if beside.rstrip().endswith(":") or _label_alone(beside) else beside)
                rest = _quoted(rest, lines, index, phrase)
                below = [
                    p for other in lines[index + 1 : index + 5] if other.page == line.page
                    for p in other.phrases
                    # In the heading's column, or a legal name's label anywhere under it (a centred heading)
                    if (abs(p.x0 - phrase.x0) < 30 and ":" not in other.text) or _NAME_LABEL.match(p.text)
                ]  # fmt: skip
                for text, source in [(rest, phrase)] + [(_NAME_LABEL.sub("", p.text), p) for p in below]:
                    # The name alone: a remittance line runs on into its address ("Summit Staffing LLC, PO Box 100").
                    if _looks_like_name(name := _name_of(text)):
                        scored.append((0.85, name, source))
                        break
                continue
            titled = _TITLE_FROM.match(phrase.text)
            if titled and titled.group("of").lower() not in ("from", "von") and not _FORM.search(titled.group("name")):
                titled = None
            if titled and line.page == 1 and _looks_like_name(_name_of(titled.group("name"))):
                scored.append((0.85, _name_of(titled.group("name")), phrase))
                continue
            trading = _TRADING_AS.match(phrase.text)
            own_trade = trading is not None and _matches_domain(trading.group("trade"), domains | short)
            if trading and own_trade and line.page == 1 and _looks_like_name(trading.group("name")):
                scored.append((0.85, _name_of(trading.group("name")), phrase))
                continue
            sender = _RETURN_ADDRESS.match(phrase.text)
            if sender and line.page == 1 and _looks_like_name(sender.group(1)):
                scored.append((0.85, _name_of(sender.group(1)), phrase))
                continue
            if not _FORM.search(phrase.text):
                if line.page == 1 and _looks_like_name(phrase.text) and _matches_domain(phrase.text, domains):
                    scored.append((0.75, phrase.text.strip(), phrase))
                continue
            name = _name_of(phrase.text)
            # The rest of the word its form ends in: "St™SC" looks like a name, "St™SC*C~CST" is OCR's noise.
            glued = phrase.text[len(name) :].split(" ", 1)[0] if phrase.text.startswith(name) else ""
            if (
                _OCR_NOISE.search(glued)
                or _ENDS_IN_STATE.search(name)
                or not _looks_like_name(name)
                or len(name.split()) > 8
                or not re.search(r"[^\W\d_]{2}", _FORM.sub("", name))
            ):
                continue  # a company form alone ("SARL au capital de ...") names nobody
            score = 0.55
            score += 0.25 if line.page == 1 and position < 0.3 else 0.1 if position > 0.8 else 0.0
            score += 0.1 if names[name.casefold()] > 1 else 0.0
            score -= 0.15 if line.page > 1 else 0.0
            score += 0.15 if _matches_domain(name, domains) else 0.0
            score += 0.1 if _LEGAL_IDS.search(line.text) else 0.0  # a legal footer: the name beside its VAT ID
            scored.append((score, name, phrase))
    if spelled_out:
        scored = [
            (max(score, _LETTERHEAD_SCORE) if spells_out(name) else score, name, phrase)
            for score, name, phrase in scored
        ]
    if not scored:
        for index, line in enumerate(lines[:8]):
            if line.page != 1:
                break
            for phrase in line.phrases:
                text = _REGISTRATION.sub("", phrase.text)
                if phrase.confidence < MIN_OCR_NAME:
                    continue  # what OCR could not read is no name, however name-like its letters
                if phrase not in buyer and _looks_like_name(text) and len(text.split()) <= 6:
                    fuller = _spelled_out(lines, index, phrase, text, buyer)
                    scored.append((0.5, fuller.text if fuller else text.strip(), fuller or phrase))
                    break
            if scored:
                break
    if not scored:
        return None
    score, name, phrase = max(scored, key=lambda item: item[0])
    contested = phrase is letterhead and any(
        other >= _LETTERHEAD_CONTESTED for other, _, p in scored if p is not letterhead
    )
    legal = (
        (_legal_name_under(lines, letterhead, scored) or _legal_footer(lines, scored)) if phrase is letterhead else None
    )
    if legal is not None:
        score, name, phrase = legal
    if contested:
        # A company named near the top as well: the letterhead is likelier the issuer, but a person checks.
        score = min(score, FOR_REVIEW)
    if phrase.confidence < SURE_OCR_NAME:
        # A name OCR read some letters of unsurely ("TKANO HANDEL" for "IKANO HANDEL"): given, for a person to check.
        score = min(score, FOR_REVIEW)
    return repair_company_form(name), min(score, 0.95), phrase
