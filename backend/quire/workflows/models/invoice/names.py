"""What a company's name looks like: its legal form (GmbH, B.V., Ltd, sp. z o.o., ...), and what is never one (a
title, a label, a sentence, a street address).

The reader's vendor rules ask these questions of every phrase they might take as the issuer's name.
"""

from __future__ import annotations

import re

from quire.workflows.models.invoice.dates import dates_in
from quire.workflows.models.invoice.labels import PAYMENT, match_labels
from quire.workflows.models.invoice.values import EMAIL_OR_URL, amounts_in, fold

_FORMS = (
    r"gmbh(?:\s*&\s*co\.?\s*kg)?|ag|kg|ug(?:\s*\(haftungsbeschr[aä]nkt\))?|e\.\s?k\.|ohg|gbr|inc\.?|incorporated|llc|l\.l\.c\.|"
    r"ltd\.?|limited|llp|lp\.?|l\.p\.|plc|corp\.?|corporation|pty\.?\s*ltd\.?|"
    # "& Co.", "Acme Co."; not an Irish address's county ("Naas, Co. Kildare", "NAAS, CO. KILDARE").
    r"&\s*co\.|co\.(?!\s*(?-i:[A-Z][a-z]|[A-Z]{3,}))|"
    # Mexico's S.A. de C.V., S.A.P.I. de C.V. and S. de R.L. (de C.V.), before the S.A. they start with.
    r"s\.\s?a\.\s?(?:p\.\s?i\.\s?)?de\s+c\.\s?v\.|s\.\s?de\s+r\.\s?l\.(?:\s+de\s+c\.\s?v\.)?|"
    r"s\.?\s?a\.?\s?r\.?\s?l\.?|sas|s\.a\.s\.?|sa|s\.a\.|sasu|eurl|sarl|sl|s\.l\.u?\.?|slu|s\.?p\.?a\.?|s\.?r\.?l\.?s?|"
    r"s\.n\.c\.|b\.?v\.?|n\.?v\.?|vof|sp\.\s?z\s?o\.?\s?o\.?|s\.c\.?|ltda\.?|lda\.?|eireli|me|s/a|oy|ab|as|a/s|aps|gie|"
    r"kgaa|sdn\.?\s*[b38]hd\.?|bhd\.?|berhad|s/b|pte\.?\s*ltd\.?|pvt\.?\s*ltd\.?|private\s+limited|"
    # Greece's Α.Ε., Ε.Π.Ε., Ι.Κ.Ε., Ο.Ε. and Ε.Ε., with their dots or without.
    r"\u03b1\.\s?\u03b5\.|\u03b5\.\s?\u03c0\.\s?\u03b5\.|\u03b9\.\s?\u03ba\.\s?\u03b5\.|[\u03bf\u03b5]\.\s?\u03b5\.|"
    r"\u03b1\u03b5|\u03b5\u03c0\u03b5|\u03b9\u03ba\u03b5|"
    # Central and Eastern Europe's, Indonesia's and Turkey's: s.r.o., a.s., Kft., Zrt., Nyrt., Bt., d.o.o., d.d., OÜ,
    # SIA, UAB, PT (in capitals, starting a name), Tbk, A.Ş., Ltd. Şti., and in Cyrillic ЕООД, ООД, АД, ТОВ, ФОП; not
    # Dutch's "d.d." ("dated") and "a.s." ("next") before a date.
    r"spol\.\s?s\s?r\.\s?o\.|s\.\s?r\.\s?o\.|a\.\s?s\.(?!\s*\d{1,2}[-./]\d{1,2}[-./]\d{2,4})|kft\.?|zrt\.?|nyrt\.?|bt\.|d\.\s?o\.\s?o\.|d\.\s?d\.(?!\s*\d{1,2}[-./]\d{1,2}[-./]\d{2,4})|o\u00fc|sia|uab|"
    r"(?-i:(?<![\s\S])PT(?=\s+[A-Z][A-Za-z])|Tbk\.?)|a\.\s?\u015f\.|ltd\.?\s?\u015fti\.?|\u0435\u043e\u043e\u0434|\u043e\u043e\u0434|\u0430\u0434|\u0442\u043e\u0432|\u0444\u043e\u043f|"
    r"(?-i:SE)"  # a Societas Europaea; only in capitals, where "se" is not a word
)
# A two-letter form written in small letters, without a dot, is a word ("as", "me", "sa"): "... registered under GST
# as my turnover". With its dot it is a form ("sp. z o.o.", "& co.").
FORM = re.compile(rf"(?<![\w.])(?-i:(?![a-z]{{2}}(?![\w.])))(?:{_FORMS})(?![\w])", re.I)
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
    r"^τιμολ[οό]γιο|^απ[οό]δειξη|^πιστωτικ[οό]|"
    # Titles in Central and Eastern Europe's languages and Turkish, some letter-spaced ("S Z Á M L A").
    r"^(?:kreedit)?arve(?!\w)|^s\s?z\s?[aá]\s?m\s?l\s?a(?!\w)|^ra[cč]un(?!\w)|^r-?1\s+ra[cč]un|^r[eē][kķ]ins|^s[aą]skaita|"
    r"^dobropis|^factur[aă](?!\w)|^e-?ar[sş]iv|^фактура|^рахунок|^накладна|^кредитно\s+известие|"
    # A department a payment goes to, not a company ("Accounts Receivable", "Billing Department").
    r"^accounts?\s+(?:receivable|payable)|^(?:billing|finance|accounting|accounts)\s+(?:dept|department)",
    re.I,
)
# OCR's noise around a misread line and the markup of banners ("*** COPY ***", "St™SC*C~CST"), and label
# colons: no company's name carries them.
OCR_NOISE = re.compile(r"[\\*~@#%^=<>{}|]")
_NOT_IN_A_NAME = re.compile(rf"[_:]|{OCR_NOISE.pattern}")
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
# The forms France, Lithuania, Latvia, Indonesia and Ukraine write before a company's name ("SAS DISTRIBUTION RHONE
# CENTRE", "UAB „Ryšio linija“", "SIA Daugavas", "PT Kopi Nusantara", "ТОВ «Ромашка»", a sole trader's "ФОП"); "Co."
# and "AG" lead a county ("Co. Kildare") and a German register court ("AG Leipzig") instead.
_LEADING_FORM = re.compile(
    r"(?:sas|sasu|sarl|eurl|snc|selarl|uab|sia|(?-i:PT)|\u0442\u043e\u0432|\u0444\u043e\u043f)\s", re.I
)
# A name in quotes after its leading form: „Ryšio linija“, "Daugavas Loģistika", «Ромашка».
_QUOTED = re.compile(r"\s+(?:„[^“”\"]+[“”\"]|\"[^\"]+\"|“[^”]+”|«[^»]+»)")
# Words a name's monogram leaves out ("Chaudronnerie et Convoyage de l'Ouest": CCO).
_SMALL_WORDS = frozenset(
    {"and", "the", "of", "for", "et", "de", "des", "du", "la", "le", "les", "und", "der", "die", "das", "von", "van",
     "en", "het", "y", "e", "di", "del", "della", "da", "do", "dos", "i"}
)  # fmt: skip
# An Italian shop's owner after its name, on a line of its own: "di Donati Giulia & C. S.n.c." ("of").
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
ENDS_IN_STATE = re.compile(rf"{_STATE}$")
_GB_POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s\d[ABD-HJLNP-UW-Z]{2}\b")
# "© 2024 Example, Inc. All rights reserved": the holder of a document's copyright is its issuer.
_COPYRIGHT = re.compile(r"^\s*(?:©|\(c\)|copyright)\s*(?:©\s*)?(?:\d{4}(?:\s*[-\u2013]\s*\d{4})?\s*)?,?\s*", re.I)


