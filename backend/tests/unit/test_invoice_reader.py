"""The layout-aware invoice reader on snippets shaped like real invoices: identifiers, layouts, numbers,
dates, languages, checks and abstention."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from quire.documents.extract import Document, Word
from quire.workflows.invoice_summary import CHECK_LABELS
from quire.workflows.models.invoice import read_invoice
from quire.workflows.models.invoice.dates import dates_in
from quire.workflows.models.invoice.labelled import labelled_phrases
from quire.workflows.models.invoice.labels import match_labels, ocr_repaired
from quire.workflows.models.invoice.layout import lines_from_words
from quire.workflows.models.invoice.names import FORM
from quire.workflows.models.invoice.neighbours import under_own_head
from quire.workflows.models.invoice.values import amounts_in, currencies_in


def text_invoice(text: str) -> dict[str, Any]:
    return read_invoice(Document(text=text, filename="i.txt", content_type="text/plain", sha256="0"))


def page(*placed: tuple[float, float, str] | tuple[float, float, str, float]) -> dict[str, Any]:
    """An invoice page from (x, y, phrase) triples, each phrase's words laid out 5 points a character and 10
    high; a fourth number prints the phrase in larger type (its height in points)."""
    words: list[Word] = []
    for x, y, phrase, *size in placed:
        height = size[0] if size else 10
        cursor = x
        for token in phrase.split():
            words.append(Word(token, 1, cursor, y, cursor + 5 * len(token), y + height))
            cursor += 5 * len(token) + 3
    text = "\n".join(str(p[2]) for p in placed)
    return read_invoice(Document(text=text, filename="i.pdf", content_type="application/pdf", sha256="0",
                                 words=tuple(words)))  # fmt: skip


def ocr_receipt(*rows: tuple[str, float]) -> dict[str, Any]:
    """A receipt read by OCR: one phrase a row, each word with the row's confidence."""
    words = [
        Word(token, 1, 20 + 60 * column, 20 * row, 70 + 60 * column, 20 * row + 10, confidence)
        for row, (text, confidence) in enumerate(rows)
        for column, token in enumerate(text.split())
    ]
    document = Document(text="\n".join(t for t, _ in rows), filename="r.jpg", content_type="image/jpeg",
                        sha256="0", words=tuple(words), ocr_pages=(1,))  # fmt: skip
    return read_invoice(document)


def test_a_vat_id_is_never_an_amount() -> None:
    # Given a German invoice whose VAT ID is a long run of digits beside a tax word
    result = text_invoice(
        "Bei Spiel GmbH\nUSt-ID: DE136695976\nNettobetrag: 496,00 €\nUSt. Gesamt: 75,04 €\nGesamtbetrag: 571,04 €"
    )
    # Then the tax and the total are the printed amounts, not the identifier
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("496.00"),
        Decimal("75.04"),
        Decimal("571.04"),
    )
    assert result["checks"]["totals_add_up"] is True


@pytest.mark.parametrize(
    "text",
    ["IBAN DE88200800000970375700", "Tél: +33 2 99 83 51 51", "USt-IdNr. DE 123 456 789", "Kundennummer 4711", "1990"],
)
def test_identifiers_phone_numbers_and_bare_numbers_are_not_amounts(text: str) -> None:
    assert amounts_in(text, ",") == []


def test_the_payable_total_beats_a_tax_total_printed_above_it() -> None:
    result = text_invoice("Total HT  624,90 €\nTotal taxes  46,25 €\nTotal TTC  671,15 €")
    assert result["total"] == Decimal("671.15")
    assert result["tax"] == Decimal("46.25")
    assert result["currency"] == "EUR"


def test_a_total_the_printed_subtotal_and_tax_disagree_with_is_left_for_review() -> None:
    # Given a receipt whose total was misread (36.30 for 30.30): 28.58 + 1.72 does not make it
    result = text_invoice("Total (Excluding GST):  28.58\nGST payable (6%):  1.72\nTotal (Inclusive of GST):  36.30")
    # Then no total is given, and a person is asked to look
    assert result["total"] is None
    assert "total" in result["needs_review"]


def test_a_total_printed_differently_on_another_page_is_left_for_review() -> None:
    # Given a bill that restates an earlier bill on its second page under the same label
    words = [Word("TOTAL", 1, 50, 100, 80, 110), Word("46,61", 1, 300, 100, 330, 110),
             Word("TOTAL", 2, 50, 100, 80, 110), Word("46,76", 2, 300, 100, 330, 110)]  # fmt: skip
    document = Document(text="TOTAL 46,61\n\nTOTAL 46,76", filename="i.pdf", content_type="application/pdf",
                        sha256="0", words=tuple(words))  # fmt: skip
    result = read_invoice(document)
    # Then neither is given as the total
    assert result["total"] is None
    assert "total" in result["needs_review"]


def test_the_total_after_cash_rounding_is_the_one_paid() -> None:
    result = text_invoice("Total :  16.31\nRounding Adj :  -0.01\nBalance Due:  16.30\nPayment (Cash) :  17.00")
    assert result["total"] == Decimal("16.30")


def test_a_rounding_line_without_a_total_below_it_is_added_to_the_total() -> None:
    result = text_invoice("Grand Total :  87.08\nRounding Adjustment:  0.02\nCash :  100.00")
    assert result["total"] == Decimal("87.10")


def test_a_total_no_page_prints_is_only_offered_for_review() -> None:
    result = text_invoice("Sub-total  74.04\nGST  4.04\nCash  80.00")
    assert result["total"] is None
    assert "total" in result["needs_review"]


def test_a_card_charged_the_total_vouches_for_it_when_a_misread_subtotal_does_not_add_up() -> None:
    # Given a receipt whose subtotal OCR misread (74,04 for 74.06) and whose card was charged the total
    result = text_invoice("SUB-TOTAL  74,04\nGST  4.04\nTOTAL  78.10\nDEBIT CARD  78.10")
    # Then the total is given: the payment line and the total line read the same amount
    assert result["total"] == Decimal("78.10")
    assert result["checks"]["payment_matches_total"] is True
    assert "total" not in result["needs_review"]


@pytest.mark.parametrize(
    "text",
    [
        "Subtotal  33.77\nGST  2.30\nTotal Payable  35.80\n- Cash  50.00\n- Change  14.20",
        "Zwischensumme  33,77\nMwSt  2,30\nSumme  35,80\nGegeben  50,00\nRückgeld  14,20",
        "Subtotal  33,77\nIVA  2,30\nTotal  35,80\nEfectivo  50,00\nCambio  14,20",
        "Sous-total  33,77\nTVA  2,30\nTotal  35,80\nEspèces  50,00\nRendu  14,20",
    ],
)
def test_cash_tendered_less_the_change_vouches_for_the_total(text: str) -> None:
    # Given a receipt whose subtotal and tax do not add up to its total (one was misread), paid in cash
    result = text_invoice(text)
    # Then the total is given, since cash less change is the same amount
    assert result["total"] == Decimal("35.80")
    assert result["checks"]["payment_matches_total"] is True


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("Amount due  35.80\nCard  20.00\nCash  20.00\nChange  4.20", True),  # split between card and cash
        ("Amount due  35.83\nCash  50.00\nChange  14.15", None),  # cash rounding the receipt does not print
        ("Subtotal  30.00\nTax  3.00\nTotal  50.00\nCash  50.00\nChange  17.00", False),
    ],
)
def test_split_payments_and_unprinted_cash_rounding(text: str, check: bool | None) -> None:
    assert text_invoice(text)["checks"].get("payment_matches_total") is check


def test_cash_tendered_less_the_change_that_is_another_amount_puts_the_total_to_review() -> None:
    # Given a total read surely (its label names the amount due) and payment lines that say otherwise
    assert "total" not in text_invoice("Amount due  35.80")["needs_review"]
    result = text_invoice("Amount due  35.80\nCash  50.00\nChange  14.00")
    # Then the total is given for review
    assert result["total"] == Decimal("35.80")
    assert result["checks"]["payment_matches_total"] is False
    assert "total" in result["needs_review"]


@pytest.mark.parametrize(
    "text",
    [
        # cash that came back as change is not what was paid, even where a label calls it paid
        "Total  35.80\nTendered  50.00\nTotal Paid  50.00\nChange  14.20",
        # payment lines above the total are not its payment
        "Cash  78.10\nSubtotal  74.04\nGST  4.04\nTotal  78.10",
        # nor is a payment read from the total's own line
        "Subtotal  74.04\nGST  4.04\nVISA  Total  78.10",
    ],
)
def test_payment_lines_vouch_only_for_the_total_they_pay(text: str) -> None:
    result = text_invoice(text)
    assert result["checks"].get("payment_matches_total") is not True
    assert "total" in result["needs_review"]


def test_a_payment_never_settles_which_of_two_totals_is_owed() -> None:
    # Given two receipts on two pages, each paid by card
    words = [Word("TOTAL", 1, 50, 100, 80, 110), Word("46,61", 1, 300, 100, 330, 110),
             Word("VISA", 1, 50, 120, 80, 130), Word("46,61", 1, 300, 120, 330, 130),
             Word("TOTAL", 2, 50, 100, 80, 110), Word("46,76", 2, 300, 100, 330, 110),
             Word("VISA", 2, 50, 120, 80, 130), Word("46,76", 2, 300, 120, 330, 130)]  # fmt: skip
    document = Document(text="TOTAL 46,61\nVISA 46,61\n\nTOTAL 46,76\nVISA 46,76", filename="i.pdf",
                        content_type="application/pdf", sha256="0", words=tuple(words))  # fmt: skip
    # Then neither is given as the total
    assert read_invoice(document)["total"] is None


def test_a_total_of_nothing_with_no_payment_has_nothing_to_check() -> None:
    assert "payment_matches_total" not in text_invoice("Total  0.00")["checks"]


def test_lines_that_mention_cash_or_a_card_are_no_payment() -> None:
    # Given an invoice with a cash discount and a card printing charge under its total
    result = text_invoice("Net  100.00\nVAT  20.00\nTotal  120.00\nCash discount 2%  2.40\nBusiness card print  50.00")
    # Then there is nothing to check
    assert "payment_matches_total" not in result["checks"]


@pytest.mark.parametrize(
    "text",
    [
        "T0T4L  --\nCash  50.00\nChange  14.20",  # the total line is unreadable
        "Subtotal  30.00\nTax  3.00\nVisa  33.00",  # no total is printed: subtotal + tax is only offered
    ],
)
def test_payment_lines_never_make_a_total(text: str) -> None:
    result = text_invoice(text)
    assert result["total"] is None
    assert "payment_matches_total" not in result["checks"]


@pytest.mark.parametrize(
    ("text", "currency"),
    [("Total RM 71.90", "MYR"), ("TOTAL  RMO.55", "MYR"), ("Total  Rs. 1,250.00", "INR"), ("Total  S$ 12.00", "SGD"),
     ("Amount due  CA$1,931.72", "CAD"), ("Total  AU$ 20.00", "AUD")],
)  # fmt: skip
def test_currency_symbols_made_of_letters_are_read(text: str, currency: str) -> None:
    assert text_invoice(text)["currency"] == currency


def test_letters_inside_a_word_are_not_a_currency_symbol() -> None:
    # "RM" in FORMAT and "Rs" in Hours are parts of words
    result = text_invoice("FORMAT A4  Hours 3\nTotal  12.00 €")
    assert result["currency"] == "EUR"


def test_labels_in_one_column_and_values_in_another_are_paired_by_position() -> None:
    result = page(
        (50, 100, "Invoice number"),
        (50, 114, "Invoice date"),
        (50, 128, "Due date"),
        (300, 100, "INV-2041"),
        (300, 114, "2024-03-01"),
        (300, 128, "2024-03-31"),
    )
    assert result["invoice_number"] == "INV-2041"
    assert (result["issue_date"], result["due_date"]) == ("2024-03-01", "2024-03-31")
    assert result["fields"]["invoice_number"]["page"] == 1
    assert result["fields"]["invoice_number"]["bbox"] is not None


def test_a_value_printed_under_its_label_is_read_even_when_the_text_puts_it_first() -> None:
    # The flattened text says "993548900Factuurnummer:"; the page has the label above the number.
    result = page(
        (60, 100, "Factuurnummer:"), (60, 113, "993548900"), (200, 100, "Factuurdatum:"), (200, 113, "12-02-2024")
    )
    assert result["invoice_number"] == "993548900"
    assert result["issue_date"] == "2024-02-12"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Total: 1.234,56 EUR", Decimal("1234.56")),
        ("Total: $1,234.56", Decimal("1234.56")),
        ("Total: 1 234,56 €", Decimal("1234.56")),
        ("Total: CHF 1'234.50", Decimal("1234.50")),
    ],
)
def test_decimal_comma_and_point(line: str, expected: Decimal) -> None:
    assert text_invoice(line)["total"] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fecha: 2 de marzo de 2023", "2023-03-02"),
        ("Data wystawienia: 15 stycznia 2024", "2024-01-15"),
        ("Invoice date: 28 Jan 15", "2015-01-28"),
        ("Date: August 3 , 2014", "2014-08-03"),
        ("Rechnungsdatum: 5. März 2021", "2021-03-05"),
        ("Data fattura: 7 luglio 2022", "2022-07-07"),
        ("Factuurdatum: 1 mei 2024", "2024-05-01"),
        ("Data de emissão: 10/11/2023", "2023-11-10"),
    ],
)
def test_month_names_and_two_digit_years_in_eight_languages(text: str, expected: str) -> None:
    assert text_invoice(text)["issue_date"] == expected


def test_day_first_is_decided_by_an_unambiguous_date_in_the_same_document() -> None:
    result = text_invoice("Invoice date: 03/04/2024\nDue date: 25/04/2024\nTotal: $10.00")
    assert (result["issue_date"], result["due_date"]) == ("2024-04-03", "2024-04-25")


def test_a_us_invoice_without_a_clue_reads_month_first() -> None:
    result = text_invoice("Invoice date: 03/04/2024\nTotal due: $10.00")
    assert result["issue_date"] == "2024-03-04"


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("Wed 04/09/2024 10:15", "2024-09-04"),  # 4 September 2024 was a Wednesday, 9 April a Tuesday
        ("Tuesday, 04/09/2024", "2024-04-09"),  # month first, on a page in pounds that would read it day first
        ("Rabu, 10-05-2017 Time : 21:51", "2017-05-10"),  # Malay: 10 May 2017 was a Wednesday
    ],
)
def test_the_weekday_printed_before_a_date_decides_its_order(printed: str, expected: str) -> None:
    result = text_invoice(f"Receipt\n{printed}\nTotal: £10.00")
    assert result["issue_date"] == expected


def test_a_word_that_is_a_weekday_in_another_language_decides_nothing() -> None:
    # "to" is Thursday's short name in Danish and Norwegian; in an English hire period it is a preposition
    text = "Example Hire Ltd\nInvoice date: 05/01/2024\nHire period 01/01/2024 to 02/01/2024\nTotal: £10.00"
    assert text_invoice(text)["issue_date"] == "2024-01-05"


def test_totals_that_do_not_add_up_are_flagged_for_review() -> None:
    result = text_invoice("Subtotal: 100.00 EUR\nVAT: 19.00 EUR\nTotal: 150.00 EUR")
    assert result["checks"]["totals_add_up"] is False
    assert {"subtotal", "tax", "total"} <= set(result["needs_review"])


def test_a_credit_note_has_a_negative_total() -> None:
    result = text_invoice("Gutschrift Nr. G-77\nNettobetrag: -100,00 €\nUSt.: -19,00 €\nGesamtbetrag: -119,00 €")
    assert result["invoice_number"] == "G-77"
    assert result["total"] == Decimal("-119.00")
    assert result["checks"]["totals_add_up"] is True


def test_dutch_and_polish_labels() -> None:
    dutch = text_invoice("Factuurnummer: 2024-0042\nSubtotaal: € 100,00\nBTW 21%: € 21,00\nTotaal te betalen: € 121,00")
    assert (dutch["invoice_number"], dutch["total"], dutch["tax"]) == ("2024-0042", Decimal("121.00"), Decimal("21.00"))
    polish = text_invoice(
        "Faktura VAT nr FV/12/2024\nRazem netto: 1 000,00 zł\nKwota VAT: 230,00 zł\nDo zapłaty: 1 230,00 zł"
    )
    assert polish["invoice_number"] == "FV/12/2024"
    assert polish["total"] == Decimal("1230.00")
    assert polish["currency"] == "PLN"


def test_the_vendor_is_the_issuer_not_the_bill_to_block() -> None:
    result = page(
        (50, 40, "Acme Supplies B.V."),
        (50, 54, "Keizersgracht 1, Amsterdam"),
        (50, 120, "Bill to:"),
        (50, 134, "Globex Trading Ltd"),
        (50, 200, "Invoice number: A-17"),
    )
    assert result["vendor"] == "Acme Supplies B.V."


def test_nothing_certain_means_empty_fields_named_for_review() -> None:
    result = text_invoice("Thank you for your business.")
    assert result["total"] is None
    assert "total" in result["needs_review"]
    assert "invoice_number" in result["needs_review"]


@pytest.mark.parametrize(
    ("line", "field", "value"),
    [("993548900Factuurnummer:", "invoice_number", "993548900"), ("4471Rechnungsnummer:", "invoice_number", "4471")],
)
def test_a_value_glued_before_its_label_is_the_labels_value(line: str, field: str, value: str) -> None:
    # Given a PDF whose text run puts the value first and glues it to its label
    result = page((40, 40, "Bakkerij de Vries BV", 16), (40, 100, line), (300, 400, "Totaal € 10,00"))
    # Then the label still takes it
    assert result[field] == value


def test_dates_are_never_read_from_inside_longer_numbers() -> None:
    assert dates_in("Order 2024031501", day_first=True) == []


@pytest.mark.parametrize("text", ["Billing period: March 2023", "Leistungszeitraum März 2023", "Jan 2024 statement"])
def test_a_month_and_its_year_are_no_date(text: str) -> None:
    # "March 2023" once read as March 20, '23: the year's first two digits taken for the day
    assert dates_in(text, day_first=True) == []


@pytest.mark.parametrize("text", ["5th of March 2023", "March 5th,2023", "Mar 5 2023", "August 3 , 2023"])
def test_month_names_with_ordinals_and_commas(text: str) -> None:
    assert [d.value.isoformat() for d in dates_in(text, day_first=True)] in (["2023-03-05"], ["2023-08-03"])


def test_a_key_value_grid_gives_each_label_the_value_under_it() -> None:
    # Given a header row of document labels with one row of values under it, as billing systems print them
    result = page(
        (40, 100, "Date"), (130, 100, "Client code"), (220, 100, "Invoice No."), (320, 100, "Page"),
        (40, 115, "21/10/2022"), (130, 115, "016KERM"), (220, 115, "052273"), (320, 115, "1"),
        (300, 300, "Total due 74,70 EUR"),
    )  # fmt: skip
    # Then the date and the number are read from the cells under their labels
    assert (result["issue_date"], result["invoice_number"]) == ("2022-10-21", "052273")


def test_a_french_due_date_label_without_the_apostrophe() -> None:
    result = text_invoice("Facture N° 88\nDate 01/03/2024\nDate échéance 31/03/2024\nTotal TTC 120,00 €")
    assert (result["issue_date"], result["due_date"]) == ("2024-03-01", "2024-03-31")


def test_without_a_currency_sign_the_currency_of_the_payees_bank_country_is_offered_for_review() -> None:
    result = text_invoice("Factura 1707024\nImporte total 84,64\nIBAN ES46 0049 0144 1921 1099 3495")
    assert result["currency"] == "EUR"
    assert "currency" in result["needs_review"]


def test_a_letters_return_address_line_names_the_issuer_and_the_address_under_it_is_the_buyer() -> None:
    # Given a German letter: the sender's return-address line above the window with the customer's address
    result = page(
        (40, 90, "Example Hosting SE · Hauptstr. 57 · 56410 Montabaur"),
        (40, 105, "Vivahome GmbH"), (40, 118, "An der Ringmauer 16"), (40, 131, "51491 Overath"),
        (360, 90, "Rechnungsnummer: 100183565292"), (360, 300, "Zu zahlender Betrag 18,00 EUR"),
    )  # fmt: skip
    assert result["vendor"] == "Example Hosting SE"


def test_the_issuer_is_the_name_that_matches_the_invoices_own_web_domain() -> None:
    # Given a name without a company form in the letterhead and the buyer's company below a bill-to label
    result = page(
        (40, 60, "Skyfarer Analytics"), (40, 73, "billing@skyfarer.io"),
        (300, 60, "Bill to"), (300, 73, "Customer Works Ltd"),
        (40, 200, "Amount due $100.00"),
    )  # fmt: skip
    assert result["vendor"] == "Skyfarer Analytics"


@pytest.mark.parametrize(
    ("line", "vendor"),
    [
        ("Remit to: Summit Staffing LLC, PO Box 100, Dallas TX 75201", "Summit Staffing LLC"),
        ("Please make checks payable to Granite Roofing Inc.", "Granite Roofing Inc"),
        ("Kontoinhaber: Schreinerei Holz GmbH | IBAN DE89 3704 0044 0532 0130 00", "Schreinerei Holz GmbH"),
    ],
)
def test_a_payee_printed_under_the_bill_to_address_is_the_issuer(line: str, vendor: str) -> None:
    # Given a plain-text invoice whose payee line follows the buyer's address at once
    result = text_invoice(f"Invoice 9931\nBill To: Alpha Corp\n1 Main St\n{line}\nTotal Due $500.00")
    # Then the buyer's block ends at the payee's label, and the payee (without its address) is the vendor
    assert result["vendor"] == vendor


def test_the_payee_of_a_cheque_is_the_issuer_even_when_the_quoted_name_wraps() -> None:
    result = page(
        (40, 60, "Mr A Sample"), (40, 73, "2 Sample Street"),
        (300, 500, "Make cheques payable to “Northern Power"), (300, 513, "Supply Ltd” and write your reference"),
        (40, 200, "Please pay £92.62"),
    )  # fmt: skip
    assert result["vendor"] == "Northern Power Supply Ltd"


def test_a_remit_to_label_in_a_header_row_takes_the_name_below_it() -> None:
    result = page(
        (40, 300, "Remit To"), (200, 300, "Ship-To-Party"), (360, 300, "Ordered By"),
        (40, 313, "The Kitchenware Company"), (200, 313, "Harbour Hotel"), (360, 313, "L. Cynar"),
        (40, 400, "Amount Due 133.19"),
    )  # fmt: skip
    assert result["vendor"] == "The Kitchenware Company"


def test_a_party_label_beside_the_seller_label_heads_its_own_column() -> None:
    # Given "Sold By :" and "Billing Address :" side by side, each over its own party
    result = page(
        (40, 60, "Sold By :"), (400, 60, "Billing Address :"),
        (40, 73, "Harbourline Traders Private Limited"), (400, 73, "Meera Iyer"),
        (40, 300, "Grand Total 1,180.00"),
    )  # fmt: skip
    assert result["vendor"] == "Harbourline Traders Private Limited"


def test_a_bill_to_label_beside_a_from_label_leaves_the_issuers_column_alone() -> None:
    # Given "Bill To:" and "From:" on one line under a tagline, each over its party
    result = page(
        (320, 40, "Translation and interpreting"),
        (40, 60, "Bill To:"), (320, 60, "From:"),
        (40, 73, "Nordvik Consulting ApS"), (320, 73, "Ingrid Vestby"),
        (40, 300, "Total 9.500,00"),
    )  # fmt: skip
    # Then the name under "From:" is the issuer's, not part of the buyer's block
    assert result["vendor"] == "Ingrid Vestby"


def test_a_bill_to_label_at_the_left_margin_takes_nothing_from_the_right_one() -> None:
    # Given "Kunde" over the buyer's name at the left margin, and the issuer's name level with it at the right one
    result = page(
        (40, 60, "Kunde"), (400, 60, "Ingrid Vestby"),
        (40, 73, "Nordvik Consulting ApS"), (400, 73, "Musician"),
        (40, 300, "Total 9.500,00"),
    )  # fmt: skip
    # Then the issuer's name is not part of the buyer's block
    assert result["vendor"] == "Ingrid Vestby"


def test_a_bill_to_label_with_its_value_far_to_its_right_keeps_it() -> None:
    # Given a label column and a value column, the buyer's name well to the right of "Bill to:"
    result = page(
        (40, 60, "Bill to:"), (160, 60, "Harbour Marine Services Ltd"), (160, 73, "2 Quay Street"),
        (40, 300, "Total £120.00"),
        (40, 780, "Northgate Chandlers Ltd"), (40, 793, "VAT Reg No. GB 123 4567 89"),
    )  # fmt: skip
    # Then the buyer is never the vendor
    assert result["vendor"] != "Harbour Marine Services Ltd"


@pytest.mark.parametrize(
    "line",
    [
        "GST not charged: I am not registered under GST as my turnover is below the limit",  # "as" is no form
        "14 Kestrel Row · Leeds LS1 4AB · 0113 496 0000 · fees@example.co.uk",  # a return address's street
        "NOTE D'HONORAIRES",  # a fee note's title
    ],
)
def test_sentences_streets_and_titles_are_never_the_vendor(line: str) -> None:
    result = page((40, 60, line, 16), (40, 120, "Invoice no. 77"), (40, 300, "Total 120.00"))
    assert result["vendor"] is None or result["vendor"] not in line


def test_a_company_form_in_small_letters_with_its_dot_is_a_form() -> None:
    result = page((40, 40, "Nowak i Syn sp. z o.o.", 16), (40, 120, "Faktura nr 77/2024"), (40, 300, "Razem 120,00 zł"))
    assert result["vendor"] == "Nowak i Syn sp. z o.o."
    assert result["fields"]["vendor"]["confidence"] >= 0.8


@pytest.mark.parametrize("name", ["Row 34", "Square 1 Bakery"])
def test_a_shop_named_with_a_street_word_and_a_number_is_a_name(name: str) -> None:
    result = page((40, 40, name, 16), (40, 120, "Invoice no. 77"), (40, 300, "Total £120.00"))
    assert result["vendor"] == name


def test_a_sole_traders_legal_name_comes_before_the_name_it_trades_under() -> None:
    # Given a letterhead with the name a person trades under, and under it their own name "t/as" that name
    result = page(
        (40, 40, "Tidewater Gardening", 18), (40, 66, "Aoife Brennan t/as Tidewater Gardening"),
        (40, 79, "aoife@tidewatergardening.example"), (40, 300, "Total $450.00"),
    )  # fmt: skip
    # Then the person is the issuer
    assert result["vendor"] == "Aoife Brennan"


def test_a_customer_who_trades_under_another_name_is_not_the_issuer() -> None:
    result = page(
        (40, 40, "Northgate Builders Merchants Ltd"), (40, 53, "sales@northgate-merchants.example"),
        (40, 100, "Mr J Smith t/a JS Building Services"), (40, 113, "4 Mill Lane"),
        (40, 300, "Total £96.00"),
    )  # fmt: skip
    assert result["vendor"] == "Northgate Builders Merchants Ltd"


def test_a_feminine_seller_label_heads_the_issuers_column() -> None:
    # Given Spanish seller and buyer labels side by side, the seller's in the issuer's gender ("Emisora"; Portuguese
    # "Prestadora", "Fornecedora")
    result = page(
        (60, 120, "CLIENTE"), (315, 120, "EMISORA"),
        (60, 135, "Ediciones Faro, S.L."), (315, 135, "Marta Quintana Ruiz"),
        (60, 300, "Total 1.210,00 €"),
    )  # fmt: skip
    # Then the name under it is read as the seller's label's value, not as the first name-like phrase at the top
    assert result["vendor"] == "Marta Quintana Ruiz"
    assert result["fields"]["vendor"]["confidence"] >= 0.8


def test_freight_between_the_subtotal_and_the_total_still_adds_up() -> None:
    result = text_invoice("Invoice Number: 3006970\nItem Subtotal: $124.38\nFreight: $16.46\nTax (OR): $0.00\n"
                          "Invoice Total: $140.84")  # fmt: skip
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("124.38"),
        Decimal("0.00"),
        Decimal("140.84"),
    )
    assert result["checks"]["totals_add_up"] is True


def test_an_invoice_that_prints_no_tax_reports_none_rather_than_a_derived_zero() -> None:
    result = text_invoice("Invoice number L5M9-0005\nSubtotal $100.00\nTotal $100.00\nAmount due $100.00 USD")
    assert (result["subtotal"], result["tax"], result["total"]) == (Decimal("100.00"), None, Decimal("100.00"))


def test_a_label_that_names_no_value_of_its_first_kind_is_read_as_its_next() -> None:
    # "Due payable" starts like a due-date label, but what it prints is the amount to pay
    result = text_invoice(
        "Net total: 496.00 €\nVAT total: 75.04 €\nDue payable: 571.04 €\nPlease remit until 2020-12-12."
    )
    assert result["total"] == Decimal("571.04")
    assert result["due_date"] == "2020-12-12"


def test_a_grid_with_an_amount_due_reads_it_but_a_line_item_header_does_not_give_its_first_row() -> None:
    grid = page(
        (300, 40, "Invoice No."), (380, 40, "Date"), (460, 40, "Amount Due"),
        (300, 53, "9421237324"), (380, 53, "12/12/2023"), (460, 53, "133.19"),
    )  # fmt: skip
    assert (grid["invoice_number"], grid["issue_date"], grid["total"]) == (
        "9421237324",
        "2023-12-12",
        Decimal("133.19"),
    )
    items = page(
        (40, 40, "Description"), (200, 40, "Qty"), (300, 40, "VAT"), (400, 40, "Total"),
        (40, 53, "Widgets"), (200, 53, "2"), (300, 53, "19%"), (400, 53, "20.00"),
        (300, 200, "Amount due 119.00"),
    )  # fmt: skip
    assert items["total"] == Decimal("119.00")


def test_a_bill_that_prints_no_net_amount_leaves_the_subtotal_empty_for_review() -> None:
    result = text_invoice("Bill date: 04 March 2010\nPlease pay £92.62 \u2013 to reach us by 18 Mar 2010\n"
                          "VAT at 5% £4.41\nTotal to pay £92.62")  # fmt: skip
    assert (result["subtotal"], result["tax"], result["total"]) == (None, Decimal("4.41"), Decimal("92.62"))
    assert result["due_date"] == "2010-03-18"
    assert "subtotal" in result["needs_review"]


def test_an_invoice_amount_label_names_the_total() -> None:
    result = text_invoice("Invoice: 9421237324\nSub Total 133.19\nInvoice Amount (USD) 133.19")
    assert result["total"] == Decimal("133.19")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fakturanummer 10245\nFakturadatum 2024-09-30\nFörfallodatum 2024-10-30\nSumma exkl. moms 12 400,00\n"
         "Moms 25 % 3 100,00\nAtt betala 15 500,00 kr", ("10245", "2024-10-30", Decimal("15500.00"))),
        ("Fakturanr.: 2024117\nFakturadato: 4. november 2024\nForfaldsdato: 18. november 2024\nSubtotal 6.480,00\n"
         "Moms 25% 1.620,00\nI alt DKK 8.100,00", ("2024117", "2024-11-18", Decimal("8100.00"))),
        ("Laskun numero 5521\nLaskun päivämäärä 31.1.2024\nEräpäivä 14.2.2024\nVeroton yhteensä 850,00\n"
         "ALV 24 % 204,00\nMaksettava yhteensä 1 054,00 €", ("5521", "2024-02-14", Decimal("1054.00"))),
    ],
)  # fmt: skip
def test_swedish_danish_and_finnish_labels(text: str, expected: tuple[str, str, Decimal]) -> None:
    result = text_invoice(text)
    assert (result["invoice_number"], result["due_date"], result["total"]) == expected


def test_a_number_shaped_like_a_date_after_a_number_word_is_the_number_not_the_date() -> None:
    result = text_invoice("Toruń, 31 maja 2024 r.\nFAKTURA NR 12/05/2024\nDo zapłaty: 984,00 zł")
    assert (result["invoice_number"], result["issue_date"]) == ("12/05/2024", "2024-05-31")


def test_a_german_credit_note_with_the_tax_rate_before_the_tax_word() -> None:
    result = text_invoice("Gutschrift-Nr.: GS-2024-015\nNettobetrag -120,00 €\nzzgl. 19 % USt. -22,80 €\n"
                          "Gutschriftsbetrag -142,80 €")  # fmt: skip
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("-120.00"),
        Decimal("-22.80"),
        Decimal("-142.80"),
    )


def test_the_one_date_a_receipt_prints_is_its_date_of_issue() -> None:
    # Given a photographed receipt, read by OCR without much confidence, whose only date follows a bare "Date"
    rows = ["KFA SUPPLY SDN BHD", "Date : 27/05/2018 8:07 PM", "Total RM 11.60", "27/05/2018"]
    words = [
        Word(token, 1, 20 + 40 * column, 20 * row, 55 + 40 * column, 20 * row + 10, 0.75)
        for row, text in enumerate(rows)
        for column, token in enumerate(text.split())
    ]
    document = Document(text="\n".join(rows), filename="r.jpg", content_type="image/jpeg", sha256="0",
                        words=tuple(words), ocr_pages=(1,))  # fmt: skip
    # Then that date is the date of issue: there is no other date to mistake it for
    assert read_invoice(document)["issue_date"] == "2018-05-27"


def test_a_malaysian_company_form_names_the_vendor_and_a_receipt_title_does_not() -> None:
    result = text_invoice("SIMPLIFIED TAX INVOICE\nSubang Healthcare Sdn Bhd\nTotal RM 78.10")
    assert result["vendor"] == "Subang Healthcare Sdn Bhd"


def test_a_name_with_its_registration_number_in_brackets_is_the_vendor_and_the_address_under_it_is_not() -> None:
    # Given a receipt headed by a sale title, a name with its company number, then its street address
    result = text_invoice("Cash Sale\nLIM BROTHERS HARDWARE (002345678-K)\n14, Jalan Bukit Maju 3,\nTotal  12.00")
    # Then the vendor is the name without the number
    assert result["vendor"] == "LIM BROTHERS HARDWARE"


def test_ocr_noise_that_ends_in_a_company_form_is_no_vendor() -> None:
    # Given a receipt whose item line OCR garbled into something ending in "SC" (the Polish form s.c.)
    result = text_invoice("Kedai Maju\nRICE 10KG St™SC*C~CST\nTotal  12.00")
    # Then the vendor is the name at the top, not the noise
    assert result["vendor"] == "Kedai Maju"


