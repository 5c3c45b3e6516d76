"""The label lexicon: the words invoices print before their values, field by field, in English, German, French,
Dutch, Spanish, Italian, Polish, Portuguese, Swedish, Danish, Norwegian, Finnish, Czech and Greek, and the bare
words among them that name their field only weakly.

Patterns are written for folded text (lower case, no accents); `labels` compiles and matches them.
"""

from __future__ import annotations

from quire.workflows.models.invoice.values import CURRENCY, CURRENCY_CODES

# The currency French labels may print between their words ("Montant EUR HT", "Total € TTC").
_EUROS = r"(?:eur|chf|cad|xof|xaf|xpf)\s+|€\s*"
# A currency's code after a label ("Total EUR", "Total (USD)"), not any word of three letters ("Total des taxes").
_CODES = "|".join(sorted((code.lower() for code in CURRENCY_CODES), key=len, reverse=True))
# A whole date right after a word that alone says nothing of one ("before", "avant le", "vóór"): "12/03/2025",
# "12 March 2025", "March 12, 2025" (folded).
_WHOLE_DATE_NEXT = (
    r"(?=\s*(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,2}\.?\s+[a-z]{3,9}\.?\s+\d{2,4}|[a-z]{3,9}\.?\s+\d{1,2},?\s+\d{4}))"
)
# After "zahlbar bis": no date of a discount for early payment ("bis 24.03.2025 mit 2 % Skonto", "abzüglich 2 %").
_NOT_DISCOUNT_DATE = (
    r"(?!\s*\d{1,2}\.\d{1,2}\.\d{2,4}\s+(?:mit|abz[uü]glich|abzgl\.?|unter\s+abzug|\d{1,2}(?:[.,]\d+)?\s*%))"
)
# The United States' postal codes of states (and the capital's district), folded.
_US_STATES = (
    "al|ak|az|ar|ca|co|ct|de|dc|fl|ga|hi|id|il|in|ia|ks|ky|la|me|md|ma|mi|mn|ms|mo|mt|ne|nv|nh|nj|nm|ny|nc|nd|oh|ok|or|"
    "pa|ri|sc|sd|tn|tx|ut|vt|va|wa|wv|wi|wy"
)
# The Nordic words a sum's label starts with ("Summa", "Sum", "Total", "Belopp", "Beløp", "Beløb").
_NORDIC_SUM = r"(?:summa|sum|total|bel[oø]pp?|bel[oø]b)"
# field -> (language, patterns). Longer, more specific labels first; `WEAK` and `match_labels` weigh them.
LEXICON: dict[str, list[tuple[str, str]]] = {
    "invoice_number": [
        ("en", r"(?:tax\s+|vat\s+|gst\s+|commercial\s+|pro\s*-?\s*forma\s+)invoice\s*(?:no\.?|number|num\.?|nr\.?|#|n[°º]|id)|"
                    # One document for both: "TAX INVOICE / RECEIPT No. 40218".
                    r"(?:tax\s+)?invoice\s*/\s*receipt\s*(?:no\.?|number|#)|"
                    r"invoice\s*(?:no\.?|number|num\.?|nr\.?|#|n[°º]|id)|inv\.?\s*(?:no\.?|#|number)|invoice|bill\s*(?:no\.?|number)|"
                    # A receipt's number, "Receipt: 2-118406" too.
                    r"receipt\s*(?:no\.?|number|#)|receipt(?=\s*:)|document\s*(?:no\.?|number)|credit\s*note\s*(?:no\.?|number|#)?|"
                    r"credit\s*memo\s*(?:no\.?|number|#)?|credit\s*(?:no\.?|number|#)|c/n\s*(?:no\.?|#)|"
                    r"fee\s+note\s*(?:no\.?|number|#)|"
                    # A till receipt's own number: "TRANS # 48213", a restaurant's "Check #3021".
                    r"trans(?:action)?\s*(?:no\.?|number|#)|check\s*#|"
                    # A travel ticket's number, which its receipt is the document of ("Ticket number 075-2145678901"),
                    # and a till receipt's ("TICKET 002841").
                    r"e-?ticket\s*(?:no\.?|number)|ticket\s*-?\s*(?:no\.?|number|n[°º]\.?|nr\.?)|ticket|number"),
        ("de", r"(?:handels)?rechnungs\s*-?\s*(?:nr\.?|nummer|no\.?)|(?:handels)?rechnung\s*(?:nr\.?|nummer|no\.?|#)?|"
                    r"[a-z]+rechnung(?:skorrektur)?\s*(?:nr\.?|nummer|no\.?)|rechnungskorrektur\s*(?:nr\.?|nummer)?|beleg\s*-?\s*(?:nr\.?|nummer)|"
                    r"gutschrift\s*(?:nr\.?|nummer)?|(?:rg|re|rechn)\.?\s*-?\s*nr\.?|dokument\s*-?\s*(?:nr\.?|nummer)|"
                    r"bon\s*-?\s*(?:nr\.?|nummer)|quittungs?\s*-?\s*(?:nr\.?|nummer)|kassenbon\s*-?\s*(?:nr\.?|nummer)|ticketnummer|nummer\s+(?:der|des)\s+(?:rechnung|gutschrift|rechnungskorrektur|beleg(?:e?s)?)|nummer"),
        ("fr", r"num[eé]ro\s+de\s+billet|re[cç]u\s*(?:n\.?[°ºo]\.?|num[eé]ro)|(?:n\.?[°ºo]\.?|num[eé]ro)\s*(?:de\s+)?facture|facture\s*(?:n\.?[°ºo]\.?|num[eé]ro)?|fact\.\s*n\.?[°ºo]\.?|avoir\s*(?:n\.?[°ºo]\.?)?|"
                    r"num[eé]ro|n(?:°|\.o)\.?"),
        ("nl", r"factuur\s*-?\s*(?:nummer|nr\.?|no\.?)|factuurnummer|factuur|ticketnummer|kwitantie\s*-?\s*(?:nummer|nr\.?)|bon\s*-?\s*(?:nummer|nr\.?)|creditnota\s*(?:nummer|nr\.?)?|nummer"),
        ("es", r"n[uú]mero\s+de\s+billete|recibo\s*(?:n\.?[°ºo]\.?|n[uú]m(?:ero|\.)?)|(?:n\.?[°ºo]\.?|n[uú]m(?:ero|\.)?)\s*(?:de\s+)?factura|factura\s*(?:n\.?[°ºo]\.?|n[uú]m(?:ero|\.)?)?|"
                    # A Mexican CFDI's series and number: "Serie y folio: A-10482", "Serie / Folio" (a bare "Folio" is as
                    # often a sheet's).
                    r"serie(?:\s+y\s+|\s*[/-]\s*)folio|n[uú]mero|n(?:°|\.o)\.?"),
        ("it", r"numero\s+(?:del\s+)?biglietto|(?:ricevuta|scontrino)\s*(?:n\.?[°ºo]?\.?|numero|nr\.?)|(?:n\.?[°ºo]?\.?|numero)\s*(?:della\s+)?fattura|fattura\s*(?:n\.?[°ºo]?\.?|numero|nr\.?)?|documento\s*n\.?|"
                    r"(?:n\.?[°ºo]?\.?|numero)\s+(?:del\s+)?documento|bolletta\s*(?:n\.?[°ºo]?\.?|numero|nr\.?)|numero|n(?:°|\.o)\.?"),
        ("pl", r"faktura\s*(?:vat\s*)?(?:nr\.?|numer)?|numer\s+faktury|nr\.?\s+faktury|paragon\s*(?:fiskalny\s*)?(?:nr\.?|numer)|nr\.?\s+paragonu|numer"),
        ("pt", r"n[uú]mero\s+do\s+bilhete|(?:recibo|tal[aã]o)\s*(?:n\.?[°ºo]\.?|n[uú]mero)|(?:n\.?[°ºo]\.?|n[uú]mero)\s*(?:da\s+)?(?:fatura|nota(?:\s+fiscal)?)|fatura\s*(?:n\.?[°ºo]\.?|n[uú]mero)?|"
                    r"nota\s+fiscal\s*(?:n\.?[°ºo]\.?)?|nfc?-?e\s*n\.?[°ºo]\.?|n[uú]mero|n(?:°|\.o)\.?"),
        ("sv", r"faktura\s*-?\s*(?:nummer|nr\.?)|fakturanr\.?|kvitt(?:o|ering|\.)?\s*-?\s*(?:nummer|nr\.?)|"
                    r"kredit(?:nota|faktura)\s*-?\s*(?:nummer|nr\.?)|kredit(?:nota|faktura)nr\.?"),  # Swedish, Danish, Norwegian
        ("fi", r"laskun\s*(?:numero|nro\.?)|laskunumero|lasku\s*nro\.?|kuitti\s*(?:nro\.?|numero)|kuittinumero"),
        ("cs", r"(?:faktura\s*[-\u2013]?\s*)?danovy\s+doklad(?:\s*(?:c\.|cislo))?|faktura\s*(?:c\.|cislo)|cislo\s+(?:faktury|dokladu)"),
        ("el", r"(?:αριθμοσ|αρ\.?)\s*(?:τιμολογιου|παραστατικου|πιστωτικου)|τιμολογιο\s*(?:αρ\.?|αριθμοσ)|αριθμοσ"),
        ("hu", r"szamla\s*(?:sorszama|sorsz\.?|sz\.)|sorszam"),
        ("ro", r"(?:nr\.?|numar(?:ul)?)\s*(?:facturii|factura)|factura\s*(?:fiscala\s*)?(?:nr\.?|numar)|factura(?:\s+fiscala)?(?=\s+seria\b)"),
        ("hr", r"(?:broj|br\.)\s*(?:racuna|fakture|dokumenta)|racun\s*(?:broj|br\.)|faktura\s*(?:broj|br\.)"),
        ("sl", r"(?:stevilka|st\.)\s*(?:racuna|dokumenta|dobropisa)|(?:racun|dobropis)\s*(?:st\.|stevilka)"),
        ("tr", r"fatura\s*(?:no|numaras[iı]|nr)\.?|belge\s*no\.?"),
        ("et", r"(?:kreedit)?arve\s*(?:nr\.?|number)"),
        ("lv", r"rekin(?:a|s)\s*(?:nr\.?|numurs)|pavadzime\s*nr\.?"),
        ("lt", r"(?:pvm\s+)?saskait(?:os|a)\s*-?\s*fakturos?\s*(?:nr\.?|numeris)|(?:pvm\s+)?saskaita\s*-?\s*faktura(?=\s+serija\b)"),
        ("bg", r"(?:фактура|известие)\s*(?:n\.?|номер)|номер\s+на\s+(?:фактура|документ)"),
        ("uk", r"рахунок(?:\s*-?\s*фактура)?\s*(?:n\.?|номер)|рахунку\s*-?\s*фактури\s*(?:n\.?|номер)|видаткова\s+накладна\s*n\.?"),
        ("ms", r"no\.?\s*(?:bil|resit|invois)|(?:bil|resit|invois)\s*(?:no\.?|#)|nombor\s+(?:bil|resit|invois)"),
        ("id", r"no\.?\s*(?:nota|faktur|struk|transaksi)|nomor\s+(?:nota|faktur|struk|transaksi)|(?:nota|faktur|struk)\s*(?:no\.?|#)"),
    ],
    "issue_date": [
        ("en", r"invoice\s+date|date\s+of\s+(?:issue|invoice)|(?:invoice\s+|bill\s+)?issue\s+date|date\s+issued|issued(?:\s+on)?|bill(?:ing)?\s+date|"
                    r"receipt\s+date|document\s+date|statement\s+date|tax\s+point|order\s+date|date\s+of\s+order|dated?"),
        ("de", r"rechnungs\s*-?\s*datum|ausstellungsdatum|belegdatum|datum\s+der\s+rechnung|bestelldatum|auftragsdatum|datum"),
        ("fr", r"date\s+(?:de\s+(?:la\s+)?)?facture|date\s+d['\u2019]\s*[eé]mission|date\s+de\s+facturation|[eé]mise?\s+le|"
                    r"date\s+de\s+(?:la\s+)?commande|date"),
        ("nl", r"factuurdatum|datum\s+factuur|besteldatum|orderdatum|datum"),
        ("es", r"fecha\s+(?:de\s+)?(?:la\s+)?(?:factura|emisi[oó]n|expedici[oó]n)|fecha\s+(?:del?\s+)?pedido|fecha"),
        ("it", r"data\s+(?:della\s+)?(?:fattura|documento|emissione|di\s+emissione)|data\s+(?:dell['\u2019]\s*)?ordine|data"),
        ("pl", r"data\s+wystawienia|data\s+zam[oó]wienia|data"),
        ("pt", r"data\s+(?:de\s+|da\s+)?(?:emiss[aã]o|fatura)|emiss[aã]o|data\s+(?:do\s+)?pedido|data"),
        ("sv", r"faktura\s*-?\s*(?:datum|dato)|dato"),
        ("fi", r"laskun\s+paiva(?:maara)?|laskutuspaiva|paivays|paivamaara"),
        ("cs", r"datum\s+(?:vystaveni|vyhotovenia|vystavenia)|vystaveno\s+dne"),
        ("el", r"ημερομηνια\s+(?:εκδοσησ|εκδοσεωσ|τιμολογιου|παραστατικου)|ημ/νια(?:\s+εκδοσησ)?|ημερομηνια"),
        ("hu", r"(?:szamla\s+)?kelte|kiallitas\s+datuma|szamla\s+datuma|kelt"),
        ("ro", r"data\s+(?:facturii|emiterii|emitere|documentului)"),
        ("hr", r"datum\s+(?:i\s+vrijeme\s+)?izdavanja|datum\s+(?:racuna|fakture|dokumenta)|datum\s+izdavanja\s+racuna"),
        ("sl", r"datum\s+(?:izdaje|racuna|dokumenta)"),
        ("tr", r"fatura\s+tarihi|duzenleme\s+tarihi|tarih"),
        ("et", r"arve\s+kuupaev|kuupaev"),
        ("lv", r"(?:rekina|izrakstisanas|dokumenta)\s+datums|datums"),
        ("lt", r"(?:saskaitos\s+)?israsymo\s+data|saskaitos\s+data"),
        ("bg", r"дата\s+на\s+(?:издаване|документа|фактурата)"),
        ("uk", r"дата\s+(?:складання|виписки|рахунку|документа)"),
        ("ms", r"tarikh(?=\s*[:.]?\s*\d)|tarikh\s+(?:bil|invois|resit)"),
        ("id", r"(?:tanggal|tgl\.?)(?=\s*[:.]?\s*\d)|(?:tanggal|tgl\.?)\s+(?:faktur|transaksi|nota)"),
    ],
    "due_date": [
        ("en", r"(?:payment\s+)?due\s+(?:date|by|on)|payment\s+due|date\s+due|(?:please\s+)?pay(?:able)?(?:[^.:]|\.\d){0,30}?\s(?:by|before)|"
                    r"(?:please\s+)?(?:remit|pay)\s+(?:until|by|before)|"
                    # A sentence that says when: "The invoice amount is due on 1 April 2025", "Payment is payable by".
                    r"(?:the\s+)?(?:invoice|balance|amount|payment|total|premium)(?:\s+[a-z]+){0,2}\s+is\s+(?:due|payable)\s+(?:on|by|before)"
                    r"(?=\s*(?:\d|[a-z]{3,9}\.?\s+\d))|"
                    r"due|"
                    # A remittance slip's "NET DUE 04/13/2025": the date the whole sum is due, past any discount's.
                    r"net\s+due" + _WHOLE_DATE_NEXT + "|"
                    # A date under the amount due's label, alone with the word for "before": "before 20 March 2025".
                    r"before" + _WHOLE_DATE_NEXT),
        ("de", r"f[aä]llig(?:keitsdatum|keit|\s+am|\s+bis|\s+zum)?|zahlbar[^.:]{0,40}?\sbis(?:\s+zum)?" + _NOT_DISCOUNT_DATE + "|"
                    r"zahlbar\s+(?:sofort|am)|"
                    r"zahlungsziel|zu\s+zahlen\s+bis|"
                    r"bitte\s+[uü]berweisen\s+sie(?:[^.:]|[.,](?=\d)){0,60}?\sbis(?:\s+(?:zum|sp[aä]testens))?|"
                    # "Wir ersuchen um Überweisung des Gesamtbetrages bis 14.10.2025".
                    r"wir\s+(?:ersuchen|bitten)\s+(?:sie\s+)?um\s+(?:[uü]berweisung|zahlung|begleichung)(?:[^.:]|[.,](?=\d)){0,60}?\sbis"
                    r"(?:\s+(?:zum|sp[aä]testens))?(?=\s*\d)|"
                    # "Der Beitrag ist fällig am 01.04.2025", "Der Rechnungsbetrag ist spätestens fällig zum".
                    r"(?:der|die|das|ihr)\s+[a-z\u00e4\u00f6\u00fc\u00df-]*(?:betrag|beitrag|summe|rechnung|zahlung|miete|pr[aä]mie)\s+ist\s+"
                    r"(?:sp[aä]testens\s+)?f[aä]llig\s+(?:am|zum|bis(?:\s+zum)?)(?=\s*\d)|"
                    # Terms with a discount for early payment, then the date the whole sum is due: "bis 09.04.2025
                    # netto ohne Abzug", "bis zum 30.04.2025 rein netto".
                    # Not a period's end or a price ("bis 31.03.2025 netto 100,00 EUR", "netto zzgl. MwSt.").
                    r"bis(?:\s+zum)?(?=\s*\d{1,2}\.\d{1,2}\.\d{2,4}\s+(?:(?:rein\s+)?netto|ohne\s+abzug)\b(?!\s*(?:\d|zzgl|zuz[uü]gl|plus)))"),
        ("fr", r"date\s+(?:d['\u2019]\s*)?[eé]ch[eé]ance|[eé]ch[eé]ance|[aà]\s+payer\s+(?:avant\s+)?le|payable\s+(?:avant\s+)?le|"
                    # "Payable net à 30 jours, jusqu'au 23.03.2025", "à régler au plus tard le 15/04/2025".
                    r"(?:payable|[aà]\s+payer|[aà]\s+r[eé]gler)(?:[^.:]|[.,](?=\d)){0,40}?\s(?:jusqu['\u2019]\s*au|au\s+plus\s+tard\s+le)(?=\s*\d)|"
                    r"date\s+limite\s+de\s+(?:paiement|r[eè]glement)(?:\s+le)?|avant\s+le" + _WHOLE_DATE_NEXT),
        ("nl", r"vervaldatum|vervaldag|uiterste\s+betaaldatum|te\s+betalen\s+(?:voor|v[oó][oó]r)|"
                    # "Wij verzoeken u het totaalbedrag van EUR 1.607,91 uiterlijk op 21-03-2025 over te maken".
                    r"(?:wij\s+verzoeken\s+u|gelieve)(?=(?:[^.:]|[.,](?=\d)){0,160}?(?:bedrag|betal|voldoe|over\s+te\s+maken|overmaken))"
                    r"(?:[^.:]|[.,](?=\d)){0,80}?\s(?:uiterlijk|ten\s+laatste)\s+(?:op|voor|v[oó][oó]r)(?=\s*\d)|"
                    r"(?:uiterlijk|ten\s+laatste)\s+(?:op|voor|v[oó][oó]r)(?=\s*\d)|v[oó][oó]r" + _WHOLE_DATE_NEXT),
        ("es", r"fecha\s+(?:de\s+)?vencimiento|vencimientos?|fecha\s+de\s+cargo|fecha\s+l[ií]mite\s+de\s+pago"),
        ("it", r"data\s+(?:di\s+)?scadenza|scadenz[ae]|da\s+pagare\s+entro\s+il|entro\s+il"),
        ("pl", r"termin\s+p[lłt]atno[sś]ci"),  # OCR reads "ł" as "t"
        ("pt", r"data\s+de\s+vencimento|vencimentos?"),
        ("sv", r"forfallo(?:dag|datum)|forfalds?dato|forfallsdato|betales\s+senest|sidste\s+rettidige\s+betalingsdag"),
        ("fi", r"erapaiva|maksettava\s+viimeistaan"),
        ("cs", r"datum\s+splatnosti|splatnost|splatne\s+do"),
        ("el", r"(?:ημερομηνια|ημ/νια)\s+ληξησ|ληξη\s+πληρωμησ|προθεσμια\s+πληρωμησ|(?:πληρωτεο|εξοφληση)\s+εωσ(?:\s+την)?"),
        ("hu", r"fizetesi\s+hatar(?:ido|nap)|esedekesseg(?:\s+datuma|\s+napja)?"),
        ("ro", r"data\s+scadent(?:ei|a)|scadent(?:a|ei)"),
        ("hr", r"datum\s+dosp(?:ijeca|eca)|dospijece|rok\s+placanja|valuta\s+placanja"),
        ("sl", r"datum\s+zapadlosti|rok\s+placila|zapadlost"),
        ("tr", r"son\s+odeme\s+tarihi|vade\s+tarihi"),
        ("et", r"maksetahtaeg|(?:tasumise|makse)\s+tahtaeg|tasuda\s+hiljemalt"),
        ("lv", r"(?:apmaksas|samaksas)\s+termins|apmaksat\s+lidz"),
        ("lt", r"apmokejimo\s+terminas|apmoketi\s+iki|mokejimo\s+terminas|moketi\s+iki"),
        ("bg", r"(?:срок|дата)\s+(?:за|на)\s+плащане|падеж"),
        ("uk", r"термін\s+(?:оплати|сплати)|(?:с|о)платити\s+до"),
        ("ms", r"tarikh\s+(?:akhir|matang)(?:\s+(?:pembayaran|bayaran))?"),
        ("id", r"(?:(?:tanggal|tgl\.?)\s+)?jatuh\s+tempo"),
    ],
    "subtotal": [
        ("en", r"(?:items?\s+|merchandise\s+|products?\s+|order\s+)?sub\s*-?\s*total"
                    r"(?:\s*\(?\s*(?:excl|excluding|exclusive\s+of|before|ex|without)\s*\.?\s*(?:vat|tax|gst|sst)\)?)?|net\s+(?:amount|total|value)|total\s+net|total(?:\s+(?:sales|amount|value|rm|[a-z]{3}))?\s*\(?\s*(?:excl\.?|excluding|exclusive\s+of|before|ex\.?|without)\s*(?:vat|tax|gst|sst)?\)?|"
                    r"(?:total\s+)?(?:amount|charges)(?:\s+(?:for\s+)?this\s+(?:bill|invoice|period|month))?\s*\(?\s*(?:excl\.?|excluding|before)\s+(?:vat|tax|gst)\)?|(?:total\s+)?taxable\s+(?:amount|value)|total\s+(?:ht|h\.t\.)|"
                    # A bare "Net" only before its amount or its currency (a column's head, "Net £"): not "Net 30" (terms), "Net price" (a column), "Net weight".
                    r"net(?=\s*:?\s*(?:$|[-(\d]|(?:" + CURRENCY.pattern + r")\.?\s*(?:\d|$)))(?!\s*:?\s*\(?\s*\d+\s*(?:days?\b|\)|$))"),
        ("de", r"zwischensumme|netto\s*-?\s*(?:betrag|summe|gesamt|rechnungsbetrag)|summe\s+netto|gesamt\s*netto|warenwert|"
                    r"nettobetrag|nettobeitrag|summe\s+positionen|(?:rechnungs)?summe\s+ohne\s+(?:ust|mwst|umsatzsteuer)\.?|"
                    r"(?:total|betrag|gesamtbetrag)\s+(?:exkl\.?|ohne|excl\.?)\s*(?:ust|mwst|mehrwertsteuer|umsatzsteuer)\.?|netto"),
        ("fr", r"sous\s*-?\s*total|(?:total|montant)\s+(?:" + _EUROS + r")?h\.?\s?t\.?(?:v\.?a\.?)?|(?:total|montant)\s+hors\s+(?:tax(?:e|es)|tva)|base\s+h\.?t\.?|"
                    # A VAT table's head alone: "TAUX  HT  TVA  TTC".
                    r"h\.?\s?t\.?"),
        ("nl", r"subtotaal|totaal\s+excl\.?\s*(?:btw)?|netto\s*(?:bedrag)?|bedrag\s+excl\.?\s*btw|maatstaf\s+van\s+heffing|"
                    r"heffingsgrondslag"),
        ("es", r"base\s+imponible|base\s+imp\.?|subtotal|importe\s+(?:neto|bruto)|total\s+neto|total\s+sin\s+(?:iva|impuestos)|suma"),
        ("it", r"(?:totale\s+)?imponibile|subtotale|totale\s+netto|totale\s+(?:senza|escluso|esclusa)\s+iva"),
        ("pl", r"(?:warto[sś][cć]|razem)\s+netto|suma\s+netto"),
        ("pt", r"valor\s+total\s+dos\s+produtos|subtotal|valor\s+l[ií]quido|base\s+de\s+c[aá]lculo|total\s+il[ií]quido|"
                    r"(?:total|valor)\s+(?:sem|s/)\s*iva|base\s+tribut[aá]vel|incid[eê]ncia"),
        ("sv", r"(?:subtotal|" + _NORDIC_SUM + r")\s+(?:eks|ekskl|exkl|excl)\.?\s*(?:moms|mva)|"
                    r"(?:(?:bel[oø]?b|bel[oø]pp?)\s+)?[il]\s*alt\s+ekskl\.?\s*moms|netto(?:belopp|belb|belop)?"),
        ("fi", r"veroton\s+(?:yhteensa|hinta|summa)|yhteensa\s+ilman\s+alv|alviton\s+(?:hinta|summa)"),
        ("cs", r"(?:celkem\s+|celkom\s+|spolu\s+)?bez\s+dph|zaklad\s+(?:dane|dph)|zaklad"),
        ("el", r"(?:συνολο\s+|συνολικη\s+)?καθαρησ?\s+αξιασ?|καθαρο\s+ποσο|υποσυνολο|φορολογητεα\s+αξια"),
        ("hu", r"netto\s+(?:osszeg|ertek|osszesen|vegosszeg)|osszesen\s+netto|adoalap"),
        ("ro", r"(?:total\s+)?(?:valoare\s+)?fara\s+t\.?v\.?a\.?|baza\s+(?:de\s+)?impozitare"),
        ("hr", r"(?:iznos|ukupno|vrijednost|vrednost)\s+bez\s+pdv-?a|osnovica(?:\s+(?:za\s+)?pdv-?a?)?|poreska\s+osnovica"),
        ("sl", r"(?:znesek|skupaj|vrednost)\s+brez\s+ddv|osnova\s+(?:za\s+)?ddv"),
        ("tr", r"ara\s+toplam|kdv\s+matrah[iı]|mal\s+hizmet\s+toplam\s+tutar[iı]"),
        ("et", r"(?:summa|kokku)\s+(?:km-?ta|ilma\s+km-?ta|kaibemaksuta)|maksustatav\s+(?:summa|kaive)"),
        ("lv", r"(?:summa|kopa)\s+bez\s+pvn|ar\s+pvn\s+apliekam(?:a|ais)\s+(?:summa|darijums)"),
        ("lt", r"(?:suma|is\s+viso|viso)\s+be\s+pvm|apmokestinamoji\s+verte"),
        ("bg", r"данъчна\s+основа|(?:стоиност|сума|общо)\s+без\s+ддс"),
        ("uk", r"(?:сума|всього|разом)\s+без\s+пдв"),
        ("id", r"dpp|dasar\s+pengenaan\s+pajak"),
    ],
    "tax": [
        ("en", r"total\s+(?:tax|vat|gst|taxes)|insurance\s+premium\s+tax|(?:sales\s+)?tax(?:es)?(?:\s+amount)?|vat(?:\s+amount|\s+total)?|gst\s*/\s*hst|gst|hst|"
                    r"taxes,?\s+fees|"
                    # India's central, state, integrated and union-territory GST (the seller's "Output" tax in its
                    # books); Canada's provincial and Quebec taxes;
                    # the United States' state, county and city sales taxes.
                    r"(?:output\s+)?(?:c|s|i|ut)gst|pst|qst|(?:state|county|city|local|provincial)\s+(?:sales\s+)?tax|"
                    # A state's sales tax under its postal code ("PA Sales Tax 6.000%", "NC Food Tax 2%"), and the state's and local ones
                    # under their place's name ("Ohio State Tax", "Allegheny County Tax", "NYC Sales Tax").
                    rf"(?:{_US_STATES})\s+(?:state\s+(?:sales\s+)?|sales\s+|(?:prepared\s+)?food\s+|meals\s+)tax|"
                    r"(?:[a-z]+\s+){0,2}local\s+option\s+(?:sales\s+)?tax|"  # a town's tax beside the state's ("Stowe Local Option Tax")
                    # ... but not "Total including local tax", "Exempt from state tax": a total's or a note's words.
                    r"(?:(?!(?:incl\w*|with|excl\w*|without|no|exempt|from)\s)[a-z]+\s+){1,2}"
                    r"(?:state|county|city|municipal|parish|district|transit|local)\s+(?:sales\s+)?tax|"
                    # A transit or special district's sales tax under its letters ("RTD Sales Tax", "NYC Sales Tax").
                    r"(?!(?:no|not|non|the|and|any|all|plus|ex|excl|inc|incl|with|pre|post|est|zero|less|net|sans|w/o|gst)\s)[a-z]{2,4}\s+sales\s+tax|"
                    # A tax the total includes, named after "includes" ("Includes GST", "Includes 10% GST").
                    r"includes?\s+(?:\d{1,2}(?:[.,]\d+)?\s*%\s*)?(?:vat|gst|sst|tax)"),
        ("de", r"(?:summe\s+|gesamt\s*)?(?:mwst|ust|umsatzsteuer|mehrwertsteuer)\.?(?:\s*-?\s*betrag|\s+gesamt|\s+summe)?|"
                    r"(?:zzgl\.?\s+|zuz[uü]gl(?:ich|\.)\s*|\+\s*)?(?:\d{1,2}(?:[.,]\d+)?\s*%\s*)?(?:mwst|ust|umsatzsteuer)\.?|steuerbetrag|steuer|"
                    # An insurer's tax on its premium, in place of VAT.
                    r"versicherungs?steuer|"
                    r"(?:darin\s+|davon\s+)?(?:enth\.?|enthaltene?r?|davon|darin|inkl\.?)\s*(?:\d{1,2}(?:[.,]\d+)?\s*%\s*)?"
                    r"(?:mwst|ust|umsatzsteuer|mehrwertsteuer)\.?"),
        ("fr", r"(?:total|montant)\s+t\.?v\.?a\.?|total\s+(?:des\s+)?taxes|(?:dont\s+)?t\.?v\.?a\.?|tps|tvq|tvh"),
        ("nl", r"(?:totaal\s+|waarvan\s+)?btw(?:\s*-?\s*bedrag)?"),
        ("es", r"(?:total\s+|cuota\s+)?(?:i\.?v\.?a\.?|i\.?g\.?i\.?c\.?)(?:\s*-?\s*cuota)?|impuestos?|"
                    r"total\s+(?:de\s+)?(?:impuestos|tasas)(?:,?\s+(?:impuestos|tasas|y|cargos))*|"
                    r"cuota\s+(?:de\s+)?(?:i\.?v\.?a\.?|i\.?g\.?i\.?c\.?)|cuota\s+[ií]ntegra|cuota(?!\s+[^\W\d_])"),
        ("it", r"(?:totale\s+|di\s+cui\s+)?(?:iva|imposta)|totale\s+imposte"),
        ("pl", r"(?:kwota|warto[sś][cć]|razem)\s+vat|podatek\s+vat|(?:w\s+tym\s+)?vat|(?:suma\s+|w\s+tym\s+)?ptu"),
        ("pt", r"(?:valor\s+(?:total\s+)?do\s+)?(?:icms|iva|impostos?)"),
        ("sv", r"(?:varav\s+|herav\s+|heraf\s+|sum\s+|summa\s+|total\s+)?(?:moms(?:belopp|bel(?:o)?b)?|mva)"
                    # Not the base the tax is reckoned on: "Sum mva-grunnlag", "Momsgrundlag", "Momspliktigt".
                    r"(?!\s*-?\s*(?:grunnlag|grundlag|underlag|pliktig|fri))|merverdiavgift|mervardesskatt"),
        ("fi", r"alv(?:\s*-?\s*osuus|\s+yhteensa)?|arvonlisavero"),
        ("cs", r"(?:celkem\s+|celkom\s+|vyse\s+)?dph(?:\s+celkem)?"),
        ("el", r"(?:συνολο\s+|συνολικοσ\s+|αξια\s+|ποσο\s+)?φ\.?\s?π\.?\s?α\.?"),
        ("hu", r"(?:osszes\s+)?afa(?:\s*(?:osszeg|ertek|osszesen))?"),
        ("ro", r"(?:valoare(?:a)?\s+|total\s+)?t\.?v\.?a\.?"),
        ("hr", r"(?:ukupno\s+|iznos\s+)?pdv(?:-?a)?"),
        ("sl", r"(?:skupaj\s+|znesek\s+)?ddv"),
        ("tr", r"(?:hesaplanan\s+|toplam\s+)?kdv(?:\s+tutar[iı])?"),
        ("et", r"kaibemaks(?:u\s+summa)?|km(?=\s*\d{1,2}(?:[.,]\d+)?\s*%)"),
        ("lv", r"pvn(?:\s+summa)?|pievienotas\s+vertibas\s+nodoklis"),
        ("lt", r"pvm(?:\s+suma)?"),
        ("bg", r"(?:начислен\s+)?ддс|данък\s+добавена\s+стоиност"),
        ("uk", r"(?:сума\s+)?пдв|податок\s+на\s+додану\s+вартість"),
        ("ms", r"cukai(?:\s+(?:jualan|perkhidmatan))?"),
        ("id", r"ppn|pb1|pajak(?:\s+(?:restoran|pertambahan\s+nilai))?"),
    ],
    "total": [
        ("en", r"total\s+(?:due|payable)\s+(?:for\s+|on\s+)?this\s+(?:invoice|bill)|(?:invoice\s+)?total\s+(?:amount\s+)?(?:due|payable|to\s+pay)|amount\s+due\s+for\s+payment|amount\s+(?:due|payable|to\s+pay)|"
                    r"total\s+with\s+(?:vat|tax|gst)|"
                    r"total\s+of\s+(?:this|the)\s+(?:invoice|bill|fee\s+note)(?!s)|(?:total\s+)?(?:current|new)\s+charges|"
                    r"this\s+(?:month|period)['\u2019]?s\s+charges(?:\s*\(?\s*incl\.?\s*(?:vat|tax|gst)\s*\)?)?|total\s+charges(?:\s+(?:for\s+)?this\s+(?:period|bill|month))?|"
                    r"due\s+payable|payable\s+amount|net\s+(?:amount\s+)?payable|invoice\s+amount|balance\s+due|grand\s+total|"
                    r"total(?:\s+(?:sales|amount|value|rm|[a-z]{3}))?\s*\(?\s*(?:incl?\.?|including|inclusive\s+of)\s*(?:vat|tax|gst|sst)?\)?|"
                    r"total\s+(?:vat|gst|tax)\s+(?:incl\.?|inclusive|included)|total\s+sales|"
                    # A credit note's total: what is to be credited ("Total credit" is also a statement's column sum).
                    r"(?:total|amount)\s+to\s+be\s+credited|(?:total\s+)?rounded(?:\s+total)?|total\s+(?:after|with)\s+rounding|invoice\s+total|total\s+amount|total\s+(?:\((?:" + _CODES + r")\)|(?:" + _CODES + r"))\b|total\s+(?:amt|inv)\b\.?|totals|total|"
                    r"gross(?!\s+(?:weight|wt|mass))(?:\s+(?:amount|total))?"),
        ("de", r"(?:total|gesamt|summe|betrag)\s+inkl\.?\s*(?:\d{1,2}(?:[.,]\d+)?\s*%\s*)?(?:mwst|ust|mehrwertsteuer)\.?|"
                    r"gutschriftsbetrag|gesamt\s*-?\s*betrag|rechnungs\s*-?\s*betrag|gesamtsumme|endbetrag|brutto\s*-?\s*(?:betrag|summe)?|"
                    r"zu\s+zahlen(?:der\s+betrag)?|zahl(?:ungs)?betrag|bruttosumme|rechnungs(?:end)?summe|rechnungsendbetrag|endsumme|"
                    r"summe\s+brutto|summe|gesamt|bruttobetrag|(?:jahres|gesamt)?beitrag\s*\(?\s*brutto\s*\)?|bruttobeitrag|"
                    # A final invoice's whole work, before the instalments billed already are taken off.
                    r"gesamtleistung"),
        ("fr", r"(?:total|montant)\s+(?:" + _EUROS + r")?(?:t\.?t\.?c\.?|t\.?v\.?a\.?c\.?|t\.?v\.?a\.?\s+compris[e]?)|(?:net|total|somme|montant|reste)\s+[aà]\s+payer|montant\s+total|"
                    # "Total de la facture TTC", "Total de votre facture": this bill's own, beside an amount due that adds
                    # an earlier one.
                    r"total\s+(?:de\s+(?:la|votre|cette)\s+)?facture(?:\s+t\.?t\.?c\.?)?|"
                    r"(?:total|montant)\s+[aà]\s+cr[eé]diter|total\s+g[eé]n[eé]ral|(?:montant|solde)\s+d[uû](?=\s*:?\s*(?:$|[-\d€$]))|totaux|total|t\.?t\.?c\.?"),
        ("nl", r"(?:totaal\s+)?te\s+crediteren|totaal\s+(?:incl\.?\s*(?:btw)?|te\s+betalen|te\s+voldoen)|te\s+(?:betalen|voldoen)|totaalbedrag|"
                    # A bill's own total beside an amount due that adds an earlier one: "Totaal deze factuur incl. btw".
                    r"totaal\s+(?:van\s+)?deze\s+factuur(?:\s+incl\.?\s*(?:btw)?)?|"
                    r"bedrag\s+incl\.?\s*(?:btw)?|totaal"),
        ("es", r"(?:total|importe)\s+a\s+abonar|total\s+(?:con\s+)?i\.?v\.?a\.?\s+(?:incluido|incl\.?)|total\s+(?:factura|a\s+pagar|importe)|importe\s+(?:total|a\s+pagar)|importe\s+l[ií]quido|l[ií]quido\s+a\s+(?:percibir|pagar)|"
                    r"total\s+l[ií]quido|total"),
        ("it", r"totale\s+(?:da\s+)?accreditare|totale\s+(?:con\s+)?iva\s+(?:inclusa|compresa|incl\.?)|totale\s+(?:documento|fattura|da\s+pagare|a\s+pagare|complessivo)|importo\s+(?:totale|da\s+pagare)|"
                    r"netto\s+a\s+pagare|totale"),
        ("pl", r"razem\s+do\s+zap[lłt]aty|do\s+zap[lłt]aty|(?:warto[sś][cć]|razem)\s+brutto|suma\s+brutto|razem|"
                    r"suma\s+(?:pln|z[lł])"),  # a receipt's "SUMA PLN"
        ("pt", r"total\s+(?:com\s+)?iva\s+(?:incluido|incl\.?)|total\s+com\s+iva|valor\s+total\s+da\s+nota|(?:total|valor)\s+a\s+pagar|valor\s+total|"
                    # Portugal's certified invoicing programs: "Total documento", "Total do documento (EUR)".
                    r"total\s+(?:do\s+)?documento|total"),
        ("sv", r"(?:" + _NORDIC_SUM + r"\s+)?(?:att\s+betala|at\s+betale|a\s+betale)|"
                    + _NORDIC_SUM + r"\s+inkl\.?\s*(?:moms|mva)|"
                    # "I alt", "Ialt", and OCR's "lalt".
                    r"(?:(?:bel[oø]?b|bel[oø]pp?)\s+)?[il]\s*alt(?!\s*(?:ekskl|exkl|excl|eks\b|ex\b|uden|utan|uten))|totalt|"
                    r"totalbel(?:o)?p|totalbelb"),
        ("fi", r"maksettava(?:\s+yhteensa)?|loppusumma|kokonaissumma|yhteensa"),
        ("cs", r"(?:celkem|celkom|spolu)\s+k\s+uhrade|k\s+uhrade|(?:celkem|celkom|spolu)\s+(?:s|vcetne|vratane)\s+dph|"
                    r"celkova\s+castka|celkem|celkom"),
        ("el", r"(?:συνολικο\s+)?πληρωτεο(?:\s+ποσο)?|γενικο\s+συνολο|τελικο\s+(?:ποσο|συνολο)|συνολικο\s+ποσο|συνολο\s+(?:τιμολογιου|παραστατικου)|συνολικη\s+αξια|συνολο"),
        ("hu", r"fizetendo(?:\s+(?:vegosszeg|osszeg|osszesen))?|vegosszeg|brutto\s+(?:osszeg|osszesen|vegosszeg|ertek)|mindosszesen|osszesen"),
        ("ro", r"total\s+(?:de\s+plata|factura|general)|de\s+plata"),
        ("hr", r"(?:ukupno\s+)?za\s+(?:platiti|placanje|uplatu)|ukupan\s+iznos(?:\s+racuna)?|sveukupno|ukupno(?:\s+s\s+pdv-?om)?"),
        ("sl", r"(?:skupaj\s+)?za\s+placilo|skupaj\s+z\s+ddv|skupni\s+znesek|skupaj"),
        ("tr", r"odenecek\s+tutar|genel\s+toplam|vergiler\s+dahil\s+toplam\s+tutar|toplam\s+tutar|toplam"),
        ("et", r"(?:kokku\s+)?tasuda|tasumisele\s+kuulub|summa\s+kokku|arve\s+summa|kokku"),
        ("lv", r"(?:kopa|summa)\s+apmaksai|apmaksai|kopeja\s+summa|kopa"),
        ("lt", r"(?:is\s+viso\s+)?moketi|moketina\s+suma|suma\s+su\s+pvm|bendra\s+suma|is\s+viso(?:\s+su\s+pvm)?"),
        ("bg", r"(?:обща\s+)?сума\s+за\s+плащане|обща\s+сума|общо\s+(?:за\s+плащане|с\s+ддс)|за\s+плащане|всичко|общо"),
        ("uk", r"(?:всього|разом|сума)\s+(?:до\s+сплати|з\s+пдв)|до\s+сплати|всього|разом"),
        ("ms", r"jumlah(?:\s+(?:besar|keseluruhan|perlu\s+dibayar|bersih))?"),
        ("id", r"total\s+(?:bayar|belanja|tagihan)"),
    ],
    # Amounts added between the subtotal and the total, which the totals check counts.
    "charge": [
        ("en", r"freight|shipping(?:\s+(?:and|&)\s+handling)?|delivery(?:\s+charge)?|handling|postage|surcharge|"
                    r"service\s+(?:charge|chg)\.?|tips?|gratuity|"
                    # Outlays paid for the client, outside the taxed sum (a solicitor's, an architect's).
                    r"disbursements?"),
        ("de", r"versand(?:kosten)?|fracht(?:kosten)?|porto|verpackung(?:skosten)?|lieferkosten"),
        ("fr", r"frais\s+de\s+(?:port|livraison|transport)|port|livraison|d[eé]bours"),
        ("nl", r"verzend(?:kosten)?|bezorg(?:kosten)?|verzending"),
        ("es", r"(?:gastos\s+de\s+)?env[ií]o|portes|transporte|suplidos"),
        ("it", r"(?:spese\s+di\s+)?(?:spedizione|trasporto)|spese\s+(?:escluse|anticipate|esenti)|"
                    r"(?:rivalsa\s+)?(?:imposta\s+di\s+|marca\s+da\s+)?bollo(?:\s+virtuale)?"),
        ("pl", r"(?:koszt\s+)?(?:dostawy|wysy[lł]ki)"),
        ("pt", r"frete|portes"),
        ("el", r"μεταφορικα|εξοδα\s+(?:αποστολησ|μεταφορασ)"),
    ],
    # Amounts taken off between the subtotal and the total.
    "discount": [
        ("en", r"(?:less\s*:?\s*)?discounts?|rebates?"),
        ("de", r"rabatte?|skonto|nachl[aä]ss(?:e)?"),
        ("fr", r"remises?|rabais|escomptes?"),
        ("nl", r"kortingen|korting"),
        ("es", r"descuentos?"),
        ("it", r"scont[oi]"),
        ("pl", r"rabaty?|upust"),
        ("cs", r"sleva|zlava"),
        ("pt", r"descontos?"),
        ("el", r"(?:συνολο\s+)?εκπτωσ(?:η|εων|εισ)"),
        ("hu", r"kedvezmeny|engedmeny"),
        ("ro", r"discount|reducere"),
        ("hr", r"popust|rabat"),
        ("sl", r"popust|rabat"),
        ("tr", r"iskonto|indirim"),
        ("et", r"allahindlus"),
        ("lv", r"atlaide"),
        ("lt", r"nuolaida"),
        ("bg", r"отстъпка"),
        ("uk", r"знижка"),
    ],
    # Income tax the buyer withholds and pays to the tax office for the seller: taken off the total.
    # A balance an earlier bill left open, which the amount due of this one adds ("Previous balance", "Past due").
    # Not a page's "Carried forward" subtotal, which is this invoice's own.
    "earlier": [
        ("en", r"previous\s+balance|prior\s+balance|balance\s+(?:brought\s+)?forward|past\s+due(?:\s+(?:balance|amount))?|"
                    r"(?:previous|prior)\s+(?:invoice\s+)?amount|unpaid\s+balance|overdue\s+(?:amount|balance)|amount\s+overdue|"
                    r"(?:still\s+)?(?:outstanding|unpaid|open)\s+(?:from|on)\s+(?:the\s+|your\s+)?(?:previous|last|prior)\s+(?:invoice|bill)"),
        ("de", r"vorsaldo|saldo\s+(?:vormonat|aus\s+vorrechnung|vortrag)|offener\s+vorsaldo|"
                    r"(?:noch\s+)?offen(?:er\s+betrag)?\s+(?:aus|der)\s+(?:der\s+)?(?:vorigen|letzten|vorherigen)\s+rechnung"),
        ("fr", r"solde\s+(?:pr[eé]c[eé]dent|ant[eé]rieur|report[eé])|reste\s+(?:d[uû]\s+)?(?:de\s+la|sur\s+la)\s+facture\s+pr[eé]c[eé]dente"),
        ("nl", r"vorig\s+saldo|openstaand\s+saldo\s+vorige|(?:nog\s+)?openstaand(?:\s+bedrag)?\s+(?:van|op)\s+(?:de\s+|uw\s+)?vorige\s+factuur"),
        ("es", r"saldo\s+anterior|saldo\s+pendiente\s+anterior"),
        ("it", r"saldo\s+precedente"),
        ("el", r"προηγουμενο\s+υπολοιπο"),
    ],
    "withholding": [
        ("es", r"(?:(?:retenci[oó]n|ret\.)\s*)?i\.?r\.?p\.?f\.?(?:\s*-?\s*cuota)?|retenci[oó]n"),
        ("it", r"ritenuta(?:\s+d['\u2019]\s*acconto)?"),
        ("pt", r"reten[cç][aã]o(?:\s+na\s+fonte)?|irrf"),
        ("en", r"withholding(?:\s+tax)?|tax\s+withheld"),
        ("el", r"παρακρατηση(?:\s+φορου)?|παρακρατουμενοσ\s+φοροσ"),
    ],
    # Cash rounding (to 0.05, or to a whole krona): the amount paid is the total after it.
    "rounding": [
        ("en", r"(?:cash\s+)?rounding(?:\s+(?:adj\.?|adjustment|amount|diff\.?|difference))?|round(?:ing)?\s*off"),
        ("de", r"rundung(?:sdifferenz|sbetrag)?"),
        ("fr", r"arrondi"),
        ("nl", r"afronding(?:sverschil)?"),
        ("es", r"redondeo"),
        ("it", r"arrotondamento"),
        ("pl", r"zaokr[aą]glenie"),
        ("pt", r"arredondamento"),
        ("sv", r"(?:ore)?s?avrundning|afrunding|avrunding"),
        ("fi", r"pyoristys"),
        ("cs", r"zaokrouhleni|zaokruhlenie"),
        ("el", r"στρογγυλοποιηση"),
        ("ms", r"pelarasan\s+pembundaran|pembundaran"),
        ("id", r"pembulatan"),
    ],
    # What the buyer handed over (cash, a card) and what came back: on a receipt, the amount tendered less
    # the change is what was paid, and that is the total (checks.py, `payment_check`).
    "tendered": [
        ("en", r"(?:amount\s+|cash\s+|total\s+)?tendered|(?:received|paid)\s+(?:in\s+)?cash|total\s+cash|"
                    r"cash(?:\s+(?:paid|received|payment|tendered))?"
                    r"(?!\s*(?:sales?|bill|receipt|memo|register|invoice|refund|back|discount|on\s+delivery|rounding|flow))|"
                    r"(?:visa|master\s*card|amex|american\s+express|maestro|eftpos|(?:(?:credit|debit|bank)\s+)?card)"
                    r"(?:\s+(?:payment|paid|sale))?"),
        ("de", r"bar(?:geld|zahlung)?|bar\s+gegeben|gegeben(?:\s+bar)?|kartenzahlung|ec\s*-?\s*karte|girocard"),
        ("fr", r"esp[eè]ces|carte\s+bancaire|paiement\s+(?:par\s+)?carte"),
        ("nl", r"contant|pinbetaling|betaald\s+(?:met\s+)?pin"),
        ("es", r"efectivo|entregado|tarjeta(?:\s+de\s+(?:cr[eé]dito|d[eé]bito))?"),
        ("it", r"contanti|contante|pagamento\s+(?:con\s+)?carta|bancomat"),
        ("pl", r"got[oó]wka|karta(?:\s+p[lł]atnicza)?"),
        ("pt", r"dinheiro|cart[aã]o(?:\s+de\s+(?:cr[eé]dito|d[eé]bito))?"),
        ("el", r"μετρητα|καρτα"),
        ("ms", r"(?:wang\s+)?tunai"),
        ("id", r"dibayar"),
    ],
    "change": [
        ("en", r"(?:cash\s+)?change(?:\s+due)?"),
        ("de", r"r[uü]ckgeld|wechselgeld"),
        ("fr", r"monnaie\s+rendue|rendu(?:\s+monnaie)?|[aà]\s+rendre"),
        ("nl", r"wisselgeld|terug"),
        ("es", r"cambio|vuelto|vuelta"),
        ("it", r"resto"),
        ("pl", r"reszta"),
        ("pt", r"troco"),
        ("el", r"ρεστα"),
        ("ms", r"(?:wang\s+)?baki"),
        ("id", r"kembali(?:an)?"),
    ],
    "vendor": [
        ("en", r"(?:seller|vendor|supplier)(?:['\u2019]s)?\s+(?:legal\s+|trading\s+|business\s+)?name|from|seller|vendor|supplier|issued\s+by|billed\s+by|sold\s+by|payee|remit(?:tance)?\s+to|"
                    r"(?:please\s+)?(?:make\s+)?(?:all\s+)?(?:checks|cheques)\s+payable\s+to|payable\s+to|"
                    r"(?:please\s+)?(?:send|mail|remit)\s+(?:all\s+)?payments?(?:\s+[a-z]+){0,3}\s+to"),
        ("de", r"verk[aä]ufer|lieferant|rechnungssteller|leistungserbringer|absender|von"),
        ("fr", r"fournisseur|[eé]metteur|vendeur|prestataire|de"),
        ("nl", r"leverancier|verkoper|afzender|van"),
        ("es", r"proveedor(?:a)?|emisor(?:a)?|vendedor(?:a)?|prestador(?:a)?"),
        ("it", r"fornitore|cedente(?:\s*/\s*prestatore)?|venditore|mittente"),
        ("pl", r"sprzedawca|wystawca|dostawca"),
        ("cs", r"dodavatel"),
        ("pt", r"emitente|fornecedor(?:a)?|vendedor(?:a)?|prestador(?:a)?(?:\s+d[eo]s?\s+servi[cç]os?)?"),
        # A Nordic giro slip's payee: "Betalt til", "Betalingsmottaker", "Betalningsmottagare".
        ("sv", r"betalt\s+til|betalingsmottaker|betalningsmottagare|betalingsmodtager"),
        ("el", r"εκδοτησ|πωλητησ|προμηθευτησ"),
        ("hu", r"elado|szallito|szamlakibocsato"),
        ("ro", r"furnizor|vanzator"),
        ("hr", r"prodavatelj|prodavac|dobavljac|izdavatelj"),
        ("sl", r"dobavitelj|izdajatelj|prodajalec"),
        ("tr", r"sat[iı]c[iı]"),
        ("et", r"muuja|tarnija"),
        ("lv", r"pardevejs|piegadatajs"),
        ("lt", r"pardavejas|tiekejas"),
        ("bg", r"доставчик|продавач"),
        ("uk", r"постачальник|продавець"),
    ],
    "buyer": [
        ("en", r"bill(?:ed)?\s+to|invoice\s+to|sold\s+to|ship(?:ped)?\s+to|deliver\s+to|customer(?:\s+name)?|client|buyer|"
                    r"(?:billing|shipping|delivery|invoice)\s+address|"
                    r"recipient|to|attn"),
        ("de", r"rechnungs\s*-?\s*empf[aä]nger|rechnungsadresse|lieferadresse|kunde|k[aä]ufer|an"),
        ("fr", r"factur[eé]\s+[aà]|client|destinataire|acheteur|adresse\s+de\s+facturation"),
        ("nl", r"factuur\s+aan|klant|afnemer"),
        ("es", r"facturar\s+a|cliente|destinatario|datos\s+del\s+cliente"),
        ("it", r"cessionario(?:\s*/\s*committente)?|cliente|destinatario|spett\.?(?:le)?"),
        ("pl", r"nabywca|odbiorca"),
        ("pt", r"destinat[aá]rio|tomador(?:\s+d[eo]s?\s+servi[cç]os?)?|cliente"),
        ("cs", r"odberatel"),
        ("sv", r"fakturamottaker|fakturamottagare|fakturamodtager"),
        ("el", r"πελατησ|αγοραστησ|στοιχεια\s+πελατη|παραληπτησ"),
        ("hu", r"vevo"),
        ("ro", r"cumparator|client"),
        ("hr", r"kupac|narucitelj"),
        ("sl", r"kupec|narocnik"),
        ("tr", r"al[iı]c[iı]"),
        ("et", r"ostja|maksja"),
        ("lv", r"pircejs|sanemejs"),
        ("lt", r"pirkejas"),
        ("bg", r"получател|купувач"),
        ("uk", r"покупець|одержувач|замовник"),
    ],
}  # fmt: skip

