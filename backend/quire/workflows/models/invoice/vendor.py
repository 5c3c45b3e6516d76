"""Who issued the invoice: a company named in the letterhead or the legal footer, never the bill-to block.

Candidates are phrases that carry a company form (GmbH, B.V., S.A.R.L., Ltd, Inc., sp. z o.o., ...),
the value of a seller or payee label ("Remit to", "Make cheques payable to"), the first part of a
letter's return-address line ("IONOS SE · Elgendorfer Str. 57 · 56410 Montabaur"), names that match
the domain of the invoice's own website or email address, the sender a mailed bill's title names
("Receipt from Example, Inc."), and the first name-like phrase at the top of the first page (or the full
name spelled out under a logo's short one). The buyer's block (the lines under a bill-to label, or under a
return-address line) and labels or sentences never qualify. What a name looks like is in `names`, the buyer's
block in `buyer`, the letterhead and the legal footer in `letterhead`.
"""

from __future__ import annotations

import re
from collections import Counter

from quire.workflows.models.checksums import has_iban
from quire.workflows.models.invoice.buyer import ACCOUNT_HOLDER, RETURN_ADDRESS, buyer_block
from quire.workflows.models.invoice.candidates import FOR_REVIEW
from quire.workflows.models.invoice.labels import match_labels
from quire.workflows.models.invoice.layout import Line, Phrase
from quire.workflows.models.invoice.letterhead import (
    LEGAL_IDS,
    LETTERHEAD_CONTESTED,
    LETTERHEAD_SCORE,
    legal_footer,
    legal_name_under,
    letterhead_of,
    spelled_out_under,
)
from quire.workflows.models.invoice.names import (
    ENDS_IN_STATE,
    FORM,
    OCR_NOISE,
    compact_name,
    initials_hold,
    looks_like_name,
    matches_domain,
    name_of,
)
from quire.workflows.models.invoice.values import fold, repair_name

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
# "HostFerry is a trading name of Ferrymead Digital Ltd", "Saltbox Coffee is operated by Saltbox Roasting Co. LLC":
# the company in law behind the name the invoice trades under (its letterhead's, or its web domain's).
_BRAND_OF = re.compile(
    r"^\s*(?P<trade>[^\W\d_].{1,60}?)\s+(?:"
    r"(?:is|are)\s+(?:a\s+|the\s+)?(?:registered\s+)?(?:trading\s+(?:name|style)|brand(?:\s+name)?)\s+of|"
    r"(?:is|are)\s+(?:operated|run)\s+by|"
    r"ist\s+eine?\s+(?:eingetragene\s+)?(?:marke|handelsname)\s+(?:der|des|von)|"
    r"wird\s+betrieben\s+(?:von(?:\s+der)?|durch(?:\s+die)?)|"
    r"est\s+une?\s+(?:marque|nom\s+commercial|enseigne)\s+(?:de\s+la\s+soci[eé]t[eé]|de|d['\u2019])|"
    r"est\s+exploit[eé]e?\s+par(?:\s+la\s+soci[eé]t[eé])?|is\s+een\s+(?:handelsnaam|merk)\s+van|es\s+una\s+marca\s+(?:registrada\s+)?de|"
    r"[eè]\s+un\s+marchio\s+(?:registrato\s+)?di|[eé]\s+uma\s+marca\s+(?:registada\s+|registrada\s+)?d[aeo]"
    r")\s*(?P<name>[^\W\d_].*)$",
    re.I,
)
# The seller's labels that also name the salesperson at a till ("Vendeur : Sophie", "Verkäufer: Jan").
_SALESPERSON = re.compile(r"vendeu(?:r|se)|vendedora?|verkaufer(?:in)?|venditore|verkoper")
# A value of one word and no company form after such a label: a first name as often as a company's.
_LONE_WORD_SCORE = 0.65
# Above the trade name itself, wherever that is printed: the sentence says who stands behind it.
_BRAND_OWNER_SCORE = 0.9
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
_HOST = re.compile(r"(?<![\w@.-])(?:[a-z0-9][a-z0-9-]*\.)+[a-z]{2,6}(?![\w-])|(?<=@)[a-z0-9.-]+\.[a-z]{2,6}")
_ACCOUNT_HOLDER_SCORE = 0.7
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