@pytest.mark.parametrize(
    "name",
    [
        "Card Factory Ltd", "Cash Converters Ltd", "Change Healthcare Inc.", "Resto Bella Napoli S.r.l.",
        "Cambio Real Estate S.L.", "PLAZA 88 SDN BHD", "3M, Inc.", "Acme™ Tools Ltd",
    ],
)  # fmt: skip
def test_a_company_name_that_starts_with_a_payment_word_or_a_number_is_still_the_vendor(name: str) -> None:
    assert text_invoice(f"{name}\nInvoice total  10.00")["vendor"] == name


@pytest.mark.parametrize(
    ("text", "vendor"),
    [
        ("*** TAX INVOICE ***\nTotal  5.00", None),  # a banner
        ("<< REPRINT >>\nTotal  5.00", None),
        ("Total  35.80\nCash  50.00", None),  # a payment word alone
        ("KEDAI MAJU\n12, JALAN KG BARU, 43000 KAJANG\nTotal  5.00", "KEDAI MAJU"),  # Kg (Kampung) is no KG
        ("ACME Trading Ltd <billing@acmetrading.com>\nTotal  5.00", "ACME Trading Ltd"),
        ("Kowalski i Nowak s.c.\nTotal  5.00", "Kowalski i Nowak s.c."),  # a Polish civil partnership
    ],
)
def test_banners_payment_words_and_addresses_are_no_vendor(text: str, vendor: str | None) -> None:
    assert text_invoice(text)["vendor"] == vendor


@pytest.mark.parametrize(
    "address",
    [
        "14, Jalan Bukit Maju 3,", "Hauptstraße 12", "Keizersgracht 120", "221 Baker Street", "Calle Mayor 5",
        # A town, its state or province and its code; the state may be a company form elsewhere (SC, AB, ME)
        "Charleston, SC 29401", "Calgary, AB T2T 0B6", "Portland, ME 04101",
    ],
)  # fmt: skip
def test_a_street_address_is_never_the_vendor(address: str) -> None:
    result = text_invoice(f"{address}\nTotal  12.00")
    assert result["vendor"] is None


@pytest.mark.parametrize(
    ("text", "currency"),
    [
        ("Tax Invoice\nABN : 16 084 165 328\nTotal Inc GST :  $3.00", "AUD"),
        ("Invoice\nGST/HST Registration 123456789\nTotal  $45.00", "CAD"),
        # A business number's GST account is Canadian, whatever the tax is called on the page
        ("Invoice\nGST No. 78123 4567 RT0001\nGST (5%)  $2.14\nTotal  $45.00", "CAD"),
        ("Invoice\nToronto, Canada\nTotal  $3.99 USD", "USD"),
        ("Invoice\nToronto, Canada\nTotal  $3.99", "USD"),
    ],
)
def test_a_bare_dollar_sign_is_the_dollar_of_the_country_whose_tax_number_the_page_prints(
    text: str, currency: str
) -> None:
    assert text_invoice(text)["currency"] == currency


@pytest.mark.parametrize(
    ("sentence", "currency"),
    [
        ("All prices are in US dollars.", "USD"),
        ("Amounts are shown in Canadian dollars.", "CAD"),
        ("All amounts in U.S. Dollars", "USD"),
    ],
)
def test_a_dollar_named_in_words_outweighs_the_country_of_the_tax_number(sentence: str, currency: str) -> None:
    # Given an Australian tax invoice (its ABN printed) that says in a sentence which dollar its "$" is
    result = text_invoice(f"Tax Invoice\nABN: 11 119 159 741\nInvoice No. 1242\nInvoice Total: $101.00\n{sentence}")
    # Then the currency is the one the sentence names
    assert result["currency"] == currency


def test_an_order_date_dates_an_invoice_that_prints_no_other_for_review() -> None:
    # Given a tax invoice that prints its order date, and a later date in its small print
    result = text_invoice(
        "Tax Invoice\nOrder date: 28 Jan 15\nInvoice No. 12429647\nInvoice Total: $101.00\n"
        "Credits from this purchase will expire on 28 Jan 2016."
    )
    # Then the order date is the date of issue, offered for review
    assert result["issue_date"] == "2015-01-28"
    assert "issue_date" in result["needs_review"]


@pytest.mark.parametrize(
    ("seller", "iban", "currency"),
    [
        ("Snickeri Lund AB\nOrg.nr 556000-0000", "SE45 5000 0000 0583 9825 7466", "SEK"),
        ("Tømrer Jensen ApS\nCVR-nr. DK12345678", "DK50 0040 0440 1162 43", "DKK"),
        ("Rørlegger Hansen AS\nOrg.nr 999 999 999 MVA", "NO93 8601 1117 947", "NOK"),
    ],
)
def test_crowns_are_the_crowns_of_the_country_the_seller_names(seller: str, iban: str, currency: str) -> None:
    # Given a Nordic invoice whose amounts print "kr", which Sweden, Denmark and Norway all write
    text = f"{seller}\nFaktura nr. 5531\nMoms 25% 1.000,00 kr.\nAt betale 5.000,00 kr."
    # Then the currency is the crowns of the country the register number names, for review on that alone
    alone = text_invoice(text)
    assert alone["currency"] == currency
    assert "currency" in alone["needs_review"]
    # And sure when the payee's bank is in the same country
    banked = text_invoice(f"{text}\nIBAN {iban}")
    assert banked["currency"] == currency
    assert "currency" not in banked["needs_review"]


def test_a_buyers_register_number_leaves_crowns_for_review() -> None:
    result = text_invoice(
        "Rørlegger Hansen\nFaktura 77\nKunde: Byggservice Nord\nOrg.nr 556000-0000\nÅ betale 5.000,00 kr"
    )
    assert "currency" in result["needs_review"]


def test_german_ab_and_a_districts_kr_name_no_crowns() -> None:
    result = text_invoice(
        "KFZ-Teile Schmidt GmbH\n73728 Esslingen, Kr. Esslingen\nRechnung 4711\nLIEFERUNG AB WERK\n"
        "Gesamtbetrag 1.190,00"
    )
    assert result["currency"] != "SEK"


def test_crowns_without_a_country_are_left_for_review() -> None:
    result = text_invoice("Snickeri Lund\nFaktura nr. 5531\nAtt betala 5 000,00 kr")
    assert result["currency"] is None


def test_a_portuguese_invoice_number_after_n_ordinal_and_a_total_without_vat() -> None:
    # Given "Fatura n.º" (the ordinal sign after a dot) and "Total sem IVA" for the amount before tax
    result = text_invoice(
        "Papelaria Lisboa, Lda.\nFatura n.º FT 2023/45\nData de emissão: 2023-03-05\n"
        "Total sem IVA 100,00 €\nIVA 23% 23,00 €\nTotal a pagar 123,00 €"
    )
    assert (result["invoice_number"], result["subtotal"], result["tax"]) == (
        "FT 2023/45",
        Decimal("100.00"),
        Decimal("23.00"),
    )


@pytest.mark.parametrize(
    "text",
    [
        "Comercial Andes SpA\nAv. Apoquindo 3000, Santiago, Chile\nFactura 1023\nTotal $ 45.990",
        "Colombo Traders\nColombo 03, Sri Lanka\nInvoice 77\nTotal Rs. 12,000.00",
        "Comercial Andes SpA\nSantiago\nChile\nFactura 1023\nNeto $ 38.647\nIVA 19% $ 7.343\nTotal $ 45.990",
        "Shanghai Trading Co.\nShanghai\nChina\nInvoice 77\nSubtotal ¥ 1,000.00\nTax ¥ 130.00\nTotal ¥ 1,130.00",
    ],
)
def test_a_sign_several_currencies_write_is_left_for_review_however_often_printed(text: str) -> None:
    assert "currency" in text_invoice(text)["needs_review"]


@pytest.mark.parametrize(
    "text",
    [
        "Blue Ocean Design LLC\n123 Main St, Austin, TX 78701\nInvoice 12\nSubtotal $1,000.00\nTax $82.50\n"
        "Total Due $1,082.50",
        "Sharma Traders Pvt. Ltd.\nInvoice No.: 12\nGrand Total ₹ 1,18,000.00",
    ],
)
def test_a_dollar_where_the_page_names_its_country_or_a_sign_of_its_own_is_sure(text: str) -> None:
    assert "currency" not in text_invoice(text)["needs_review"]


@pytest.mark.parametrize("line", [(300, 120, "Währung : EUR"), (300, 120, "Currency USD")])
def test_a_currency_stated_under_its_own_label_needs_no_review(line: tuple[float, float, str]) -> None:
    # Given an invoice whose amounts carry no sign, and a line that states the currency
    result = page((40, 40, "Huber GmbH", 16), (40, 100, "Rechnung Nr. 4711"), line, (300, 400, "Zahlbetrag 529,87"))
    # Then that currency is read for sure
    assert result["currency"] == line[2][-3:]
    assert "currency" not in result["needs_review"]


@pytest.mark.parametrize(
    "text",
    ["Nordic AB\nFaktura 5\nAtt betala 1 250,00 kr\nValuta: EUR", "Acme Ltd\nInvoice 5\nTotal £120.00\nCurrency: EUR"],
)
def test_a_stated_currency_the_amounts_contradict_is_left_for_review(text: str) -> None:
    assert "currency" in text_invoice(text)["needs_review"]


def test_a_currency_label_and_its_code_in_two_phrases_state_it() -> None:
    result = page((40, 40, "Huber GmbH", 16), (40, 120, "Währung"), (200, 120, ": EUR"), (300, 400, "Zahlbetrag 9,00"))
    assert (result["currency"], "currency" in result["needs_review"]) == ("EUR", False)


@pytest.mark.parametrize(("read", "reviewed"), [(0.72, True), (0.95, False)])
def test_a_vendor_ocr_read_unsurely_is_given_for_review(read: float, reviewed: bool) -> None:
    # Given a receipt whose company name OCR read with this confidence ("TKANO HANDEL" for "IKANO HANDEL")
    result = ocr_receipt(("TKANO HANDEL SDN BHD", read), ("Receipt 4411", 0.95), ("TOTAL RM 10.60", 0.95))
    # Then the name is given, and marked for a person to check when OCR was unsure of its letters
    assert result["vendor"] == "TKANO HANDEL SDN BHD"
    assert ("vendor" in result["needs_review"]) is reviewed


def test_a_dash_after_a_date_is_no_minus() -> None:
    result = page(
        (40, 40, "Acme Ltd", 16), (40, 100, "Invoice Date: 03/05/2023-"), (300, 100, "31/05/2023"),
        (300, 400, "Total £10.00"),
    )  # fmt: skip
    assert result["issue_date"] == "2023-05-03"


def test_the_one_currency_sign_printed_beside_the_total_needs_no_review() -> None:
    # Given an invoice from a text layer whose only currency sign stands beside its total
    result = text_invoice(
        "Rossi Forniture S.r.l.\nFattura n. 12/2023\nImponibile 500,00\nIVA 22% 110,00\nTotale € 610,00"
    )
    assert result["currency"] == "EUR"
    assert "currency" not in result["needs_review"]


@pytest.mark.parametrize(
    "line",
    ["VAT 20% incl.  £2.75", "enth. MwSt 19% 2,75", "darin enthaltene MwSt.: 2,75", "dont TVA 20% 2,75 €",
     "Includes GST $2.75", "di cui IVA 2,75", "waarvan btw 2,75", "w tym VAT 2,75"],
)  # fmt: skip
def test_a_tax_the_total_includes_is_read_and_its_total_given(line: str) -> None:
    # Given a receipt whose prices include the tax: its subtotal is its total, and the tax line says so
    result = text_invoice(f"Corner Shop Ltd\nReceipt 4411\nSubtotal 16.49\n{line}\nTotal 16.49")
    # Then the total and the tax are read, and the sums are said to agree
    assert (result["tax"], result["total"]) == (Decimal("2.75"), Decimal("16.49"))
    assert result["checks"]["totals_add_up"] is True
    # And a subtotal equal to such a total may be the gross amount: a person looks at it
    assert "subtotal" in result["needs_review"]


def test_a_total_including_its_tax_is_still_the_total() -> None:
    result = text_invoice("Corner Shop Sdn Bhd\nReceipt 4411\nGST 6% 0.60\nTotal incl. GST RM 10.60")
    assert (result["tax"], result["total"]) == (Decimal("0.60"), Decimal("10.60"))


@pytest.mark.parametrize(
    ("line", "subtotal"),
    [("Total exkl. MWST CHF 1'000.00", "1000.00"), ("Maatstaf van heffing € 1.000,00", "1000.00")],
)
def test_more_amount_before_tax_labels(line: str, subtotal: str) -> None:
    result = text_invoice(f"Atelier Peeters BV\nFactuur nr. 2023/118\n{line}\nBTW 21% € 210,00\nTotaal € 1.210,00")
    assert result["subtotal"] == Decimal(subtotal)


def test_a_printed_dollar_code_outweighs_a_dollar_named_in_a_sentence() -> None:
    result = text_invoice("Acme Inc.\nInvoice 5\nTotal USD 1,160.00\nApprox. 1,580 Canadian dollars")
    assert result["currency"] == "USD"


@pytest.mark.parametrize(
    "lines",
    ["Subtotal $100.00\nIncluding tax $108.00", "Excl. VAT £100.00\nVAT 20% £20.00\nIncl. VAT £120.00"],
)
def test_a_line_that_opens_with_incl_tax_is_no_tax_amount(lines: str) -> None:
    result = text_invoice(f"Acme Ltd\nInvoice 5\n{lines}")
    assert result["tax"] not in (Decimal("108.00"), Decimal("120.00"))


def test_a_danish_net_amount_in_all_is_no_total() -> None:
    result = text_invoice(
        "Tømrer Jensen ApS\nFaktura nr. 5531\nBeløb i alt ekskl. moms 1.000,00 kr.\nMoms 25% 250,00 kr."
    )
    assert result["subtotal"] == Decimal("1000.00")
    assert result["total"] != Decimal("1000.00")


def test_a_date_glued_before_a_label_is_not_that_labels_value() -> None:
    result = page(
        (40, 40, "Huber GmbH", 16),
        (40, 100, "Rechnungsdatum:"),
        (40, 112, "05.03.2023Rechnungsnummer:"),
        (40, 124, "4711"),
        (300, 400, "Gesamtbetrag 10,00 €"),
    )
    assert result["invoice_number"] != "05.03.2023"


@pytest.mark.parametrize(("order", "plain"), [("Order Date:", "Date:"), ("Auftragsdatum:", "Datum:")])
def test_a_plain_date_outranks_an_order_date(order: str, plain: str) -> None:
    result = text_invoice(f"Acme GmbH\n{order} 15.01.2024\n{plain} 01.02.2024\nInvoice No: 7\nTotal 10.00 EUR")
    assert result["issue_date"] == "2024-02-01"


def test_a_payment_department_is_no_vendor() -> None:
    result = text_invoice(
        "Swift Haulers Inc.\nInvoice 9931\nPlease make checks payable to: Accounts Receivable, 12 Depot Rd\n"
        "Total Due $500.00"
    )
    assert result["vendor"] != "Accounts Receivable"


def test_a_tax_said_not_to_be_included_is_added_to_the_base() -> None:
    result = text_invoice(
        "Talleres Pérez S.L.\nFactura 12\nBase imponible 100,00\nIVA (no incluido) 21% 21,00\nTotal 121,00"
    )
    assert result["checks"]["totals_add_up"] is True


def test_a_credit_with_its_minus_after_the_amount_adds_up() -> None:
    # Given a German credit note printed the way accounting systems print credits: the minus after the amount
    result = text_invoice("Acme GmbH\nGutschrift Nr. G-12\nNetto 100,00-\nMwSt 19% 19,00-\nGesamt 119,00- EUR")
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("-100.00"),
        Decimal("-19.00"),
        Decimal("-119.00"),
    )
    assert result["checks"]["totals_add_up"] is True


def test_an_amount_grouped_by_a_space_after_a_currency_code_is_one_amount() -> None:
    # "TOTAL 2 112.50" may be a count and an amount; "USD 1 234.56" is not: no count stands after a currency
    result = text_invoice("Acme Inc.\nInvoice 5\nTotal: USD 1 234.56")
    assert result["total"] == Decimal("1234.56")


def test_a_week_of_a_month_is_no_date() -> None:
    assert dates_in("Week 1 of March 2023", day_first=True) == []


@pytest.mark.parametrize("label", ["Order Date:", "Bestelldatum:", "Date de commande :", "Fecha del pedido:"])
def test_an_invoice_date_outranks_an_order_date(label: str) -> None:
    result = text_invoice(f"{label} 15.10.2015\nInvoice Date: 20.10.2015\nInvoice No: 77\nTotal: 10.00 EUR")
    assert result["issue_date"] == "2015-10-20"
    assert "issue_date" not in result["needs_review"]


def test_a_currency_sign_ocr_is_unsure_of_weighs_less_than_one_read_clearly() -> None:
    # Given a receipt where OCR turned smudges into "¥" twice, and read "RM" clearly once
    assert ocr_receipt(("¥ 1", 0.3), ("¥ 2", 0.3), ("Total RM 12.00", 0.95))["currency"] == "MYR"


def test_a_currency_ocr_glued_to_its_label_is_read_as_a_currency() -> None:
    # Given a receipt where OCR read a tight "Total RM" as one word
    words = [Word("TotalRM", 1, 20, 20, 70, 30, 0.8), Word(":", 1, 72, 20, 75, 30, 0.7),
             Word("11,60", 1, 120, 20, 150, 30, 0.8)]  # fmt: skip
    document = Document(text="TotalRM : 11,60", filename="r.jpg", content_type="image/jpeg", sha256="0",
                        words=tuple(words), ocr_pages=(1,))  # fmt: skip
    result = read_invoice(document)
    # Then the currency is the one glued to the label, and the total is read beside that label
    assert result["currency"] == "MYR"
    assert result["fields"]["total"]["text"].endswith("11,60")


@pytest.mark.parametrize(
    ("printed", "repaired"),
    [
        ("TotalRM : 11,60", "Total RM : 11,60"),
        ("SUBTOTALRM 5.00", "SUBTOTAL RM 5.00"),
        ("TOTALEUR 5,00", "TOTAL EUR 5,00"),
    ],
)
def test_a_currency_glued_to_a_label_word_is_split_off(printed: str, repaired: str) -> None:
    assert ocr_repaired(printed) == repaired


def test_a_label_wrapped_over_two_lines_of_a_narrow_box_reads_the_value_beside_its_first_line() -> None:
    # Given a grid invoice whose boxes print "SUB" over "TOTAL" and "INVOICE" over "TOTAL"
    result = page(
        (400, 500, "SUB"), (480, 500, "830.17"), (400, 512, "TOTAL"),
        (400, 540, "INVOICE"), (480, 540, "830.17"), (400, 552, "TOTAL"),
    )  # fmt: skip
    assert (result["subtotal"], result["total"]) == (Decimal("830.17"), Decimal("830.17"))


def test_income_tax_withheld_is_taken_off_the_total_and_the_taxed_base_is_not_a_tax() -> None:
    # Given a Spanish freelancer's invoice: 92,00 + IGIC 6,44 - IRPF 13,80 withheld = 84,64 to be paid
    result = text_invoice(
        "Base imponible  92,00\nI.G.I.C. - Base  92,00\nI.G.I.C. - Cuota  6,44\nI.R.P.F. - Cuota  13,80\n"
        "Importe líquido  84,64"
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (Decimal("92.00"), Decimal("6.44"), Decimal("84.64"))
    assert result["checks"]["totals_add_up"] is True


@pytest.mark.parametrize(
    ("text", "currency"),
    [
        ("Kedai Contoh Sdn Bhd\nNo 5, Jalan Maju\n43000 Kajang, Malaysia\nTotal 12.50", "MYR"),
        ("Pasar Contoh S/B.\nTotal 12.50", "MYR"),
        ("Bright Paper Pty Ltd\nTotal 30.00", "AUD"),
        ("Harbour Supply Co.\n12 Dock Road\nMedford, OR 97501\nInvoice Total 140.84", "USD"),
        ("Beispiel Werkzeuge\n12345 Musterstadt\nDeutschland / Germany\nGesamtbetrag 571,04", "EUR"),
    ],
)
def test_without_a_currency_sign_the_currency_of_the_country_the_page_names_is_offered_for_review(
    text: str, currency: str
) -> None:
    result = text_invoice(text)
    assert result["currency"] == currency
    assert "currency" in result["needs_review"]


def test_countries_that_disagree_name_no_currency_and_a_country_in_a_sentence_is_no_address() -> None:
    both = "Harbour Supply\nMedford, OR 97501\nBilled to: Acme, London SW1A 1AA\nTotal 10.00"
    assert text_invoice(both)["currency"] is None
    assert text_invoice("Mugs made in China\nTotal 10.00")["currency"] is None


def test_the_country_the_page_names_decides_day_first() -> None:
    # Given a Malaysian receipt with 11/08/2017, which only the country tells apart from 8 November
    result = text_invoice("Subang Pharmacy Sdn Bhd\n47500 Subang Jaya, Malaysia\nDate: 11/08/2017\nTotal 78.10")
    assert result["issue_date"] == "2017-08-11"


def test_ocr_misreadings_of_a_company_form_are_spelled_as_the_form() -> None:
    assert text_invoice("FOUR QUARTERS SUN BHD\nTotal RM 43.90")["vendor"] == "FOUR QUARTERS SDN BHD"
    assert text_invoice("SUBANG HEALTHCARE SDM BHD\nTotal RM 78.10")["vendor"] == "SUBANG HEALTHCARE SDN BHD"
    assert text_invoice("LEE & SON BHD\nTotal RM 5.00")["vendor"] == "LEE & SON BHD"
    # B read as 3 or 8: the name still carries its form, and the form names the currency's country
    result = text_invoice("KEDAI RUNCIT MAJU SDN 3HD\nPASAR BORONG SUPER\nTotal 5.00")
    assert (result["vendor"], result["currency"]) == ("KEDAI RUNCIT MAJU SDN BHD", "MYR")


def test_a_phrase_ocr_could_not_read_is_no_vendor() -> None:
    # Given a receipt whose first line OCR read with no confidence at all, and no company form anywhere
    result = ocr_receipt(("gee DIP Cnase,", 0.0), ("Kedai Maju", 0.9), ("Total 12.00", 0.9))
    # Then the vendor is the first line OCR read
    assert result["vendor"] == "Kedai Maju"


def test_a_receipt_that_prints_one_date_at_its_foot_is_dated_by_it() -> None:
    lines = ["KEDAI RUNCIT MAJU", "Item A   2.00", "Item B   3.00", "TOTAL   5.00", "Cash   10.00", "Change   5.00",
             "Thank you", "Please come again", "Goods are not returnable", "Rabu, 25-05-2017 Time 21:51"]  # fmt: skip
    assert text_invoice("\n".join(lines))["issue_date"] == "2017-05-25"


def test_tax_printed_per_rate_is_added_up_and_one_rates_gross_is_not_the_total() -> None:
    # Given a German invoice with a net/tax/gross block per rate and no tax total
    result = text_invoice(
        "Rechnung Nr. 2024-17\nNettobetrag 7%:  275,00\nUSt 7%:  19,25\nBruttobetrag 7%:  294,25\n"
        "Nettobetrag 19%:  200,00\nUSt 19%:  38,00\nBruttobetrag 19%:  238,00\nNettobetrag gesamt:  475,00\n"
        "Zahlbetrag:  532,25"
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("475.00"),
        Decimal("57.25"),
        Decimal("532.25"),
    )
    assert result["checks"]["totals_add_up"] is True


def test_the_amount_a_tax_rate_is_levied_on_is_not_the_tax() -> None:
    result = text_invoice(
        "Rechnung Nr. 88\nNettobetrag:  475,00 EUR\nMwSt 7% auf 275,00:  19,25 EUR\nMwSt 19% auf 200,00:  38,00 EUR\n"
        "Gesamtbetrag:  532,25 EUR"
    )
    assert (result["tax"], result["total"]) == (Decimal("57.25"), Decimal("532.25"))


def test_one_rates_tax_line_alone_is_left_for_review() -> None:
    # Given a bill that prints two tax lines, no tax total and no net amount: neither line is the tax
    result = text_invoice("Factura 88\nIGIC reducido  1,34 €\nIGIC normal  0,05 €\nTotal importe factura  46,61 €")
    assert result["tax"] is None
    assert "tax" in result["needs_review"]
    assert result["total"] == Decimal("46.61")


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("Tax Invoice No. TI-00045\nTotal 10.00", "invoice_number", "TI-00045"),
        ("Importe bruto  92,00\nIGIC 7%  6,44\nTotal factura  98,44", "subtotal", Decimal("92.00")),
    ],
)
def test_more_label_synonyms(text: str, field: str, expected: object) -> None:
    assert text_invoice(text)[field] == expected


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("Rg.-Nr.: 2024-0815", "2024-0815"),
        ("Re.-Nr. 4711", "4711"),
        ("Rechn.-Nr.: 12345", "12345"),
        ("Dokumentnummer: 55501", "55501"),
        ("Inv. No. 4410", "4410"),
        ("Fact. n° 2024-88", "2024-88"),
        ("Nr. faktury: 12/2024", "12/2024"),
    ],
)
def test_abbreviated_invoice_number_labels(line: str, number: str) -> None:
    assert (
        text_invoice(f"Beispiel GmbH\n{line}\nDatum: 12.03.2024\nGesamtbetrag: 100,00 EUR")["invoice_number"] == number
    )


@pytest.mark.parametrize(
    ("heads", "number"),
    [
        (((40, "N° NH-2024-0087"),), "NH-2024-0087"),  # a French fee note's number sign, its value beside it
        (((40, "Nº 004812"),), "004812"),  # the sign printed with the ordinal indicator, not the degree sign
        (((40, "Nºs 4 a 7"),), None),  # the plural sign of a range: no number of its own
        (((300, "N.º"), (360, "FT 2025A/412")), "FT 2025A/412"),  # a Portuguese one, with its series code
        (((40, "Colegiado n° 1.452"),), None),  # a member's number, not the invoice's
        (((40, "N° 1.452"),), None),  # a count in thousands after a bare sign
    ],
)
def test_a_bare_number_sign_names_the_number_right_after_it(
    heads: tuple[tuple[int, str], ...], number: str | None
) -> None:
    result = page(*((x, 60, text) for x, text in heads), (40, 300, "Total 1 024,80 €"))
    assert result["invoice_number"] == number


def test_a_label_ocr_misread_one_letter_of_is_still_the_label() -> None:
    result = ocr_receipt(("SUB-TOTAL 11.32", 0.9), ("GST 0.68", 0.9), ("TATAL 12.00", 0.9))
    assert (result["subtotal"], result["tax"], result["total"]) == (Decimal("11.32"), Decimal("0.68"), Decimal("12.00"))


def test_the_number_sign_ocr_read_as_n2_is_the_number_sign() -> None:
    # Given a scanned sales note whose "Nº 004812" OCR read as "N2 004812"
    result = ocr_receipt(("Papelaria Girassol Ltda", 0.93), ("N2 004812", 0.93), ("Total R$ 926,70", 0.93))
    # Then the number is read, for review, as a bare number sign's
    assert result["invoice_number"] == "004812"
    assert "invoice_number" in result["needs_review"]
    # Not a road's name ("N2") without a number after it, nor a text layer's
    assert ocr_repaired("N2 Lisboa") is None
    assert text_invoice("Papelaria Girassol Ltda\nN2 004812\nTotal R$ 926,70")["invoice_number"] is None


def test_a_word_one_letter_added_to_a_label_and_a_text_layer_are_not_repaired() -> None:
    # "Summer" is a word of its own ("Summe" and a letter); a PDF's text layer prints what it means
    assert ocr_receipt(("Summer 12.00", 0.9))["total"] is None
    assert text_invoice("TATAL 12.00")["total"] is None


def test_sums_that_add_up_for_one_part_of_a_bill_do_not_vouch_for_a_total_a_larger_amount_due_follows() -> None:
    # Given a bill whose current period adds up to 119,00 while the amount due below it also settles last year
    result = text_invoice(
        "Rechnung Nr. 4711\nNettobetrag  100,00 EUR\nUSt 19%  19,00 EUR\nBruttobetrag  119,00 EUR\n"
        "Nachzahlung Vorjahr  131,00 EUR\nZahlbetrag  250,00 EUR"
    )
    assert result["total"] is None
    assert "total" in result["needs_review"]


def test_the_copyright_holder_in_the_footer_is_the_issuer() -> None:
    result = page(
        (40, 60, "Invoice"), (40, 80, "Invoice number 4411"), (300, 60, "Bill to"), (300, 73, "Customer Works"),
        (40, 300, "Amount due $20.00"), (40, 760, "© 2024 Skyfarer Video Communications, Inc. All rights reserved."),
    )  # fmt: skip
    assert result["vendor"] == "Skyfarer Video Communications, Inc."


def test_the_buyer_block_ends_where_its_lines_stop_so_a_footer_below_it_can_name_the_issuer() -> None:
    # Given a bill-to block at the top and, far below in the same column, the issuer's legal footer
    result = page(
        (40, 60, "INVOICE"), (300, 60, "Bill to"), (300, 73, "Jane Doe"), (40, 300, "Total £20.00"),
        (40, 760, "Brightwater Energy Ltd, Registered in England and Wales No. 01234567"),
    )  # fmt: skip
    assert result["vendor"] == "Brightwater Energy Ltd"


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("1,47,972.00", Decimal("147972.00")),
        ("₹ 12,34,567.89", Decimal("1234567.89")),
        ("Rs. 1,00,000", Decimal("100000")),
        ("11,286.00", Decimal("11286.00")),
    ],
)
def test_indian_digit_grouping_is_one_amount(printed: str, expected: Decimal) -> None:
    assert [a.value for a in amounts_in(f"Total {printed}")] == [expected]


def test_central_and_state_gst_of_one_amount_are_two_taxes() -> None:
    # Given an Indian tax invoice: CGST and SGST at 9% each, equal amounts, no tax total, lakh grouping
    result = text_invoice(
        "Tax Invoice\nInvoice No.: SR/24-25/0042\nTaxable Value 2,40,000.00\nCGST @ 9% 21,600.00\n"
        "SGST @ 9% 21,600.00\nTotal ₹ 2,83,200.00"
    )
    # Then both count towards the tax, and the three amounts vouch for each other
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("240000.00"),
        Decimal("43200.00"),
        Decimal("283200.00"),
    )
    assert result["checks"]["totals_add_up"] is True
    assert not {"subtotal", "tax", "total"} & set(result["needs_review"])


def test_the_same_rates_tax_printed_twice_still_counts_once() -> None:
    result = text_invoice(
        "Rechnung Nr. 91\nNetto:  200,00\nMwSt 19%:  38,00\nUSt 7%:  0,00\nMwSt 19%:  38,00\nGesamtbetrag:  238,00"
    )
    assert (result["tax"], result["total"]) == (Decimal("38.00"), Decimal("238.00"))


@pytest.mark.parametrize(
    ("text", "tax"),
    [
        ("Subtotal $200.00\nGST 5% $10.00\nPST 7% $14.00\nTotal $224.00", Decimal("24.00")),
        ("Sous-total 200,00 $\nTPS 5 % 10,00 $\nTVQ 9,975 % 19,95 $\nTotal 229,95 $", Decimal("29.95")),
        ("Subtotal $100.00\nState tax $6.00\nCounty tax $1.50\nTotal $107.50", Decimal("7.50")),
        ("Sub Total 48,000.00\nIGST @ 18% 8,640.00\nTotal Rs. 56,640.00", Decimal("8640.00")),
    ],
)
def test_canadian_us_and_indian_sales_taxes_are_taxes(text: str, tax: Decimal) -> None:
    result = text_invoice(text)
    assert result["tax"] == tax
    assert result["checks"]["totals_add_up"] is True


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("Nota Fiscal de Serviços\nNúmero da Nota: 000123\nValor Total = R$ 1.500,00", "invoice_number", "000123"),
        ("Fattura elettronica\nNumero documento 2024/FE/88\nTotale da pagare 1.220,00", "invoice_number", "2024/FE/88"),
        ("FACTURE\nNuméro : 2024-12-007\nMontant TTC : 540,00 €", "invoice_number", "2024-12-007"),
        ("Fatura nº FT 2024/315\nTotal 369,00 €", "invoice_number", "FT 2024/315"),
        ("Factura: A 1234\nTotal 100,00 €", "invoice_number", "A 1234"),
        ("Fatura n.º FT PV2025/742\nTotal 369,00 €", "invoice_number", "FT PV2025/742"),  # a series with letters
        ("Fatura nº 315\nTotal Ilíquido 300,00 €\nTotal IVA 69,00 €\nTotal 369,00 €", "subtotal", Decimal("300.00")),
        ("Invoice 7\nNet £400.00\nVAT @ 20% £80.00\nGross £480.00", "total", Decimal("480.00")),
        ("Invoice 7\nNet £400.00\nVAT @ 20% £80.00\nTotal Due £480.00", "subtotal", Decimal("400.00")),
        (
            "Factura 9\nBase Imponible 200,00\nI.V.A. 21% 42,00\nRet. IRPF 15% -30,00\nTotal Factura 212,00",
            "total",
            Decimal("212.00"),
        ),
    ],
)
def test_labels_of_more_kinds_of_invoice(text: str, field: str, expected: object) -> None:
    assert text_invoice(text)[field] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Invoice 7\nNet weight 12.50 kg\nTotal $20.00",
        "Invoice 7\nTerms: Net 30 days\nGross weight 5.00 kg\nTotal $20.00",
    ],
)
def test_net_and_gross_weights_are_no_amounts_of_the_bill(text: str) -> None:
    result = text_invoice(text)
    assert (result["subtotal"], result["total"]) == (None, Decimal("20.00"))


@pytest.mark.parametrize(
    ("sign", "total"),
    [("ABN 12 345 678 901", "$550.00"), ("GSTIN: 29ABCDE1234F1Z5", "550.00")],
)
def test_a_page_with_an_australian_or_indian_tax_number_dates_day_first(sign: str, total: str) -> None:
    # A bare "$" beside an ABN is the Australian dollar; an Indian GST number names India without a currency sign
    result = text_invoice(f"Tax Invoice\n{sign}\nInvoice No: 10045\nInvoice Date: 3/12/2024\nTotal {total}")
    assert result["issue_date"] == "2024-12-03"


@pytest.mark.parametrize(
    ("title", "vendor"),
    [
        ("Receipt from Northwind Analytics, Inc.", "Northwind Analytics, Inc."),
        ("Invoice from Blue Harbor Studio", "Blue Harbor Studio"),
        ("Rechnung von Beispiel Software GmbH", "Beispiel Software GmbH"),
    ],
)
def test_a_mailed_bills_title_names_who_sent_it(title: str, vendor: str) -> None:
    result = page((50, 40, title), (50, 100, "Invoice number 7F2A11-0004"), (50, 200, "Amount due $49.00"))
    assert result["vendor"] == vendor