def name_of(text: str) -> str:
    """The company name in a phrase: up to and including its company form, labels, bullets and a copyright
    sign with its years removed."""
    text = re.sub(r"^[^:]{0,25}:\s*", "", text) if ":" in text[:26] and match_labels(text) else text
    text = _COPYRIGHT.sub("", text)
    text = _OWNED_BY.sub("", text)
    text = re.split(r"\s[•●·|\u2013-]\s|,\s(?=\d)|\s{2,}", text)[0]
    forms = list(FORM.finditer(text))
    # The last form, unless a sentence about the company starts after an earlier one ("Hartwell & Pryce LLP is a
    # limited liability partnership").
    said = next((form for form in forms if _SAYS.match(text, form.end())), None)
    if said is not None:
        text = text[: said.end()]
    elif len(forms) == 1 and _LEADING_FORM.match(text) and re.match(r"\s+[„\"“«]?[^\W\d_]{2}", text[forms[0].end() :]):
        # A form that leads the name, as in France: "SAS DISTRIBUTION RHONE CENTRE"; a name in quotes ends with them.
        quoted = _QUOTED.match(text, forms[0].end())
        if quoted:
            text = text[: quoted.end()]
        elif re.search(r",\s.*\d", text):
            text = text.split(", ")[0]  # "UAB Pavyzdys, Vilniaus g. 12": no address ("SARL Dupont, Durand et Fils")
    elif forms:
        text = text[: forms[-1].end()]
    text = text.strip(" ,;:-").strip()
    # A name in brackets under its shop's ("(Annapoorna Hospitality Pvt. Ltd.)"): the name, without its brackets.
    return text[1:].lstrip() if text[:1] in "([" and not re.search(r"[)\]]", text) else text