def _label_alone(text: str) -> bool:
    """True for a phrase that is a label and nothing else ("Billing Address :")."""
    matches = match_labels(text)
    return bool(matches) and not matches[0].rest.strip()


def _form_under(lines: list[Line], index: int, phrase: Phrase) -> Phrase | None:
    """The company form a long name wrapped onto the next line, printed there alone under its start: "S.A. DE C.V."
    under "TALLER MECÁNICO Y TORNO ÁVILA,"; or under its middle, on a receipt that centres its lines ("Pty Ltd" under
    "Little Fig Hospitality")."""
    line = lines[index]
    below = lines[index + 1] if index + 1 < len(lines) else None
    if below is None or below.page != line.page or below.y0 - line.y1 > phrase.height:
        return None
    middle = (phrase.x0 + phrase.x1) / 2
    under = (
        p for p in below.phrases
        if abs(p.x0 - phrase.x0) < phrase.height or abs((p.x0 + p.x1) / 2 - middle) < phrase.height
    )  # fmt: skip
    return next((p for p in under if FORM.fullmatch(p.text.strip(" ,;"))), None)


def _own_domains(lines: list[Line], buyer: set[Phrase]) -> set[str]:
    """The distinctive part of every web or email domain printed outside the buyer's block: `ionos` of mein.ionos.de."""
    found: set[str] = set()
    for phrase in (p for line in lines for p in line.phrases if p not in buyer):
        for host in _HOST.findall(phrase.text.lower()):
            labels = [label for label in host.split(".")[:-1] if label not in _NOT_THE_ISSUER]
            if labels and len(labels[0]) >= 4:
                found.add(labels[0].replace("-", ""))
    return found


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
                if (m := ACCOUNT_HOLDER.search("  ".join(p.text for p in line.phrases[i:]))) is not None
            ),
            None,
        )
        if held is None:
            continue
        near = " ".join(other.text for other in lines[max(0, index - 2) : index + 3] if other.page == line.page)
        page = " ".join(other.text for other in lines if other.page == line.page)
        name = name_of(held.group("name"))
        phrase = next((p for p in line.phrases if held.group("name").strip() in p.text), line.phrases[-1])
        if has_iban(near) and not _DIRECT_DEBIT.search(page) and phrase not in buyer and looks_like_name(name):
            found.append((_ACCOUNT_HOLDER_SCORE, name, phrase))
    return found