def test_a_logos_short_name_is_read_as_the_name_spelled_out_under_it() -> None:
    result = page(
        (50, 30, "GREENLEAF"),
        (50, 45, "Greenleaf Landscaping"),
        (50, 60, "44 Oak Avenue, Springfield, IL 62704"),
        (400, 30, "INVOICE"),
        (50, 120, "BILL TO"),
        (50, 135, "Robert Chen"),
        (50, 300, "TOTAL $850.00"),
    )
    assert result["vendor"] == "Greenleaf Landscaping"


def test_a_us_receipt_whose_labels_are_alike_in_several_languages_dates_month_first() -> None:
    # "SUBTOTAL" and "TOTAL" are labels in Portuguese and Spanish too: they must not outvote English
    result = ocr_receipt(
        *[(row, 0.9) for row in ("WALMART", "SUBTOTAL 25.10", "TAX 1.76", "TOTAL 26.86", "12/02/24 09:11:20")]
    )
    assert (result["issue_date"], result["language"]) == ("2024-12-02", "en")


def test_a_polish_receipts_sum_is_its_total() -> None:
    rows = ("Biedronka", "PTU A 23% 2,10", "SUMA PLN 34,56", "Gotówka 50,00", "Reszta 15,44", "2024-12-02")
    result = ocr_receipt(*[(row, 0.9) for row in rows])
    assert (result["total"], result["checks"]["payment_matches_total"]) == (Decimal("34.56"), True)


@pytest.mark.parametrize(
    "rows",
    [
        # A Malaysian receipt: a total read unsurely, and the GST summary's amount and tax under it
        [("KFA SUPPLY", 0.9), ("TotalRM : 11,60", 0.3), ("GST Summary Amount Tax", 0.8), ("SR @6% 10.94 0.66", 0.8)],
        # A German one: net, tax and gross in one row of the VAT table
        [("SUMME EUR 2,48", 0.3), ("Steuer % Netto Steuer Brutto", 0.8), ("B= 7,0% 2,32 0,16 2,48", 0.8)],
    ],
)
def test_a_row_of_the_tax_table_that_adds_up_to_the_total_vouches_for_it(rows: list[tuple[str, float]]) -> None:
    result = ocr_receipt(*rows)
    assert result["checks"]["tax_table_matches_total"] is True
    assert result["total"] is not None
    assert "total" not in result["needs_review"]


@pytest.mark.parametrize(
    "row",
    [
        "SR @6% 10.00 0.66",  # adds up to another amount
        "10.94 0.66",  # names no rate or tax
        "SR @6% 0.66 10.94",  # the tax before the amount taxed: no table prints that
    ],
)
def test_rows_that_are_no_tax_table_row_of_the_total_vouch_for_nothing(row: str) -> None:
    result = ocr_receipt(("KFA SUPPLY", 0.9), ("TotalRM : 11,60", 0.3), (row, 0.8))
    assert "tax_table_matches_total" not in result["checks"]
    assert result["total"] is None


@pytest.mark.parametrize(
    ("heads", "rows", "net", "tax"),
    [
        # A French receipt's VAT table: bare heads, a row a rate and a row of totals
        (("CODE", "TAUX", "HT", "TVA", "TTC"),
         [("1", "5,50%", "10,00", "0,55", "10,55"), ("2", "20,00%", "20,00", "4,00", "24,00"),
          ("TOTAL", "", "30,00", "4,55", "34,55")], "30.00", "4.55"),
        # A Spanish one: one rate, so one row
        (("Base Imp.", "% IVA", "Cuota", "Total"), [("30,00", "21,00", "6,30", "36,30")], "30.00", "6.30"),
    ],
)  # fmt: skip
def test_a_receipts_vat_table_with_bare_heads_gives_the_net_and_the_tax(
    heads: tuple[str, ...], rows: list[tuple[str, ...]], net: str, tax: str
) -> None:
    total = rows[-1][-1]
    placed: list[tuple[float, float, str] | tuple[float, float, str, float]] = [
        (40, 20, "LA BONNE TABLE", 16), (40, 60, f"TOTAL {total} €"),
    ]  # fmt: skip
    for row, cells in enumerate([heads, *rows]):
        placed += [(40 + 60 * column, 100 + 14 * row, cell) for column, cell in enumerate(cells) if cell]
    placed.append((40, 300, "Merci de votre visite"))
    read = page(*placed)
    assert (read["subtotal"], read["tax"], read["total"]) == (
        Decimal(net),
        Decimal(tax),
        Decimal(total.replace(",", ".")),
    )


def test_words_that_say_what_a_tax_or_total_is_of_keep_the_amount_at_the_end_of_their_row() -> None:
    # A law firm's account: the tax on part of the subtotal, and a total that names what it adds up
    read = page(
        (40, 20, "Whitford Hale LLP", 14),
        (40, 60, "Invoice No.: 3141"),
        (40, 100, "Subtotal"), (400, 100, "2,150.00"),
        (40, 114, "GST @ 5% on fees and taxable disbursements"), (400, 114, "100.00"),
        (40, 128, "TOTAL FEES, DISBURSEMENTS AND GST"), (400, 128, "$2,250.00"),
        (40, 142, "Less: paid from trust"), (400, 142, "(1,000.00)"),
        (40, 156, "BALANCE DUE"), (400, 156, "$1,250.00"),
        (40, 400, "Payment is due upon receipt."),
    )  # fmt: skip
    assert (read["subtotal"], read["tax"], read["total"]) == (Decimal("2150.00"), Decimal("100.00"), Decimal("2250.00"))
    assert read["checks"]["totals_add_up"] is True


def test_a_total_in_a_sentence_about_something_else_still_has_no_value_beside_it() -> None:
    read = page(
        (40, 20, "Whitford Hale LLP", 14),
        (40, 100, "Subtotal"), (400, 100, "2,150.00"),
        (40, 128, "Total of all open invoices on your account"), (400, 128, "9,999.00"),
        (40, 400, "Payment is due upon receipt."),
    )  # fmt: skip
    assert read["total"] != Decimal("9999.00")


def test_a_tax_row_that_prints_the_amount_it_taxes_gives_the_amount_after_it() -> None:
    # "PST (7%) - materials $584.00 | $40.88": the rate, what it taxes and how much, then the tax on its own
    read = page(
        (40, 20, "Kestrel Gardens Ltd.", 14),
        (40, 100, "Subtotal"), (400, 100, "$1,800.80"),
        (40, 114, "GST (5%)"), (400, 114, "$90.04"),
        (40, 128, "PST (7%) - materials $584.00"), (400, 128, "$40.88"),
        (40, 142, "Total"), (400, 142, "$1,931.72"),
        (40, 400, "Thank you for your business!"),
    )  # fmt: skip
    assert (read["tax"], read["total"]) == (Decimal("130.92"), Decimal("1931.72"))
    # Words after the amount are no tax of that row's
    worded = page(
        (40, 20, "Kestrel Gardens Ltd.", 14),
        (40, 100, "Subtotal"), (400, 100, "$1,800.80"),
        (40, 114, "GST (5%) on $1,800.80"), (400, 114, "Total $1,890.84"),
        (40, 400, "Thank you for your business!"),
    )  # fmt: skip
    assert worded["tax"] != Decimal("1890.84")


@pytest.mark.parametrize(
    ("line", "field", "value"),
    [
        ("Sposób płatności: przelew Termin płatności: 29.05.2024 (14 dni)", "due_date", "2024-05-29"),
        ("Kunde: K-4711 Rechnungsnummer: RE-2024-17", "invoice_number", "RE-2024-17"),
        ("Customer ID: 88213 Invoice Date: 2024-03-05", "issue_date", "2024-03-05"),
    ],
)
def test_a_later_label_value_pair_in_one_phrase_is_read(line: str, field: str, value: str) -> None:
    read = page((40, 20, "Example Supplies Ltd", 14), (40, 80, line), (300, 300, "Total 100.00"), (40, 400, "Thanks"))
    assert str(read[field]) == value


def test_a_charge_among_the_items_is_in_the_subtotal_not_added_to_it() -> None:
    # A caterer's invoice: a delivery row among the items, then subtotal, tax and a tip that the total adds
    read = text_invoice(
        "Saffron Example Kitchen Inc.\nInvoice #000562\nBuffet (per guest)  45 x $24.50  $1,102.50\n"
        "Delivery & setup  1 x $85.00  $85.00\nSubtotal  $1,187.50\nGST 5%  $59.38\nTip  $150.00\n"
        "Total  $1,396.88\nAmount due  $0.00"
    )
    assert read["total"] == Decimal("1396.88")
    assert read["checks"]["totals_add_up"] is True


@pytest.mark.parametrize("label", ["CREDIT NO.", "Credit Memo #", "Credit memo number", "C/N No."])
def test_a_credit_memos_number_is_its_number(label: str) -> None:
    read = text_invoice(f"Bluefin Example Supply Ltd.\nCREDIT MEMO\n{label} CM-1027\nTotal  -310.85")
    assert read["invoice_number"] == "CM-1027"


@pytest.mark.parametrize("second", ["2024-02-07", "2024-02-06"])  # a folio's rows share their dates too
def test_a_column_of_dates_under_a_date_head_is_no_date_of_the_document(second: str) -> None:
    # A law firm's time entries: "Date" heads the rows' dates; the letter's own date stands alone at the top
    read = page(
        (40, 20, "Example Hale LLP", 14),
        (40, 60, "March 5, 2024"),
        (40, 80, "Invoice No.: 58214"),
        (40, 120, "Date"), (120, 120, "Description"), (400, 120, "Hours"),
        (40, 134, "2024-02-06"), (120, 134, "Review draft lease"), (400, 134, "1.2"),
        (40, 148, second), (120, 148, "Call with client"), (400, 148, "0.5"),
        (300, 300, "Total $1,105.00"),
        (40, 400, "Payment is due upon receipt."),
    )  # fmt: skip
    assert read["issue_date"] == "2024-03-05"


def test_a_danish_credit_notes_number_and_a_german_due_date_in_a_sentence() -> None:
    read = text_invoice("Eksempel Kontor ApS\nKreditnota\nKreditnotanr. 2087\nVedr. faktura nr. 2041\nI alt  -1.250,00")
    assert read["invoice_number"] == "2087"
    read = text_invoice(
        "Beispiel Hochbau GmbH\nRechnungsnummer: RE-2024-0318\nRechnungsdatum: 3. März 2024\nGesamtbetrag  1.190,00 €\n"
        "Bitte überweisen Sie den Zahlbetrag ohne Abzug bis zum 2. April 2024 unter Angabe der Rechnungsnummer."
    )
    assert read["due_date"] == "2024-04-02"


def test_a_credit_note_listed_among_open_items_is_no_number_of_this_invoice() -> None:
    read = page(
        (40, 20, "Example Office Supplies Limited", 14),
        (40, 60, "INVOICE"),
        (40, 74, "Invoice No.:"), (140, 74, "104877"),
        (300, 200, "Invoice total €1,515.62"),
        (40, 240, "Your account at a glance - other open items"),
        (40, 254, "Invoice 104312"), (200, 254, "18/12/23"), (400, 254, "642.10"),
        (40, 268, "Credit note 10022"), (200, 268, "19/01/24"), (400, 268, "(85.00)"),
        (40, 400, "Please quote the invoice number with your payment."),
    )  # fmt: skip
    assert read["invoice_number"] == "104877"


def test_a_dutch_bill_that_adds_the_rest_of_the_last_one_gives_its_own_total() -> None:
    read = text_invoice(
        "Voorbeeld Telecom B.V.\nFactuurnummer 7004518823\nNog openstaand van vorige factuur  € 14,13\n"
        "Totaal te betalen  € 85,53\nTotaal excl. btw  € 59,01\nBtw 21%  € 12,39\n"
        "Totaal deze factuur incl. btw  € 71,40"
    )
    assert (read["subtotal"], read["tax"], read["total"]) == (Decimal("59.01"), Decimal("12.39"), Decimal("71.40"))


@pytest.mark.parametrize("listed", ["Credit note 10022", "Credit memo 10022"])
def test_a_credit_listed_among_open_items_by_its_kind_is_no_number_of_this_invoice(listed: str) -> None:
    read = page(
        (40, 20, "Example Office Supplies Limited", 14),
        (40, 74, "Invoice No.:"), (140, 74, "104877"),
        (300, 200, "Invoice total €1,515.62"),
        (40, 254, "Invoice 104312"), (200, 254, "18/12/23"), (400, 254, "642.10"),
        (40, 268, listed), (200, 268, "19/01/24"), (400, 268, "(85.00)"),
        (40, 400, "Please quote the invoice number with your payment."),
    )  # fmt: skip
    assert read["invoice_number"] == "104877"


def test_a_weak_label_inside_a_longer_one_starts_no_pair() -> None:
    read = page(
        (40, 20, "Example Supplies Ltd", 14),
        (40, 60, "Invoice Date: 2024-03-01"),
        (40, 80, "PO Number: 4500123 Delivery Date: 2024-02-12"),
        (300, 300, "Total 100.00"),
        (40, 400, "Thanks"),
    )
    assert read["issue_date"] == "2024-03-01"


def test_what_a_row_says_it_is_of_and_words_after_cuota_are_read_as_they_stand() -> None:
    # Of a base and a tax after a rate "on fees", the tax is the last
    read = page(
        (40, 20, "Example Hale LLP", 14),
        (40, 100, "Fees"), (400, 100, "5,000.00"),
        (40, 114, "VAT at 20% on fees and disbursements"), (300, 114, "5,000.00"), (400, 114, "1,000.00"),
        (40, 128, "Total due"), (400, 128, "6,000.00"),
        (40, 400, "Thank you"),
    )  # fmt: skip
    assert (read["tax"], read["total"]) == (Decimal("1000.00"), Decimal("6000.00"))
    # A monthly fee ("cuota mensual") is no tax; the bill's costs before VAT are no total
    assert text_invoice("Gimnasio Ejemplo S.L.\nFactura 7\nCuota mensual  45,00\nTotal  54,45")["tax"] != Decimal(
        "45.00"
    )
    dutch = text_invoice(
        "Voorbeeld Telecom B.V.\nFactuurnummer 70045\nNog openstaand van vorige factuur  € 14,13\n"
        "Kosten deze factuur  € 59,01\nBtw 21%  € 12,39\nTotaal te betalen  € 85,53"
    )
    assert dutch["total"] != Decimal("59.01")


def test_a_charge_beside_the_subtotal_on_its_line_is_added_to_it() -> None:
    read = page(
        (40, 20, "Example Freight Ltd", 14),
        (40, 100, "Subtotal"), (120, 100, "100.00"), (200, 100, "Freight"), (280, 100, "35.00"),
        (40, 114, "VAT 20%"), (120, 114, "27.00"),
        (40, 128, "Total due"), (120, 128, "162.00"),
        (40, 400, "Thank you"),
    )  # fmt: skip
    assert read["total"] == Decimal("162.00")
    assert read["checks"]["totals_add_up"] is True


def test_a_credit_notes_own_number_outranks_the_invoice_it_credits() -> None:
    read = text_invoice(
        "Example Supplies Ltd\nCREDIT NOTE\nCredit Note No.: CN-2044\nInvoice No.: 104312\nTotal  -120.00"
    )
    assert read["invoice_number"] == "CN-2044"


@pytest.mark.parametrize(
    "department",
    ["Accounts Payable Department", "Purchasing Dept.", "Abteilung Einkauf / Frau Meier", "Einkauf Zentrale"],
)
def test_a_department_with_more_words_still_marks_its_company_as_the_buyer(department: str) -> None:
    result = page(
        (57, 93, "TAX INVOICE", 24),
        (57, 139, "Northwick Example Co. Ltd"),
        (425, 139, "Thistle Example Design Ltd"),
        (57, 151, department),
        (425, 151, "Unit 4, The Old Tannery"),
        (298, 180, "INV-0312"),
        (300, 400, "TOTAL GBP 4,986.00"),
    )
    assert result["vendor"] == "Thistle Example Design Ltd"


@pytest.mark.parametrize("town", ["Calgary, AB", "Bangor, ME"])
def test_a_town_and_its_state_alone_on_a_line_is_no_company(town: str) -> None:
    result = page(
        (40, 20, "Example Glass Works", 16),
        (40, 44, "12 Main Street"),
        (40, 58, town),
        (40, 100, "Invoice No.: 2041"),
        (300, 300, "Total $1,230.00"),
        (40, 400, "Thank you for your business"),
    )
    assert result["vendor"] == "Example Glass Works"


@pytest.mark.parametrize("line", ["Cuota de IVA (21%)  21,00", "Cuota íntegra  21,00"])
def test_a_spanish_tax_named_cuota_de_iva_is_the_tax(line: str) -> None:
    assert text_invoice(f"Ejemplo S.L.\nFactura 7\nBase imponible  100,00\n{line}\nTotal  121,00")["tax"] == Decimal(
        "21.00"
    )


def test_labels_whose_words_a_pdf_ran_together_are_still_labels() -> None:
    result = text_invoice("InvoiceNo.12345\nInvoiceDate:2024-12-02\nSubTotal:$100.00\nTax:$20.00\nTotalDue:$120.00")
    assert (result["invoice_number"], result["issue_date"], result["total"]) == ("12345", "2024-12-02", Decimal("120"))
    assert result["checks"]["totals_add_up"] is True


def test_a_credit_in_brackets_beside_its_label_is_a_negative_amount_not_a_note() -> None:
    result = text_invoice("Credit note 9\nSubtotal (100.00)\nVAT (20.00)\nTotal (120.00) GBP")
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("-100.00"),
        Decimal("-20.00"),
        Decimal("-120.00"),
    )


@pytest.mark.parametrize(
    "title",
    ["Reçu de paiement", "Factura de abono", "Factura de Venta"],
)
def test_a_title_of_another_kind_names_no_sender(title: str) -> None:
    result = page((50, 40, title), (50, 60, "ACME SARL"), (50, 100, "Facture N° 7"), (50, 200, "Total TTC 10,00 €"))
    assert result["vendor"] == "ACME SARL"


@pytest.mark.parametrize("name", ["TotalEnergies SE", "NetApp, Inc."])
def test_a_company_name_written_in_joined_up_capitals_is_no_label(name: str) -> None:
    assert page((50, 40, name), (50, 100, "Invoice No. 7"), (50, 200, "Total 10.00 EUR"))["vendor"] == name


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("Invoice No.: USD 12345", "12345"),
        ("Invoice REF 12345", "12345"),
        ("Numero documento REA MI-123456", "MI-123456"),  # a series goes before a number that starts with a digit
    ],
)
def test_a_currency_code_or_another_numbers_name_is_no_series(line: str, number: str) -> None:
    assert text_invoice(f"{line}\nTotal 10.00 EUR")["invoice_number"] == number


@pytest.mark.parametrize(
    "line",
    ["Numéro SIRET 123 456 789 00012", "Numéro client C1234", "Numero ordine 4500123"],
)
def test_a_bare_number_word_names_the_identifier_after_it_not_the_invoice(line: str) -> None:
    assert text_invoice(f"FACTURE\n{line}\nTotal 10,00 €")["invoice_number"] is None


def test_terms_and_a_net_payable_amount_are_no_net_amount() -> None:
    result = page(
        (50, 100, "Terms"), (200, 100, "Net 30"), (50, 115, "Due"), (200, 115, "£450.00"), (50, 200, "VAT 20% 75.00")
    )
    assert result["subtotal"] is None
    result = text_invoice("Tax Invoice\nTaxable Value 1,000.00\nIGST 18% 180.00\nNet Payable 1,180.00")
    assert (result["subtotal"], result["total"]) == (Decimal("1000.00"), Decimal("1180.00"))


@pytest.mark.parametrize("printed", ["($120.00)", "(€ 120,00)", "(120.00 EUR)"])
def test_a_bracketed_credit_with_its_currency_is_a_negative_total(printed: str) -> None:
    assert text_invoice(f"Credit note 9\nTotal {printed}")["total"] == Decimal("-120.00")


def test_one_tax_printed_under_two_names_counts_once() -> None:
    result = text_invoice("Rechnung 5\nUSt 19% 38,00\nMwSt 19% 38,00\nGesamtbetrag 238,00")
    assert result["tax"] == Decimal("38.00")


def test_central_and_state_gst_printed_side_by_side_on_one_line_are_both_counted() -> None:
    result = page(
        (50, 40, "Sharma Traders Pvt Ltd"),
        (50, 100, "Taxable Value 1,000.00"),
        (50, 115, "CGST 9% 90.00"),
        (250, 115, "SGST 9% 90.00"),
        (50, 130, "Total 1,180.00"),
    )
    assert (result["tax"], result["total"]) == (Decimal("180.00"), Decimal("1180.00"))
    assert result["checks"]["totals_add_up"] is True


@pytest.mark.parametrize(
    "rows",
    [
        # a discount row is no tax row, whatever its name
        [("SUMME EUR 22,00", 0.3), ("MwSt % Netto MwSt", 0.8), ("Rabatt 10% 20,00 2,00", 0.8)],
        [("SUMME EUR 22,00", 0.3), ("MwSt % Netto MwSt", 0.8), ("Mitarbeiterrabatt 10% 20,00 2,00", 0.8)],
        [("TOTAL 22.00", 0.3), ("GST Summary", 0.8), ("Member discount 10% 20.00 2.00", 0.8)],
        # one of two rates
        [("SUMME EUR 119,00", 0.3), ("MwSt % Netto MwSt", 0.8), ("A 19% 100,00 19,00", 0.8), ("B 7% 50,00 3,50", 0.8)],
        # 1.60 is no 6% of 10.00
        [("SUMME EUR 11,60", 0.3), ("GST Summary", 0.8), ("SR 6% 10,00 1,60", 0.8)],
        # a rate of an amount with no tax named on the row or above it
        [("TOTAL 22.00", 0.3), ("Promo 10% 20.00 2.00", 0.8)],
    ],
)
def test_a_tax_table_that_does_not_add_up_to_the_total_as_a_whole_vouches_for_nothing(
    rows: list[tuple[str, float]],
) -> None:
    assert "tax_table_matches_total" not in ocr_receipt(*rows)["checks"]


def test_a_tax_table_of_two_rates_vouches_for_the_total_of_both() -> None:
    result = ocr_receipt(
        ("SUMME EUR 172,50", 0.3), ("MwSt % Netto MwSt", 0.8), ("A 19% 100,00 19,00", 0.8), ("B 7% 50,00 3,50", 0.8)
    )
    assert result["checks"]["tax_table_matches_total"] is True
    assert result["total"] == Decimal("172.50")


@pytest.mark.parametrize(
    ("rows", "language", "date"),
    [
        (["OXXO", "SUBTOTAL $100.00", "IVA $16.00", "TOTAL $116.00", "03/12/2024 10:00"], "es", "2024-12-03"),
        (["SHOP", "SUBTOTAL $100.00", "TAX $16.00", "TOTAL $116.00", "03/12/2024 10:00"], "en", "2024-03-12"),
        (["Pingo Doce", "TOTAL A PAGAR 9,87", "02-12-2024"], ("es", "pt"), "2024-12-02"),
    ],
)
def test_labels_alike_in_several_languages_split_their_vote(rows: list[str], language: object, date: str) -> None:
    result = ocr_receipt(*[(row, 0.9) for row in rows])
    assert result["issue_date"] == date
    assert result["language"] in (language if isinstance(language, tuple) else (language,))


@pytest.mark.parametrize(
    "placed",
    [
        [(50, 100, "Numéro"), (110, 100, "SIRET"), (170, 100, "123 456 789 00012")],
        [(50, 100, "Numero ordine"), (150, 100, "4500123")],
        [(50, 100, "Numéro client"), (150, 100, "C1234")],
    ],
)
def test_a_bare_number_word_in_its_own_box_names_the_identifier_beside_it_not_the_invoice(
    placed: list[tuple[float, float, str]],
) -> None:
    assert page((50, 40, "FACTURE"), *placed, (50, 200, "Total 10,00 €"))["invoice_number"] is None


@pytest.mark.parametrize(
    "taxes",
    ["CGST 9% 9.00\nSGST 9% 9.00\nGST 18.00", "State Tax 6.25% 6.25\nSales Tax 6.25"],
)
def test_the_parts_of_a_tax_and_their_sum_under_another_name_count_once(taxes: str) -> None:
    tax = Decimal(taxes.split()[-1])
    # A total that counts the tax twice does not add up; the one that counts it once does
    doubled = text_invoice(f"Subtotal 100.00\n{taxes}\nTotal {100 + 2 * tax}")
    assert doubled["checks"]["totals_add_up"] is not True
    assert "total" in doubled["needs_review"]
    once = text_invoice(f"Subtotal 100.00\n{taxes}\nTotal {100 + tax}")
    assert (once["tax"], once["checks"]["totals_add_up"]) == (tax, True)


def test_central_and_state_gst_in_one_phrase_are_both_counted() -> None:
    result = text_invoice("Tax Invoice 7\nTaxable Value 1,000.00\nCGST 9% 90.00 SGST 9% 90.00\nTotal 1,180.00")
    assert (result["tax"], result["total"]) == (Decimal("180.00"), Decimal("1180.00"))


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("TotalDue 120.00", "total"),
        ("GrandTotal 120.00", "total"),
        ("InvoiceDate 01/12/2024", "issue_date"),
        ("Net EUR 100.00", "subtotal"),
        ("Net Rs. 1,000.00", "subtotal"),
    ],
)
def test_joined_up_labels_and_a_net_amount_with_its_currency_are_labels(line: str, field: str) -> None:
    assert text_invoice(f"Invoice 7\n{line}")[field] is not None


@pytest.mark.parametrize("text", ["TotalEnergies.com", "TaxJar.com", "DataCorp: Berlin", "Net (30 days)"])
def test_names_web_addresses_and_terms_are_no_labels(text: str) -> None:
    assert not match_labels(text)


@pytest.mark.parametrize(
    ("printed", "expected"),
    [("($120)", Decimal("-120")), ("(120 EUR)", Decimal("-120")), ("(JPY 12,000)", Decimal("-12000"))],
)
def test_a_bracketed_whole_credit_with_its_currency_is_a_negative_total(printed: str, expected: Decimal) -> None:
    assert text_invoice(f"Credit note 9\nTotal {printed}")["total"] == expected


def test_a_totals_row_under_headed_columns_reads_each_amount_by_its_column_head() -> None:
    # Given a French bill whose totals row prints net, tax and gross in columns, the gross column's head stacked
    # on two lines ("Montant" over "EUR TTC")
    result = page(
        (40, 20, "Exemple Télécom SAS"),
        (40, 40, "Facture n° 562044387 du 02 Juillet 2015"),
        (480, 90, "Montant"),
        (300, 100, "Montant EUR HT"),
        (400, 100, "Montant TVA"),
        (480, 100, "EUR TTC"),
        (40, 115, "Abonnements"),
        (320, 115, "24.99"),
        (420, 115, "5.00"),
        (485, 115, "29.99"),
        (40, 130, "Total facture"),
        (320, 130, "24.99"),
        (420, 130, "5.00"),
        (485, 130, "29.99"),
    )
    # Then each amount is what its column's head says, not the first amount after "Total"
    assert (result["subtotal"], result["tax"], result["total"]) == (Decimal("24.99"), Decimal("5.00"), Decimal("29.99"))


def test_a_totals_row_under_heads_the_text_ran_together_reads_each_amount_by_the_words_over_it() -> None:
    # Given a British lease invoice: "Net £" and "VAT %" heads come out as one phrase over the net and rate columns,
    # and the row is headed "TOTALS"
    result = page(
        (40, 20, "Example Leasing Ltd"),
        (300, 100, "Net £ VAT %"), (400, 100, "VAT £"), (460, 100, "Gross £"),
        (40, 115, "Monthly rental"), (290, 115, "412.50"), (345, 115, "20"), (400, 115, "82.50"), (460, 115, "495.00"),
        (40, 130, "Maintenance"), (295, 130, "38.75"), (345, 130, "20"), (400, 130, "7.75"), (460, 130, "46.50"),
        (40, 145, "TOTALS"), (290, 145, "451.25"), (400, 145, "90.25"), (460, 145, "£541.50"),
    )  # fmt: skip
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("451.25"),
        Decimal("90.25"),
        Decimal("541.50"),
    )
    assert result["checks"]["totals_add_up"] is True


def test_a_totals_row_without_amount_heads_over_it_gives_no_total() -> None:
    # Given a timesheet's totals row of hours, and a totals row under a weight head the text ran into its neighbour
    assert text_invoice("Timesheet March\nTotals 37.50")["total"] is None
    result = page(
        (300, 100, "Net"), (360, 100, "Gross weight"), (440, 100, "VAT"),
        (40, 115, "Pallet"), (300, 115, "500.00"), (360, 115, "20.00"), (440, 115, "100.00"),
        (40, 130, "Totals"), (300, 130, "500.00"), (360, 130, "20.00"), (440, 130, "100.00"),
    )  # fmt: skip
    # Then the weight is no total
    assert result["total"] is None


def test_a_row_that_is_a_sentence_under_headed_columns_gives_no_total() -> None:
    # Given a statement of account whose table ends with the invoice's row and then the open balance of all invoices
    result = page(
        (40, 20, "Exemple Ltd"),
        (300, 100, "Net amount"),
        (400, 100, "VAT amount"),
        (480, 100, "Gross amount"),
        (40, 115, "Invoice total"),
        (300, 115, "150.00"),
        (400, 115, "30.00"),
        (480, 115, "180.00"),
        (40, 130, "Total of all open invoices"),
        (300, 130, "2,150.00"),
        (400, 130, "430.00"),
        (480, 130, "2,580.00"),
    )
    # Then the open balance is no total of this invoice
    assert result["total"] != Decimal("2580.00")


def test_a_head_whose_second_line_makes_it_no_amount_label_is_no_amount_column() -> None:
    # Given a commercial invoice's totals row under "Net / weight" and "Gross / weight" heads, the weights in kg
    result = page(
        (40, 20, "Exemple Ltd"),
        (300, 90, "Net"),
        (400, 90, "Gross"),
        (480, 90, "Amount"),
        (300, 100, "weight"),
        (400, 100, "weight"),
        (480, 100, "USD"),
        (40, 115, "Total amount"),
        (300, 115, "2,000.00"),
        (400, 115, "2,250.00"),
        (480, 115, "6,900.00"),
    )
    # Then nothing tells which of the row's amounts is the total: none is given, and a person is asked
    assert (result["total"], result["tax"]) == (None, None)
    assert "total" in result["needs_review"]


@pytest.mark.parametrize(
    ("line", "total"),
    [
        # Amounts one after another, no heads: the first is the net as often as the total
        ("Total amount  100.00  19.00  119.00", None),
        ("Invoice total  450.00  0.00", None),
        # An amount, then words: the label's own amount is the first
        ("Gesamtbetrag  11,90 €  davon MwSt  1,90 €", Decimal("11.90")),
        ("Amount due  450.00  Amount paid  0.00", Decimal("450.00")),
        # The same amount twice (a receipt's two columns), or restated in another currency
        ("TOTAL  12.50  12.50", Decimal("12.50")),
        ("Total  100.00 EUR  117.65 USD", Decimal("100.00")),
        ("Total  EUR  119.00  USD  140.00", Decimal("119.00")),
        # A count and an amount, or one amount grouped by a space: nothing tells which
        ("TOTAL 2 112.50", None),
        # ...after a word that ends in a currency code ("IRON": RON) as after any other word
        ("TOTAL IRON 2 112.50", None),
        # A space groups thousands where the decimal mark is a comma
        ("Total TTC  1 234,56 €", Decimal("1234.56")),
        # The first amount in the label's own phrase, a currency, a count or a rate between them
        ("Total amount 100.00  19.00  119.00", None),
        ("Total  EUR  100.00  19.00  119.00", None),
        ("Total  $  100.00  $  19.00  $  119.00", None),
        ("TOTAL  2  12.50  25.00", None),
    ],
)
def test_a_total_label_followed_by_several_amounts_gives_none_of_them_for_sure(
    line: str, total: Decimal | None
) -> None:
    assert text_invoice(f"Exemple Ltd\nInvoice 7\n{line}")["total"] == total


def test_a_head_whose_qualifier_is_printed_under_it_is_read_whole() -> None:
    # Given heads "Weight / gross", "Net amount / EUR", "Gross amount / EUR" over a totals row: a weight, the net
    # and the gross
    result = page(
        (40, 20, "Exemple Ltd"),
        (300, 90, "Weight"),
        (380, 90, "Net amount"),
        (460, 90, "Gross amount"),
        (300, 100, "gross"),
        (390, 100, "EUR"),
        (470, 100, "EUR"),
        (40, 115, "Total"),
        (300, 115, "2,250.00"),
        (385, 115, "1,000.00"),
        (465, 115, "1,190.00"),
    )
    # Then the weight is no amount, and net and gross are read by their heads with their currency under them
    assert (result["subtotal"], result["total"]) == (Decimal("1000.00"), Decimal("1190.00"))


@pytest.mark.parametrize(
    "heads",
    [
        # Heads of one, one and three lines, printed from the same top
        [(300, 90, "Net"), (400, 90, "VAT"), (480, 90, "Gross"), (480, 102, "amount"), (480, 114, "EUR")],
        # A group's head over two of the columns, each column's own head under it
        [(300, 90, "Amounts before and after tax"), (300, 100, "Net"), (400, 100, "VAT"), (480, 100, "Gross")],
        # A group's head that names a currency or says its columns are prices
        [(300, 90, "Prices in EUR, before and after tax"), (300, 100, "Net"), (400, 100, "VAT"), (480, 100, "Gross")],
        # A title well above the first column's head, apart from it
        [(300, 60, "Charges"), (300, 100, "Net"), (400, 100, "VAT"), (480, 100, "Gross")],
    ],
)
def test_column_heads_of_several_shapes_read_each_column(heads: list[tuple[float, float, str]]) -> None:
    result = page(
        (40, 20, "Exemple Ltd"),
        *heads,
        (40, 125, "Total"),
        (300, 125, "100.00"),
        (400, 125, "19.00"),
        (480, 125, "119.00"),
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("100.00"),
        Decimal("19.00"),
        Decimal("119.00"),
    )


def test_heads_printed_level_at_their_foot_are_one_header_row() -> None:
    # Given "Net" and "VAT" beside a three-line "Gross / amount / EUR", all ending on one line
    result = page(
        (40, 20, "Exemple Ltd"),
        (480, 90, "Gross"),
        (480, 102, "amount"),
        (300, 114, "Net"),
        (400, 114, "VAT"),
        (480, 114, "EUR"),
        (40, 135, "Total"),
        (300, 135, "100.00"),
        (400, 135, "19.00"),
        (480, 135, "119.00"),
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("100.00"),
        Decimal("19.00"),
        Decimal("119.00"),
    )