def looks_like_name(text: str) -> bool:
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


# A unit, a suite, a floor or a post-office box and its number, which start an address line and no name ("Unit 7, 31
# Kingsford Smith Dr", "Suite 400", "PO Box 100", "Postfach 10 12 34").
_PREMISES = re.compile(
    r"^\s*(?:unit|suite|ste\.|apt\.?|apartment|flat|floor|g?p\.?\s?o\.?\s*box|postfach|apartado(?:\s+de\s+correos)?|"
    r"casella\s+postale|bo[iî]te\s+postale|caixa\s+postal)\s*#?\s*\d",
    re.I,
)


def _address(text: str) -> bool:
    """A street address: a house number and a comma first, or a street word beside a number. A name that ends
    in a company form of three letters or more is none ("PLAZA 88 SDN BHD", "3M, Inc."); two-letter forms
    are words of addresses too ("12, Jalan Kg Baru", "Calle Sa Porrassa 12")."""
    forms = list(FORM.finditer(text))
    last = forms[-1] if forms else None
    if last is not None and not text[last.end() :].strip(" .,;") and len(re.sub(r"[\W\d_]", "", last.group(0))) >= 3:
        number_only = re.match(r"^\s*\d+[^\W\d_]*,\s*$", text[: last.start()]) is not None  # "3M, Inc."
        return bool(_HOUSE_NUMBER_FIRST.match(text)) and not number_only
    if _GB_POSTCODE.search(text) or _STATE_AFTER_TOWN.search(text):
        return True  # "Bath BA1 2HN", "Calgary, AB T2T 0B6": no name carries a British postcode or a state's
    return bool(
        _HOUSE_NUMBER_FIRST.match(text)
        or _PREMISES.match(text)
        or (_STREET.search(text) and re.search(r"\d", text))
        or _NUMBERED_STREET.search(text)
    )


def compact_name(name: str) -> str:
    """A name as its web domain would spell it: folded, letters and digits only, without a leading "The"."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"^the\s+", "", fold(name)))


def matches_domain(name: str, domains: set[str]) -> bool:
    compact = compact_name(name)
    return any(compact.startswith(domain) or (len(compact) >= 5 and domain.startswith(compact)) for domain in domains)


def initials_hold(short: str, name: str) -> bool:
    """Whether a monogram's letters are the initials of a name's last words, its small words counted or not ("LdV"
    of "Studio Lieke de Vries", "CCO" of "Chaudronnerie et Convoyage de l'Ouest")."""
    words = re.findall(r"[^\W\d_]+", fold(FORM.sub("", name)))
    every = "".join(word[0] for word in words)
    main = "".join(word[0] for word in words if word not in _SMALL_WORDS and len(word) > 1)
    return any(len(initials) >= 2 and initials.endswith(fold(short)) for initials in (every, main))