def find_vendor(lines: list[Line]) -> tuple[str, float, Phrase] | None:
    """The issuer's name, a confidence and the phrase it was read from; None when nothing qualifies."""
    buyer = buyer_block(lines)
    domains = _own_domains(lines, buyer)
    scored: list[tuple[float, str, Phrase]] = []
    names = Counter(
        name_of(p.text).casefold() for line in lines for p in line.phrases if p not in buyer and FORM.search(p.text)
    )
    scored += _account_holder(lines, buyer)
    letterhead = letterhead_of(lines, buyer)
    # A short name whose company spells it out in full elsewhere ("ACME" over "ACME Widgets GmbH") is left to the
    # full name, which stands as high as the letterhead: wherever it is printed (in the footer), it is the
    # letterhead's company.
    short = {re.sub(r"[^a-z0-9]", "", fold(letterhead.text))} if letterhead is not None else set()
    monogram = letterhead.text if letterhead is not None and re.fullmatch(r"[^\W\d_]{2,5}", letterhead.text) else None

    def spells_out(name: str) -> bool:
        return matches_domain(name, short) or (monogram is not None and initials_hold(monogram, name))

    spelled_out = any(spells_out(name) for name in names)
    if letterhead is not None and not spelled_out:
        scored.append((LETTERHEAD_SCORE, letterhead.text.strip(), letterhead))
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
                    if looks_like_name(name := name_of(text)):
                        # One word with no company form after "Vendeur :", "Vendedor:" on a till receipt is the
                        # salesperson's first name: below a company's name printed elsewhere.
                        alone = _SALESPERSON.fullmatch(matches[0].label.rstrip(" :")) and len(name.split()) == 1
                        alone = alone and not FORM.search(name)
                        scored.append((_LONE_WORD_SCORE if alone else 0.85, name, source))
                        break
                continue
            titled = _TITLE_FROM.match(phrase.text)
            if titled and titled.group("of").lower() not in ("from", "von") and not FORM.search(titled.group("name")):
                titled = None
            if titled and line.page == 1 and looks_like_name(name_of(titled.group("name"))):
                scored.append((0.85, name_of(titled.group("name")), phrase))
                continue
            brand = _BRAND_OF.match(phrase.text)
            owner = name_of(brand.group("name")) if brand and FORM.search(brand.group("name")) else ""
            # The trade name whole, as the letterhead or the web domain spells it: "Nimbleway Credit is operated by"
            # names a lender's product, not the seller.
            trade = compact_name(brand.group("trade")) if brand else ""
            if trade and trade in domains | short and looks_like_name(owner):
                scored.append((_BRAND_OWNER_SCORE, owner, phrase))
                continue
            trading = _TRADING_AS.match(phrase.text)
            own_trade = trading is not None and matches_domain(trading.group("trade"), domains | short)
            if trading and own_trade and line.page == 1 and looks_like_name(trading.group("name")):
                scored.append((0.85, name_of(trading.group("name")), phrase))
                continue
            sender = RETURN_ADDRESS.match(phrase.text)
            if sender and line.page == 1 and looks_like_name(sender.group(1)):
                scored.append((0.85, name_of(sender.group(1)), phrase))
                continue
            text, wrapped = phrase.text, None
            if not FORM.search(text):
                wrapped = _form_under(lines, index, phrase)
                if wrapped is None:
                    if line.page == 1 and looks_like_name(text) and matches_domain(text, domains):
                        scored.append((0.75, text.strip(), phrase))
                    continue
                text = f"{text.rstrip()} {wrapped.text.strip(' ,;')}"  # "TALLER ... ÁVILA," over "S.A. DE C.V."
            name = name_of(text)
            # The rest of the word its form ends in: "St™SC" looks like a name, "St™SC*C~CST" is OCR's noise.
            glued = text[len(name) :].split(" ", 1)[0] if text.startswith(name) else ""
            if (
                OCR_NOISE.search(glued)
                or ENDS_IN_STATE.search(name)
                or not looks_like_name(name)
                or len(FORM.sub("", name).split()) > 8  # a sentence, not a name (its form's words not counted)
                or not re.search(r"[^\W\d_]{2}", FORM.sub("", name))
            ):
                continue  # a company form alone ("SARL au capital de ...") names nobody
            score = 0.55
            score += 0.25 if line.page == 1 and position < 0.3 else 0.1 if position > 0.8 else 0.0
            score += 0.1 if names[name.casefold()] > 1 else 0.0
            score -= 0.15 if line.page > 1 else 0.0
            score += 0.15 if matches_domain(name, domains) else 0.0
            score += 0.1 if LEGAL_IDS.search(line.text) else 0.0  # a legal footer: the name beside its VAT ID
            if wrapped is not None and wrapped.confidence < SURE_OCR_NAME:
                score = min(score, FOR_REVIEW)  # its form read unsurely: another company's, perhaps
            scored.append((score, name, phrase))
    if spelled_out:
        scored = [
            (max(score, LETTERHEAD_SCORE) if spells_out(name) else score, name, phrase)
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
                if phrase not in buyer and looks_like_name(text) and len(text.split()) <= 6:
                    fuller = spelled_out_under(lines, index, phrase, text, buyer)
                    scored.append((0.5, fuller.text if fuller else text.strip(), fuller or phrase))
                    break
            if scored:
                break
    if not scored:
        return None
    score, name, phrase = max(scored, key=lambda item: item[0])
    contested = phrase is letterhead and any(
        other >= LETTERHEAD_CONTESTED for other, _, p in scored if p is not letterhead
    )
    legal = (
        (legal_name_under(lines, letterhead, scored) or legal_footer(lines, scored)) if phrase is letterhead else None
    )
    if legal is not None:
        score, name, phrase = legal
    if contested:
        # A company named near the top as well: the letterhead is likelier the issuer, but a person checks.
        score = min(score, FOR_REVIEW)
    if phrase.confidence < SURE_OCR_NAME:
        # A name OCR read some letters of unsurely ("TKANO HANDEL" for "IKANO HANDEL"): given, for a person to check.
        score = min(score, FOR_REVIEW)
    return repair_name(name, ocr=phrase.confidence < 1.0), min(score, 0.95), phrase