def test_columns_grouped_under_a_head_of_no_amounts_are_no_amount_columns() -> None:
    # Given "Weight in kg" over "Net | Gross", and the amount's own column beside them
    result = page(
        (40, 20, "Exemple Ltd"),
        (300, 90, "Weight in kilograms over all"),
        (300, 102, "Net"),
        (400, 102, "Gross"),
        (480, 102, "Amount"),
        (40, 150, "Widgets"),
        (300, 150, "2,250.00"),
        (400, 150, "2,400.00"),
        (480, 150, "6,900.00"),
        (40, 165, "Total amount"),
        (300, 165, "2,250.00"),
        (400, 165, "2,400.00"),
        (480, 165, "6,900.00"),
    )
    # Then neither weight is an amount: no subtotal, tax or total is made of them
    assert (result["subtotal"], result["tax"], result["total"]) == (None, None, None)


def test_an_unsure_tax_row_does_not_contradict_a_total_that_the_net_and_tax_make() -> None:
    # Given a tax row that prints the rate, the amount taxed and the tax, with the net and the total on their lines
    result = text_invoice("Exemple Ltd\nInvoice 7\nNet  100.00\nVAT  19%  100.00  19.00\nTotal  119.00")
    assert result["total"] == Decimal("119.00")
    assert "total" not in result["needs_review"]


def test_unsure_amounts_of_one_row_of_columns_do_not_vouch_for_each_other() -> None:
    # Given totals set out per tax rate, each line's first amount the first rate's
    result = text_invoice(
        "Exemple GmbH\nRechnung 7\nNet  100.00  200.00  300.00\nVAT  7.00  38.00  45.00\nTotal  107.00  238.00  345.00"
    )
    # Then no total is given for sure: the three first amounts add up whichever column they all come from
    assert result["total"] is None
    assert "total" in result["needs_review"]


def test_heads_of_different_header_rows_do_not_make_one_table() -> None:
    # Given a totals row whose first amount stands under a "Net" printed far above it, in another block
    result = page(
        (40, 20, "Exemple Ltd"),
        (300, 40, "Net"),
        (480, 100, "Total"),
        (40, 115, "Widgets"),
        (480, 115, "120.00"),
        (40, 130, "Total"),
        (300, 130, "100.00"),
        (480, 130, "120.00"),
    )
    assert result["subtotal"] != Decimal("100.00")


def test_the_holder_of_the_account_to_pay_into_is_the_vendor() -> None:
    # Given a bill whose only name at the top is the customer's, and whose bank details name the account holder
    result = text_invoice(
        "ALEXINUX\n27 rue Henri Rolland\nFacture n° 2022089083\nDate : 28/11/2022\nTotal TTC : 56,02 €\n"
        "Virement BRED  \u2013  Titulaire du compte : EXEMPLE PRESSE\nIBAN : FR76 10107 00245 00617052317 39"
    )
    assert result["vendor"] == "EXEMPLE PRESSE"


@pytest.mark.parametrize(
    ("debit", "holder", "iban"),
    [
        ("Prélèvement automatique", "Jean Dupont", "FR76 10107 00245 00617052317 39"),
        ("Ce montant sera prélevé le 05/12/2022", "Jean Dupont", "FR76 10107 00245 00617052317 39"),
        ("Der Betrag wird von Ihrem Konto abgebucht.", "Max Mustermann", "DE89 3704 0044 0532 0130 00"),
        ("Het bedrag wordt geïncasseerd.", "J. Jansen", "NL91 ABNA 0417 1643 00"),
        ("Zahlung per Überweisung", "Max Mustermann", "DE89 XXXX XXXX XXXX XX30 00"),  # masked: the buyer's own
        ("Zahlung per Bankeinzug", "Max Mustermann", "DE89 3704 0044 0532 0130 00"),
        ("Paiement par domiciliation", "Jean Dupont", "BE68 5390 0754 7034"),
        ("Zahlungsart: SEPA-Einzug", "Max Kunde", "DE89 3704 0044 0532 0130 00"),
    ],
)
def test_the_account_holder_of_a_direct_debit_or_a_masked_iban_is_not_the_vendor(
    debit: str, holder: str, iban: str
) -> None:
    result = text_invoice(
        f"Facture n° 2022089083\nDate : 28/11/2022\nTotal TTC : 56,02 €\n{debit}\n"
        f"Titulaire du compte : {holder}\nIBAN : {iban}"
    )
    assert result["vendor"] != holder


def test_an_account_holder_label_and_its_name_in_two_phrases_are_read_together() -> None:
    result = text_invoice(
        "ALEXINUX\nFacture n° 2022089083\nDate : 28/11/2022\nTotal TTC : 56,02 €\n"
        "Titulaire du compte :  EXEMPLE PRESSE\nIBAN : FR76 10107 00245 00617052317 39"
    )
    assert result["vendor"] == "EXEMPLE PRESSE"


def test_the_bank_of_the_beneficiary_is_not_the_vendor() -> None:
    result = text_invoice(
        "Facture n° 2022089083\nDate : 28/11/2022\nTotal TTC : 56,02 €\n"
        "Banque du bénéficiaire : BNP Paribas SA\nIBAN : FR76 10107 00245 00617052317 39"
    )
    assert result["vendor"] != "BNP Paribas SA"


def test_a_bank_branch_beside_the_holder_does_not_hide_the_holder() -> None:
    # "Domiciliation" on a French bank-details block names the bank's branch, not a direct debit
    result = text_invoice(
        "ALEXINUX\nFacture n° 2022089083\nDate : 28/11/2022\nTotal TTC : 56,02 €\n"
        "Domiciliation : BRED Paris\nTitulaire du compte : EXEMPLE PRESSE\nIBAN : FR76 10107 00245 00617052317 39"
    )
    assert result["vendor"] == "EXEMPLE PRESSE"


def test_an_address_label_is_no_direct_debit() -> None:
    result = text_invoice(
        "Factura 7\nFecha 02/05/2024\nTotal 121,00 €\nDomicilio fiscal: Calle Mayor 1, Madrid\n"
        "Titular de la cuenta: EXEMPLE SL\nIBAN: ES91 2100 0418 4502 0005 1332"
    )
    assert result["vendor"] == "EXEMPLE SL"


def test_an_account_holder_gives_way_to_a_company_named_at_the_top() -> None:
    # Given an invoice whose receivables were sold: a factoring bank holds the account it is paid into
    result = text_invoice(
        "Beispiel Maschinenbau GmbH\nRechnung Nr. 4711\nDatum 02.05.2024\nGesamtbetrag 1.190,00 €\n"
        "Kontoinhaber: Nordfactor Bank AG\nIBAN: DE89 3704 0044 0532 0130 00"
    )
    assert result["vendor"] == "Beispiel Maschinenbau GmbH"


def test_french_payable_and_payment_deadline_labels() -> None:
    result = text_invoice(
        "Exemple SAS\nFacture n° 562044387 du 02 Juillet 2015\nDate limite de paiement le 05 Juillet 2015\n"
        "Total HT  24,99\nTVA 20%  5,00\nSomme à payer  29,99 € TTC"
    )
    assert result["due_date"] == "2015-07-05"
    assert result["total"] == Decimal("29.99")


def test_the_date_a_total_is_owed_on_is_the_due_date() -> None:
    result = text_invoice(
        "Example Web Services, Inc.\nInvoice Number: 42183017\nInvoice Date: August 3 , 2014\n"
        "TOTAL AMOUNT DUE ON August 17 , 2014 $4.11"
    )
    assert (result["issue_date"], result["due_date"]) == ("2014-08-03", "2014-08-17")
    assert result["total"] == Decimal("4.11")


@pytest.mark.parametrize(
    "line",
    [
        "Montant TTC au titre de la période du 01/04/2024 au 30/06/2024  150,00 €",
        "Totaalbedrag voor de periode 01-04-2024 t/m 30-06-2024  150,00",
        "Total due on renewal of your plan, valid until 28/03/2025  150.00",
    ],
)
def test_a_period_or_a_later_date_after_a_total_label_is_no_due_date(line: str) -> None:
    assert text_invoice(f"Exemple SARL\nFacture 7\n{line}")["due_date"] is None


def test_montant_du_before_a_noun_is_no_total() -> None:
    # "Montant du dépôt": the amount of the deposit, not the amount due ("Montant dû")
    result = text_invoice("Exemple SARL\nFacture 7\nTotal à payer  900,00 €\nMontant du dépôt de garantie : 1 600,00 €")
    assert result["total"] == Decimal("900.00")


def test_a_tax_row_under_headed_columns_gives_its_tax_not_its_net_amount() -> None:
    # Given a tax table whose row for one rate prints the net amount first, under "Net" and "VAT" heads
    result = page(
        (40, 20, "Exemple Ltd"),
        (300, 100, "Net"),
        (400, 100, "VAT"),
        (40, 115, "VAT 20%"),
        (300, 115, "100.00"),
        (400, 115, "20.00"),
    )
    assert result["tax"] == Decimal("20.00")


@pytest.mark.parametrize(
    ("label_read_at", "issue_date"),
    [
        # Read at 0.8: the label matched the lexicon, so only the value's reading (0.99) counts, and the date is given
        (0.8, "2018-06-25"),
        # Read at 0.55: it may be another word, and the date stays as unsure as its label
        (0.55, None),
    ],
)
def test_how_sure_ocr_was_of_a_date_label_counts_only_when_it_was_unsure(
    label_read_at: float, issue_date: str | None
) -> None:
    # Given a receipt with "Date :" beside its date read at 0.99, and a second date misread further down
    rows = [("KT WONG TRADING", 20, 0.92), ("Date :", 40, label_read_at), ("23/06/2018 Cash", 100, 0.91)]
    words = [
        Word(token, 1, 20 + 50 * column, y, 60 + 50 * column, y + 10, confidence)
        for text, y, confidence in rows
        for column, token in enumerate(text.split())
    ]
    words.append(Word("25/06/2018", 1, 200, 40, 260, 50, 0.99))
    document = Document(text="", filename="r.jpg", content_type="image/jpeg", sha256="0", words=tuple(words),
                        ocr_pages=(1,))  # fmt: skip
    assert read_invoice(document)["issue_date"] == issue_date


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("Statement\nStatement date: 03/15/2024\nAmount due $80.00", "issue_date", "2024-03-15"),
        ("Rechnung 17\nSumme netto 100,00\nMwSt 19% 19,00\nRechnungsendbetrag 119,00", "total", Decimal("119.00")),
        ("Rechnung 17\nNetto 100,00\nUSt 19,00\nEndsumme 119,00", "total", Decimal("119.00")),
        ("Rechnung 17\nZahlungsbetrag 119,00 €", "total", Decimal("119.00")),
        ("Fattura 17\nImponibile 100,00\nIVA 22% 22,00\nNetto a pagare 122,00", "total", Decimal("122.00")),
        ("Fattura 17\nImponibile 100,00\nIVA 22% 22,00\nNetto a pagare 122,00", "subtotal", Decimal("100.00")),
        ("Factuur 17\nBedrag excl. btw 100,00\nBTW 21,00\nBedrag incl. btw 121,00", "total", Decimal("121.00")),
        ("Factuur 17\nSubtotaal 100,00\nBTW 21,00\nTe voldoen 121,00", "total", Decimal("121.00")),
        ("Factura 17\nBase imponible 100,00\nIVA 21,00\nImporte a pagar 121,00", "total", Decimal("121.00")),
        ("Fatura 17\nSubtotal 100,00\nIVA 23,00\nValor a pagar 123,00", "total", Decimal("123.00")),
        ("Facture 17\nTotal HT 100,00\nTVA 20,00\nMontant dû 120,00", "total", Decimal("120.00")),
    ],
)
def test_more_payable_total_and_statement_date_labels(text: str, field: str, expected: object) -> None:
    assert text_invoice(text)[field] == expected


def test_every_check_a_result_carries_has_words_for_the_job_page_and_the_report() -> None:
    # Given results that carry each check the reader writes: sums, dates, payment lines, a tax table
    results = [
        text_invoice(
            "Invoice 7\nInvoice date 2024-01-02\nDue date 2024-02-01\nSubtotal 100.00\nTax 20.00\nTotal 120.00"
        ),
        text_invoice("SUB-TOTAL  74,04\nGST  4.04\nTOTAL  78.10\nDEBIT CARD  78.10"),
        ocr_receipt(
            ("KFA SUPPLY", 0.9), ("TotalRM : 11,60", 0.3), ("GST Summary Amount Tax", 0.8), ("SR @6% 10.94 0.66", 0.8)
        ),
    ]
    written = {name for result in results for name in result["checks"]}
    # Then each has words in CHECK_LABELS, which the job page and the .md report show instead of the key
    assert written == set(CHECK_LABELS)


# A freelancer's letterhead: a name in large type at the top, no company form; the client below it has one.
LETTERHEAD_INVOICE = (
    (40, 40, "Marta Oliveira Design", 16),
    (40, 62, "Rua das Flores 12, 1200-195 Lisboa"),
    (40, 76, "NIF 234567890"),
    (40, 110, "Atlantic Harbour Lda"),
    (40, 124, "Avenida da Liberdade 100, Lisboa"),
    (40, 160, "Factura n.º 2024/118"),
    (40, 174, "Data: 05/11/2024"),
    (40, 400, "Total 1 230,00 EUR"),
    (40, 414, "Obrigado pela preferência."),
    (40, 428, "IBAN PT50 0002 0123 1234 5678 9015 4"),
    (40, 442, "Pagamento em 30 dias."),
)


def test_a_letterhead_without_a_company_form_names_the_issuer_not_the_client_below_it() -> None:
    read = page(*LETTERHEAD_INVOICE)
    assert read["vendor"] == "Marta Oliveira Design"
    # The client's company name near the top contests it: given, and for a person to check
    assert "vendor" in read["needs_review"]
    uncontested = tuple(p for p in LETTERHEAD_INVOICE if p[2] != "Atlantic Harbour Lda")
    read = page(*uncontested)
    assert read["vendor"] == "Marta Oliveira Design"
    assert "vendor" not in read["needs_review"]


@pytest.mark.parametrize(
    "title", ["Proforma Invoice", "Statement", "Quotation", "Commercial Invoice", "Nota de crédito", "Angebot"]
)
def test_a_documents_title_in_large_type_is_no_letterhead(title: str) -> None:
    titled = ((40, 40, title, 16), *LETTERHEAD_INVOICE[1:])
    assert page(*titled)["vendor"] == "Atlantic Harbour Lda"


def test_a_letterhead_in_the_pages_usual_type_is_no_letterhead() -> None:
    ordinary = ((40, 40, "Marta Oliveira Design"), *LETTERHEAD_INVOICE[1:])
    assert page(*ordinary)["vendor"] == "Atlantic Harbour Lda"


def test_a_title_as_large_as_the_name_leaves_no_letterhead() -> None:
    titled = (*LETTERHEAD_INVOICE, (300, 40, "Quote", 16))
    assert page(*titled)["vendor"] == "Atlantic Harbour Lda"


def test_a_short_letterhead_gives_way_to_the_full_name_with_its_company_form() -> None:
    branded = (
        (40, 40, "Oliveira", 16),
        *LETTERHEAD_INVOICE[1:3],
        (40, 90, "Oliveira Design Lda"),
        *LETTERHEAD_INVOICE[4:],
    )
    assert page(*branded)["vendor"] == "Oliveira Design Lda"


# A shop's receipt: its trade name in large type, then the company that runs it and the company's tax number.
TRADE_NAME_RECEIPT = (
    (40, 40, "CAFE DEL PUERTO", 16),
    (40, 60, "Desayunos - Meriendas"),
    (40, 74, "Restauración Vidal Campos, S.L."),
    (40, 88, "NIF: B12345674"),
    (40, 102, "Paseo Marítimo 8, 03001 Alicante"),
    (40, 130, "Factura simplificada T2-118"),
    (40, 144, "Fecha: 14/03/2025"),
    (40, 170, "2 CAFÉ CON LECHE 3,20"),
    (40, 184, "1 TOSTADA TOMATE 2,90"),
    (40, 210, "TOTAL 6,10 €"),
    (40, 400, "Gracias por su visita"),
)


def test_a_trade_name_gives_way_to_the_company_printed_right_under_it() -> None:
    read = page(*TRADE_NAME_RECEIPT)
    assert read["vendor"] == "Restauración Vidal Campos, S.L."
    # A client's company printed right under a letterhead looks the same: a person checks
    assert "vendor" in read["needs_review"]


@pytest.mark.parametrize(
    "line", ["Authorised dealer for Bosch Hausgeräte GmbH", "Official partner of Example Electronics Ltd"]
)
def test_a_company_a_letterhead_says_it_deals_for_is_not_its_company(line: str) -> None:
    read = page((40, 40, "KITCHEN WORLD", 16), (40, 60, line), *TRADE_NAME_RECEIPT[3:])
    assert read["vendor"] == "KITCHEN WORLD"


def test_a_company_beside_a_trade_name_or_far_under_it_leaves_the_letterhead_for_review() -> None:
    # A company printed to the right of the letterhead's column (a client's block) is not its company
    beside = tuple(
        (300, y, text) if "S.L." in text else (x, y, text, *size) for x, y, text, *size in TRADE_NAME_RECEIPT
    )
    read = page(*beside)
    assert read["vendor"] == "CAFE DEL PUERTO"
    assert "vendor" in read["needs_review"]
    # Nor is one printed under the letterhead's address
    below = (*TRADE_NAME_RECEIPT[:2], *TRADE_NAME_RECEIPT[4:5], (40, 116, "Restauración Vidal Campos, S.L."),
             *TRADE_NAME_RECEIPT[5:])  # fmt: skip
    assert page(*below)["vendor"] == "CAFE DEL PUERTO"


# A supermarket's receipt: its brand at the top, the company that runs it only in the legal footer.
FOOTED_RECEIPT = (
    (40, 20, "NACHBARMARKT", 16),
    (40, 60, "Gartenstraße 9, 04109 Leipzig"),
    (40, 90, "KAFFEE GEMAHLEN 500G 5,49 A"),
    (40, 104, "HAFERDRINK 1L 1,79 A"),
    (40, 130, "SUMME EUR 7,28"),
    (40, 160, "Bon-Nr.: 2291 02.05.2025 09:14"),
    (40, 190, "Vielen Dank für Ihren Einkauf!"),
    (40, 204, "Brückner Frischwaren GmbH"),
    (40, 218, "Amtsgericht Leipzig HRB 40211"),
)


def test_a_brand_gives_way_to_the_company_in_the_legal_footer() -> None:
    read = page(*FOOTED_RECEIPT)
    assert read["vendor"] == "Brückner Frischwaren GmbH"
    # Without its register entry beside it, a company at the foot is not known to be the issuer
    assert page(*FOOTED_RECEIPT[:-1])["vendor"] == "NACHBARMARKT"
    # A bank named in the footer beside the account is no legal footer
    banked = (*FOOTED_RECEIPT[:-2], (40, 204, "Volksbank Mitte eG AG"), (40, 218, "IBAN DE89 3704 0044 0532 0130 00"))
    assert page(*banked)["vendor"] == "NACHBARMARKT"


def test_a_company_form_that_leads_the_name_keeps_the_name() -> None:
    # France writes the form first: "SAS Boulangerie Arnaud", over the company's register entry
    footed = (
        *FOOTED_RECEIPT[:-2],
        (40, 204, "SAS BOULANGERIES ARNAUD"),
        (40, 218, "Capital 20 000 EUR - RCS Lyon 812 345 678"),
    )
    assert page(*footed)["vendor"] == "SAS BOULANGERIES ARNAUD"


def test_an_italian_shops_owner_is_named_without_the_word_that_joins_it_to_the_shop() -> None:
    owned = ((40, 40, "GELATERIA DEL CORSO", 16), (40, 60, "di Ferri Paolo & C. S.n.c."), *TRADE_NAME_RECEIPT[3:])
    assert page(*owned)["vendor"] == "Ferri Paolo & C. S.n.c."


def test_a_tax_line_with_the_abbreviated_zuzueglich_is_read_as_printed() -> None:
    read = text_invoice(
        "Muster GmbH\nRechnung Nr. 2024-17\nNettobetrag 336,00 €\nZuzügl. USt: 63,84 €\nGesamtbetrag 399,84 €"
    )
    assert (read["subtotal"], read["tax"], read["total"]) == (Decimal("336.00"), Decimal("63.84"), Decimal("399.84"))
    assert read["fields"]["tax"]["text"] == "Zuzügl. USt: 63,84 €"


def test_column_heads_run_together_each_read_the_value_under_their_own_head() -> None:
    # A PDF's text glues heads printed close: "CLIENTE" and "Nº FACTURA" become one phrase over two values
    read = page(
        (40, 40, "Estudio Gráfico Norte S.L."),
        (40, 110, "FECHA"),
        (100, 110, "CLIENTE Nº FACTURA"),
        (40, 124, "31/10/24"),
        (100, 124, "534"),
        (150, 124, "1707024"),
        (40, 300, "TOTAL 92,00 €"),
    )
    assert read["invoice_number"] == "1707024"
    assert read["issue_date"] == "2024-10-31"


def test_glued_heads_in_english_and_a_phrase_of_other_words_left_whole() -> None:
    read = page(
        (40, 40, "Northwind Traders Ltd"),
        (40, 110, "Invoice Date Invoice No."),
        (40, 124, "05/03/2024"),
        (120, 124, "INV-0042"),
        (40, 300, "Total 100.00 GBP"),
    )
    assert (read["invoice_number"], read["issue_date"]) == ("INV-0042", "2024-03-05")
    # "Date" is a label, "Description" is not: the phrase is not cut, and no date is read under it
    assert (
        page((40, 40, "Northwind Traders Ltd"), (40, 110, "Date Description"), (40, 124, "Consulting, March"))[
            "issue_date"
        ]
        is None
    )


def test_amount_heads_run_together_over_a_tables_rows_give_no_amounts() -> None:
    # A line-item table whose amount heads the text ran together: its first row is no total
    read = page(
        (40, 40, "Northwind Traders Ltd"),
        (40, 110, "Description"),
        (200, 110, "Net Amount VAT Amount Gross Amount"),
        (40, 124, "Widgets"),
        (200, 124, "50.00"),
        (262, 124, "10.00"),
        (330, 124, "60.00"),
        (40, 138, "Gadgets"),
        (200, 138, "50.00"),
        (262, 138, "10.00"),
        (330, 138, "60.00"),
        (40, 300, "Total"),
        (330, 300, "120.00"),
    )
    assert read["total"] == Decimal("120.00")
    assert read["subtotal"] is None or read["subtotal"] == Decimal("100.00")


def test_a_label_with_its_value_to_the_right_is_read_as_before_beside_heads() -> None:
    totals = text_invoice("Northwind Traders Ltd\nInvoice INV-7\nSubtotal 100.00\nTax Total 20.00\nBalance 120.00")
    assert (totals["subtotal"], totals["tax"]) == (Decimal("100.00"), Decimal("20.00"))
    # Heads run together read only what stands under them: a date to the right is no invoice number
    beside = page((40, 40, "Northwind Traders Ltd"), (40, 110, "Invoice Date Invoice No."), (200, 110, "25/03/2024"))
    assert beside["invoice_number"] is None
    assert beside["issue_date"] == "2024-03-25"


def test_what_a_bill_asks_for_when_paid_late_is_no_total() -> None:
    # Given a telephone bill whose stub prints the amount due after the due date, a late fee added, last and largest
    result = text_invoice(
        "Northline Telecom, Inc.\nInvoice Number: 88-1204\nTotal Amount Due $251.74\n"
        "Amount Due After 04/01/2024 $256.74\nTotal due if paid after the due date: $256.74"
    )
    # Then the total is the amount due on time
    assert result["total"] == Decimal("251.74")


@pytest.mark.parametrize("label", ["Total inkl. MWST", "Summe inkl. 19 % MwSt.", "Betrag inkl. USt"])
def test_a_german_total_that_says_it_includes_the_vat_is_the_total(label: str) -> None:
    # Given a Swiss invoice rounded to five centimes: the total with VAT, the rounding, then the amount billed
    result = text_invoice(
        "Rheinblick Informatik AG\nRechnungsnummer RE-24-77\nTotal exkl. MWST 9'889.30\nMWST 8.1 % 801.03\n"
        f"{label} 10'690.33\nRundungsdifferenz 0.02\nRechnungsbetrag CHF 10'690.35"
    )
    # Then the printed VAT is read, not derived from the rounded total, and the total is the amount billed
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("9889.30"),
        Decimal("801.03"),
        Decimal("10690.35"),
    )


def test_grid_heads_a_little_more_than_a_letter_apart_on_a_text_layer_are_heads_of_their_own() -> None:
    # Given an Italian courtesy copy whose header grid prints "Art. 73" a gap of 1.6 letters' height before
    # "Numero documento", with the document's number under it
    result = page(
        (40, 20, "Torrefazione Esempio S.r.l."),
        (60, 100, "Tipologia documento"),
        (200, 100, "Art. 73"),
        (249, 100, "Numero documento"),
        (360, 100, "Data documento"),
        (60, 115, "TD01 fattura"),
        (249, 115, "312/2024"),
        (360, 115, "31/05/2024"),
        (40, 200, "Totale documento 2260,20 EUR"),
    )
    # Then the number is read from under its head
    assert result["invoice_number"] == "312/2024"


def test_a_due_date_stated_in_a_later_sentence_of_the_small_print_is_read() -> None:
    # Given a British plumber's invoice that gives its due date only in its payment terms, a sentence in
    result = text_invoice(
        "J. Example Plumbing Ltd\nInvoice No. 2417\nDate 14/05/2024\nTOTAL DUE £3,133.02\n"
        "Payment terms: 14 days from date of invoice. Payment due by 28/05/2024."
    )
    assert result["due_date"] == "2024-05-28"


def test_an_indian_invoices_output_cgst_and_sgst_add_up_to_its_tax() -> None:
    # Given a Tally-style GST invoice: the seller's "Output" taxes at equal rates, no tax total, no subtotal label
    result = text_invoice(
        "Example Technosoft Private Limited\nInvoice No. ETP/24-25/0187\n1,72,838.00\n"
        "Output CGST @ 9% 9 % 15,555.42\nOutput SGST @ 9% 9 % 15,555.42\nRound Off 0.16\nTotal ₹ 2,03,949.00"
    )
    assert result["tax"] == Decimal("31110.84")


def test_a_tax_head_over_a_column_of_rows_gives_no_row_as_the_tax() -> None:
    # Given an Indian invoice's tax summary by HSN code: "Tax Amount" heads a column of one amount a row
    result = page(
        (40, 20, "Example Technosoft Private Limited"),
        (40, 40, "Invoice No. ETP/0187"),
        (40, 60, "Total ₹ 2,03,949.00"),
        (40, 100, "HSN/SAC"),
        (200, 100, "Taxable Value"),
        (400, 100, "Tax Amount"),
        (40, 115, "998313"),
        (200, 115, "85,000.00"),
        (400, 115, "15,300.00"),
        (40, 130, "998314"),
        (200, 130, "62,838.00"),
        (400, 130, "11,310.84"),
    )
    # Then the first row's tax is not the invoice's
    assert result["tax"] != Decimal("15300.00")


def test_a_czech_tax_document_is_read() -> None:
    # Given a Czech "Faktura - daňový doklad" (an en dash) with its number after "č.", three dates and "Celkem k úhradě"
    result = text_invoice(
        "Hotel Příklad s.r.o.\nFaktura \u2013 daňový doklad č. 2024010142\nDatum vystavení: 18.03.2024\n"
        "Datum zdanitelného plnění: 13.03.2024\nDatum splatnosti: 01.04.2024\nZáklad daně 61 400,00 Kč\n"
        "DPH 9 402,00 Kč\nCelkem k úhradě: 70 802,00 Kč"
    )
    assert (result["invoice_number"], result["issue_date"], result["due_date"]) == (
        "2024010142",
        "2024-03-18",
        "2024-04-01",
    )
    assert (result["subtotal"], result["tax"], result["total"], result["currency"]) == (
        Decimal("61400.00"),
        Decimal("9402.00"),
        Decimal("70802.00"),
        "CZK",
    )


def test_a_label_printed_again_in_a_second_language_after_a_slash_takes_the_value_under_it() -> None:
    # Given a UAE tax invoice whose labels are English, a slash, then the Arabic label in Latin letters
    result = page(
        (40, 20, "Example Technical Trading L.L.C."),
        (300, 60, "Invoice No. / Raqam al-Fatoorah"),
        (300, 72, "ANT/TI/2024/1187"),
        (40, 200, "Grand Total (AED) / al-Majmoo' al-Kulli 18,039.00"),
    )
    assert result["invoice_number"] == "ANT/TI/2024/1187"


def test_a_dirham_invoice_writes_its_dates_day_first() -> None:
    result = text_invoice(
        "Example Trading L.L.C.\nInvoice No. 1187\nInvoice Date 04/09/2024\nGrand Total AED 18,039.00"
    )
    assert (result["issue_date"], result["currency"]) == ("2024-09-04", "AED")


def test_an_english_date_either_way_round_with_no_currency_printed_is_for_review() -> None:
    # Given an English invoice that prints no currency and no date that tells its order
    result = text_invoice("Example Ltd\nInvoice No. 1187\nInvoice Date: 04/09/2024\nTotal 180.00")
    # Then the date is read the American way, but a person checks it
    assert result["issue_date"] == "2024-04-09"
    assert "issue_date" in result["needs_review"]


def test_a_tax_the_total_includes_named_in_passing_in_a_sentence_is_the_tax() -> None:
    # Given an Australian ride receipt that states its GST only in a sentence under the total
    result = text_invoice(
        "RideExample Australia Pty Ltd\nABN 12 345 678 901\nReceipt RM-88412\nTotal A$37.70\n"
        "The total of your fare includes GST of $3.33"
    )
    assert (result["tax"], result["total"]) == (Decimal("3.33"), Decimal("37.70"))


def test_an_energy_bills_vat_on_its_charges_is_the_vat_not_the_charges() -> None:
    # Given a British energy bill: "Charges before VAT", then the VAT line naming the amount it is levied on
    result = text_invoice(
        "Example Energy Supply Ltd\nBill number 100482913\nCharges before VAT £184.28\n"
        "VAT at 5% (domestic fuel) on £184.28 £9.21\nTotal charges for this period £193.49\nAmount to pay £193.49"
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("184.28"),
        Decimal("9.21"),
        Decimal("193.49"),
    )


def test_a_vat_recap_read_from_a_skewed_scan_gives_no_rows_first_line_as_the_total() -> None:
    # Given a Czech VAT recap whose rate column OCR put on lines of their own between the rows of amounts
    result = page(
        (40, 20, "Hotel Příklad s.r.o."),
        (40, 40, "Faktura č. 2024010142"),
        (60, 95, "Sazba"),
        (160, 95, "Základ"),
        (240, 95, "DPH"),
        (320, 95, "Celkem"),
        (60, 108, "21%"),
        (160, 116, "22 600,00"),
        (240, 116, "4 746,00"),
        (320, 116, "27 346,00"),
        (60, 124, "12%"),
        (160, 132, "38 800,00"),
        (240, 132, "4 656,00"),
        (320, 132, "43 456,00"),
    )
    assert result["total"] != Decimal("27346.00")


def test_a_one_row_tables_row_repeated_by_its_totals_row_is_still_read() -> None:
    # Given a table of one line item under "Kwota VAT" and "Wartość brutto", its totals row repeating the row
    result = page(
        (40, 20, "Przykład sp. z o.o."),
        (40, 40, "Faktura nr 12/2024"),
        (300, 100, "Wartość netto"),
        (380, 100, "Kwota VAT"),
        (460, 100, "Wartość brutto"),
        (300, 115, "257,59"),
        (380, 115, "59,24"),
        (460, 115, "316,83"),
        (220, 128, "Razem:"),
        (300, 128, "257,59"),
        (380, 128, "59,24"),
        (460, 128, "316,83"),
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("257.59"),
        Decimal("59.24"),
        Decimal("316.83"),
    )


def test_a_dollar_sign_a_word_runs_on_from_is_no_currency() -> None:
    # OCR reads the "Š" of a Czech word as "$": "$koleni" names no dollar
    assert currencies_in("v rámci $koleni") == []
    assert currencies_in("$ 12.00 and $12.00") == ["USD", "USD"]


@pytest.mark.parametrize("attention", ["t.a.v. mevrouw J. van Dam", "À l'attention de M. Lemaire", "z. Hd. Herrn Berg"])
def test_the_company_above_an_attention_line_is_the_buyer(attention: str) -> None:
    # Given a freelancer's letterhead without a company form, and the customer's company above an attention line
    result = page(
        (380, 40, "Studio Voorbeeld"),
        (380, 60, "Oudegracht 212"),
        (45, 150, "Bakkerij Voorbeeld B.V."),
        (45, 162, attention),
        (45, 174, "Voorstraat 88"),
        (45, 240, "Factuurnummer 2024-017"),
        (45, 300, "Totaal incl. btw € 3.472,70"),
    )
    assert result["vendor"] != "Bakkerij Voorbeeld B.V."


def test_a_logos_monogram_gives_way_to_the_name_it_stands_for() -> None:
    # Given a letterhead of a large monogram beside the freelancer's name
    result = page(
        (45, 34, "LdV", 24),
        (378, 42, "Studio Lieke de Vries", 19),
        (464, 65, "Webdesign & branding"),
        (489, 76, "Oudegracht 212"),
        (45, 150, "Klant B.V."),
        (45, 162, "t.a.v. de administratie"),
        (45, 240, "Factuurnummer 2024-017"),
        (45, 260, "Factuurdatum 15 april 2024"),
        (45, 300, "Totaal incl. btw € 3.472,70"),
    )
    assert result["vendor"] == "Studio Lieke de Vries"


def test_belgian_htva_and_tvac_labels() -> None:
    result = text_invoice(
        "Atelier Exemple SRL\nFacture 2024/0157\nTotal HTVA 3 480,00 €\nTVA 21 % 730,80 €\nTotal TVAC 4 210,80 €"
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("3480.00"),
        Decimal("730.80"),
        Decimal("4210.80"),
    )


def test_a_column_whose_first_row_wraps_its_description_is_still_a_column() -> None:
    # Given a Polish invoice: "Wartość netto" heads a column whose first row's description wraps onto a second line
    result = page(
        (45, 20, "Przykład Catering Sp. z o.o."),
        (45, 40, "Faktura VAT nr FV/112/05/2024"),
        (364, 249, "Wartość"),
        (375, 259, "netto"),
        (71, 279, "Catering - przerwa kawowa"),
        (365, 279, "4 140,00"),
        (71, 291, "(konferencja 13.05.2024)"),
        (71, 310, "Wynajem sprzętu"),
        (372, 310, "650,00"),
        (45, 380, "Do zapłaty: 5 861,10 PLN"),
    )
    assert result["subtotal"] != Decimal("4140.00")