# "Number" alone, in the lexicon's languages, and the number sign ("N°", "N.º", their letters "n", "no"): a weak
# invoice-number label, whose value must follow it at once.
NUMBER_WORDS = frozenset({"number", "nummer", "numero", "numer", "αριθμοσ", "n", "no", "n.o"})
# How strongly a label names its field: specific words say more than a bare `total`, `data` or `to`.
WEAK = {
    "total": {
        "total",
        "totals",  # a table's totals row, read by its columns' heads only
        "totaux",
        "summe",
        "gesamt",
        "totaal",
        "totale",
        "razem",
        "totalt",
        "yhteensa",
        "gross",
        "celkem",
        "συνολο",
        "συνολικη αξια",
        "celkom",
        "osszesen",
        "ukupno",
        "skupaj",
        "toplam",
        "kokku",
        "kopa",
        "is viso",
        "общо",
        "всього",
        "разом",
        "jumlah",
    },
    "issue_date": {
        "date",
        "dated",
        "datum",
        "data",
        "fecha",
        "emissao",
        "dato",
        "paivays",
        "ημερομηνια",
        "kelt",
        "tarih",
        "kuupaev",
        "datums",
        "tarikh",
        "tanggal",
        "tgl",
        "tgl.",
    },
    "tax": {
        "tax",
        "taxes",
        "vat",
        "iva",
        "btw",
        "tva",
        "t.v.a.",
        "mwst",
        "ust",
        "impuesto",
        "impuestos",
        "imposta",
        "moms",
        "mva",
        "alv",
        "dph",
        "φπα",
        "afa",
        "pdv",
        "ddv",
        "kdv",
        "pvn",
        "pvm",
        "ддс",
        "пдв",
    },
    "due_date": {"due", "before", "avant le", "voor", "v\u00f3\u00f3r"},
    "invoice_number": {
        "invoice",
        "rechnung",
        "facture",
        "factura",
        "fattura",
        "factuur",
        "faktura",
        "fatura",
        # A document's kind before its number names another document as often ("Credit note 10022" in a list of
        # open items), as "Invoice 104312" does.
        "credit note",
        "creditnote",
        "credit memo",
        *NUMBER_WORDS,
        # A payment's reference as often as a receipt's number: "Paid by check # 1042", "Transaction no. 8837".
        "check #",
        "trans #",
        "trans no.",
        "trans no",
        "transaction #",
        "transaction no.",
        "transaction no",
        "transaction number",
        # A travel ticket's number: the document's only where nothing names an invoice's.
        "ticket number",
        "ticket no",
        "eticket number",
        "eticket no",
        "ticketnummer",
        "numero de billete",
        "numero de billet",
        "numero del biglietto",
        "numero biglietto",
        "numero do bilhete",
    },
    "subtotal": {"net"},
}
