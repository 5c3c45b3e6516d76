"""Write the invoices of our own making: languages and kinds the real sets lack (Dutch, Polish, Swedish,
Danish, Norwegian, Finnish, Indian English, credit notes), laid out the way such invoices are printed.

    python backend/tests/corpus/own/make.py FONT.ttf

Each invoice is written by hand below as placed text (millimetres from the top left of an A4 page) with
the values a person reads from it. The PDFs and `truth.json` are committed; run this again only to change
them. The font must cover Latin Extended-A (Polish, Nordic letters) and the rupee sign, as DejaVu Sans does.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fpdf import FPDF

HERE = Path(__file__).resolve().parent

Placed = tuple[float, float, str] | tuple[float, float, str, float]


@dataclass
class Own:
    name: str
    language: str
    truth: dict[str, Any]
    pages: list[list[Placed]] = field(default_factory=list)
    notes: str = ""


def table(x: float, y: float, columns: list[float], rows: list[list[str]], step: float = 6.0) -> list[Placed]:
    """Rows of cells at the given column offsets; a cell starting with '>' is right-aligned to the next offset."""
    placed: list[Placed] = []
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            placed.append((x + columns[c], y + r * step, cell))
    return placed


INVOICES: list[Own] = [
    Own(
        "nl-01.pdf",
        "nl",
        {
            "vendor": "Van der Berg Installatietechniek B.V.",
            "invoice_number": "2024-0387",
            "issue_date": "2024-03-14",
            "due_date": "2024-04-13",
            "currency": "EUR",
            "subtotal": "1240.00",
            "tax": "260.40",
            "total": "1500.40",
        },
        [
            [
                (20, 20, "Van der Berg Installatietechniek B.V.", 14),
                (20, 27, "Industrieweg 12"),
                (20, 32, "3542 AD Utrecht"),
                (20, 37, "info@vdberg-installatie.nl"),
                (20, 60, "Gemeente Houten"),
                (20, 65, "t.a.v. Afdeling Vastgoed"),
                (20, 70, "Postbus 30"),
                (20, 75, "3990 DA Houten"),
                (20, 95, "FACTUUR", 16),
                (20, 105, "Factuurnummer:"),
                (60, 105, "2024-0387"),
                (20, 111, "Factuurdatum:"),
                (60, 111, "14-03-2024"),
                (20, 117, "Vervaldatum:"),
                (60, 117, "13-04-2024"),
                (120, 105, "Uw referentie:"),
                (155, 105, "PO-88123"),
                (120, 111, "Klantnummer:"),
                (155, 111, "10442"),
                *table(
                    20,
                    135,
                    [0, 100, 125, 150],
                    [
                        ["Omschrijving", "Aantal", "Prijs", "Bedrag"],
                        ["Onderhoud cv-installatie", "4", "€ 185,00", "€ 740,00"],
                        ["Vervangen circulatiepomp", "1", "€ 500,00", "€ 500,00"],
                    ],
                ),
                (120, 170, "Subtotaal"),
                (160, 170, "€ 1.240,00"),
                (120, 176, "BTW 21%"),
                (160, 176, "€ 260,40"),
                (120, 184, "Totaal te betalen"),
                (160, 184, "€ 1.500,40"),
                (20, 210, "Wij verzoeken u het bedrag binnen 30 dagen over te maken op"),
                (20, 215, "IBAN NL91 ABNA 0417 1643 00 t.n.v. Van der Berg Installatietechniek B.V."),
                (20, 280, "KvK 30123456  ·  BTW NL812345678B01  ·  www.vdberg-installatie.nl", 8),
            ]
        ],
    ),
    Own(
        "nl-02.pdf",
        "nl",
        {
            "vendor": "Bloemenhuis De Tulp",
            "invoice_number": "CN-0112",
            "issue_date": "2024-05-02",
            "due_date": None,
            "currency": "EUR",
            "subtotal": "-45.00",
            "tax": "-4.05",
            "total": "-49.05",
        },
        [
            [
                (140, 18, "Bloemenhuis De Tulp", 13),
                (140, 24, "Marktplein 4"),
                (140, 29, "2611 GV Delft"),
                (140, 34, "KvK 58712345"),
                (20, 50, "Bakkerij Jansen"),
                (20, 55, "Oude Delft 101"),
                (20, 60, "2611 BD Delft"),
                (20, 80, "Creditnota", 16),
                (20, 90, "Creditnotanummer"),
                (70, 90, "CN-0112"),
                (20, 96, "Datum"),
                (70, 96, "02-05-2024"),
                (20, 102, "Betreft factuur"),
                (70, 102, "F-2024-0471"),
                *table(
                    20,
                    120,
                    [0, 110, 150],
                    [
                        ["Omschrijving", "Aantal", "Bedrag"],
                        ["Retour: tafelstukken (beschadigd geleverd)", "3", "-45,00"],
                    ],
                ),
                (110, 145, "Totaal excl. btw"),
                (160, 145, "-45,00"),
                (110, 151, "Btw 9%"),
                (160, 151, "-4,05"),
                (110, 157, "Totaal incl. btw"),
                (160, 157, "-49,05"),
                (20, 180, "Het bedrag wordt binnen 14 dagen teruggestort op uw rekening."),
                (20, 275, "Alle bedragen in euro. IBAN NL20 INGB 0001 2345 67", 8),
            ]
        ],
        "credit note, 9% reduced rate, no due date",
    ),
    Own(
        "pl-01.pdf",
        "pl",
        {
            "vendor": "Drukarnia Kowalski sp. z o.o.",
            "invoice_number": "FV/2024/03/117",
            "issue_date": "2024-03-21",
            "due_date": "2024-04-04",
            "currency": "PLN",
            "subtotal": "3650.00",
            "tax": "839.50",
            "total": "4489.50",
        },
        [
            [
                (20, 18, "Faktura VAT nr FV/2024/03/117", 14),
                (130, 30, "Data wystawienia: 21.03.2024"),
                (130, 35, "Data sprzedaży: 20.03.2024"),
                (130, 40, "Miejsce wystawienia: Kraków"),
                (20, 55, "Sprzedawca:"),
                (20, 61, "Drukarnia Kowalski sp. z o.o."),
                (20, 66, "ul. Wielicka 28"),
                (20, 71, "30-552 Kraków"),
                (20, 76, "NIP: 679-312-45-67"),
                (110, 55, "Nabywca:"),
                (110, 61, "Biuro Podróży Słoneczko s.c."),
                (110, 66, "ul. Długa 5"),
                (110, 71, "31-147 Kraków"),
                (110, 76, "NIP: 676-100-22-33"),
                *table(
                    20,
                    95,
                    [0, 8, 85, 100, 125, 150],
                    [
                        ["Lp.", "Nazwa towaru lub usługi", "Ilość", "Cena netto", "Wartość netto", "VAT"],
                        ["1", "Katalogi A4, 32 str.", "500", "5,90", "2 950,00", "23%"],
                        ["2", "Plakaty B1", "50", "14,00", "700,00", "23%"],
                    ],
                ),
                (100, 125, "Razem netto:"),
                (150, 125, "3 650,00 zł"),
                (100, 131, "Kwota VAT:"),
                (150, 131, "839,50 zł"),
                (100, 137, "Razem brutto:"),
                (150, 137, "4 489,50 zł"),
                (20, 150, "Do zapłaty: 4 489,50 PLN"),
                (20, 156, "Słownie: cztery tysiące czterysta osiemdziesiąt dziewięć złotych 50/100"),
                (20, 164, "Sposób płatności: przelew"),
                (20, 170, "Termin płatności: 04.04.2024"),
                (20, 176, "Nr konta: PL61 1090 1014 0000 0712 1981 2874"),
            ]
        ],
    ),
    Own(
        "pl-02.pdf",
        "pl",
        {
            "vendor": "Serwis Komputerowy Bajt Jan Nowak",
            "invoice_number": "12/05/2024",
            "issue_date": "2024-05-31",
            "due_date": "2024-06-14",
            "currency": "PLN",
            "subtotal": "800.00",
            "tax": "184.00",
            "total": "984.00",
        },
        [
            [
                (20, 20, "Serwis Komputerowy Bajt Jan Nowak", 12),
                (20, 26, "ul. Polna 7, 87-100 Toruń"),
                (20, 31, "NIP 956-200-11-22 · tel. 56 622 11 00"),
                (120, 45, "Toruń, 31 maja 2024 r."),
                (60, 60, "FAKTURA NR 12/05/2024", 14),
                (20, 75, "Nabywca: Kancelaria Notarialna A. Wiśniewska, ul. Szeroka 10, 87-100 Toruń"),
                *table(
                    20,
                    90,
                    [0, 100, 130, 160],
                    [
                        ["Nazwa", "Netto", "VAT 23%", "Brutto"],
                        ["Naprawa drukarki i konserwacja", "800,00", "184,00", "984,00"],
                    ],
                ),
                (100, 110, "RAZEM"),
                (130, 110, "800,00"),
                (160, 110, "984,00"),
                (20, 125, "Do zapłaty: 984,00 zł"),
                (20, 131, "Termin płatności: 14 dni (do 14.06.2024)"),
            ]
        ],
        "a sole trader; the amounts stand in one table row",
    ),
    Own(
        "sv-01.pdf",
        "sv",
        {
            "vendor": "Nordisk Trädgårdsservice AB",
            "invoice_number": "10245",
            "issue_date": "2024-09-30",
            "due_date": "2024-10-30",
            "currency": "SEK",
            "subtotal": "12400.00",
            "tax": "3100.00",
            "total": "15500.00",
        },
        [
            [
                (20, 20, "Nordisk Trädgårdsservice AB", 14),
                (20, 27, "Ängsvägen 3, 141 38 Huddinge"),
                (150, 20, "FAKTURA", 16),
                (130, 35, "Fakturanummer"),
                (170, 35, "10245"),
                (130, 41, "Fakturadatum"),
                (170, 41, "2024-09-30"),
                (130, 47, "Förfallodatum"),
                (170, 47, "2024-10-30"),
                (130, 53, "Kundnummer"),
                (170, 53, "2207"),
                (20, 55, "Brf Solrosen"),
                (20, 60, "Solrosgatan 14"),
                (20, 65, "141 44 Huddinge"),
                *table(
                    20,
                    90,
                    [0, 100, 125, 150],
                    [
                        ["Beskrivning", "Antal", "À-pris", "Belopp"],
                        ["Gräsklippning september", "8", "950,00", "7 600,00"],
                        ["Häckklippning", "1", "4 800,00", "4 800,00"],
                    ],
                ),
                (110, 120, "Summa exkl. moms"),
                (160, 120, "12 400,00"),
                (110, 126, "Moms 25 %"),
                (160, 126, "3 100,00"),
                (110, 134, "Att betala"),
                (160, 134, "15 500,00 kr"),
                (20, 270, "Bankgiro 5050-1055  ·  Org.nr 556677-8899  ·  Momsreg.nr SE556677889901", 8),
                (20, 275, "Godkänd för F-skatt", 8),
            ]
        ],
    ),
    Own(
        "da-01.pdf",
        "da",
        {
            "vendor": "Jensen & Søn ApS",
            "invoice_number": "2024117",
            "issue_date": "2024-11-04",
            "due_date": "2024-11-18",
            "currency": "DKK",
            "subtotal": "6480.00",
            "tax": "1620.00",
            "total": "8100.00",
        },
        [
            [
                (20, 20, "Jensen & Søn ApS", 15),
                (20, 27, "Havnegade 21, 5000 Odense C"),
                (20, 32, "CVR 31 22 44 55"),
                (20, 50, "Café Møllen"),
                (20, 55, "Vestergade 3"),
                (20, 60, "5000 Odense C"),
                (130, 50, "Faktura", 16),
                (130, 60, "Fakturanr.:"),
                (165, 60, "2024117"),
                (130, 66, "Fakturadato:"),
                (165, 66, "4. november 2024"),
                (130, 72, "Forfaldsdato:"),
                (165, 72, "18. november 2024"),
                *table(
                    20,
                    95,
                    [0, 100, 125, 150],
                    [
                        ["Varebeskrivelse", "Antal", "Stk. pris", "Beløb"],
                        ["Espressomaskine, service", "1", "2.480,00", "2.480,00"],
                        ["Kværn, udskiftning", "1", "4.000,00", "4.000,00"],
                    ],
                ),
                (110, 125, "Subtotal"),
                (160, 125, "6.480,00"),
                (110, 131, "Moms 25%"),
                (160, 131, "1.620,00"),
                (110, 139, "I alt DKK"),
                (160, 139, "8.100,00"),
                (20, 160, "Betales til reg.nr. 1234 kontonr. 0012345678 senest 18. november 2024."),
            ]
        ],
    ),
    Own(
        "no-01.pdf",
        "no",
        {
            "vendor": "Fjordlys Elektro AS",
            "invoice_number": "88014",
            "issue_date": "2024-02-12",
            "due_date": "2024-02-26",
            "currency": "NOK",
            "subtotal": "4320.00",
            "tax": "1080.00",
            "total": "5400.00",
        },
        [
            [
                (20, 18, "Fjordlys Elektro AS", 14),
                (20, 25, "Strandkaien 8, 5013 Bergen"),
                (20, 30, "Org.nr. 912 345 678 MVA"),
                (20, 48, "Hansen Regnskap"),
                (20, 53, "Torgallmenningen 2"),
                (20, 58, "5014 Bergen"),
                (120, 40, "FAKTURA", 16),
                *table(
                    120,
                    50,
                    [0, 40],
                    [
                        ["Fakturanummer", "88014"],
                        ["Fakturadato", "12.02.2024"],
                        ["Forfallsdato", "26.02.2024"],
                        ["KID", "0088014002"],
                    ],
                ),
                *table(
                    20,
                    90,
                    [0, 100, 150],
                    [
                        ["Beskrivelse", "Timer", "Beløp"],
                        ["Elektrikerarbeid, kontor 2. etg.", "6", "4 320,00"],
                    ],
                ),
                (110, 110, "Sum eks. mva"),
                (160, 110, "4 320,00"),
                (110, 116, "Mva 25 %"),
                (160, 116, "1 080,00"),
                (110, 124, "Å betale"),
                (160, 124, "NOK 5 400,00"),
                (20, 140, "Kontonummer 1503.12.34567"),
            ]
        ],
    ),
    Own(
        "fi-01.pdf",
        "fi",
        {
            "vendor": "Kiinteistöhuolto Virtanen Oy",
            "invoice_number": "5521",
            "issue_date": "2024-01-31",
            "due_date": "2024-02-14",
            "currency": "EUR",
            "subtotal": "850.00",
            "tax": "204.00",
            "total": "1054.00",
        },
        [
            [
                (20, 20, "Kiinteistöhuolto Virtanen Oy", 14),
                (20, 27, "Teollisuuskatu 5, 00510 Helsinki"),
                (20, 32, "Y-tunnus 2345678-9"),
                (20, 50, "As Oy Kalliokoti"),
                (20, 55, "Kalliolanrinne 4"),
                (20, 60, "00510 Helsinki"),
                (130, 45, "LASKU", 16),
                (130, 55, "Laskun numero"),
                (170, 55, "5521"),
                (130, 61, "Laskun päivämäärä"),
                (170, 61, "31.1.2024"),
                (130, 67, "Eräpäivä"),
                (170, 67, "14.2.2024"),
                (130, 73, "Viitenumero"),
                (170, 73, "55218"),
                *table(
                    20,
                    95,
                    [0, 110, 150],
                    [
                        ["Kuvaus", "Määrä", "Summa"],
                        ["Lumityöt tammikuu", "1", "850,00"],
                    ],
                ),
                (110, 115, "Veroton yhteensä"),
                (160, 115, "850,00"),
                (110, 121, "ALV 24 %"),
                (160, 121, "204,00"),
                (110, 129, "Maksettava yhteensä"),
                (160, 129, "1 054,00 €"),
                (20, 150, "IBAN FI21 1234 5600 0007 85  BIC NDEAFIHH"),
            ]
        ],
    ),
    Own(
        "in-01.pdf",
        "en",
        {
            "vendor": "Shree Ganesh Traders Pvt. Ltd.",
            "invoice_number": "SGT/23-24/1187",
            "issue_date": "2024-03-12",
            "due_date": None,
            "currency": "INR",
            "subtotal": "125400.00",
            "tax": "22572.00",
            "total": "147972.00",
        },
        [
            [
                (80, 15, "TAX INVOICE", 14),
                (20, 25, "Shree Ganesh Traders Pvt. Ltd.", 12),
                (20, 31, "Plot 14, MIDC Bhosari, Pune 411026"),
                (20, 36, "GSTIN: 27AABCS1429B1Z5   State: Maharashtra, Code: 27"),
                (120, 25, "Invoice No.: SGT/23-24/1187"),
                (120, 31, "Dated: 12-Mar-2024"),
                (120, 36, "Mode/Terms of Payment: 30 days"),
                (20, 50, "Buyer (Bill to)"),
                (20, 56, "Kaveri Engineering Works"),
                (20, 61, "Ambad, Nashik 422010"),
                (20, 66, "GSTIN: 27AAKFK2211C1ZQ"),
                *table(
                    20,
                    80,
                    [0, 10, 90, 115, 140, 160],
                    [
                        ["Sl", "Description of Goods", "HSN/SAC", "Quantity", "Rate", "Amount"],
                        ["1", "MS Flanges 150 NB", "7307", "120 nos", "645.00", "77,400.00"],
                        ["2", "Gaskets, spiral wound", "8484", "200 nos", "240.00", "48,000.00"],
                    ],
                ),
                (115, 105, "Taxable Value"),
                (160, 105, "1,25,400.00"),
                (115, 111, "CGST @ 9%"),
                (160, 111, "11,286.00"),
                (115, 117, "SGST @ 9%"),
                (160, 117, "11,286.00"),
                (115, 125, "Total"),
                (160, 125, "₹ 1,47,972.00"),
                (
                    20,
                    140,
                    "Amount Chargeable (in words): INR One Lakh Forty Seven Thousand Nine Hundred Seventy Two Only",
                ),
                (20, 150, "Tax Amount (in words): INR Twenty Two Thousand Five Hundred Seventy Two Only"),
                (20, 165, "Company's Bank Details: HDFC Bank, A/c No. 50200012345678, IFSC HDFC0001234"),
                (120, 190, "for Shree Ganesh Traders Pvt. Ltd."),
                (130, 205, "Authorised Signatory"),
            ]
        ],
        "Indian digit grouping (lakh), CGST + SGST",
    ),
    Own(
        "in-02.pdf",
        "en",
        {
            "vendor": "Nimbus Cloud Solutions LLP",
            "invoice_number": "NCS-2024-0093",
            "issue_date": "2024-07-01",
            "due_date": "2024-07-15",
            "currency": "INR",
            "subtotal": "48000.00",
            "tax": "8640.00",
            "total": "56640.00",
        },
        [
            [
                (20, 20, "Nimbus Cloud Solutions LLP", 14),
                (20, 26, "4th Floor, Prestige Tower, Bengaluru 560001"),
                (20, 31, "GSTIN 29AAJFN4456K1Z2  |  accounts@nimbuscloud.in"),
                (20, 50, "Invoice To"),
                (20, 56, "Saffron Retail Pvt Ltd"),
                (20, 61, "Andheri East, Mumbai 400069"),
                (120, 50, "Invoice # NCS-2024-0093"),
                (120, 56, "Invoice Date 01/07/2024"),
                (120, 62, "Due Date 15/07/2024"),
                (120, 68, "Place of Supply: Maharashtra (27)"),
                *table(
                    20,
                    85,
                    [0, 110, 150],
                    [
                        ["Item & Description", "SAC", "Amount"],
                        ["Managed cloud hosting, June 2024", "998315", "48,000.00"],
                    ],
                ),
                (110, 105, "Sub Total"),
                (155, 105, "48,000.00"),
                (110, 111, "IGST18 (18%)"),
                (155, 111, "8,640.00"),
                (110, 119, "Total"),
                (155, 119, "Rs.56,640.00"),
                (110, 125, "Balance Due"),
                (155, 125, "Rs.56,640.00"),
                (20, 140, "Total In Words: Indian Rupee Fifty-Six Thousand Six Hundred Forty Only"),
            ]
        ],
        "interstate IGST; Rs. prefix",
    ),
    Own(
        "en-cn-01.pdf",
        "en",
        {
            "vendor": "Harbourside Office Supplies Ltd",
            "invoice_number": "CN-00417",
            "issue_date": "2024-06-18",
            "due_date": None,
            "currency": "GBP",
            "subtotal": "-86.50",
            "tax": "-17.30",
            "total": "-103.80",
        },
        [
            [
                (20, 20, "Harbourside Office Supplies Ltd", 14),
                (20, 26, "Unit 7, Quayside Park, Bristol BS1 6UA"),
                (20, 31, "VAT Reg. No. GB 312 4567 89"),
                (140, 20, "CREDIT NOTE", 14),
                (140, 30, "Credit Note No: CN-00417"),
                (140, 36, "Date: 18 June 2024"),
                (140, 42, "Against invoice: INV-22981"),
                (20, 50, "Customer:"),
                (20, 56, "Clifton Dental Practice"),
                (20, 61, "22 Whiteladies Road, Bristol BS8 2LG"),
                *table(
                    20,
                    80,
                    [0, 110, 150],
                    [
                        ["Description", "Qty", "Net"],
                        ["Returned: toner cartridges (wrong model)", "2", "-86.50"],
                    ],
                ),
                (110, 100, "Net amount"),
                (155, 100, "-£86.50"),
                (110, 106, "VAT @ 20%"),
                (155, 106, "-£17.30"),
                (110, 114, "Total credit"),
                (155, 114, "-£103.80"),
                (20, 130, "This amount has been credited to your account."),
            ]
        ],
        "credit note with negative amounts",
    ),
    Own(
        "de-gs-01.pdf",
        "de",
        {
            "vendor": "Fahrradwerkstatt Kettenblatt GmbH",
            "invoice_number": "GS-2024-015",
            "issue_date": "2024-08-09",
            "due_date": None,
            "currency": "EUR",
            "subtotal": "-120.00",
            "tax": "-22.80",
            "total": "-142.80",
        },
        [
            [
                (20, 14, "Fahrradwerkstatt Kettenblatt GmbH · Lindenstr. 4 · 79098 Freiburg", 7),
                (20, 22, "Radsport Müller e.K."),
                (20, 27, "Herrn Tobias Müller"),
                (20, 32, "Bahnhofstraße 12"),
                (20, 37, "79100 Freiburg"),
                (130, 22, "Kettenblatt", 16),
                (130, 30, "Fahrradwerkstatt"),
                (130, 50, "Gutschrift-Nr.: GS-2024-015"),
                (130, 56, "Datum: 09.08.2024"),
                (130, 62, "Zu Rechnung: RE-2024-311"),
                (20, 70, "Gutschrift", 14),
                (20, 80, "Sehr geehrter Herr Müller, für die Rücksendung schreiben wir Ihnen gut:"),
                *table(
                    20,
                    92,
                    [0, 110, 150],
                    [
                        ["Bezeichnung", "Menge", "Betrag"],
                        ["Scheibenbremse, Rücknahme", "2", "-120,00 €"],
                    ],
                ),
                (110, 112, "Nettobetrag"),
                (155, 112, "-120,00 €"),
                (110, 118, "zzgl. 19 % USt."),
                (155, 118, "-22,80 €"),
                (110, 126, "Gutschriftsbetrag"),
                (155, 126, "-142,80 €"),
                (20, 270, "Kettenblatt GmbH · Amtsgericht Freiburg HRB 712345 · USt-IdNr. DE298765432", 7),
            ]
        ],
        "German credit note with a DIN 5008 return-address line",
    ),
]


def render(own: Own, font: Path) -> bytes:
    pdf = FPDF(format="A4", unit="mm")
    pdf.add_font("Sans", fname=str(font))
    pdf.set_auto_page_break(False)
    for page in own.pages:
        pdf.add_page()
        for item in page:
            x, y, text, *size = item
            pdf.set_font("Sans", size=size[0] if size else 9.5)
            pdf.text(x, y, text)
    return bytes(pdf.output())


def main() -> None:
    font = Path(sys.argv[1])
    truth: dict[str, dict[str, Any]] = {}
    for own in INVOICES:
        (HERE / own.name).write_bytes(render(own, font))
        truth[own.name] = {**own.truth, "language": own.language, "scanned": False, "notes": own.notes}
    (HERE / "truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