def test_austrias_jaenner_is_january() -> None:
    assert [d.value.isoformat() for d in dates_in("Rechnungsdatum: 3. Jänner 2024", True)] == ["2024-01-03"]


def test_a_norwegian_amount_to_pay_is_the_total() -> None:
    result = text_invoice("Eksempel Elektro AS\nFakturanr. 10234\nSum eks. mva 7 678,50\nMva 25 % 1 919,63\n"
                          "Beløp å betale kr 9 598,13")  # fmt: skip
    assert result["total"] == Decimal("9598.13")


def test_the_legal_name_after_its_label_under_the_sellers_heading_is_the_vendor() -> None:
    # Given a Brazilian service invoice: the provider's block, its legal name after "Razão Social:"
    result = page(
        (40, 20, "PREFEITURA MUNICIPAL DE EXEMPLO"),
        (40, 40, "Número da Nota 00001284"),
        (40, 100, "PRESTADOR DE SERVIÇOS"),
        (40, 112, "Razão Social: Alves & Exemplo Consultoria Ltda."),
        (40, 124, "CNPJ: 12.345.678/0001-90"),
        (40, 160, "TOMADOR DE SERVIÇOS"),
        (40, 172, "Razão Social: Metalúrgica Exemplo S.A."),
        (40, 300, "VALOR TOTAL DO SERVIÇO = R$ 18.500,00"),
    )
    assert result["vendor"] == "Alves & Exemplo Consultoria Ltda."


def test_a_bills_own_charges_are_its_total_when_the_amount_due_adds_an_earlier_balance() -> None:
    # Given a telephone bill: an earlier balance left open, this month's charges, and the amount due of both
    result = text_invoice(
        "Example Communications, Inc.\nInvoice Number: NW-77290\nPrevious balance $142.37\n"
        "Payment received - thank you -$117.37\nPast due balance $25.00\nTotal Current Charges $226.74\n"
        "Total Amount Due $251.74"
    )
    assert result["total"] == Decimal("226.74")


def test_an_amount_due_that_adds_an_earlier_balance_and_no_own_total_is_left_for_review() -> None:
    result = text_invoice("Example Utility Co.\nBill No. 4471\nPrevious balance $40.00\nAmount due $98.50")
    assert result["total"] is None
    assert "total" in result["needs_review"]


def test_a_page_carried_forward_is_no_earlier_balance() -> None:
    # Given a two-page invoice: page 1 ends with the running sum carried forward to page 2
    result = text_invoice(
        "Example Systems Corp.\nInvoice No. PSI-1187\nCarried forward 187,186.00\nTotal USD 240,776.23"
    )
    assert result["total"] == Decimal("240776.23")


# Found by a review of the rules above: ways they could make a wrong value look sure.


@pytest.mark.parametrize(
    ("text", "currencies"),
    [
        ("PHP 8 upgrade  1  450.00", []),
        ("AED Pads  4  100,00", []),
        ("TRY OUR NEW APP!", []),
        ("Grand Total (AED) 18,039.00", ["AED"]),
        ("Amount due AED 1,250.00", ["AED"]),
    ],
)
def test_a_currency_code_that_is_also_a_word_counts_only_beside_an_amount(text: str, currencies: list[str]) -> None:
    assert currencies_in(text) == currencies


def test_a_series_code_that_is_also_a_currency_code_stays_part_of_the_number() -> None:
    assert (
        text_invoice("ILS Aviation Services Ltd\nInvoice number: ILS 2024-118\nTotal due: 2,400.00")["invoice_number"]
        == "ILS 2024-118"
    )


@pytest.mark.parametrize(
    "small_print",
    [
        "Your account is past due. Total due including previous invoices: $540.00.",
        "Amounts are shown for your convenience. Total in USD: $131.40.",
        "This invoice includes tax-exempt items totalling $200.00.",
    ],
)
def test_amounts_in_small_print_are_no_fields(small_print: str) -> None:
    result = text_invoice(f"ACME Ltd\nInvoice No: 1001\nAmount due:  $120.00\n{small_print}")
    assert (result["total"], result["tax"]) == (Decimal("120.00"), None)


def test_a_line_item_whose_rate_includes_tax_gives_no_tax() -> None:
    result = text_invoice("Seaview Hotel Ltd\nInvoice No: 1001\nRoom charge, rate includes tax  3 nights  $450.00\n"
                          "Total:  $480.00")  # fmt: skip
    assert result["tax"] is None


def test_an_amount_due_after_something_other_than_a_date_is_still_an_amount_due() -> None:
    assert [m.field for m in match_labels("Amount Due After Insurance: $45.00")] == ["total"]
    assert match_labels("Amount Due After 04/01/2024: $89.10") == ()


def test_one_tax_printed_under_two_names_is_not_counted_twice() -> None:
    result = text_invoice("Maple Supplies Inc\nInvoice No: 1001\nHST 13%:  13.00\nGST/HST:  13.00\nTotal:  $113.00")
    assert result["tax"] != Decimal("26.00")


def test_a_company_name_label_in_the_customers_details_names_no_vendor() -> None:
    result = text_invoice(
        "Sparkle Cleaning Services\n12 High St, Bristol BS1 4DJ\nInvoice No: 1001\nDate: 15/03/2024\n"
        "Customer details\nCompany name: Big Corp Ltd\nContact: John Smith\nTotal:  £240.00"
    )
    assert result["vendor"] != "Big Corp Ltd"


def test_stacked_labels_and_values_in_one_column_are_each_read() -> None:
    result = page(
        (400, 20, "ACME Design Ltd", 16),
        (50, 60, "Invoice No: 1001"),
        (400, 200, "Subtotal"),
        (400, 214, "100.00"),
        (400, 228, "VAT 20%"),
        (400, 242, "20.00"),
        (400, 256, "Total"),
        (400, 270, "120.00"),
        (400, 284, "Fällig am"),
        (400, 298, "15.04.2024"),
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("100.00"),
        Decimal("20.00"),
        Decimal("120.00"),
    )


def test_an_amount_due_in_a_header_grid_over_an_item_table_is_the_total() -> None:
    result = page(
        (50, 20, "ACME Design Ltd", 16),
        (50, 60, "Invoice No."),
        (200, 60, "Date"),
        (350, 60, "Amount Due"),
        (50, 74, "1001"),
        (200, 74, "15/03/2024"),
        (350, 74, "$1,200.00"),
        (50, 100, "Description"),
        (200, 100, "Qty"),
        (350, 100, "Amount"),
        (50, 114, "Consulting"),
        (200, 114, "10"),
        (350, 114, "$1,000.00"),
        (50, 128, "Expenses"),
        (200, 128, "1"),
        (350, 128, "$200.00"),
    )
    assert result["total"] == Decimal("1200.00")


@pytest.mark.parametrize("second_line", ["c/o Regus, 1 Main Street", "Attn: Accounts Receivable"])
def test_a_sellers_care_of_or_department_line_keeps_the_seller(second_line: str) -> None:
    result = page(
        (50, 20, "Smith Consulting Ltd"),
        (50, 34, second_line),
        (50, 48, "London EC1A 1BB"),
        (350, 34, "Invoice No: 1001"),
        (350, 100, "Big Corp Ltd"),
        (350, 114, "5 Market St"),
        (300, 300, "Total:"),
        (400, 300, "£1,200.00"),
    )
    assert result["vendor"] == "Smith Consulting Ltd"


def test_attn_to_a_person_marks_the_company_above_as_the_buyer() -> None:
    result = page(
        (50, 20, "Sparkle Cleaning Services"),
        (350, 60, "Big Corp Ltd"),
        (350, 74, "Attn: Jane Doe"),
        (50, 120, "Invoice No: 1001"),
        (300, 230, "Total:"),
        (400, 230, "£240.00"),
    )
    assert result["vendor"] != "Big Corp Ltd"


def test_a_monogram_is_not_spelled_out_by_a_customers_name_in_ordinary_type() -> None:
    result = page(
        (50, 20, "MB", 30),
        (350, 30, "Mark Brown"),
        (350, 44, "Invoice No: 1001"),
        (50, 100, "Melanie Baker Photography"),
        (300, 230, "Total:"),
        (400, 230, "£900.00"),
    )
    assert result["vendor"] != "Mark Brown" or "vendor" in result["needs_review"]


def test_the_company_over_accounts_payable_is_the_buyer() -> None:
    # Given a Xero-style invoice: the customer on the left with its payables department, the seller on the right
    result = page(
        (57, 93, "TAX INVOICE", 24),
        (57, 139, "Northwick Example Co. Ltd"),
        (425, 139, "Thistle Example Design Ltd"),
        (57, 151, "Accounts Payable"),
        (425, 151, "Unit 4, The Old Tannery"),
        (298, 168, "Invoice Number"),
        (298, 180, "INV-0312"),
        (300, 400, "TOTAL GBP 4,986.00"),
    )
    assert result["vendor"] == "Thistle Example Design Ltd"


@pytest.mark.parametrize("department", ["Service Achats - Mme C. Roux", "Purchasing Department", "Abteilung Einkauf"])
def test_the_company_over_its_buying_department_is_the_buyer_though_another_column_runs_between(
    department: str,
) -> None:
    # Given a freight forwarder's invoice: the client's address at the right, a shipment grid at the left whose lines
    # fall between the client's in reading order, and the seller's name only in the footer
    result = page(
        (45, 40, "Facture N° FA24-117"),
        (330, 110, "Maison Example SARL"),
        (45, 116, "Dossier : IMP-24-0042"),
        (330, 124, department),
        (330, 138, "45, avenue Exemple"),
        (300, 400, "Total TTC 1 234,00 €"),
        (45, 780, "Transports Exemple & Fils SAS - RCS Le Havre 123 456 789"),
    )
    assert result["vendor"] == "Transports Exemple & Fils SAS"


def test_a_letterheads_company_named_only_in_the_footer_outranks_the_client_at_the_top() -> None:
    # A hotel's bill: its name large at the top, the guest's company under "pour le compte de", and the hotel's
    # legal name only in the footer
    result = page(
        (210, 35, "Hôtel Example Tilleuls", 24),
        (40, 100, "Facture N° F-2024-03112"),
        (330, 160, "M. et Mme Laurent Exemple"),
        (330, 175, "Atelier Exemple & Fils SAS"),
        (330, 189, "8 quai de la Marine"),
        (300, 400, "Total TTC 813,70 €"),
        (40, 797, "Hôtel Example Tilleuls SARL au capital de 10 000 € - RCS Lyon 123 456 789"),
    )
    assert result["vendor"] == "Hôtel Example Tilleuls SARL"


@pytest.mark.parametrize(
    ("line", "not_vendor"),
    [("Co. Kildare W91 K2P4", "Co. Kildare"), ("AG Leipzig · HRB 40211", "AG Leipzig"),
     ("Dana Whitfield, CPA, CA", None)],
)  # fmt: skip
def test_a_county_a_register_court_and_a_persons_letters_are_no_company(line: str, not_vendor: str | None) -> None:
    result = page(
        (40, 20, "Murphy Example Plumbing", 16),
        (40, 44, "12 Main Street, Naas"),
        (40, 58, line),
        (40, 100, "Invoice No.: 2041"),
        (300, 300, "Total €1,230.00"),
        (40, 400, "Thank you for your business"),
    )
    assert result["vendor"] == "Murphy Example Plumbing"
    assert result["vendor"] != not_vendor


@pytest.mark.parametrize("seller", ["Procurement Partners Ltd", "Einkauf Aktuell GmbH"])
def test_a_company_named_for_buying_is_no_buying_department(seller: str) -> None:
    result = page(
        (40, 20, seller, 14),
        (40, 40, "Procurement services for hospitals"),
        (40, 100, "Invoice No.: 2041"),
        (300, 300, "Total €1,230.00"),
        (40, 400, "Thank you for your business"),
    )
    assert result["vendor"] == seller


def test_a_monogram_of_a_name_with_a_company_form_gives_way_to_it() -> None:
    result = page(
        (403, 41, "Northshore Example Rentals Ltd.", 12.3),
        (70, 67, "NER", 13.4),
        (465, 69, "1280 Marine Drive, Unit 6"),
        (51, 145, "Billed To"),
        (51, 159, "Tidewater Marketing Group"),
        (326, 145, "Invoice Number"),
        (326, 159, "0000214"),
        (300, 400, "Total $1,959.49"),
        (300, 420, "Thank you for your business"),
    )
    assert result["vendor"] == "Northshore Example Rentals Ltd."


def test_a_balance_after_a_part_payment_is_no_total() -> None:
    result = text_invoice(
        "Kestrel Example Photography\nInvoice Number: 58\nTotal: $3,600.00\n"
        "Payment on January 10, 2024 using check: $500.00\nAmount Due (USD): $3,100.00"
    )
    assert (result["invoice_number"], result["total"]) == ("58", Decimal("3600.00"))


@pytest.mark.parametrize(
    "asked",
    [
        "Payment 1 of 2 (due now)      $4,000.00",
        "Deposit required (50%)      $4,000.00",
        "50% deposit due on signing  $4,000.00",
    ],
)
def test_an_instalment_or_deposit_the_bill_asks_for_is_no_payment_made(asked: str) -> None:
    result = text_invoice(
        f"Brightline Example LLC\nInvoice No.: 1042\nInvoice total      $8,000.00\n{asked}\nAmount due: $4,000.00"
    )
    assert result["total"] != Decimal("8000.00") or "total" in result["needs_review"]


def test_a_total_of_several_invoices_on_a_statement_is_no_invoice_total() -> None:
    result = text_invoice(
        "Acme Supplies Ltd\nStatement of account\nINV-1001  1,200.00\nINV-1002  1,800.00\n"
        "Total of the invoices: 3,000.00\nLess credit note CN-5: 1,000.00\nBalance due: 2,000.00"
    )
    assert result["total"] != Decimal("3000.00") or "total" in result["needs_review"]


@pytest.mark.parametrize("below", ["88 Main Street", "15 hours logo design  $1,200.00"])
def test_a_one_character_number_does_not_take_the_line_under_it(below: str) -> None:
    result = text_invoice(f"Jane Example Design\nInvoice No: 5\n{below}\nTotal $1,200.00")
    assert result["invoice_number"] not in ("88", "15")


def test_a_next_instalments_due_date_is_not_the_bills() -> None:
    result = text_invoice("Stadtwerke Beispiel GmbH\nRechnung Nr. 55012\nRechnungsdatum: 02.04.2024\n"
                          "Gesamtbetrag: 1.320,00 €\nNeuer Abschlag 110,00 € - fällig am 15.05.2024")  # fmt: skip
    assert result["due_date"] != "2024-05-15"


def test_a_solicitors_fee_note_is_read() -> None:
    # Given a British fee note: the firm's address line at the top, its name only in the letterhead and in a
    # sentence of the footer, "TOTAL OF THIS FEE NOTE" above the balance after money received on account
    result = text_invoice(
        "HARTWELL & EXAMPLE\n7 Queen Square, Bath BA1 2HN · Tel 01225 448 210 · www.example.co.uk\n"
        "Fee Note No. 24817\nProfessional charges £1,353.00\nVAT at 20% on charges £270.60\n"
        "TOTAL OF THIS FEE NOTE £5,857.20\nLess: monies received on account (£500.00)\nBALANCE DUE FROM YOU £5,357.20\n"
        "Hartwell & Example LLP is a limited liability partnership registered in England and Wales (OC384412)."
    )
    assert (result["invoice_number"], result["total"]) == ("24817", Decimal("5857.20"))
    assert result["vendor"] == "Hartwell & Example LLP"


def test_an_italian_bill_number_and_a_number_printed_in_groups() -> None:
    assert (
        text_invoice("Esempio S.p.A.\nBolletta n. 2025/GA/0048813 del 08/04/2025\nTotale da pagare € 177,56")[
            "invoice_number"
        ]
        == "2025/GA/0048813"
    )
    assert text_invoice("Exemple SA\nN° de facture : 10 4471 8826 03\nMontant TTC 265,86 €")["invoice_number"] == (
        "10 4471 8826 03"
    )


def test_a_discount_applied_between_a_sum_and_the_amount_due_is_no_payment() -> None:
    # The amount due after a discount is the total; the sum above it is no total a payment was taken off
    result = text_invoice(
        "Example Supplies Ltd\nInvoice No. 2231\nTotal: £100.00\nDiscount applied: £10.00\nAmount due: £90.00"
    )
    assert result["total"] == Decimal("90.00")


def test_the_total_before_income_tax_withheld_is_the_invoices_total() -> None:
    # Given a Spanish freelancer's invoice that prints the total with VAT, then the IRPF withheld and what is left
    read = page(
        (40, 20, "Ejemplo Diseño S.L.", 14),
        (40, 60, "FACTURA F-7"),
        (300, 200, "BASE IMPONIBLE"), (480, 200, "2.890,00 €"),
        (300, 214, "IVA 21%"), (480, 214, "606,90 €"),
        (300, 228, "TOTAL IVA INCLUIDO"), (480, 228, "3.496,90 €"),
        (300, 242, "RETENCIÓN IRPF 15%"), (480, 242, "-433,50 €"),
        (300, 256, "TOTAL A PAGAR"), (480, 256, "3.063,40 €"),
    )  # fmt: skip
    # Then the total is the one with VAT, the tax the VAT, and they add up
    assert (read["subtotal"], read["tax"], read["total"]) == (Decimal("2890.00"), Decimal("606.90"), Decimal("3496.90"))
    assert read["checks"]["totals_add_up"] is True
    assert "total" not in read["needs_review"]


def test_an_italian_withholding_on_a_base_and_charges_outside_vat() -> None:
    # Given an Italian professional's invoice: expenses outside VAT, stamp duty, and a withholding on a base
    read = page(
        (40, 20, "Esempio Studio S.r.l.", 14),
        (40, 60, "FATTURA n. 27/2024 del 12/03/2024"),
        (300, 200, "Imponibile"), (480, 200, "5.980,00"),
        (300, 214, "IVA 22%"), (480, 214, "1.315,60"),
        (300, 228, "Spese escluse art. 15 DPR 633/72"), (480, 228, "100,00"),
        (300, 242, "Rivalsa bollo"), (480, 242, "2,00"),
        (300, 256, "Totale documento"), (480, 256, "€ 7.397,60"),
        (300, 270, "Ritenuta d'acconto 20% su € 5.750,00"), (480, 270, "-1.150,00"),
        (300, 284, "Netto a pagare"), (480, 284, "€ 6.247,60"),
    )  # fmt: skip
    # Then the charges close the sum, the withholding is its own amount (not its base), the total the document's
    assert (read["subtotal"], read["tax"], read["total"]) == (
        Decimal("5980.00"),
        Decimal("1315.60"),
        Decimal("7397.60"),
    )
    assert read["checks"]["totals_add_up"] is True


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("TOTAL IVA INCLUIDO  121,00", "total"),
        ("Totale IVA inclusa  121,00", "total"),
        ("Total com IVA  121,00", "total"),
        ("Total VAT inclusive  121.00", "total"),
        ("Total IVA  21,00", "tax"),
    ],
)
def test_a_total_with_tax_included_is_no_tax(line: str, field: str) -> None:
    assert match_labels(line)[0].field == field


def test_stacked_labels_each_with_its_value_are_two_labels() -> None:
    # Given a grid of labels and values where "Fecha" stands over "Vencimiento" (together: "due date")
    read = page(
        (40, 20, "Ejemplo Diseño S.L.", 14),
        (300, 40, "Nº factura"), (450, 40, "F-7"),
        (300, 53, "Fecha"), (450, 53, "12/03/2024"),
        (300, 66, "Vencimiento"), (450, 66, "11/04/2024"),
        (300, 200, "TOTAL"), (450, 200, "121,00 €"),
    )  # fmt: skip
    # Then each value is its own label's
    assert (read["issue_date"], read["due_date"]) == ("2024-03-12", "2024-04-11")


def test_a_bilingual_labels_translation_between_it_and_its_value() -> None:
    # Given a UAE tax invoice whose labels are printed in English and Arabic, the amount after both
    read = page(
        (40, 20, "Example Consultancy L.L.C.", 14),
        (40, 60, "TAX INVOICE  Invoice No. EX-7"),
        (230, 200, "Gross Amount"), (400, 200, "المبلغ الإجمالي"), (500, 200, "78,950.00"),
        (230, 214, "Less: Discount (5% on fees)"), (400, 214, "خصم"), (500, 214, "-3,950.00"),
        (230, 228, "Subtotal excl. VAT"), (340, 228, "المجموع غير شامل الضريبة"), (500, 228, "75,000.00"),
        (230, 242, "VAT 5%"), (340, 242, "ضريبة القيمة المضافة"), (500, 242, "3,750.00"),
        (230, 256, "Total incl. VAT (AED)"), (340, 256, "الإجمالي شامل الضريبة"), (500, 256, "78,750.00"),
    )  # fmt: skip
    # Then the translations are passed over: the subtotal, tax and total are read, and they add up
    assert (read["subtotal"], read["tax"], read["total"]) == (
        Decimal("75000.00"),
        Decimal("3750.00"),
        Decimal("78750.00"),
    )
    assert read["checks"]["totals_add_up"] is True


def test_a_nordic_payee_and_an_address_window_with_att_name_the_parties() -> None:
    # Given a Norwegian invoice: the brand alone at the top, the buyer in the window "Att.:" a person, the
    # company in the footer and on the giro slip
    read = page(
        (40, 20, "FJELLVIK", 16),
        (400, 20, "FAKTURA", 16),
        (40, 80, "Eksempel Sjømat AS"),
        (40, 93, "Att.: Kari Nilsen"),
        (40, 106, "Bryggen 15"),
        (40, 119, "5003 BERGEN"),
        (350, 80, "Fakturanummer"), (450, 80, "24118"),
        (300, 300, "Å betale NOK"), (450, 300, "15 768,75"),
        (40, 600, "Betalt til: Fjellvik Regnskap AS, Strandkaien 2, 5013 Bergen"),
        (40, 700, "Fjellvik Regnskap AS · Strandkaien 2, 5013 Bergen · Org.nr. 912 345 688 MVA"),
    )  # fmt: skip
    assert read["vendor"] == "Fjellvik Regnskap AS"


@pytest.mark.parametrize("title", ["ΤΙΜΟΛΟΓΙΟ ΠΩΛΗΣΗΣ", "LASKU", "KVITTERING"])
def test_a_documents_title_in_greek_finnish_or_norwegian_names_no_vendor(title: str) -> None:
    read = page(
        (40, 20, "Esimerkki Oy", 10),
        (40, 34, "Teollisuuskatu 5, 00510 Helsinki"),
        (300, 60, title, 16),
        (300, 90, "Invoice No. 1542"),
        (300, 200, "Total 3.782,00 €"),
        (40, 700, "Page 1 of 1"),
    )  # fmt: skip
    assert read["vendor"] != title


def test_a_credit_notes_total_printed_over_two_lines_with_its_amount_between() -> None:
    # Given a Belgian credit note whose total label is printed in Dutch over French, the amount level with both
    read = page(
        (40, 20, "Voorbeeld Kantoor BV", 14),
        (40, 60, "CREDITNOTA / NOTE DE CRÉDIT"),
        (40, 74, "Nummer / Numéro: CN-2024-0017"),
        (286, 440, "Totaal excl. btw / Total hors TVA"), (506, 440, "-1.580,70"),
        (286, 456, "Btw / TVA 21%"), (514, 456, "-331,95"),
        (286, 477, "Totaal te crediteren /"),
        (459, 483, "EUR -1.912,65"),
        (286, 490, "Total à créditer"),
    )  # fmt: skip
    assert (read["subtotal"], read["tax"], read["total"]) == (
        Decimal("-1580.70"),
        Decimal("-331.95"),
        Decimal("-1912.65"),
    )


@pytest.mark.parametrize(
    "line",
    [
        "Total to be credited R 8 774.50",
        "Totaal te crediteren 8.774,50",
        "Total à créditer 8 774,50",
        "Importe a abonar 8.774,50",
    ],
)
def test_what_a_credit_note_credits_is_its_total(line: str) -> None:
    assert match_labels(line)[0].field == "total"


def test_a_combined_tax_invoice_and_receipt_gives_its_number() -> None:
    read = page(
        (40, 20, "Example Dental Care Ltd.", 14),
        (45, 113, "TAX INVOICE / RECEIPT No. 40218"), (448, 114, "חשבונית מס / קבלה"),
        (40, 140, "Date: 21/02/2024"),
        (300, 300, "Total incl. VAT"), (480, 300, "3,380.13"),
    )  # fmt: skip
    assert read["invoice_number"] == "40218"


def test_of_two_subtotals_that_add_up_the_one_after_the_discount_is_the_subtotal() -> None:
    # Given a Swiss invoice: a subtotal, a discount, the total excluding VAT, then VAT on that amount
    read = page(
        (40, 20, "Beispiel Software GmbH", 14),
        (40, 60, "Rechnung Nr. 2024-0312"),
        (300, 200, "Zwischensumme / Subtotal"), (480, 200, "9'053.90"),
        (300, 214, "Rabatt / Discount 3%"), (480, 214, "-271.62"),
        (300, 228, "Total exkl. MWST / excl. VAT"), (480, 228, "8'782.28"),
        (300, 242, "MWST / VAT 8.1% auf CHF 8'782.28"), (480, 242, "711.36"),
        (300, 256, "Rundungsdifferenz / Rounding"), (480, 256, "0.01"),
        (300, 270, "Total inkl. MWST / incl. VAT CHF"), (480, 270, "9'493.65"),
    )  # fmt: skip
    # Then the subtotal is the amount the tax is of, and the tax the amount after its base
    assert (read["subtotal"], read["tax"], read["total"]) == (Decimal("8782.28"), Decimal("711.36"), Decimal("9493.65"))
    assert read["checks"]["totals_add_up"] is True


def test_a_bilingual_label_whose_translation_comes_first() -> None:
    # Given a Japanese and English invoice: each label after its Japanese name, yen with no decimals
    read = page(
        (40, 20, "Example Catering Co., Ltd.", 14),
        (300, 60, "請求書番号 Invoice No. HC-240312-07"),
        (300, 74, "発行日 Issue Date 2024年3月12日 (March 12, 2024)"),
        (300, 88, "お支払期限 Payment Due 2024年4月30日 (April 30, 2024)"),
        (300, 200, "小計 Subtotal"), (480, 200, "¥183,200"),
        (300, 214, "消費税合計 Total consumption tax"), (480, 214, "¥16,036"),
        (300, 228, "合計 Total (tax incl.)"), (480, 228, "¥199,236"),
    )  # fmt: skip
    assert (read["invoice_number"], read["due_date"]) == ("HC-240312-07", "2024-04-30")
    assert (read["subtotal"], read["total"]) == (Decimal("183200"), Decimal("199236"))


def test_an_indian_tax_invoice_adds_its_taxes_and_its_round_off_above_the_total() -> None:
    # Given "Add:" before each tax and a round-off line over the grand total
    read = page(
        (40, 20, "Example Hardware Traders Pvt. Ltd.", 14),
        (40, 60, "Invoice No.: SGHT/23-24/1187"),
        (300, 200, "Taxable Amount"), (480, 200, "1,99,410.00"),
        (300, 214, "Add: CGST @ 9%"), (480, 214, "17,946.90"),
        (300, 228, "Add: SGST @ 9%"), (480, 228, "17,946.90"),
        (300, 242, "Round Off (+)"), (480, 242, "0.20"),
        (300, 256, "Grand Total ₹"), (480, 256, "2,35,304.00"),
    )  # fmt: skip
    assert (read["subtotal"], read["tax"], read["total"]) == (
        Decimal("199410.00"),
        Decimal("35893.80"),
        Decimal("235304.00"),
    )
    assert read["checks"]["totals_add_up"] is True


def test_the_company_under_a_trade_name_beside_a_title_in_its_own_column() -> None:
    # Given a shop's name as its letterhead, the title's lines to its right, a tagline, then the company
    read = page(
        (77, 33, "GANESH TOOLS", 24),
        (442, 34, "TAX INVOICE"),
        (455, 50, "(ORIGINAL FOR RECIPIENT)"),
        (77, 64, "Tools | Fasteners | Paints"),
        (45, 82, "Example Hardware Traders Pvt. Ltd."),
        (45, 96, "Shop No. 14-16, Bhavani Peth, Pune - 411042"),
        (40, 140, "Invoice No.: SGHT/23-24/1187"),
        (300, 300, "Grand Total ₹ 2,35,304.00"),
        (40, 700, "for Example Hardware Traders Pvt. Ltd."),
    )  # fmt: skip
    assert read["vendor"] == "Example Hardware Traders Pvt. Ltd."


def test_a_tax_row_saying_what_it_is_of_in_brackets() -> None:
    read = page(
        (40, 20, "Example Software Ltd", 14),
        (40, 60, "Invoice number 8F2C1A7E-0012"),
        (315, 412, "Subtotal"), (515, 412, "£127.86"),
        (315, 430, "PARTNER15 (15% off)"), (513, 430, "\u2212£19.18"),
        (315, 449, "Total excluding tax"), (515, 449, "£108.68"),
        (315, 467, "VAT - United Kingdom (20% on £108.68)"), (520, 467, "£21.74"),
        (315, 486, "Total"), (515, 486, "£130.42"),
    )  # fmt: skip
    assert (read["subtotal"], read["tax"], read["total"]) == (Decimal("108.68"), Decimal("21.74"), Decimal("130.42"))


def test_a_dated_row_named_tax_in_a_hotel_folio_is_no_tax_of_the_invoice() -> None:
    # Given a folio whose rows are dated, a tourist tax among them, and a VAT table the reader cannot add up
    read = page(
        (40, 20, "Example Hotelbetriebs AG", 14),
        (40, 60, "Rechnung Nr. 204531"),
        (40, 200, "11.03.2024"), (110, 200, "Logis Einzelzimmer"), (400, 200, "1"), (480, 200, "295.00"),
        (40, 214, "11.03.2024"), (110, 214, "City Tax Zürich"), (400, 214, "1"), (480, 214, "2.50"),
        (40, 228, "12.03.2024"), (110, 228, "City Tax Zürich"), (400, 228, "1"), (480, 228, "2.50"),
        (110, 260, "Total"), (480, 260, "1'083.90"),
    )  # fmt: skip
    assert read["tax"] != Decimal("2.50")


@pytest.mark.parametrize(
    ("line", "field"),
    [("This month's charges (incl. VAT)  £38.40", "total"), ("Total charges excl. VAT  £32.00", "subtotal")],
)
def test_a_telephone_bills_own_charges(line: str, field: str) -> None:
    assert match_labels(line)[0].field == field


def test_a_label_saying_whether_tax_is_included_is_no_sentence() -> None:
    # Given a Dutch rental invoice: "Subtotaal excl. BTW" and "BTW 21% over € 285,94", their amounts to the right
    read = page(
        (40, 20, "Voorbeeld Autoverhuur B.V.", 14),
        (40, 60, "Factuurnummer RC-2024-031187"),
        (300, 200, "Subtotaal excl. BTW"), (480, 200, "€ 285,94"),
        (300, 214, "BTW 21% over € 285,94"), (480, 214, "€ 60,05"),
        (300, 228, "Totaal incl. BTW"), (480, 228, "€ 345,99"),
        (300, 242, "Reeds betaald (online, 05-03-2024)"), (480, 242, "- € 196,02"),
        (300, 256, "Nog te betalen"), (480, 256, "€ 149,97"),
    )  # fmt: skip
    assert (read["subtotal"], read["tax"], read["total"]) == (Decimal("285.94"), Decimal("60.05"), Decimal("345.99"))


def test_a_final_invoices_whole_work_before_the_instalments_billed() -> None:
    # Given a German final invoice: the whole work, the instalments billed already, and what is left to pay
    read = page(
        (40, 20, "Beispiel Fördertechnik GmbH", 14),
        (40, 60, "Schlussrechnung Nr. SR-2024-0007"),
        (40, 200, "Abrechnung"), (300, 200, "Netto €"), (380, 200, "USt 19 % €"), (470, 200, "Brutto €"),
        (40, 214, "Gesamtleistung lt. Schlussrechnung"), (300, 214, "148.600,00"), (380, 214, "28.234,00"),
        (470, 214, "176.834,00"),
        (40, 228, "abzgl. Abschlagsrechnung AR-2024-011 vom 15.01.2024 (30 %)"), (300, 228, "-44.580,00"),
        (380, 228, "-8.470,20"), (470, 228, "-53.050,20"),
        (40, 242, "Verbleibende Restforderung (Zahlbetrag)"), (300, 242, "104.020,00"), (380, 242, "19.763,80"),
        (470, 242, "123.783,80"),
        (40, 270, "Bitte überweisen Sie den Zahlbetrag von 123.783,80 € bis zum 15.04.2024 ohne Abzug."),
    )  # fmt: skip
    assert (read["subtotal"], read["tax"], read["total"]) == (
        Decimal("148600.00"),
        Decimal("28234.00"),
        Decimal("176834.00"),
    )
    assert read["due_date"] == "2024-04-15"


def test_a_monogram_letterhead_leaves_out_the_small_words_of_its_name() -> None:
    read = page(
        (45, 33, "CCO", 30),
        (130, 37, "Chaudronnerie et Convoyage de l'Ouest SAS"),
        (130, 46, "8 rue Gutenberg - 44470 Carquefou"),
        (45, 113, "FACTURE D'ACOMPTE"),
        (45, 141, "N° de facture : AC-2024-0042"),
        (342, 141, "Adressée à :"),
        (342, 152, "Biscuiterie de l'Atlantique SA"),
        (300, 300, "Total TTC 12 000,00 €"),
    )  # fmt: skip
    assert read["vendor"] == "Chaudronnerie et Convoyage de l'Ouest SAS"


@pytest.mark.parametrize(
    ("line", "field", "label"),
    [
        ("Total impuestos 21,00", "tax", "total impuestos"),
        ("Total tasas, impuestos y cargos EUR 111.98", "tax", "total tasas, impuestos y cargos"),
        ("Total des taxes 12,00", "tax", "total des taxes"),
        ("Totale imposte 12,00", "tax", "totale imposte"),
        ("Total (USD) 12.00", "total", "total (usd)"),
        ("Total EUR 12,00", "total", "total eur"),
    ],
)
def test_a_total_of_taxes_is_the_tax_and_a_currency_code_after_total_no_other_word(
    line: str, field: str, label: str
) -> None:
    match = match_labels(line)[0]
    assert (match.field, match.label) == (field, label)


def _receipt_rows(head: list[tuple[float, float, str]], *rows: tuple[str, str]) -> dict[str, Any]:
    """A page with a heading and rows of a label and its amount."""
    placed = [
        p for i, (label, value) in enumerate(rows) for p in ((300, 300 + 15 * i, label), (470, 300 + 15 * i, value))
    ]
    return page(*head, *placed)


