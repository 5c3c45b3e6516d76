"""Documents the tests make themselves: PDFs with a text layer, DOCX, HTML, Markdown, and invoices
in varied layouts, label languages, date and number formats, each with its known true fields."""

from __future__ import annotations

import io
import random
import zipfile
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import docx
from fpdf import FPDF


def pdf_bytes(lines: list[str], pages: int = 1) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for _ in range(pages):
        pdf.add_page()
        for line in lines:
            pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def image_only_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 60, style="F")
    return bytes(pdf.output())


def encrypted_pdf(lines: list[str]) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(lines))))
    writer.encrypt(user_password="secret", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def zip_of(entries: dict[str, bytes]) -> bytes:
    """A ZIP archive (deflated) holding `entries`, name -> bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return out.getvalue()


def docx_bytes(paragraphs: list[str], table: list[list[str]] | None = None, after: list[str] | None = None) -> bytes:
    """A DOCX with paragraphs, an optional table, and optional paragraphs after the table."""
    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                grid.cell(r, c).text = cell
    for paragraph in after or []:
        document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


# Invoices ---------------------------------------------------------------------------------------

CENT = Decimal("0.01")
MONTHS = {
    "en": [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ],
    "de": [
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ],
    "fr": [
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ],
}
LABELS = {
    "en": {
        "number": ["Invoice No.", "Invoice #", "Invoice Number"],
        "issue": ["Invoice Date", "Date", "Date of issue"],
        "due": ["Due Date", "Payment Due", "Due"],
        "subtotal": ["Subtotal", "Net amount", "Subtotal"],
        "tax": ["VAT ({rate}%)", "Tax", "Sales Tax ({rate}%)"],
        "total": ["Total", "Total Due", "Amount Due"],
        "from": "From",
        "bill_to": "Bill to",
        "title": "INVOICE",
        "header": ["Description", "Qty", "Unit price", "Amount"],
    },
    "de": {
        "number": ["Rechnungsnummer", "Rechnung Nr.", "Rechnungs-Nr."],
        "issue": ["Rechnungsdatum", "Datum", "Rechnungsdatum"],
        "due": ["Fällig am", "Zahlbar bis", "Fälligkeitsdatum"],
        "subtotal": ["Zwischensumme", "Nettobetrag", "Summe netto"],
        "tax": ["MwSt. {rate}%", "USt. ({rate} %)", "Mehrwertsteuer {rate}%"],
        "total": ["Gesamtbetrag", "Rechnungsbetrag", "Gesamt"],
        "from": "Von",
        "bill_to": "Rechnungsempfänger",
        "title": "RECHNUNG",
        "header": ["Beschreibung", "Menge", "Einzelpreis", "Betrag"],
    },
    "fr": {
        "number": ["Facture N°", "N° de facture", "Numéro de facture"],
        "issue": ["Date de facture", "Date", "Date d'émission"],
        "due": ["Date d'échéance", "Échéance", "À payer avant le"],
        "subtotal": ["Sous-total", "Total HT", "Montant HT"],
        "tax": ["TVA {rate} %", "TVA ({rate}%)", "Total TVA"],
        "total": ["Total TTC", "Net à payer", "Montant total"],
        "from": "De",
        "bill_to": "Facturé à",
        "title": "FACTURE",
        "header": ["Désignation", "Qté", "Prix unitaire", "Montant"],
    },
}
VENDORS = {
    "en": ["Acme Supplies Ltd", "Northwind Traders Inc.", "Blue Harbor Consulting LLC", "Pinecrest Print Co."],
    "de": ["Müller & Söhne GmbH", "Bäckerei Schmidt KG", "Rheinland Software AG", "Hofmann Elektrotechnik"],
    "fr": ["Dupont Conseil SARL", "Atelier Lefèvre", "Boulangerie Martin", "Société Générale des Eaux"],
}
ITEMS = {
    "en": ["Consulting services", "Website hosting (monthly)", "Printer paper A4", "Support hours", "USB-C cable"],
    "de": ["Beratungsleistung", "Webhosting (monatlich)", "Druckerpapier A4", "Wartungsvertrag", "Netzwerkkabel"],
    "fr": ["Prestation de conseil", "Hébergement web (mensuel)", "Papier A4", "Heures de support", "Câble réseau"],
}
# (language, currency, number style, date style, tax rate)
LOCALES = [
    ("en", "USD", "us", "us_slash", Decimal("8.25")),
    ("en", "GBP", "us", "eu_slash", Decimal("20")),
    ("en", "EUR", "us", "iso", Decimal("21")),
    ("de", "EUR", "de", "dotted", Decimal("19")),
    ("fr", "EUR", "fr", "eu_slash", Decimal("20")),
    ("de", "CHF", "ch", "dotted", Decimal("8.1")),
]
SYMBOLS = {"USD": "$", "GBP": "£", "EUR": "€", "CHF": "CHF "}


@dataclass
class Invoice:
    language: str
    currency: str
    number_style: str
    date_style: str
    layout: str
    doc_type: str
    vendor: str
    number: str
    issue: date
    due: date
    rate: Decimal
    items: list[tuple[str, Decimal, Decimal]] = field(default_factory=list)

    @property
    def subtotal(self) -> Decimal:
        return sum((q * p for _, q, p in self.items), Decimal("0")).quantize(CENT)

    @property
    def tax(self) -> Decimal:
        return (self.subtotal * self.rate / 100).quantize(CENT, rounding=ROUND_HALF_UP)

    @property
    def total(self) -> Decimal:
        return self.subtotal + self.tax

    def truth(self) -> dict[str, Any]:
        return {
            "vendor": self.vendor,
            "invoice_number": self.number,
            "issue_date": self.issue.isoformat(),
            "due_date": self.due.isoformat(),
            "currency": self.currency,
            "subtotal": self.subtotal,
            "tax": self.tax,
            "total": self.total,
            "line_items": [(d, q, p, (q * p).quantize(CENT)) for d, q, p in self.items],
        }

    # Formatting, as a person in that locale would write it

    def figure(self, value: Decimal, decimals: int = 2) -> str:
        text = f"{value:,.{decimals}f}"
        if self.number_style == "de":
            return text.replace(",", "_").replace(".", ",").replace("_", ".")
        if self.number_style == "fr":
            space = "\u202f" if self.doc_type != "pdf" else "\u00a0"
            return text.replace(",", space).replace(".", ",")
        if self.number_style == "ch":
            return text.replace(",", "'")
        return text

    def money(self, value: Decimal, symbol: bool) -> str:
        amount = self.figure(value)
        if not symbol or (self.doc_type == "pdf" and self.currency == "EUR"):
            return f"{amount} {self.currency}"
        sign = SYMBOLS[self.currency]
        if self.doc_type == "pdf" and sign == "€":
            sign = "EUR "
        return f"{sign}{amount}" if self.number_style in ("us", "ch") else f"{amount} {sign}"

    def day(self, value: date, written: bool) -> str:
        if written:
            month = MONTHS[self.language][value.month - 1]
            if self.language == "en" and self.currency == "USD":
                return f"{month} {value.day}, {value.year}"
            if self.language == "de":
                return f"{value.day}. {month} {value.year}"
            return f"{value.day} {month} {value.year}"
        return {
            "us_slash": f"{value.month:02d}/{value.day:02d}/{value.year}",
            "eu_slash": f"{value.day:02d}/{value.month:02d}/{value.year}",
            "iso": value.isoformat(),
            "dotted": f"{value.day:02d}.{value.month:02d}.{value.year}",
        }[self.date_style]

    def quantity(self, value: Decimal) -> str:
        return str(int(value)) if value == value.to_integral() else self.figure(value, 1)

    def lines(self, variant: int) -> tuple[list[str], list[list[str]]]:
        """The invoice as lines of text, and its item table as rows of cells."""
        labels = LABELS[self.language]
        rate = self.figure(self.rate, 2).rstrip("0").rstrip(",.")

        def pick(key: str) -> str:
            return str(labels[key][variant % 3]).format(rate=rate)

        written = variant % 2 == 1
        head: list[str]
        if self.layout == "vendor_first":
            head = [self.vendor, "12 Market Street, 4000 Springfield", "", labels["title"]]
        else:
            head = [labels["title"], f"{labels['from']}: {self.vendor}"]
        head += [
            f"{pick('number')}: {self.number}",
            f"{pick('issue')}: {self.day(self.issue, written)}",
            f"{pick('due')}: {self.day(self.due, written)}",
            "",
            f"{labels['bill_to']}:",
            "Customer Corp",
            "",
        ]
        table = [labels["header"]] + [
            [d, self.quantity(q), self.money(p, variant % 2 == 0), self.money((q * p).quantize(CENT), variant % 2 == 0)]
            for d, q, p in self.items
        ]
        totals = [
            f"{pick('subtotal')}: {self.money(self.subtotal, True)}",
            f"{pick('tax')}: {self.money(self.tax, True)}",
            f"{pick('total')}: {self.money(self.total, True)}",
        ]
        return [*head, "__TABLE__", *totals], table


def make_invoices(count: int = 36, seed: int = 7) -> list[Invoice]:
    rng = random.Random(seed)
    doc_types = ["pdf", "docx", "html", "txt", "md", "pdf"]
    invoices = []
    for i in range(count):
        language, currency, number_style, date_style, rate = LOCALES[i % len(LOCALES)]
        issue = date(2024, 1, 1) + timedelta(days=rng.randrange(0, 700))
        items = []
        for _ in range(rng.randint(1, 4)):
            quantity = Decimal(rng.choice(["1", "2", "3", "5", "10", "12", "1.5", "0.5"]))
            price = Decimal(rng.randrange(150, 250_000)) / 100
            items.append((rng.choice(ITEMS[language]), quantity, price))
        invoices.append(
            Invoice(
                language=language,
                currency=currency,
                number_style=number_style,
                date_style=date_style,
                layout=rng.choice(["vendor_first", "title_first"]),
                doc_type=doc_types[(i // len(LOCALES)) % len(doc_types)],
                vendor=rng.choice(VENDORS[language]),
                number=rng.choice(["INV-", "RE-", "F", "2024/", "A-"]) + str(rng.randrange(100, 99999)),
                issue=issue,
                due=issue + timedelta(days=rng.choice([14, 30, 45])),
                rate=rate,
                items=items,
            )
        )
    return invoices


def render(invoice: Invoice, variant: int) -> tuple[bytes, str]:
    """The invoice as a file of its document type; returns (bytes, filename)."""
    lines, table = invoice.lines(variant)
    separator = " | " if invoice.doc_type == "md" else "  "
    flat: list[str] = []
    for line in lines:
        if line == "__TABLE__":
            if invoice.doc_type == "md":
                flat += ["| " + " | ".join(row) + " |" for row in table[:1]]
                flat += ["|---|---:|---:|---:|"]
                flat += ["| " + " | ".join(row) + " |" for row in table[1:]]
            else:
                flat += [separator.join(row) for row in table]
        else:
            flat.append(line)
    if invoice.doc_type == "pdf":
        return pdf_bytes(flat), "invoice.pdf"
    if invoice.doc_type == "docx":
        split = lines.index("__TABLE__")
        return docx_bytes(lines[:split], table, lines[split + 1 :]), "invoice.docx"
    if invoice.doc_type == "html":
        body = "".join(f"<p>{line}</p>" for line in lines[: lines.index("__TABLE__")])
        rows = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in table)
        tail = "".join(f"<p>{line}</p>" for line in lines[lines.index("__TABLE__") + 1 :])
        head = "<head><title>Invoice</title><style>p{}</style></head>"
        html = f"<!doctype html><html>{head}<body>{body}<table>{rows}</table>{tail}</body></html>"
        return html.encode(), "invoice.html"
    name = "invoice.md" if invoice.doc_type == "md" else "invoice.txt"
    return "\n".join(flat).encode(), name


# Articles with known central sentences --------------------------------------------------------

TOPICS = [
    (
        [
            "The city council approved a bicycle lane network for the downtown district.",
            "The bicycle lane network links the downtown district with the university and the station.",
            "The council expects the bicycle lane network to cut car traffic in the downtown district.",
        ],
        [
            "Cyclists welcomed the council vote on the lanes.",
            "Construction of the first lanes starts in spring downtown.",
            "Shop owners in the district asked the council about parking.",
        ],
    ),
    (
        [
            "The hospital opened a new cardiac care unit for patients with heart disease.",
            "Patients with heart disease now receive cardiac care from one team in the new unit.",
            "Doctors say the cardiac care unit shortens waiting times for heart disease patients.",
        ],
        [
            "The unit has twenty beds and two operating rooms.",
            "Nurses trained for months before the hospital opened it.",
            "Visitors can reach the unit from the main entrance.",
        ],
    ),
    (
        [
            "The research team trained a solar forecasting model on ten years of weather data.",
            "The solar forecasting model predicts power output from weather data one day ahead.",
            "Grid operators use the solar forecasting model to balance power from weather-dependent plants.",
        ],
        [
            "The team published its code under an open licence.",
            "Cloudy days remain the hardest case for any forecast.",
            "Operators reported fewer emergency purchases of power.",
        ],
    ),
]
FILLER = [
    "My grandmother grows tomatoes and basil in her small garden.",
    "The orchestra rehearsed a long symphony on a rainy Tuesday evening.",
    "A famous chef opened a noodle bar near the old harbour last year.",
    "Our neighbour painted his fence bright yellow over the weekend.",
    "The museum displays ancient coins found by farmers in the valley.",
    "Children collected seashells on the beach during the summer holidays.",
    "The novel tells the story of a sailor lost on a frozen island.",
    "A thunderstorm knocked over an old oak tree in the village square.",
]


def article(topic: int, seed: int) -> tuple[str, list[str]]:
    """A short article whose central sentences are known; returns (text, central sentences)."""
    rng = random.Random(seed)
    central, supporting = TOPICS[topic]
    body = central + supporting + rng.sample(FILLER, 5)
    rng.shuffle(body)
    return "Local news\n\n" + " ".join(body) + "\n", central