_CAFE = [(50, 40, "Corner Cafe Ltd", 14), (50, 70, "Receipt No: 20455"), (50, 85, "Date: 12/03/2024")]


@pytest.mark.parametrize(
    "rows",
    [
        (("Subtotal", "£16.67"), ("Total", "£20.00"), ("Total VAT included", "£3.33")),
        (("TOTAL", "£20.00"), ("Total IVA incluido", "£3.33")),
    ],
)
def test_the_tax_a_total_includes_is_no_total_given_without_review(rows: tuple[tuple[str, str], ...]) -> None:
    # "Total VAT included" under a larger total: the tax it holds, or the total after a discount; a person decides
    read = _receipt_rows(_CAFE, *rows)
    assert read["total"] == Decimal("20.00") or "total" in read["needs_review"]


@pytest.mark.parametrize(
    "rows",
    [
        (("Totale", "122,00 €"), ("Sconto", "12,20 €"), ("Totale IVA inclusa", "109,80 €")),
        (("Total", "$110.00"), ("Discount", "$11.00"), ("Total GST incl.", "$99.00")),
    ],
)
def test_a_total_with_tax_included_after_a_discount_is_not_the_one_before_it(rows: tuple[tuple[str, str], ...]) -> None:
    read = _receipt_rows(_CAFE, *rows)
    assert read["total"] in (Decimal("109.80"), Decimal("99.00"))


def test_a_sum_insured_is_no_total() -> None:
    read = _receipt_rows(
        _CAFE,
        ("Total Sum Insured", "500,000.00"),
        ("Net Premium", "1,000.00"),
        ("VAT 5%", "50.00"),
        ("Total", "1,050.00"),
    )
    assert read["total"] == Decimal("1050.00")


def test_a_statements_total_credit_is_no_total() -> None:
    read = _receipt_rows(_CAFE, ("Total Debit", "£1,080.00"), ("Total Credit", "£200.00"), ("Balance", "£880.00"))
    assert read["total"] != Decimal("200.00")


def test_italian_stamp_duty_is_a_charge_not_tax() -> None:
    head = [(50, 40, "Studio Esempio S.r.l.", 14), (50, 70, "Fattura n. 12/2024"), (50, 85, "Data: 12/03/2024")]
    read = _receipt_rows(
        head,
        ("Imponibile", "500,00 €"),
        ("IVA 22%", "110,00 €"),
        ("Imposta di bollo", "2,00 €"),
        ("Totale documento", "612,00 €"),
    )
    assert (read["tax"], read["total"]) == (Decimal("110.00"), Decimal("612.00"))


def test_a_label_with_no_value_does_not_take_the_next_rows() -> None:
    # Given a due date left blank above a delivery date, the lines' boxes touching
    read = page(
        (40, 20, "Example Consulting GmbH", 14),
        (300, 60, "Invoice date"), (420, 60, "12/03/2024"),
        (300, 71, "Due date"),
        (300, 80, "Delivery date"), (420, 80, "20/03/2024"),
        (300, 200, "Total"), (420, 200, "1,190.00 EUR"),
    )  # fmt: skip
    assert read["due_date"] is None


@pytest.mark.parametrize("vendor", ["Laskuri Oy", "Kvitteringsservice AS"])
def test_a_name_that_starts_with_a_documents_title_is_still_a_name(vendor: str) -> None:
    read = page(
        (50, 40, vendor, 14),
        (50, 58, "Teollisuuskatu 5, 00510 Helsinki"),
        (400, 40, "LASKU", 16),
        (400, 70, "Laskun numero: 1045"),
        (50, 130, "Asiakas:"), (50, 145, "Rakennus Virtanen Oy"),
        (300, 430, "Yhteensä"), (470, 430, "1 240,00 €"),
    )  # fmt: skip
    assert read["vendor"] == vendor


def test_a_nordic_invoice_recipient_is_the_buyer() -> None:
    read = page(
        (50, 40, "Rørlegger Eksempel AS", 14),
        (400, 40, "FAKTURA", 16),
        (400, 70, "Fakturanr: 1045"),
        (50, 115, "Fakturamottaker:"), (50, 130, "Bygg Olsen AS   Org.nr 912 345 678"),
        (300, 430, "Å betale"), (470, 430, "1 250,00"),
        (50, 760, "Org.nr 987 654 321 MVA"),
    )  # fmt: skip
    assert read["vendor"] == "Rørlegger Eksempel AS"


@pytest.mark.parametrize(("line", "field"), [("Less: Rebate 10.00", "discount"), ("Minus: Discount 10.00", "discount")])
def test_less_before_a_label_says_the_row_is_taken_off(line: str, field: str) -> None:
    assert match_labels(line)[0].field == field


@pytest.mark.parametrize("line", ["Total Inc GST : $3.00", "TOTAL AMT 12.00", "Total inc. VAT 12.00"])
def test_short_total_labels_are_whole_labels(line: str) -> None:
    match = match_labels(line)[0]
    assert (match.field, match.weight) == ("total", 1.0)


def test_a_totals_label_names_the_currency_a_stray_sign_does_not() -> None:
    # Given a receipt read by OCR: a smudge read as "¥" beside an item, the total's label in ringgit
    read = ocr_receipt(
        ("KT EXAMPLE TRADING", 0.9),
        ("4BOTOL * 15.95 ¥ 63.80 SR", 0.8),
        ("Rounded Total (RM): 489.30", 0.9),
    )
    assert read["currency"] == "MYR"


def test_a_greek_invoice_is_read() -> None:
    # Given a Greek invoice: accented labels in capitals and in small letters, a tax number (ΑΦΜ), a register number
    # (ΓΕΜΗ), the discounts' sum over the net value, and the amount payable
    result = text_invoice(
        "ΑΡΤΟΠΟΙΕΙΑ ΠΑΠΑΔΟΠΟΥΛΟΥ Ε.Π.Ε.\nΑΦΜ: 099887766\nΓΕΜΗ: 004455667000\n"
        "Αριθμός τιμολογίου: 3318\nΗμερομηνία έκδοσης: 5 Μαΐου 2024\nΗμερομηνία λήξης: 04/06/2024\n"
        "Σύνολο εκπτώσεων 12,40\nΚαθαρή αξία 1.240,00\nΦΠΑ 13% 161,20\nΠΛΗΡΩΤΕΟ ΠΟΣΟ 1.401,20 €"
    )
    assert (result["vendor"], result["invoice_number"], result["issue_date"], result["due_date"]) == (
        "ΑΡΤΟΠΟΙΕΙΑ ΠΑΠΑΔΟΠΟΥΛΟΥ Ε.Π.Ε.",
        "3318",
        "2024-05-05",
        "2024-06-04",
    )
    assert (result["subtotal"], result["tax"], result["total"], result["currency"]) == (
        Decimal("1240.00"),
        Decimal("161.20"),
        Decimal("1401.20"),
        "EUR",
    )


@pytest.mark.parametrize(
    ("printed", "folded"),
    [("ΣΎΝΟΛΟ", "συνολο"), ("Σύνολος", "συνολοσ"), ("Ημερομηνία", "ημερομηνια"), ("Straße", "straße"), ("ł€", "ł€")],
)
def test_folding_drops_the_accents_of_any_script_one_character_for_one(printed: str, folded: str) -> None:
    from quire.workflows.models.invoice.values import fold

    assert fold(printed) == folded


def test_an_insurers_premium_invoice_gives_its_net_premium_insurance_tax_and_gross_premium() -> None:
    # Given a German insurer's premium invoice: the tariffs' sum before a bundle discount, the net premium, insurance
    # tax in place of VAT, the gross annual premium, then a bonus credit taken off what is debited
    result = text_invoice(
        "Nordlicht Versicherung AG\nRechnungsnummer BR-77-1204\nDatum 02.12.2025\n"
        "Summe Tarifbeiträge 320,00 EUR\nabzüglich Bündelnachlass 10 % -32,00 EUR\nNettobeitrag 288,00 EUR\n"
        "Versicherungsteuer 19 % 54,72 EUR\nJahresbeitrag (brutto) 342,72 EUR\nabzgl. Guthaben Bonus -20,00 EUR\n"
        "Abbuchungsbetrag 322,72 EUR\nDer Beitrag ist fällig am 01.01.2026. Wir ziehen ihn per Lastschrift ein."
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("288.00"),
        Decimal("54.72"),
        Decimal("342.72"),
    )
    assert result["due_date"] == "2026-01-01"


@pytest.mark.parametrize(
    "sentence",
    [
        "Payment is due on January 15, 2026. Thank you for your business.",
        "The invoice amount is payable by 15/01/2026 to the account below.",
        "Der Rechnungsbetrag ist fällig am 15.01.2026. Bitte geben Sie die Rechnungsnummer an.",
        "Wij verzoeken u het totaalbedrag van EUR 1.210,00 uiterlijk op 15-01-2026 over te maken op onze rekening.",
        "Scadenze: 15/01/2026 € 1.210,00",
        "Termin ptatnosci: 2026-01-15 (14 dni)",  # OCR's reading of "płatności"
        "Montant total à payer\navant le 15/01/2026 1.210,00 €",  # the label's second line, under the amount due's
        "Te betalen € 1.210,00\nvóór 15-01-2026",
        "Wir ersuchen um Überweisung des Gesamtbetrages bis 15.01.2026 ohne Abzug auf unser Konto.",
    ],
)
def test_a_due_date_in_a_sentence_or_a_plural_label_is_read(sentence: str) -> None:
    result = text_invoice(f"Invoice 2207\nDate: 01/12/2025\n{sentence}\nTotal 1.210,00")
    assert result["due_date"] == "2026-01-15"


def test_ocr_zeros_in_the_polish_company_form_are_read_as_its_letters() -> None:
    from quire.workflows.models.invoice.values import repair_name

    assert repair_name("Budmat Sp. z 0.0.") == "Budmat Sp. z o.o."
    assert repair_name("BUDMAT SP. Z O.O.") == "BUDMAT SP. Z O.O."
    assert repair_name("BUDMAT SP. Z 0.0.") == "BUDMAT SP. Z O.O."


def test_an_ocr_zero_among_a_names_letters_is_the_letter_o() -> None:
    # Given receipts' names OCR read with a zero for an O: the zero in a word of letters is the letter
    assert ocr_receipt(("HAI-0 RAYA BHD", 0.9), ("TOTAL RM 25.00", 0.9))["vendor"] == "HAI-O RAYA BHD"
    from quire.workflows.models.invoice.values import repair_name

    assert repair_name("TAXI PROFI Brno S.r.0.", ocr=True) == "TAXI PROFI Brno S.r.o."
    assert repair_name("0'Neill Plumbing", ocr=True) == "O'Neill Plumbing"  # a capital at the word's start
    # A word with other digits, a paper size and a number keep their zeros
    for name in ("B2B0 Ltd", "A0 Print Ltd", "Studio 100 GmbH", "Route 0 Cafe"):
        assert repair_name(name, ocr=True) == name
    # And a name on a text layer is spelled as printed: a brand may write a zero
    assert (
        page((40, 40, "Zer0 GmbH", 16), (40, 100, "Rechnung Nr. 2024-17"), (300, 400, "Gesamtbetrag 120,00 EUR"))[
            "vendor"
        ]
        == "Zer0 GmbH"
    )


def test_a_premium_is_a_total_only_where_it_says_gross() -> None:
    # "Gesamtbeitrag" names a sum of contributions of any kind (a line, a membership); "(brutto)" says it is the gross
    assert [m.field for m in match_labels("Jahresbeitrag (brutto) 460,46 EUR")] == ["total"]
    assert "total" not in [m.field for m in match_labels("Gesamtbeitrag 120,00 EUR")]


def test_a_bills_own_total_named_beside_an_amount_due_that_adds_an_earlier_balance_is_given() -> None:
    # Given a French telephone bill: its own total "Total de la facture TTC", the previous bill's unpaid rest, then the
    # amount due that adds both
    result = text_invoice(
        "Orbis Mobile SA\nFacture n° F25-11-2207\ndu 05/11/2025\nTotal hors taxes 40,00 €\nTVA 20 % 8,00 €\n"
        "Total de la facture TTC 48,00 €\nSolde précédent (facture du 05/10/2025) 25,50 €\n"
        "Montant total à payer 73,50 €"
    )
    # Then the bill's own total is given without doubt: the amount due is explained by the earlier balance
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("40.00"),
        Decimal("8.00"),
        Decimal("48.00"),
    )
    assert "total" not in result["needs_review"]


@pytest.mark.parametrize(
    "sentence",
    [
        "Payment is due on receipt. Your next meter reading is on 15/01/2026.",
        "The premium is payable by direct debit from 15/01/2026 onwards.",
        "Wij verzoeken u eventuele klachten uiterlijk op 15-01-2026 te melden.",
        "Die Lieferung ist fällig am 15.01.2026.",
        "Έναρξη: 01/01/2025 Λήξη: 15/01/2026",  # a contract period's start and end
        "Abonnement voor 12 maanden, ingang 15-01-2026",
    ],
)
def test_a_sentence_that_says_no_due_date_gives_none(sentence: str) -> None:
    result = text_invoice(f"Invoice 2207\nDate: 01/12/2025\n{sentence}\nTotal 1.210,00")
    assert result["due_date"] is None


def test_a_greek_number_word_before_another_numbers_name_is_no_invoice_number() -> None:
    # "Αριθμός πελάτη" is the customer's number, as "Nummer klant" is
    result = text_invoice("ΑΦΜ 099887766\nΑριθμός πελάτη: 12345\nΗμερομηνία: 01/12/2025\nΣύνολο 12,00")
    assert result["invoice_number"] is None


def test_greek_register_words_name_identifiers_only_as_whole_words() -> None:
    from quire.workflows.models.invoice.values import is_identifier_context

    assert is_identifier_context("ΑΦΜ: 801753243")
    assert is_identifier_context("Κωδικός: Π-00318")
    assert not is_identifier_context("ΣΟΥΠΕΡ ΜΑΡΚΕΤ ΑΒ 05/05/2024")


def test_a_dutch_or_german_family_names_particle_is_no_sentences_article() -> None:
    from quire.workflows.models.invoice.names import looks_like_name

    assert looks_like_name("Van der Meulen Horeca Groothandel B.V.")
    assert looks_like_name("Gebr. von der Heyde Bau und Handel GmbH")
    assert not looks_like_name("Bitte zahlen Sie den Betrag an der Kasse")


def test_the_e_invoice_standards_term_codes_beside_labels_are_never_values() -> None:
    # Given an e-invoice as a viewer prints it: each label after its business term's code, the parties' blocks named
    # by their group's code
    result = page(
        (40, 40, "BT-1"), (90, 40, "Invoice number"), (260, 40, "VLH-2025-00871"),
        (40, 60, "BT-2"), (90, 60, "Invoice issue date"), (260, 60, "2025-03-18"),
        (40, 80, "Seller (BG-4)"),
        (40, 100, "BT-27"), (90, 100, "Seller name"), (260, 100, "Van Leeuwen Hydrauliek B.V."),
        (40, 120, "BT-38/37"), (90, 120, "Post code / city"), (260, 120, "3316 AA Dordrecht"),
        (40, 140, "BT-109"), (90, 140, "Total without VAT"), (260, 140, "4,640.20"),
        (40, 160, "BT-110"), (90, 160, "Total VAT amount"), (260, 160, "0.00"),
        (40, 180, "BT-112"), (90, 180, "Total with VAT"), (260, 180, "4,640.20"),
        (40, 200, "BT-115"), (90, 200, "Amount due for payment"), (260, 200, "EUR 4,640.20"),
    )  # fmt: skip
    # Then the codes are no number or vendor, and the totals' labels are known
    assert result["invoice_number"] == "VLH-2025-00871"
    assert result["vendor"] == "Van Leeuwen Hydrauliek B.V."
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("4640.20"),
        Decimal("0.00"),
        Decimal("4640.20"),
    )


@pytest.mark.parametrize(
    ("code", "sign"),
    [
        ("381 – Gutschrift (Credit note)", -1),
        ("380 – Rechnung", 1),
        ("Rechnung   Kunden-Nr.: 381", 1),  # another label's value after the kind's word
    ],
)
def test_an_e_invoices_type_code_says_whether_it_is_a_credit_note(code: str, sign: int) -> None:
    # Given an e-invoice as a viewer prints it, titled only as a correction, its amounts positive
    result = page(
        (40, 20, "Gutschrift / Rechnungskorrektur", 16),
        (40, 60, "BT-1"), (90, 60, "Nummer der Gutschrift"), (260, 60, "GS-2025-0042"),
        (40, 80, "BT-3"), (90, 80, "Rechnungsart"), (260, 80, code),
        (40, 100, "BT-27"), (90, 100, "Name"), (260, 100, "Bürotechnik Lindner e.K."),
        (40, 140, "BT-109"), (90, 140, "Gesamtbetrag ohne USt."), (260, 140, "1.752,50"),
        (40, 160, "BT-110"), (90, 160, "Steuerbetrag"), (260, 160, "332,98"),
        (40, 180, "BT-112"), (90, 180, "Gesamtbetrag mit USt."), (260, 180, "2.085,48 EUR"),
    )  # fmt: skip
    # Then its type code decides: 381 is a credit note, whose amounts are owed to the reader
    assert result["total"] == sign * Decimal("2085.48")


def test_term_codes_in_plain_text_are_left_out_but_a_lone_one_is_a_value() -> None:
    viewer = text_invoice(
        "BT-1 Invoice number: VLH-2025-00871\nBT-2 Invoice issue date: 2025-03-18\n"
        "BT-27 Seller name: Van Leeuwen Hydrauliek B.V.\nBT-112 Total with VAT: 4,640.20"
    )
    assert (viewer["invoice_number"], viewer["vendor"]) == ("VLH-2025-00871", "Van Leeuwen Hydrauliek B.V")
    # A number that looks like a code is a value where the page prints no codes, and is never cut inside
    assert text_invoice("Invoice number: BT-482\nDate 01/12/2025\nTotal 120.00")["invoice_number"] == "BT-482"
    assert text_invoice("BT-1 BT-2 BT-3\nInvoice number: BT-12-2025\nTotal 120.00")["invoice_number"] == "BT-12-2025"


def test_a_name_beside_a_sellers_name_label_in_a_row_of_both_parties_is_the_vendor() -> None:
    # Given the two parties side by side, each label with its name beside it
    result = page(
        (40, 40, "Invoice no. 2207"),
        (40, 60, "Seller name"), (130, 60, "Fjordvik Kantineservice"), (300, 60, "Buyer name"), (390, 60, "Lysfjord"),
        (40, 80, "Total 120.00"),
    )  # fmt: skip
    assert result["vendor"] == "Fjordvik Kantineservice"


def test_a_name_label_heading_a_row_of_column_heads_takes_the_name_below() -> None:
    result = page(
        (40, 40, "Invoice no. 2207"),
        (40, 60, "Vendor name"), (160, 60, "Contact"), (260, 60, "Phone"),
        (40, 75, "Fjordvik Kantineservice AS"), (160, 75, "Ola Nordmann"), (260, 75, "+47 22 00 00 00"),
        (40, 95, "Total 120.00"),
    )  # fmt: skip
    assert result["vendor"] == "Fjordvik Kantineservice AS"


def test_a_credit_notes_own_number_outranks_the_credited_invoices() -> None:
    # Given a credit note that names the invoice it corrects with that invoice's own label
    result = text_invoice(
        "Gutschrift\nNummer der Gutschrift: GS-2025-0042\nDatum: 12.03.2025\n"
        "Vorausgegangene Rechnung\nRechnungsnummer: R-2025-0311\nGesamtbetrag 2.085,48 EUR"
    )
    assert result["invoice_number"] == "GS-2025-0042"


@pytest.mark.parametrize("listed", ["Credit note 10022 -25.00", "Credit note no. CN-10022 -25.00"])
def test_a_credit_note_in_a_list_of_open_items_does_not_outrank_the_invoice_number(listed: str) -> None:
    result = text_invoice(f"Invoice number: INV-2207\nDate: 01/12/2025\nOpen items\n{listed}\nTotal 120.00")
    assert result["invoice_number"] == "INV-2207"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("Sum mva 3 164,25", "tax"),
        ("Sum inkl. mva 20 329,25", "total"),
        ("Ialt DKK 47.225,00", "total"),
        ("lalt DKK 47.225,00", "total"),  # OCR's reading of "I alt"
        ("Do zaptaty: 4 399,71 PLN", "total"),  # OCR's reading of "zapłaty"
        ("Ialt ekskl. moms 1.000,00", "subtotal"),
        ("Nummer des Beleges: 2207", "invoice_number"),
    ],
)
def test_nordic_and_polish_totals_labels(line: str, field: str) -> None:
    assert match_labels(line)[0].field == field


def test_the_base_of_the_norwegian_vat_is_no_tax() -> None:
    result = text_invoice("Faktura 2207\nSum mva-grunnlag 10 000,00\nMva 25 % 2 500,00\nÅ betale 12 500,00")
    assert (result["tax"], result["total"]) == (Decimal("2500.00"), Decimal("12500.00"))


def test_a_danish_subtotal_excluding_moms_is_read() -> None:
    result = page(
        (40, 40, "Faktura 84412"), (40, 60, "Fakturadato 12-03-2025"),
        (300, 200, "Subtotal ekskl. moms"), (480, 200, "35.075,61"),
        (300, 215, "Moms 25 %"), (480, 215, "8.768,90"),
        (300, 230, "Total DKK"), (480, 230, "43.844,51"),
    )  # fmt: skip
    assert result["subtotal"] == Decimal("35075.61")


def test_a_french_payment_sentence_gives_its_due_date() -> None:
    result = text_invoice(
        "Facture N° 25-0213\nDate: 21.02.2025\nTotal TTC CHF 22'837.10\n"
        "Payable net à 30 jours, jusqu'au 23.03.2025, au moyen du bulletin QR ci-dessous."
    )
    assert result["due_date"] == "2025-03-23"


def test_a_travel_tickets_number_is_its_receipts_number_unless_an_invoice_number_is_printed() -> None:
    # Given an airline's e-ticket receipt, which prints no invoice number
    receipt = "Vértice Airlines S.A.\nNúmero de billete  075-2145678901\nLocalizador  K7XQ2M\nTOTAL EUR 215.98"
    # Then the ticket's number is the document's, for a person to check; an invoice's number outranks it
    assert text_invoice(receipt)["invoice_number"] == "075-2145678901"
    assert text_invoice(f"Factura n.º FV-2024-118\n{receipt}")["invoice_number"] == "FV-2024-118"
    assert match_labels("E-Ticket No. 0752145678901")[0].weight < 1.0
    # A support ticket's number weighs less than a bare "Number"
    helpdesk = text_invoice("Acme IT Services Ltd\nNumber: 2025-001\nTicket No. 48213\nTotal £120.00")
    assert helpdesk["invoice_number"] == "2025-001"


def test_a_till_receipts_bare_ticket_word_names_the_number_right_after_it() -> None:
    # Given a French supermarket's till receipt: its number printed after a bare "TICKET", beside its date
    head = "MARCHE FRAIS\n12 rue de la Republique\n69002 LYON\nTOTAL TTC 32,92 EUR\nTICKET CLIENT\nA CONSERVER\n"
    result = text_invoice(f"{head}TICKET 002841             09/11/2024 11:07\nMERCI DE VOTRE VISITE")
    # Then that is the receipt's number; "TICKET CLIENT" (the customer's copy) names none
    assert result["invoice_number"] == "002841"
    assert text_invoice(f"{head}MERCI DE VOTRE VISITE")["invoice_number"] is None
    # And the word votes for no language: the French receipt's date is still read day first
    assert (result["issue_date"], result["language"]) == ("2024-11-09", "fr")
    # A count after it names no number, and a name that starts with it is still a name
    assert text_invoice("PARKING CENTRE\nTicket 1/2\nTOTAL EUR 5.00")["invoice_number"] is None
    shop = text_invoice("Ticket Shop Berlin GmbH\nHauptstr. 1\nRechnung Nr. 2024-17\nGesamtbetrag 120,00 EUR")
    assert (shop["vendor"], shop["invoice_number"]) == ("Ticket Shop Berlin GmbH", "2024-17")


def test_an_amount_under_another_currencys_head_is_the_same_sum_restated() -> None:
    # Given a Dubai invoice billed in dollars whose totals are restated in dirhams, each currency heading a column
    head = [(40, 40, "Gulfstar Logistics FZ-LLC", 16), (40, 80, "Tax Invoice No. GSL/2024/00871")]
    rows = [("Total excluding VAT", "2,723.00", "10,000.22"), ("VAT @ 5%", "13.15", "48.29"),
            ("Total amount payable", "2,736.15", "10,048.51")]  # fmt: skip
    placed = [p for i, (label, usd, aed) in enumerate(rows) for p in
              ((100, 220 + 20 * i, label), (300, 220 + 20 * i, usd), (400, 220 + 20 * i, aed))]  # fmt: skip
    result = page(*head, (300, 200, "USD"), (400, 200, "AED equivalent"), *placed)
    # Then each total is the dollar amount, sure: the dirham one is no rival
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("2723.00"),
        Decimal("13.15"),
        Decimal("2736.15"),
    )
    assert not {"subtotal", "tax", "total"} & set(result["needs_review"])
    # And two amounts under heads of no currency stay a choice for a person; so do a first column in another
    # currency than the page's, and a head that names a currency but no money ("CAD hours")
    dollars = (40, 120, "Invoice currency: USD. Payment is due in USD.")
    for heads in (("Amount (USD)", "Amount (AED)"), ("Amount in USD", "Amount in AED")):
        amounts = page(*head, dollars, (300, 200, heads[0]), (400, 200, heads[1]), *placed)
        assert amounts["total"] == Decimal("2736.15"), heads
        assert "total" not in amounts["needs_review"]
    for heads in (("Net", "Gross"), ("AED", "USD"), ("CAD hours", "Amount USD")):
        other = page(*head, dollars, (300, 200, heads[0]), (400, 200, heads[1]), *placed)
        assert other["total"] is None or "total" in other["needs_review"], heads


def test_a_derived_subtotal_the_page_prints_without_a_label_is_sure() -> None:
    # Given the items' sum printed under their column without a label, then the tax and the total
    head = "Acme Supplies Ltd\nInvoice 12\nDesk lamp  100.00\nPaper  50.00\n"
    result = text_invoice(f"{head}150.00\nVAT amount  30.00\nAmount due  £180.00")
    # Then the subtotal, derived from the total and the tax, is read from that sum, and needs no review
    assert result["subtotal"] == Decimal("150.00")
    assert result["fields"]["subtotal"]["text"] == "150.00"
    assert "subtotal" not in result["needs_review"]
    # But where nothing prints it, or only a line with words (an item, a fee), it is still for a person to check
    for tail in (
        "VAT amount  31.00\nAmount due  £186.00",
        "Booking fee 155.00\nVAT amount  31.00\nAmount due  £186.00",
    ):
        unprinted = text_invoice(f"{head}{tail}")
        assert unprinted["subtotal"] is None
        assert "subtotal" in unprinted["needs_review"]


def test_a_tax_tables_heading_beside_the_subtotal_is_no_tax() -> None:
    # Given a web shop's invoice: a VAT table headed "Btw-specificatie" on the left, level with the subtotal on the
    # right, two rates' taxes under the subtotal, the total, and the payment that settled it
    result = page(
        (40, 20, "Kantoorplein Online B.V."), (40, 40, "Factuurnummer 2025-FA-0193381"),
        (40, 200, "Btw-specificatie"), (300, 200, "Subtotaal excl. btw"), (480, 200, "€ 282,03"),
        (40, 215, "Tarief"), (100, 215, "Grondslag"), (180, 215, "Btw"), (300, 215, "Btw 21%"), (480, 215, "€ 53,45"),
        (40, 230, "21%"), (100, 230, "€ 254,51"), (180, 230, "€ 53,45"), (300, 230, "Btw 9%"), (480, 230, "€ 2,48"),
        (40, 245, "9%"), (100, 245, "€ 27,52"), (180, 245, "€ 2,48"),
        (300, 260, "Totaal incl. btw"), (480, 260, "€ 337,96"),
        (300, 280, "Betaald via iDEAL (18-02-2025)"), (480, 280, "€ -337,96"),
        (300, 295, "Nog te betalen"), (480, 295, "€ 0,00"),
    )  # fmt: skip
    # Then the two rates' taxes are the tax, and the total is given for sure
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("282.03"), Decimal("55.93"), Decimal("337.96"),
    )  # fmt: skip
    assert "total" not in result["needs_review"]
    assert [(m.field, m.weight) for m in match_labels("MwSt-Aufstellung")] == [("tax", 0.3)]


def test_a_letters_place_and_date_dates_the_invoice_unless_a_label_does() -> None:
    from quire.workflows.models.invoice.dates import place_and_date

    # Given a French tradesman's invoice that labels no date: the letter's place and date at its head
    lines = (
        (40, 20, "Vasseur Plomberie"), (40, 200, "FACTURE N° F2025-0219"), (400, 200, "Tours, le 3 avril 2025"),
        (300, 500, "Total TTC"), (400, 500, "748,00 €"),
    )  # fmt: skip
    # Then the place and date date the invoice, for review; a date under a label, even a bare "Date", outranks it,
    # as a word before a comma may be no town
    result = page(*lines)
    assert result["issue_date"] == "2025-04-03"
    assert "issue_date" in result["needs_review"]
    assert page(*lines, (40, 220, "Date : 02/04/2025"))["issue_date"] == "2025-04-02"
    assert (
        page(*lines[:2], (40, 220, "Date : 02/04/2025"), (40, 240, "Intervention, le 27 mars 2025"), *lines[3:])[
            "issue_date"
        ]
        == "2025-04-02"
    )
    assert place_and_date("Berlin, den 3. April 2025", True) is not None
    assert place_and_date("Amsterdam, 3 april 2025", True) is None  # no word that joins them: a list's entry, perhaps
    assert place_and_date("Mo., den 3. März 2025", True) is None  # a weekday, no place


def test_a_name_whose_company_form_wrapped_to_the_next_line_is_the_issuers() -> None:
    from quire.workflows.models.invoice.names import FORM, name_of

    # Given a Mexican invoice: the issuer's long name over its form at the top, the receiver's further down
    result = page(
        (150, 100, "TALLER MECÁNICO Y TORNO ÁVILA,"), (150, 114, "S.A. DE C.V."), (370, 114, "Serie / Folio: A-1523"),
        (150, 128, "RFC: TMA070315QK2"), (150, 150, "Av. Félix U. Gómez 2815, Monterrey"),
        (90, 200, "RECEPTOR"), (90, 214, "TRANSPORTES DEL NORTE REGIO, S.A. DE C.V."), (90, 228, "RFC: TNR120611AB3"),
        (300, 400, "Total"), (400, 400, "$21,854.40"),
    )  # fmt: skip
    # Then the name and its form on the line under it are the vendor
    assert result["vendor"] == "TALLER MECÁNICO Y TORNO ÁVILA, S.A. DE C.V."
    assert name_of("Grupo Alfa, S. de R.L. de C.V. RFC GAL0101") == "Grupo Alfa, S. de R.L. de C.V."
    assert FORM.fullmatch("S.A.P.I. de C.V.")


def test_a_unit_a_suite_or_a_post_office_box_starts_an_address_not_a_name() -> None:
    from quire.workflows.models.invoice.names import looks_like_name

    for address in ("Unit 7", "Suite 400", "PO Box 100", "Apt 3B", "Postfach 10 12 34", "Caixa Postal 77"):
        assert not looks_like_name(address), address
    for name in ("Suite Dreams Ltd", "Box Hill Motors Pty Ltd", "United Traders Ltd", "Level 3 Communications"):
        assert looks_like_name(name), name
    # Given an address line under the seller's label, the payee's name elsewhere on the page
    result = page(
        (300, 40, "From"), (300, 60, "Unit 7, 31 Kingsford Smith Dr"), (300, 80, "Hamilton QLD 4007"),
        (40, 40, "Invoice INV-004871"), (40, 300, "Total AUD 1,483.90"),
    )  # fmt: skip
    # Then the address is no vendor, and nothing else names one
    assert result["vendor"] is None


def test_an_irish_addresss_county_is_no_company_form() -> None:
    from quire.workflows.models.invoice.names import FORM

    assert FORM.search("Naas, Co. Kildare W91 XK72") is None
    assert FORM.search("NAAS, CO. KILDARE") is None
    assert FORM.search("Brennan & Co.") is not None
    assert FORM.search("Brennan & Co. Solicitors") is not None


def test_a_total_due_on_this_invoice_is_the_total() -> None:
    result = page(
        (40, 40, "Invoice No. KL-2025-037"), (40, 60, "Date 28 April 2025"),
        (300, 200, "Net amount"), (470, 200, "€22,740.00"),
        (300, 215, "VAT @ 13.5%"), (470, 215, "€3,069.90"),
        # "7": OCR's reading of a tick made by hand beside the total
        (300, 230, "Total due this invoice"), (470, 230, "€25,809.90"), (540, 230, "7"),
        (300, 260, "Invoiced to date incl. this invoice"), (470, 260, "€61,620.00"),
    )  # fmt: skip
    assert result["total"] == Decimal("25809.90")


def test_an_italian_e_invoices_kind_code_is_no_number() -> None:
    # "TD24" is the kind of document (a deferred invoice), printed after the word for invoice
    result = page(
        (40, 40, "TIPO DOCUMENTO"), (200, 40, "NUMERO"), (280, 40, "DATA"),
        (40, 55, "FATTURA DIFFERITA TD24"), (200, 55, "418/FE"), (280, 55, "05/03/2025"),
        (40, 90, "Totale documento 120,00"),
    )  # fmt: skip
    assert result["invoice_number"] == "418/FE"


def test_a_mexican_invoices_series_and_folio_is_its_number_and_the_fiscal_folio_is_not() -> None:
    result = text_invoice(
        "FACTURA (CFDI 4.0)\nSerie y folio: A-10482\nFolio fiscal: 6F2A1B3C-1111-2222-3333-444455556666\n"
        "Fecha de emisión: 2025-03-11\nTotal 1,160.00"
    )
    assert result["invoice_number"] == "A-10482"
    assert match_labels("Folio fiscal: 6F2A1B3C-1111-2222-3333-444455556666") == ()
    # A slash between the words, as many CFDI programs print them
    assert text_invoice("FACTURA\nSerie / Folio: A-1523\nTotal 1,160.00")["invoice_number"] == "A-1523"


@pytest.mark.parametrize(
    ("rows", "number"),
    [
        # The document's code alone under its title, the ATCUD at the foot of the page
        ([(40, 40, "FATURA"), (40, 60, "FT 2025A/1873"), (40, 600, "ATCUD: JF7K3MQD-1873")], "FT 2025A/1873"),
        # Beside a bare number word (a weak label), the ATCUD's code in a phrase of its own beside its label
        (
            [(300, 40, "No"), (340, 40, "FR 2025A/2417"), (300, 80, "ATCUD"), (380, 80, "JJ4T8K2P-2417")],
            "FR 2025A/2417",
        ),
        # A count printed with leading zeros in one of the two
        ([(40, 40, "Fatura FS 2025A/0712"), (40, 600, "ATCUD: K7M2QXAB-712")], "FS 2025A/0712"),
        # A delivery guide's code beside the invoice's, the ATCUD repeating the invoice's count
        (
            [(40, 40, "Guia GR 2025/3301"), (300, 40, "FT FA2025/1432"), (40, 600, "ATCUD: JF7K3MQD-1432")],
            "FT FA2025/1432",
        ),
        # A label naming the same number as the code the ATCUD counts
        ([(40, 40, "Fatura n.º"), (40, 55, "FT 2025A/12"), (40, 600, "ATCUD: JF7K3MQD-12")], "FT 2025A/12"),
    ],
)
def test_the_document_code_whose_count_the_atcud_repeats_is_the_invoice_number(
    rows: list[tuple[float, float, str]], number: str
) -> None:
    result = page(*rows, (300, 300, "Total a pagar 550,36 €"))
    assert result["invoice_number"] == number
    assert "invoice_number" not in result["needs_review"]


@pytest.mark.parametrize(
    "rows",
    [
        # A guide's code on a page whose ATCUD counts another document
        [(40, 40, "Guia GR 2025/3301")],
        # Codes of other kinds that share the count: a guide, an order, a weekday and a day, a decree
        [(40, 40, "Guia de remessa GR 2025A/12"), (40, 60, "V/ Encomenda EC 2025/12"), (40, 80, "Entrega: QUI 12/12")],
        [(40, 40, "IVA isento art. 9 DL 102/12")],
    ],
)
def test_a_code_of_another_document_is_no_invoice_number(rows: list[tuple[float, float, str]]) -> None:
    result = page(*rows, (40, 600, "ATCUD: JF7K3MQD-12"), (300, 300, "Total 550,36 €"))
    assert result["invoice_number"] is None


@pytest.mark.parametrize(
    ("rows", "number"),
    [
        # A label naming another number surely, not a document code: the count does not outweigh it
        ([(40, 20, "Fatura n.º: 2025-0042"), (300, 200, "FT 2025A/12"), (40, 600, "ATCUD: JF7K3MQD-12")], "2025-0042"),
        # A credit note's own code counted by its ATCUD, the invoice it corrects labelled as surely: they contradict
        (
            [
                (40, 20, "NOTA DE CRÉDITO NC 2025/7"),
                (40, 80, "Fatura n.º: FT 2025A/1873"),
                (40, 600, "ATCUD: JF7K3MQD-7"),
            ],
            None,
        ),
        # The invoice it corrects quoted with that invoice's ATCUD, the credit note's own code under a bare "N.º"
        (
            [
                (40, 20, "NOTA DE CRÉDITO"),
                (40, 40, "N.º NC 2025/7"),
                (40, 80, "Doc. origem: FT 2025A/1873 ATCUD: JF7K3MQD-1873"),
            ],
            None,
        ),
    ],
)
def test_a_counted_code_does_not_outrank_the_number_a_label_names(
    rows: list[tuple[float, float, str]], number: str | None
) -> None:
    result = page(*rows, (300, 300, "Total 120,00 €"))
    if number is not None:  # the label names it surely
        assert result["invoice_number"] == number
        assert "invoice_number" not in result["needs_review"]
    else:  # two codes, and nothing sure to tell which is the document's
        assert "invoice_number" in result["needs_review"]


def test_a_number_printed_beside_its_atcud_is_read() -> None:
    result = text_invoice("Loja Lda\nFatura n.º 2025/15 - ATCUD: JF7K3MQD-15\nData 12/03/2025\nTotal 123,00 €")
    assert result["invoice_number"] == "2025/15"


@pytest.mark.parametrize(
    "rows",
    [
        # A label reading the ATCUD under it
        [(40, 40, "Fatura n.º"), (40, 55, "ATCUD: JF7K3MQD-1873"), (300, 200, "FT 2025A/1873")],
        # A bare number word before the series and count, the code with its kind elsewhere
        [(40, 40, "N.º 2025A/1873"), (300, 40, "FT 2025A/1873"), (40, 600, "ATCUD: JF7K3MQD-1873")],
    ],
)
def test_an_atcud_is_never_the_number_and_its_count_outweighs_a_weak_label(
    rows: list[tuple[float, float, str]],
) -> None:
    result = page(*rows, (300, 300, "Total 5,00 €"))
    assert result["invoice_number"] == "FT 2025A/1873"
    assert "invoice_number" not in result["needs_review"]


def test_two_codes_an_atcud_counts_are_for_a_person_to_tell_apart() -> None:
    result = page(
        (40, 40, "FT 2025A/12"), (300, 40, "FR 2025B/12"), (40, 600, "ATCUD: JF7K3MQD-12"), (300, 300, "Total 5,00 €")
    )
    assert "invoice_number" in result["needs_review"]


@pytest.mark.parametrize(
    ("label", "value", "field", "expected"),
    [
        # Spelt out in full: read as printed, OCR's doubt of it says little of the value beside it
        ("Invoice No:", "INV-2025-0318", "invoice_number", "INV-2025-0318"),
        ("Invoice Date:", "14/03/2025", "issue_date", "2025-03-14"),
        # A bare number word OCR was unsure of may be another word misread
        ("No:", "INV-2025-0318", "invoice_number", None),
    ],
)
def test_a_label_spelt_out_vouches_for_its_value_for_review_however_unsure_ocr_was(
    label: str, value: str, field: str, expected: str | None
) -> None:
    # Given a scan whose label OCR read at 0.01 beside a value read at 0.95
    words = [Word(token, 1, 20 + 60 * i, 40, 70 + 60 * i, 50, 0.01) for i, token in enumerate(label.split())]
    words.append(Word(value, 1, 200, 40, 300, 50, 0.95))
    words.append(Word("Total", 1, 20, 300, 70, 310, 0.95))
    words.append(Word("£3,928.00", 1, 200, 300, 260, 310, 0.95))
    document = Document(text="", filename="r.png", content_type="image/png", sha256="0", words=tuple(words),
                        ocr_pages=(1,))  # fmt: skip
    result = read_invoice(document)
    assert result[field] == expected
    # Then it is given for a person to check: one misread letter makes "Invoice To:" "Invoice No:"
    assert field in result["needs_review"]


def test_a_credit_note_printed_positive_is_given_negative_and_said_to_be_one() -> None:
    # Given a credit note whose title stands out above amounts printed without a sign, as many print them
    result = page(
        (40, 40, "Northwind Traders Ltd", 12),
        (40, 70, "CREDIT NOTE", 20),
        (40, 110, "Credit Note No: CN-2025-007"),
        (40, 125, "Date: 14 March 2025"),
        (300, 300, "Subtotal"), (420, 300, "£100.00"),
        (300, 315, "VAT 20%"), (420, 315, "£20.00"),
        (300, 330, "Total credit"), (420, 330, "£120.00"),
    )  # fmt: skip
    # Then its amounts are given negative: owed to the reader, not by them, and it says it is a credit note
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("-100.00"),
        Decimal("-20.00"),
        Decimal("-120.00"),
    )
    assert result["document_type"] == "credit_note"
    assert result["fields"]["document_type"]["text"] == "CREDIT NOTE"
    assert result["invoice_number"] == "CN-2025-007"
    assert result["summary"].startswith("Credit note CN-2025-007 from Northwind Traders")
    assert "credits GBP 120.00, including 20.00 tax" in result["summary"]


@pytest.mark.parametrize(
    "title", ["AVOIR N° AV-2025-014", "CREDITNOTA / NOTE DE CRÉDIT", "Nota di credito n. 12/2025", "Kreditnota"]
)
def test_a_credit_notes_title_heading_a_plain_text_page(title: str) -> None:
    result = text_invoice(f"{title}\nAtelier Rhône SARL\nSous-total : 100,00 €\nTVA : 20,00 €\nTotal : 120,00 €")
    assert (result["document_type"], result["total"], result["tax"]) == (
        "credit_note",
        Decimal("-120.00"),
        Decimal("-20.00"),
    )


def test_a_credit_notes_number_label_says_so_without_a_title() -> None:
    result = text_invoice(
        "Acme Parts Ltd\nCredit Note No: CN-4410\nSubtotal: 50.00 USD\nTax: 5.00 USD\nTotal: 55.00 USD"
    )
    assert (result["document_type"], result["total"]) == ("credit_note", Decimal("-55.00"))


def test_a_gutschrift_or_a_correction_printed_positive_stays_an_invoice() -> None:
    # Given a German "Gutschrift" printed positive: the title the law gives a self-billed invoice, which its issuer
    # pays; and a Spanish corrective invoice that charges more
    for title in ("Gutschrift Nr. G-2025-11", "Factura rectificativa R-2025-3"):
        result = text_invoice(f"{title}\nNettobetrag: 100,00 €\nUSt. 19 %: 19,00 €\nGesamtbetrag: 119,00 €")
        # Then its amounts are as printed, and it is not called a credit note
        assert (result["document_type"], result["total"]) == ("invoice", Decimal("119.00"))
    # But a correction that prints a negative total credits, and is one
    result = text_invoice(
        "Rechnungskorrektur Nr. RK-7\nNettobetrag: -100,00 €\nUSt. 19 %: -19,00 €\nGesamtbetrag: -119,00 €"
    )
    assert (result["document_type"], result["total"]) == ("credit_note", Decimal("-119.00"))


@pytest.mark.parametrize(
    "line",
    [
        "Credit note: CN-77",  # a reference, with its label's colon
        "Credit note CN-77",  # a reference on a line of its own, after the invoice's title
        "Please quote the credit note number on any claim.",
        "Credit note 10022 of 03.02.2025 has been deducted.",
        "Payment by credit card or SEPA credit transfer",
        "Invoice  Credit note  Payment",  # a statement's column heads
    ],
)
def test_a_credit_note_named_in_an_invoices_text_is_no_credit_note(line: str) -> None:
    # Given an invoice that names a credit note, as plain text (every line as high as the next) and as a page whose
    # title and mention are printed in one size, the title larger, or everything in one font
    text = f"INVOICE\nFjord Supplies AS\nInvoice No: 2025-118\n{line}\nTotal: NOK 1 250,00"
    sized = [
        page((40, 40, "INVOICE", title), (40, 70, "Fjord Supplies AS"), (40, 110, "Invoice No: 2025-118"),
             (40, 140, line, title), (300, 300, "Total"), (420, 300, "NOK 1 250,00"))
        for title in (10, 20)
    ]  # fmt: skip
    # Then it stays an invoice, its total as printed
    for result in (text_invoice(text), *sized):
        assert (result["document_type"], result["total"]) == ("invoice", Decimal("1250.00"))


def test_a_credit_notes_title_on_a_page_in_one_font() -> None:
    # Given a credit note printed in one font throughout, its title among the first lines
    result = page(
        (40, 40, "Fjord Supplies AS"), (40, 60, "CREDIT NOTE/AVOIR"), (40, 90, "No: CN-2025-3"),
        (300, 300, "Total"), (420, 300, "NOK 1 250,00"),
    )  # fmt: skip
    assert (result["document_type"], result["total"]) == ("credit_note", Decimal("-1250.00"))


@pytest.mark.parametrize(
    "title",
    ["ΠΙΣΤΩΤΙΚΟ ΤΙΜΟΛΟΓΙΟ Αρ. 123", "Πιστωτικό Σημείωμα", "Gutschrift – Stornorechnung", "Factura de abono nº FA-12"],
)
def test_more_credit_note_titles(title: str) -> None:
    result = text_invoice(f"{title}\nNet: 100,00 €\nVAT: 24,00 €\nTotal: 124,00 €")
    assert (result["document_type"], result["total"]) == ("credit_note", Decimal("-124.00"))


def test_a_credit_notes_positive_subtotal_and_tax_under_its_negative_total_add_up() -> None:
    result = text_invoice("CREDIT NOTE\nSubtotal: 100.00 EUR\nVAT 20%: 20.00 EUR\nTotal: -120.00 EUR")
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("-100.00"),
        Decimal("-20.00"),
        Decimal("-120.00"),
    )
    assert result["checks"]["totals_add_up"] is True
    assert "total" not in result["needs_review"]


def test_a_credit_notes_number_label_names_it_in_any_of_its_names() -> None:
    result = text_invoice(
        "Stornorechnung Nr.: SR-123\nNettobetrag: 100,00 €\nUSt. 19 %: 19,00 €\nGesamtbetrag: 119,00 €"
    )
    assert (result["invoice_number"], result["document_type"], result["total"]) == (
        "SR-123",
        "credit_note",
        Decimal("-119.00"),
    )


@pytest.mark.parametrize(
    ("label", "credited"), [("Creditnotanummer:", "Factuurnummer:"), ("Kreditnotanr.", "Fakturanr.")]
)
def test_a_credit_notes_number_label_in_one_word_outranks_the_credited_invoices(label: str, credited: str) -> None:
    result = text_invoice(f"Noordhaven Logistiek B.V.\n{label} CN-24-0031\n{credited} F24-0211\nTotaal: -1.337,05 EUR")
    assert (result["invoice_number"], result["document_type"]) == ("CN-24-0031", "credit_note")


def test_values_a_pdf_glued_under_a_grids_heads_go_each_to_the_head_it_starts_under() -> None:
    # Given a grid of heads whose values the PDF's text ran into one phrase (each value starting where its head does)
    result = page(
        (40, 20, "Brinkmann Elektro GmbH"),
        (50, 100, "Rechnungs-Nr."), (136, 100, "Datum"), (189, 100, "Fälligkeit"), (260, 100, "Seite"),
        (50, 112, "RE 2503-118742-00 10.03.2025 09.04.2025"), (260, 112, "1/2"),
        (300, 300, "Rechnungsbetrag 119,00 EUR"),
    )  # fmt: skip
    # Then the number, the date and the due date are each the words under their own head
    assert (result["invoice_number"], result["issue_date"], result["due_date"]) == (
        "RE 2503-118742-00", "2025-03-10", "2025-04-09",
    )  # fmt: skip
    assert not {"invoice_number", "due_date"} & set(result["needs_review"])  # a bare "Datum" stays a weak label


def test_glued_values_centred_under_their_heads_go_each_to_its_own() -> None:
    # Given a Quebec grid: "Date" and "Échéance" each centred over its date, the two dates run into one phrase
    result = page(
        (40, 20, "Construction Rive-Sud inc."),
        (60, 100, "N° de facture"), (178, 100, "Date"), (227, 100, "Échéance"),
        (60, 112, "F-25-0233"), (168, 112, "2025-03-31 2025-04-30"),
        (300, 300, "Total 114,98 $"),
    )  # fmt: skip
    assert (result["issue_date"], result["due_date"]) == ("2025-03-31", "2025-04-30")


def test_a_value_that_only_runs_wider_than_its_head_keeps_its_words() -> None:
    # Given a date under its head that reaches under the next head, which lines up with the date's year
    lines = lines_from_words(
        [Word("Date", 1, 40, 100, 60, 110), Word("Terms", 1, 85, 100, 110, 110)]
        + [Word(w, 1, x0, 112, x1, 122) for w, x0, x1 in (("12", 40, 50), ("March", 53, 78), ("2025", 81, 101))]
    )
    heads, values = lines
    assert len(heads.phrases) == 2  # "Date" and "Terms" apart
    # Then the date is read whole, not cut where the head lines up
    assert under_own_head(heads, heads.phrases[0], values.phrases[0]).text == "12 March 2025"


def test_amount_heads_run_together_over_one_row_of_amounts_read_each_amount() -> None:
    # Given a totals grid whose last heads the PDF's text ran into one phrase, one amount under each
    result = page(
        (40, 20, "Brinkmann Elektro GmbH"), (40, 40, "Rechnung Nr. 4711"),
        (100, 400, "Warenwert"), (160, 400, "Fracht"), (220, 400, "Nettobetrag"),
        (300, 400, "MwSt-Betrag Rechnungsbetrag EUR"),
        (100, 412, "100,00"), (160, 412, "5,00"), (220, 412, "105,00"), (300, 412, "19,95"), (400, 412, "124,95"),
        (40, 440, "Zahlungsbedingungen: 30 Tage netto"),
    )  # fmt: skip
    # Then the tax and the total are read, and the subtotal is the net amount the tax is of (after the freight)
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("105.00"),
        Decimal("19.95"),
        Decimal("124.95"),
    )
    assert result["checks"]["totals_add_up"] is True


@pytest.mark.parametrize(
    ("terms", "due"),
    [
        ("bis 09.04.2025 netto ohne Abzug = 124,95 EUR", "2025-04-09"),
        ("bis zum 30.04.2025 rein netto", "2025-04-30"),
        ("NET DUE 04/13/2025", "2025-04-13"),
    ],
)
def test_the_date_the_whole_sum_is_due_after_an_early_payment_discount(terms: str, due: str) -> None:
    text = f"Rechnung Nr. 4711\nRechnungsdatum 10.03.2025\nBei Zahlung bis 24.03.2025 abzüglich 2 % Skonto\n{terms}"
    result = text_invoice(f"{text}\nGesamtbetrag 124,95 EUR" if "NET" not in terms else text.replace(",95", ".95"))
    assert result["due_date"] == due


@pytest.mark.parametrize(
    ("state", "local", "tax", "total"),
    [
        ("PA Sales Tax 6.000% $6.00", "Allegheny County Tax 1% $1.00", "7.00", "107.00"),
        ("NY State Sales Tax 4% $4.00", "NYC Sales Tax 4.5% $4.50", "8.50", "108.50"),
        ("CA State Tax 6% $6.00", "Los Angeles County Tax 3.5% $3.50", "9.50", "109.50"),
        # A transit district's tax under its letters, beside the state's and the city's
        ("Colorado State Tax (2.9% on $100.00) $2.90", "RTD Sales Tax (1% on $100.00) $1.00", "3.90", "103.90"),
        ("Vermont State Tax 6% $6.00", "Stowe Local Option Tax 1% $1.00", "7.00", "107.00"),  # a town's option tax
        ("Excl sales tax $100.00", "Sales tax 7% $7.00", "7.00", "107.00"),  # "excl" is no district
    ],
)
def test_a_us_states_sales_tax_and_the_local_ones_beside_it_add_up_to_the_tax(
    state: str, local: str, tax: str, total: str
) -> None:
    result = text_invoice(f"Acme Supply Inc.\nInvoice 17\nSubtotal $100.00\n{state}\n{local}\nTotal ${total}")
    assert (result["tax"], result["total"]) == (Decimal(tax), Decimal(total))
    assert not {"tax", "total"} & set(result["needs_review"])


def test_a_period_end_or_a_price_after_bis_is_no_due_date_nor_is_the_discounts_date() -> None:
    head = "Muster GmbH\nRechnung Nr. 4711\nRechnungsdatum 10.03.2025\n"
    for terms in (
        "Leistungszeitraum 01.03.2025\nbis 31.03.2025 netto 100,00 EUR",
        "Preise gültig bis 31.12.2025 netto zzgl. MwSt.",
        "Zahlbar bis 24.03.2025 mit 2 % Skonto oder bis 09.04.2025 netto ohne Abzug",
        "Zahlbar bis 24.03.2025 abzüglich 2 % Skonto",
    ):
        assert text_invoice(f"{head}{terms}\nGesamtbetrag 119,00 EUR")["due_date"] is None, terms


def test_a_payment_terms_heading_before_its_due_date_sentence_keeps_the_sentences_label() -> None:
    # Given the due date in a sentence after the heading of the payment terms
    head = "Muster GmbH\nRechnung Nr. 4711\nRechnungsdatum 07.05.2025\nGesamtbetrag 119,00 EUR\n"
    result = text_invoice(f"{head}Zahlungsbedingungen: Zahlbar bis 21.05.2025 ohne Abzug.")
    # Then the sentence's own label names the due date; a heading before terms without a label names nothing
    assert result["due_date"] == "2025-05-21"
    assert match_labels("Payment terms: payable by 21 May 2025")[0].field == "due_date"
    assert match_labels("Zahlungsbedingungen: 14 Tage netto") == ()
    # "Due on receipt" names no date: the date under it is another one
    assert text_invoice(f"{head}Terms: Due on receipt\nDelivered 12/05/2025")["due_date"] is None


def test_a_portuguese_certified_programs_document_total() -> None:
    found = match_labels("Total documento (EUR)")[0]
    assert (found.field, found.weight) == ("total", 1.0)


def test_a_charge_with_its_rate_and_a_note_in_brackets_is_a_charge_between_the_sums() -> None:
    # Given a caterer's bill: two taxes printed apart, then an untaxed gratuity with its rate and a note
    result = text_invoice(
        "Prairie Table Catering Ltd.\nInvoice PTC-7\nSubtotal  $2,111.00\nGST 5%  $105.55\nPST 6%  $126.66\n"
        "Gratuity 15% (food & beverage, not taxable)  $265.50\nTotal  $2,608.71\nBALANCE DUE (CAD)  $2,108.71"
    )
    # Then the taxes add up to the tax, and the gratuity lies between subtotal and tax and the total
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("2111.00"), Decimal("232.21"), Decimal("2608.71"),
    )  # fmt: skip
    assert match_labels("VAT 20% (reduced)")[0].rest == "20% (reduced)"  # a tax keeps its rate for the rate rules


def test_a_bare_date_head_beside_the_number_head_is_the_invoices_date_but_not_an_order_date_or_a_reference() -> None:
    # A document's own grid: "Datum" beside "Rechnungs-Nr." is its date, for sure
    own = page(
        (40, 20, "Muster GmbH"),
        (50, 100, "Rechnungs-Nr."), (150, 100, "Datum"), (220, 100, "Kunden-Nr."),
        (50, 112, "RE-4711"), (150, 112, "01.02.2025"), (220, 112, "K-100"),
        (300, 300, "Gesamtbetrag 119,00 EUR"),
    )  # fmt: skip
    assert own["issue_date"] == "2025-02-01"
    assert "issue_date" not in own["needs_review"]
    # An order's date beside the number stays one to check
    ordered = page(
        (40, 20, "Muster GmbH"),
        (50, 100, "Rechnungs-Nr."), (150, 100, "Auftragsdatum"), (230, 100, "Kunden-Nr."),
        (50, 112, "RE-4711"), (150, 112, "01.02.2025"), (230, 112, "K-100"),
        (300, 300, "Gesamtbetrag 119,00 EUR"),
    )  # fmt: skip
    assert "issue_date" in ordered["needs_review"]
    # A credit note's reference to the invoice it corrects (a row with its amount) does not date the credit note
    credit = page(
        (40, 20, "Muster GmbH"), (40, 40, "Gutschrift Nr. GS-2025-17"), (300, 40, "Datum: 20.03.2025"),
        (50, 100, "Rechnungs-Nr."), (150, 100, "Datum"), (220, 100, "Betrag"),
        (50, 112, "RE-4711"), (150, 112, "01.02.2025"), (220, 112, "119,00"),
        (300, 300, "Gutschriftsbetrag -119,00 EUR"),
    )  # fmt: skip
    assert credit["issue_date"] == "2025-03-20"


@pytest.mark.parametrize(
    ("text", "weight"),
    [
        # The date of the works, of a delivery, of a service: a bare date word that says what it is the date of
        ("Date d'exécution des travaux : 27 et 28 mars 2025", 0.3),
        ("Date de livraison 12/03/2025", 0.3),
        ("Datum der Leistung: 12.03.2025", 0.3),
        ("Date of supply: 12/03/2025", 0.3),
        ("Data di consegna 12/03/2025", 0.3),
        # The document's own, or a bare date word before its date
        ("Datum van de factuur: 12-03-2025", 0.6),
        ("Date of credit note 12/03/2025", 0.6),
        ("Date de l'avoir 12/03/2025", 0.6),
        ("Datum der Erstellung 12.03.2025", 0.6),
        ("Date of sale 12/03/2025", 0.6),
        ("Date of supplier invoice 12/03/2025", 0.6),
        ("Data del documento 12/03/2025", 0.6),
        ("Datum des Dokuments 12.03.2025", 0.6),
        ("Date of the invoice 12/03/2025", 0.6),
        ("Date du 12 mars 2025", 0.6),
        ("Date: 12/03/2025", 0.6),
    ],
)
def test_a_bare_date_word_that_says_what_it_dates_weighs_little(text: str, weight: float) -> None:
    [match] = match_labels(text)
    assert (match.field, match.weight) == ("issue_date", weight)


def test_a_letters_date_dates_the_invoice_over_the_date_of_the_works() -> None:
    # Given a French tradesman's invoice: a place and date beside its number, the dates of the works under it
    result = page(
        (40, 20, "Vasseur Plomberie"),
        (40, 100, "FACTURE N° F2025-0219"), (300, 100, "Tours, le 3 avril 2025"),
        (40, 130, "Date d'exécution des travaux : 27 et 28 mars 2025"),
        (300, 300, "Total TTC 2 343,44 €"),
    )  # fmt: skip
    # Then the letter's date is the invoice's, for review
    assert result["issue_date"] == "2025-04-03"
    assert "issue_date" in result["needs_review"]


def _rate_table(*rows: tuple[str, str, str, str]) -> dict[str, Any]:
    """A hotel's bill in French whose tax is printed only per rate, in a table headed "Taux | Base HT | TVA | TTC"."""
    placed: list[tuple[float, float, str]] = [(40, 40, "Hôtel du Lac SARL"), (40, 80, "Facture n° 5521"),
                                              (40, 300, "Taux"), (120, 300, "Base HT"), (220, 300, "TVA"),
                                              (300, 300, "TTC")]  # fmt: skip
    for number, row in enumerate(rows):
        placed += [(x, 320 + 20 * number, text) for x, text in zip((40, 120, 220, 300), row, strict=True)]
    return page(*placed, (40, 500, "Total TTC 670,00 €"))


def test_a_tax_printed_only_in_a_rate_tables_tax_column_is_that_column_added_up() -> None:
    # Given a table with a row per rate, whose tax column only its head names
    result = _rate_table(("10 %", "500,00", "50,00", "550,00"), ("20 %", "100,00", "20,00", "120,00"))
    # Then the tax is the column's sum, each row's tax being its rate of the row's net
    assert (result["tax"], result["total"]) == (Decimal("70.00"), Decimal("670.00"))


def test_a_column_whose_amounts_are_not_the_rows_rate_of_another_is_not_added_up_as_the_tax() -> None:
    # Given the same table, where the column under "TVA" holds no row's rate of its net or gross
    result = _rate_table(("10 %", "500,00", "3,00", "550,00"), ("20 %", "100,00", "4,00", "120,00"))
    # Then no tax is made of it
    assert result["tax"] is None


def test_an_overdue_amount_is_an_earlier_balance_and_the_bills_own_charges_are_named_in_several_ways() -> None:
    # Given an internet provider's bill: dated by its issue date below the last bill's, an overdue amount, this
    # bill's charges before and with its tax, and the amount due of both
    result = text_invoice(
        "Example Broadband Pty Ltd\nInvoice number 5512093\nBill issue date 9 Apr 2025\n"
        "Previous bill (issued 9 Mar 2025) $120.00\nPayment received - thank you -$80.00\nOverdue amount $40.00\n"
        "Charges this bill (excl. GST) $90.00\nGST $9.00\nTotal of this bill (incl. GST) $99.00\n"
        "Total amount due $139.00"
    )
    assert (result["issue_date"], result["subtotal"], result["tax"], result["total"]) == (
        "2025-04-09",
        Decimal("90.00"),
        Decimal("9.00"),
        Decimal("99.00"),
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "Nimbleway is a trading name of Example Cloud Services Ltd, registered in England (no. 01234567).",
        "Nimbleway is operated by Example Cloud Services Ltd · Registered office: 1 High Street, London",
        "Nimbleway ist eine Marke der Example Cloud Services Ltd, Handelsregister HRB 12345.",
    ],
)
def test_the_company_a_footer_says_stands_behind_the_letterheads_trade_name_is_the_vendor(sentence: str) -> None:
    result = page(
        (40, 40, "Nimbleway", 18), (40, 70, "billing@nimbleway.example"), (300, 60, "Bill to"),
        (300, 73, "Customer Works GmbH"), (40, 120, "Invoice number NW-1180"), (300, 300, "Total £120.00"),
        (40, 760, sentence),
    )  # fmt: skip
    assert result["vendor"] == "Example Cloud Services Ltd"


def test_a_footer_about_another_name_than_the_letterheads_does_not_make_the_vendor() -> None:
    # Given a footer that says who runs the payment service, not the invoice's own trade name
    result = page(
        (40, 40, "Nimbleway", 18), (40, 70, "billing@nimbleway.example"), (40, 120, "Invoice number NW-1180"),
        (300, 300, "Total £120.00"), (40, 760, "PayFast is a trading name of Example Payments Ltd."),
    )  # fmt: skip
    assert result["vendor"] != "Example Payments Ltd"


def test_local_and_food_sales_taxes_are_taxes_added_up_with_the_states() -> None:
    # Given a US order taxed by the state, the city and on its food at a rate of its own
    result = text_invoice(
        "Example Coffee LLC\nInvoice # 2025-0041\nSubtotal $200.00\nOR state sales tax (5% on $100.00) $5.00\n"
        "Portland local sales tax (1% on $100.00) $1.00\nOR food tax 2% on $100.00 $2.00\nTotal $208.00"
    )
    assert (result["tax"], result["total"]) == (Decimal("8.00"), Decimal("208.00"))
    assert result["checks"]["totals_add_up"] is True


def test_a_tax_rows_code_before_its_label_is_no_part_of_the_label() -> None:
    # Given a German invoice whose tax rows are keyed by the codes its items carry ("1 = 19 % USt")
    result = text_invoice(
        "Rechnungs-Nr.: RE-88\nNettobetrag 300,00 €\n1 = 19 % USt auf 200,00 € 38,00 €\n"
        "2 = 7 % USt auf 100,00 € 7,00 €\nRechnungsbetrag 345,00 €"
    )
    assert (result["subtotal"], result["tax"], result["total"]) == (
        Decimal("300.00"),
        Decimal("45.00"),
        Decimal("345.00"),
    )
    assert "USt" in result["fields"]["tax"]["text"]  # read from the rows, not derived from the total


def test_a_receipts_code_shaped_like_an_iban_of_a_country_without_ibans_names_no_currency() -> None:
    # Given a Bangkok receipt whose number starts with two letters and two digits ("PH12...") and no currency
    result = text_invoice("Example Pharmacy Co., Ltd.\nReceipt No.: PH12-2504-0044\nTOTAL 519.00\nPH1225040044")
    assert result["currency"] is None


def test_a_line_of_amounts_split_by_dots_is_no_return_address() -> None:
    # Given a Mexican invoice's item, followed by its tax transfer line
    result = page(
        (40, 40, "PAPELERIA EJEMPLO", 18), (40, 70, "RFC: PEJ0907143K2"), (300, 100, "Serie y folio A 18422"),
        (100, 200, "Tijeras de oficina"), (300, 400, "Total $ 9,590.88"),
        (243, 215, "Traslado IVA 002 · Base 8,268.00 · Tasa 0.160000 · Importe 1322.880000"),
    )  # fmt: skip
    assert result["vendor"] != "Traslado IVA 002"


def test_the_printed_total_that_cash_less_change_settles_is_the_total() -> None:
    # Given a Brazilian receipt: the items' total, a discount, the amount to pay, then cash and change
    result = ocr_receipt(
        ("PADARIA EXEMPLO LTDA", 0.95), ("NFC-e nº 000077 Série 001", 0.93), ("Valor total R$ 31,40", 0.95),
        ("Descontos R$ 1,40", 0.95), ("Valor a Pagar R$ 30,00", 0.95), ("Dinheiro 50,00", 0.95),
        ("Troco R$ 20,00", 0.95),
    )  # fmt: skip
    assert (result["invoice_number"], result["total"]) == ("000077", Decimal("30.00"))
    assert result["checks"]["payment_matches_total"] is True


def test_a_french_receipts_ticket_number_is_its_number_and_its_salesperson_is_not_the_vendor() -> None:
    result = ocr_receipt(
        ("BOULANGERIE DU COIN", 0.95), ("SARL LE PAIN D'OR", 0.95), ("Ticket N° 004587 Caisse 1", 0.95),
        ("Vendeur : Sophie", 0.95), ("TOTAL TTC 21,45 €", 0.95),
    )  # fmt: skip
    assert (result["invoice_number"], result["vendor"]) == ("004587", "SARL LE PAIN D'OR")


def test_a_name_in_brackets_under_a_shops_name_is_read_without_them_and_a_speck_before_a_label_is_no_part_of_it() -> (
    None
):
    result = ocr_receipt(
        ("SRI EXAMPLE VEG RESTAURANT", 0.9), ("(Example Hospitality Pvt. Ltd.)", 0.9), (".Bill No: 4587", 0.9),
        ("Total : 1129.00", 0.9),
    )  # fmt: skip
    assert (result["vendor"], result["invoice_number"]) == ("Example Hospitality Pvt. Ltd.", "4587")


def test_an_iban_run_on_to_the_next_line_still_names_its_countrys_currency() -> None:
    # Given a bill with no currency printed but the payee's IBAN, wrapped over two lines
    result = text_invoice(
        "Example Handel GmbH\nRechnung Nr. 77\nGesamtbetrag 120,00\nIBAN DE89 3704 0044\n0532 0130 00"
    )
    assert result["currency"] == "EUR"


@pytest.mark.parametrize(
    ("terms", "given"),
    [("Payment terms: 14 days from date of invoice", "2025-03-14"), ("Payment terms: 30 days", None)],
)
def test_a_due_date_the_terms_days_after_an_unsure_date_of_issue_vouches_for_it(terms: str, given: str | None) -> None:
    # Given a scan whose date of issue OCR read unsurely, its due date and its payment terms
    result = ocr_receipt(
        ("Example Builders Ltd", 0.95), ("Invoice No: INV-0318", 0.95), ("Invoice Date: 14th March 2025", 0.45),
        ("Payment due: 28th March 2025", 0.95), ("Total £120.00", 0.95), (terms, 0.95),
    )  # fmt: skip
    # Then the date of issue is given where the terms put the due date that many days after it
    assert result["issue_date"] == given


@pytest.mark.parametrize(
    ("lines", "total"),
    [
        # A bill's own total beside an amount due that adds an earlier balance, paid in cash
        (["Previous balance 40.00", "Total this invoice 90.00", "Total amount due 130.00", "Cash 150.00",
          "Change 20.00"], "90.00"),
        # An Italian bill's total before the withholding, the net paid in cash
        (["Totale documento € 100,00", "Ritenuta d'acconto 20% -20,00", "Netto a pagare € 80,00", "Contanti 100,00",
          "Resto 20,00"], "100.00"),
        # A total less a deposit paid before, the rest paid in cash
        (["Total 100.00", "Deposit paid -30.00", "Amount due 70.00", "Cash 80.00", "Change 10.00"], "100.00"),
    ],
)  # fmt: skip
def test_cash_paid_does_not_overrule_a_bills_own_total_beside_what_is_due(lines: list[str], total: str) -> None:
    result = ocr_receipt(("Example Store Ltd", 0.95), *((line, 0.95) for line in lines))
    assert result["total"] in (Decimal(total), None)
    assert result["total"] is None or result["total"] == Decimal(total)


@pytest.mark.parametrize(
    "sentence",
    [
        "Nimbleway Credit is operated by Example Consumer Finance Ltd, authorised and regulated.",
        "Nimbleway gift cards are operated by Example Cards Ltd.",
        "Nimbleway is a trading name of Jane Example, sole trader.",
    ],
)
def test_a_footer_about_another_product_or_naming_no_company_does_not_make_the_vendor(sentence: str) -> None:
    result = page(
        (40, 40, "Nimbleway", 18), (40, 70, "billing@nimbleway.example"), (40, 120, "Invoice number NW-1180"),
        (300, 300, "Total £120.00"), (40, 740, "Nimbleway Retail Ltd, registered in England no. 01234567"),
        (40, 760, sentence),
    )  # fmt: skip
    assert "Example" not in (result["vendor"] or "")


def test_the_company_behind_a_trade_name_is_read_without_its_article() -> None:
    result = page(
        (40, 40, "Nimbleway", 18), (40, 70, "rechnung@nimbleway.example"), (40, 120, "Rechnungsnummer NW-1180"),
        (300, 300, "Gesamtbetrag 120,00 €"), (40, 760, "Nimbleway wird betrieben durch die Example Cloud GmbH."),
    )  # fmt: skip
    assert result["vendor"] == "Example Cloud GmbH"


@pytest.mark.parametrize("label", ["Total including local tax", "Total with state tax"])
def test_a_total_that_names_a_places_tax_it_includes_is_the_total_not_the_tax(label: str) -> None:
    result = text_invoice(f"Example Diner LLC\nCheck #3021\nFood $100.00\n{label} $108.00")
    assert result["tax"] != Decimal("108.00")
    assert result["total"] == Decimal("108.00")


def test_an_items_line_split_by_dots_with_a_number_in_a_word_is_no_return_address() -> None:
    result = page(
        (40, 100, "Anker PowerCore · Black · 10000mAh"), (300, 60, "Invoice no. 77"), (300, 300, "Total 120.00"),
        (40, 760, "Example Electronics Ltd · Registered in England No. 01234567 · VAT GB 123 4567 89"),
    )  # fmt: skip
    assert result["vendor"] != "Anker PowerCore"


def test_a_one_word_company_after_a_supplier_label_is_not_demoted() -> None:
    result = text_invoice("Supplier: Contoso\nInvoice no. 77\nTotal 120.00")
    assert result["vendor"] == "Contoso"
    assert "vendor" not in result["needs_review"]


def test_a_rate_tables_tax_column_rows_apart_are_two_tables_and_not_added_up() -> None:
    # Given items with a tax column, and under them the tax by rate again in the same column
    placed: list[tuple[float, float, str]] = [(40, 40, "Hôtel du Lac SARL"), (40, 80, "Facture n° 5521"),
                                              (40, 300, "Taux"), (120, 300, "Base HT"), (220, 300, "TVA")]  # fmt: skip
    rows = [
        ("10 %", "100,00", "10,00"),
        ("20 %", "50,00", "10,00"),
        ("10 %", "100,00", "10,00"),
        ("20 %", "50,00", "10,00"),
    ]
    for y, row in zip((320, 340, 420, 440), rows, strict=True):
        placed += [(x, y, text) for x, text in zip((40, 120, 220), row, strict=True)]
    result = page(*placed, (40, 500, "Total TTC 170,00 €"))
    assert result["tax"] != Decimal("40.00")


def test_a_tax_column_of_each_rates_share_of_the_gross_is_added_up() -> None:
    result = _rate_table(("10 %", "500,00", "50,00", "550,00"), ("20 %", "100,00", "20,00", "120,00"))
    assert result["tax"] == Decimal("70.00")
    placed = [(40, 40, "Hôtel du Lac SARL"), (40, 80, "Facture n° 5521"), (40, 300, "Taux"), (120, 300, "TTC"),
              (220, 300, "TVA"), (40, 320, "10 %"), (120, 320, "550,00"), (220, 320, "50,00"), (40, 340, "20 %"),
              (120, 340, "120,00"), (220, 340, "20,00"), (40, 500, "Total TTC 670,00 €")]  # fmt: skip
    assert page(*placed)["tax"] == Decimal("70.00")


@pytest.mark.parametrize(
    "iban",
    ["IBAN BE68 5390 0754 7034", "IBAN AT61 1904 3002 3457 3201 BIC BKAUATWW", "IBAN: ES91 2100 0418 4502 0005 1332"],
)
def test_the_payees_iban_names_its_countrys_currency_whatever_its_national_check(iban: str) -> None:
    result = text_invoice(f"Example Handel\nRechnung Nr. 77\nGesamtbetrag 120,00\n{iban}")
    assert result["currency"] == "EUR"


def test_a_reminders_overdue_amount_that_is_the_amount_due_is_this_bill() -> None:
    result = text_invoice("Example Services Ltd\nInvoice no. 77\nInvoice total £120.00\nOverdue amount £120.00\n"
                          "Amount due £120.00")  # fmt: skip
    assert result["total"] == Decimal("120.00")


def test_a_dot_before_a_name_in_capitals_is_no_speck() -> None:
    result = text_invoice(
        "Example Consulting Ltd\nInvoice no. 77\n.NET 8 migration 1,200.00\nAzure setup 800.00\nVAT 20% 400.00\n"
        "Total 2,400.00"
    )
    assert (result["tax"], result["total"]) == (Decimal("400.00"), Decimal("2400.00"))


@pytest.mark.parametrize("word", ["Discounts", "Rabatte", "Descuentos", "Descontos", "Sconti", "Remises"])
def test_discounts_in_the_plural_are_discounts(word: str) -> None:
    result = text_invoice(f"Example SARL\nInvoice no. 77\nSubtotal 100.00\n{word} 10.00\nVAT 18.00\nTotal 108.00")
    assert result["checks"]["totals_add_up"] is True


def test_a_bills_issue_date_is_named_so() -> None:
    assert [m.field for m in match_labels("Bill issue date")][:1] == ["issue_date"]


@pytest.mark.parametrize(
    "tail",
    [
        # Dates that read either way round, whichever order the terms would fit
        "Invoice date: 02/02/2025\nDue date: 03/04/2025\nNet 30.00\nVAT 6.00\nTotal 36.00\nPayment terms: 60 days",
        # Days not of the payment terms
        "Invoice date: 02/02/2025\nDue date: 03/04/2025\nTotal 36.00\nInterest on accounts more than 30 days overdue",
    ],
)
def test_terms_do_not_vouch_for_dates_read_either_way_round(tail: str) -> None:
    result = text_invoice(f"Example Ltd\nInvoice no. 77\n{tail}")
    assert "due_date" in result["needs_review"]


def test_days_counted_from_delivery_do_not_vouch_for_a_date_no_label_names() -> None:
    result = text_invoice(
        "Example Ltd\nInvoice no. 77\nDelivered: 01/03/2025\nDue date: 31/03/2025\nTotal £120.00\n"
        "Payment due 30 days from delivery"
    )
    assert result["issue_date"] is None or "issue_date" in result["needs_review"]


@pytest.mark.parametrize(
    ("sentence", "owner"),
    [
        ("Nimbleway est une marque de La Poste SA", "La Poste SA"),
        ("Nimbleway is a trading name of The Hut.com Ltd", "The Hut.com Ltd"),
        ("Nimbleway est exploitée par la société Example SAS", "Example SAS"),
    ],
)
def test_a_company_behind_a_trade_name_keeps_the_article_of_its_own_name(sentence: str, owner: str) -> None:
    result = page(
        (40, 40, "Nimbleway", 18), (40, 70, "factures@nimbleway.example"), (40, 120, "Facture n° NW-1180"),
        (300, 300, "Total TTC 120,00 €"), (40, 760, sentence),
    )  # fmt: skip
    assert result["vendor"] == owner


def test_a_return_address_with_a_dutch_postcode_written_together_names_the_issuer() -> None:
    result = page(
        (40, 90, "Bakkerij Jansen · Dorpsstraat 12 · 1015CJ Amsterdam"),
        (40, 105, "Horeca De Hoek B.V."), (40, 118, "Kerkstraat 4"), (40, 131, "1017 GA Amsterdam"),
        (360, 90, "Factuurnummer: 2025-118"), (360, 300, "Totaal te betalen € 48,00"),
    )  # fmt: skip
    assert result["vendor"] == "Bakkerij Jansen"


def test_an_ocr_speck_before_a_label_in_capitals_is_no_part_of_it() -> None:
    result = ocr_receipt(
        ("EXAMPLE MART", 0.95), ("MILK 2.50", 0.95), ("BREAD 3.00", 0.95), ("SUBTOTAL 5.50", 0.95),
        ("TAX 0.50", 0.95), (".TOTAL 6.00", 0.95), ("CASH 10.00", 0.95), ("CHANGE 4.00", 0.95),
    )  # fmt: skip
    assert result["total"] == Decimal("6.00")


@pytest.mark.parametrize("label", ["Total state tax", "Plus local tax", "Total Cook County Tax"])
def test_a_total_of_a_places_tax_is_the_tax(label: str) -> None:
    result = text_invoice(f"Example Diner LLC\nCheck #3021\nFood $100.00\n{label} $8.00\nTotal $108.00")
    assert (result["tax"], result["total"]) == (Decimal("8.00"), Decimal("108.00"))


def test_a_rate_tables_rows_far_apart_are_still_its_rows() -> None:
    placed: list[tuple[float, float, str]] = [(40, 40, "Hôtel du Lac SARL"), (40, 80, "Facture n° 5521"),
                                              (40, 300, "Taux"), (120, 300, "Base HT"), (220, 300, "TVA")]  # fmt: skip
    for y, row in zip((320, 355), (("10 %", "500,00", "50,00"), ("20 %", "100,00", "20,00")), strict=True):
        placed += [(x, y, text) for x, text in zip((40, 120, 220), row, strict=True)]
    assert page(*placed, (40, 500, "Total TTC 670,00 €"))["tax"] == Decimal("70.00")


def test_payment_terms_under_their_head_vouch_for_the_dates() -> None:
    # Given a Portuguese scan whose terms are printed in a grid, the days under their head
    result = ocr_receipt(
        ("Exemplo Aluguer Lda", 0.95), ("Fatura FT 2025/118", 0.95), ("Data 22-08-2025", 0.45),
        ("Vencimento 21-09-2025", 0.95), ("Cond. pagamento Moeda", 0.95), ("30 dias EUR", 0.95),
        ("Total 120,00 €", 0.95),
    )  # fmt: skip
    assert result["issue_date"] == "2025-08-22"


@pytest.mark.parametrize(
    "line", ["Fatura / Duplicata: pagamento à vista - Pedido nº CV-2025-118734", "Invoice / Order No. PO-88213"]
)
def test_the_number_after_an_orders_number_sign_is_not_the_invoices(line: str) -> None:
    result = text_invoice(f"Example Comercio Ltda\n{line}\nTotal R$ 863,30")
    assert result["invoice_number"] is None


@pytest.mark.parametrize(("line", "number"), [("Invoice Ref. No. 77123", "77123"), ("Factura Ref. Nº 2291", "2291")])
def test_the_number_after_a_references_number_sign_is_the_invoices(line: str, number: str) -> None:
    assert text_invoice(f"Example Ltd\n{line}\nTotal 10.00")["invoice_number"] == number


# Invoices in the languages of Central and Eastern Europe and Turkey, written here: (number, issued, due, net, tax,
# total).
_MORE_LANGUAGES = {
    "hu": ("Példa Kereskedelmi Kft.\nSzámla sorszáma: PK-2025/0007\nSzámla kelte: 2025.03.04.\n"
           "Fizetési határidő: 2025.03.19.\nNettó összeg: 100 000 Ft\nÁFA összeg: 27 000 Ft\n"
           "Fizetendő végösszeg: 127 000 Ft",
           ("PK-2025/0007", "2025-03-04", "2025-03-19", "100000", "27000", "127000")),
    "ro": ("Exemplu Distributie S.R.L.\nFactura nr. 0912\nData emiterii: 04.03.2025\nData scadenței: 03.04.2025\n"
           "Total fără TVA: 1.000,00 lei\nTVA: 190,00 lei\nTotal de plată: 1.190,00 lei",
           ("0912", "2025-03-04", "2025-04-03", "1000.00", "190.00", "1190.00")),
    "hr": ("Primjer Usluge d.o.o.\nBroj računa: 44/1/1\nDatum izdavanja: 04.03.2025.\nDatum dospijeća: 19.03.2025.\n"
           "Iznos bez PDV-a: 200,00 EUR\nPDV 25%: 50,00 EUR\nUkupno za platiti: 250,00 EUR",
           ("44/1/1", "2025-03-04", "2025-03-19", "200.00", "50.00", "250.00")),
    "sl": ("Primer Storitve d.o.o.\nRačun št. 2025-031\nDatum izdaje: 04.03.2025\nRok plačila: 19.03.2025\n"
           "Znesek brez DDV: 100,00 EUR\nDDV 22 %: 22,00 EUR\nZa plačilo: 122,00 EUR",
           ("2025-031", "2025-03-04", "2025-03-19", "100.00", "22.00", "122.00")),
    "tr": ("Örnek Ticaret A.Ş.\nFatura No: ORN2025000000123\nFatura Tarihi: 04.03.2025\nSon Ödeme Tarihi: 03.04.2025\n"
           "KDV Matrahı: 1.000,00 ₺\nHesaplanan KDV: 200,00 ₺\nÖdenecek Tutar: 1.200,00 ₺",
           ("ORN2025000000123", "2025-03-04", "2025-04-03", "1000.00", "200.00", "1200.00")),
    "et": ("Näidis Teenused OÜ\nArve nr 2025-17\nKuupäev: 04.03.2025\nMaksetähtaeg: 18.03.2025\n"
           "Summa km-ta: 100,00 EUR\nKäibemaks 22%: 22,00 EUR\nTasuda: 122,00 EUR",
           ("2025-17", "2025-03-04", "2025-03-18", "100.00", "22.00", "122.00")),
    "lv": ('SIA "Paraugs"\nRēķins Nr. PR-25/04\nDatums: 2025. gada 4. martā\nApmaksas termiņš: 18.03.2025\n'
           "Kopā bez PVN: 100,00 EUR\nPVN 21%: 21,00 EUR\nKopā apmaksai: 121,00 EUR",
           ("PR-25/04", "2025-03-04", "2025-03-18", "100.00", "21.00", "121.00")),
    "lt": ("UAB „Pavyzdys“\nSąskaitos faktūros Nr. PV-0042\nIšrašymo data: 2025 m. kovo 4 d.\n"
           "Apmokėti iki: 2025-03-18\nSuma be PVM: 100,00 EUR\nPVM 21 %: 21,00 EUR\nIš viso su PVM: 121,00 EUR",
           ("PV-0042", "2025-03-04", "2025-03-18", "100.00", "21.00", "121.00")),
    "bg": ("Пример ЕООД\nФактура № 0000000123\nДата на издаване: 04.03.2025\nСрок за плащане: 18.03.2025\n"
           "Данъчна основа: 100,00 лв.\nДДС 20%: 20,00 лв.\nСума за плащане: 120,00 лв.",
           ("0000000123", "2025-03-04", "2025-03-18", "100.00", "20.00", "120.00")),
    "uk": ("ТОВ «Приклад»\nРахунок № 17\nДата складання: 4 березня 2025 р.\nСплатити до: 18.03.2025\n"
           "Сума без ПДВ: 1 000,00 грн\nПДВ 20%: 200,00 грн\nВсього до сплати: 1 200,00 грн",
           ("17", "2025-03-04", "2025-03-18", "1000.00", "200.00", "1200.00")),
}  # fmt: skip


@pytest.mark.parametrize("language", sorted(_MORE_LANGUAGES))
def test_invoices_in_central_and_eastern_european_languages_and_turkish(language: str) -> None:
    text, (number, issued, due, net, tax, total) = _MORE_LANGUAGES[language]
    result = text_invoice(text)
    assert (result["invoice_number"], result["issue_date"], result["due_date"]) == (number, issued, due)
    assert (result["subtotal"], result["tax"], result["total"]) == (Decimal(net), Decimal(tax), Decimal(total))


@pytest.mark.parametrize(
    ("text", "currency"),
    [("Összesen 127 000 Ft", "HUF"), ("Total 1.190,00 lei", "RON"), ("Общо 120,00 лв.", "BGN"),
     ("Всього 1 200,00 грн", "UAH"), ("Ukupno 200.400,00 RSD", "RSD")],
)  # fmt: skip
def test_the_currencies_of_central_and_eastern_europe(text: str, currency: str) -> None:
    assert currencies_in(text) == [currency]


@pytest.mark.parametrize(
    ("line", "vendor"),
    [("UAB „Pavyzdys“, įmonės kodas 302845176", "UAB „Pavyzdys“"), ('SIA "Paraugs" Rīga', 'SIA "Paraugs"'),
     ("ТОВ «Приклад», код ЄДРПОУ 12345678", "ТОВ «Приклад»")],
)  # fmt: skip
def test_a_company_form_before_a_quoted_name_keeps_the_name(line: str, vendor: str) -> None:
    assert text_invoice(f"{line}\nInvoice No. 17\nTotal 10.00 EUR")["vendor"] == vendor


def test_a_tax_number_names_the_country_and_so_the_currency() -> None:
    # Given a Czech invoice whose only currency sign OCR misread ("Kć")
    result = text_invoice(
        "Tiskárna Příklad s.r.o.\nDIČ: CZ27184521\nFaktura číslo 2024-0412\nCelkem k úhradě: 6 189,00"
    )
    assert result["currency"] == "CZK"


@pytest.mark.parametrize("label", ["*** TOTAL", "*#** TOTAL", "==TOTAL"])
def test_a_receipts_stars_before_its_total_are_no_part_of_the_label(label: str) -> None:
    result = ocr_receipt(("Example Market", 0.95), ("SUBTOTAL 40.11", 0.95), (f"{label} 41.70", 0.95),
                         ("VISA 41.70", 0.95))  # fmt: skip
    assert result["total"] == Decimal("41.70")


def test_a_receipts_number_in_a_row_of_codes() -> None:
    result = ocr_receipt(("Example Market", 0.95), ("ST# 0412 OP# 27 TE# 03 TRANS# 08871", 0.95),
                         ("TOTAL 41.70", 0.95))  # fmt: skip
    assert result["invoice_number"] == "08871"


@pytest.mark.parametrize(
    "line",
    ["Receipt: 2-118406", "Kwitantienr. 2-118406", "Quittung Nr. 2-118406", "Reçu n° 2-118406", "Recibo n.º 2-118406",
     "Scontrino n. 2-118406", "Paragon fiskalny nr 2-118406", "Kuitti nro 2-118406"],
)  # fmt: skip
def test_a_receipts_own_number(line: str) -> None:
    assert text_invoice(f"Example Shop\n{line}\nTotal 10.00")["invoice_number"] == "2-118406"


def test_the_total_after_cash_rounding() -> None:
    result = text_invoice("Example Cafe Pty Ltd\nTotal (incl GST) $47.99\nCash rounding $0.01\nTOTAL CASH $48.00\n"
                          "Cash tendered $50.00\nChange $2.00")  # fmt: skip
    assert result["total"] == Decimal("48.00")


@pytest.mark.parametrize(
    ("label", "amount"), [("GST included in total", "$4.36"), ("TVA incluse dans le prix", "4,36 €")]
)
def test_a_tax_the_total_includes_is_the_tax_beside_its_label(label: str, amount: str) -> None:
    # Given a receipt that prints the tax's label and its amount apart, the label saying where the tax is
    result = page(
        (40, 40, "Example Cafe"), (40, 100, "Total"), (300, 100, "48.00"), (40, 120, label), (300, 120, amount)
    )
    assert result["tax"] == Decimal("4.36")


def test_a_company_form_wrapped_under_the_middle_of_its_name() -> None:
    # Given a receipt that centres its lines, the name's form wrapped onto the next line under its middle
    result = page((100, 40, "Little Example Hospitality"), (152, 52, "Pty Ltd"), (100, 64, "ABN 53 004 085 616"),
                  (40, 120, "TAX INVOICE"), (40, 140, "Total (incl GST) $47.99"))  # fmt: skip
    assert result["vendor"] == "Little Example Hospitality Pty Ltd"


def test_a_bar_ocr_read_from_a_tables_rule_parts_its_columns() -> None:
    # Given a scanned Polish invoice whose VAT table's heads OCR read with the rules between them
    words = []
    for y, cells in (
        (300, [(296, "Wartość netto |"), (373, "Stawka |"), (419, "Kwota VAT |"), (482, "Wartość brutto")]),
        (320, [(250, "Razem"), (335, "613,00"), (395, "8%"), (447, "49,04"), (525, "662,04")]),
    ):
        for x, cell in cells:
            cursor = x
            for token in cell.split():
                words.append(Word(token, 1, cursor, y, cursor + 5 * len(token), y + 10, 0.9))
                cursor += 5 * len(token) + 3
    lines = lines_from_words(words)
    assert [p.text for p in lines[0].phrases] == ["Wartość netto", "Stawka", "Kwota VAT", "Wartość brutto"]


@pytest.mark.parametrize(
    ("text", "day"),
    [("2025. március 5.", "2025-03-05"), ("2025 m. kovo 5 d.", "2025-03-05"), ("2025. gada 21. martā", "2025-03-21"),
     ("12 березня 2025", "2025-03-12"), ("12 Ocak 2025", "2025-01-12"), ("28 februarie 2025", "2025-02-28")],
)  # fmt: skip
def test_dates_in_central_and_eastern_european_languages_and_turkish(text: str, day: str) -> None:
    assert [d.value.isoformat() for d in dates_in(text, True)] == [day]


def test_a_year_before_a_month_name_needs_its_dot() -> None:
    assert dates_in("Q1 2025 May 2 items", True) == []


@pytest.mark.parametrize(
    ("line", "number"),
    [("Factura seria ATP nr. 0004521", "ATP 0004521"),
     ("PVM SĄSKAITA FAKTŪRA Serija RYL Nr. 2503148762", "RYL 2503148762")],
)  # fmt: skip
def test_a_series_named_by_its_word_before_the_number_is_part_of_it(line: str, number: str) -> None:
    assert text_invoice(f"Exemplu S.R.L.\n{line}\nTotal 10,00 EUR")["invoice_number"] == number


@pytest.mark.parametrize("line", ["Рахунок-фактура № 17 від 12 березня 2025 р.", "Rechnung Nr. 17 vom 12.03.2025"])
def test_a_two_digit_number_with_the_date_it_is_of(line: str) -> None:
    result = text_invoice(f"Example\n{line}\nTotal 10,00 EUR")
    assert (result["invoice_number"], result["issue_date"]) == ("17", "2025-03-12")


def test_the_amount_a_rate_is_of_in_a_phrase_of_its_own_is_not_the_tax() -> None:
    # Given a bill's VAT row that prints the amount the rate is of, then the tax, each in a phrase of its own
    result = page((40, 40, "Example Energy Ltd"), (40, 100, "Total before VAT"), (400, 100, "€1,230.49"),
                  (40, 120, "VAT @ 9%"), (250, 120, "on €1,230.49"), (400, 120, "€110.74"),
                  (40, 140, "Total charges this bill"), (400, 140, "€1,341.23"))  # fmt: skip
    assert (result["tax"], result["total"]) == (Decimal("110.74"), Decimal("1341.23"))


def test_an_indonesian_receipt() -> None:
    result = text_invoice("PT Contoh Rasa Sejahtera\nNPWP: 01.234.567.8-015.000\nNo. Nota BR-24082200117\n"
                          "Tanggal: 22/08/2024\nSubtotal Rp 135.000\nPB1 10% Rp 13.500\nTotal Bayar Rp 148.500\n"
                          "Tunai Rp 200.000\nKembali Rp 51.500")  # fmt: skip
    assert (result["vendor"], result["invoice_number"], result["issue_date"]) == (
        "PT Contoh Rasa Sejahtera", "BR-24082200117", "2024-08-22"
    )  # fmt: skip
    assert (result["currency"], result["tax"], result["total"]) == ("IDR", Decimal("13500"), Decimal("148500"))


def test_a_malaysian_receipts_malay_labels() -> None:
    result = text_invoice("Contoh Niaga Sdn Bhd\nNo. Bil: CS-0001234\nTarikh: 14/01/2018\nJumlah Besar RM 25.00\n"
                          "Tunai RM 50.00\nBaki RM 25.00")  # fmt: skip
    assert (result["invoice_number"], result["issue_date"], result["total"]) == (
        "CS-0001234", "2018-01-14", Decimal("25.00")
    )  # fmt: skip


@pytest.mark.parametrize("line", ["Support hours 9-5 PT", "Webinar at 10:00 PT Monday", "Call 9am PT Mon-Fri"])
def test_pacific_time_is_no_company_form(line: str) -> None:
    assert FORM.search(line) is None


@pytest.mark.parametrize(
    ("text", "day"),
    [("15 KASIM 2024", "2024-11-15"), ("3 Kasim 2024", "2024-11-03"), ("1 Mayıs 2024", "2024-05-01"),
     ("31 ARALIK 2024", "2024-12-31")],
)  # fmt: skip
def test_turkish_month_names_in_capitals_or_without_their_dotless_i(text: str, day: str) -> None:
    assert [d.value.isoformat() for d in dates_in(text, True)] == [day]
    assert (
        text_invoice(f"Örnek A.Ş.\nFatura No: 123\nFatura Tarihi: {text}\nÖdenecek Tutar: 1.200,00 ₺")["issue_date"]
        == day
    )


@pytest.mark.parametrize(
    "text",
    ["Lone Star Fencing Inc.\n55 Main St, Ft Worth, TX 76102\nCedar picket 6 Ft 120 pcs 360.00\nTotal 360.00",
     "Example Ltd\nAttn: Lei Wang\nInvoice No. 4471\nTotal 360.00",
     "Esempio Srl\nFattura n. 18\nI dati personali da Lei forniti sono trattati a norma di legge.\nTotale 360,00"],
)  # fmt: skip
def test_a_word_spelt_as_a_currency_sign_is_no_currency(text: str) -> None:
    assert text_invoice(text)["currency"] not in ("HUF", "RON")


@pytest.mark.parametrize(
    ("text", "number"),
    [("Példa Kft.\nSzámlaszám: 11700024-20123456-00000000\nSzámla sorszáma: PK-2025/0007\nÖsszesen 127 000 Ft",
      "PK-2025/0007"),
     ("Primjer d.o.o.\nBroj računa: 160-0000000123456-78\nRačun broj: 44/2025\nUkupno 250,00 EUR", "44/2025"),
     ("ТОВ «Приклад»\nНомер рахунку: UA213223130000026007233566001\nРахунок № 17\nВсього 1 200,00 грн", "17"),
     ("UAB „Pavyzdys“\nSąskaitos Nr. LT12 1000 0111 0100 1000\nSąskaitos faktūros Nr. PV-0042\nIš viso 121,00 EUR",
      "PV-0042")],
)  # fmt: skip
def test_a_bank_accounts_number_is_not_the_invoices(text: str, number: str) -> None:
    assert text_invoice(text)["invoice_number"] == number


@pytest.mark.parametrize(
    ("text", "number", "day"),
    [("Esempio Srl\nFattura n. 18\nData: 04/03/2025\nScontrino n. 0045 del 01/03/2025\nTotale 10,00 €",
      "18", "2025-03-04"),
     ("Przykład Sp. z o.o.\nParagon fiskalny nr 1234/25\nFaktura VAT nr FV/1/2025\nData: 04.03.2025\nRazem 10,00 zł",
      "FV/1/2025", "2025-03-04")],
)  # fmt: skip
def test_a_receipt_an_invoice_cites_is_not_the_invoice(text: str, number: str, day: str) -> None:
    result = text_invoice(text)
    assert (result["invoice_number"], result["issue_date"]) == (number, day)


def test_a_month_name_another_language_gives_another_month_is_for_review() -> None:
    # "listopad" is November in Czech and Polish, October in Croatian
    result = text_invoice(
        "Primjer d.o.o.\nBroj računa: 44/1/1\nDatum izdavanja: 15. listopada 2025.\nUkupno 250,00 EUR"
    )
    assert "issue_date" in result["needs_review"]


def test_dutch_dd_before_a_date_is_no_company_form() -> None:
    result = text_invoice("Bakkerij Jansen\nBetreft uw offerte d.d. 12-03-2025\nFactuurnummer 2025-01\nTotaal 45,00")
    assert result["vendor"] == "Bakkerij Jansen"


@pytest.mark.parametrize(("line", "vendor"), [("ТОВ Приклад, м. Київ, вул. Хрещатик 1", "ТОВ Приклад"),
                                              ("UAB Pavyzdys, Vilniaus g. 12, Vilnius", "UAB Pavyzdys")])  # fmt: skip
def test_a_leading_company_form_without_quotes_ends_its_name_at_the_comma(line: str, vendor: str) -> None:
    assert text_invoice(f"{line}\nInvoice No. 17\nTotal 10.00 EUR")["vendor"] == vendor


@pytest.mark.parametrize(("text", "days"), [("Invoice # 2024. March 5, 2025", ["2025-03-05"]),
                                            ("Mesa 5 Marta 12:30", []), ("Maija 14:32", [])])  # fmt: skip
def test_a_year_first_date_only_where_no_other_reading_is(text: str, days: list[str]) -> None:
    assert [d.value.isoformat() for d in dates_in(text, True)] == days


def test_a_long_row_of_codes_is_no_row_of_labels_and_values() -> None:
    # Given a row of forty "TRANS# nnnn" pairs, far more than a header line prints: read as the one phrase it is
    row = " ".join(f"TRANS# {i:04d}" for i in range(40))
    words = [Word(token, 1, 20 + 30 * i, 20, 45 + 30 * i, 30, 0.9) for i, token in enumerate(row.split())]
    assert len(labelled_phrases(lines_from_words(words))) == 1


@pytest.mark.parametrize(("line", "number"), [("Invoice No.: Serial No. 4471", "4471"),
                                              ("Invoice Number: Series No. 2024/4471", "2024/4471")])  # fmt: skip
def test_serial_and_series_are_no_series_word(line: str, number: str) -> None:
    assert text_invoice(f"Example Ltd\n{line}\nTotal 10.00")["invoice_number"] == number


@pytest.mark.parametrize(
    "line", ["Tarikh Pesanan: 01/02/2025", "Tarikh Luput: 30/04/2026", "Tanggal Kirim: 28/03/2025"]
)
def test_a_malay_or_indonesian_date_of_something_else_is_not_the_invoices(line: str) -> None:
    result = text_invoice(f"Contoh Sdn Bhd\nNo. Invois: INV-0042\n{line}\nTarikh Invois: 05/03/2025\nJumlah RM 10.00")
    assert result["issue_date"] == "2025-03-05"


def test_an_indonesian_due_date_after_its_short_label() -> None:
    result = text_invoice(
        "PT Contoh\nNo. Faktur: F-0042\nTanggal: 05/03/2025\nTgl. Jatuh Tempo: 30/04/2025\nTotal Rp 10.000"
    )
    assert (result["issue_date"], result["due_date"]) == ("2025-03-05", "2025-04-30")


@pytest.mark.parametrize(
    ("line", "vendor"),
    [("Podravka d.d. 48000 Koprivnica", "Podravka d.d."), ("Škoda Auto a.s. 293 01 Mladá Boleslav", "Škoda Auto a.s.")],
)
def test_a_company_form_before_a_postcode(line: str, vendor: str) -> None:
    assert text_invoice(f"{line}\nFaktura 2025-0042\nCelkem 10,00 EUR")["vendor"] == vendor


def test_a_leading_form_keeps_a_name_with_a_comma_in_it() -> None:
    assert text_invoice("SARL Dupont, Durand et Fils\nFacture n° 4471\nTotal TTC 10,00 €")["vendor"] == (
        "SARL Dupont, Durand et Fils"
    )


def test_a_year_first_date_with_its_time() -> None:
    assert [d.value.isoformat() for d in dates_in("Kelt: 2025. március 5. 10:15", True)] == ["2025-03-05"]


@pytest.mark.parametrize("line", ["Invoice No: 20240315-00000123", "Invoice No: 12345678-87654321"])
def test_two_groups_of_eight_digits_are_an_invoices_number(line: str) -> None:
    assert text_invoice(f"Example Ltd\n{line}\nTotal 10.00")["invoice_number"] == line.split(": ")[1]


def test_a_receipts_own_label_names_its_date_on_a_receipt() -> None:
    result = ocr_receipt(("Beispiel Markt", 0.95), ("Kassenbon Nr. 4711 05.03.2025 14:22", 0.95),
                         ("SUMME 10,00", 0.95), ("Umtausch bis 05.04.2025", 0.95))  # fmt: skip
    assert (result["invoice_number"], result["issue_date"]) == ("4711", "2025-03-05")


def test_a_receipt_an_invoice_cites_by_its_number_and_date_is_for_review() -> None:
    result = text_invoice("Beispiel GmbH\nRechnung\nQuittung Nr. 77 vom 05.03.2025\nGesamt 10,00 €")
    assert "invoice_number" in result["needs_review"]


def test_a_loose_currency_sign_in_a_labels_brackets() -> None:
    assert currencies_in("Total de plată (lei): 1.190,00") == ["RON"]
    assert currencies_in("(Lei Wang)") == []


def test_a_number_with_pages_after_it_is_no_number_of_a_date() -> None:
    assert (
        text_invoice("Example Ltd\nInvoice #: 12 of 15 pages printed 2024-03-05\nTotal 10.00")["invoice_number"] is None
    )


def test_times_are_no_separators_of_pairs() -> None:
    times = " ".join(["10:15:30"] * 9)
    result = text_invoice(f"Example Ltd\n{times} Invoice #: 4471 Date: 05/03/2025\nTotal 10.00")
    assert result["invoice_number"] == "4471"
