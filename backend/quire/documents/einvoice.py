"""E-invoices read exactly from their XML: UN/CEFACT CII (ZUGFeRD 1 and 2, Factur-X, XRechnung), UBL 2.1, FatturaPA.

The XML is parsed with defusedxml, which refuses DTDs, entity declarations and external references, so an
XXE or billion-laughs file ends in InvalidInput before anything is expanded or fetched. Elements are matched
by local name (`{*}`), so the prefixes a sender chose do not matter. Amounts are Decimals exactly as written;
a credit note keeps the amounts it prints and sets `credit_note`.
"""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from xml.etree.ElementTree import Element, ParseError

from defusedxml.ElementTree import fromstring

from quire.errors import InvalidInput

# How much of a file is_einvoice_xml needs: the CII samples of the XML-Rechnung set put a 5.7 KB licence
# comment before the root element, so the 4 KB that type detection reads is not enough.
HEAD_BYTES = 64 * 1024

_FATTURAPA = "FatturaElettronica"
# (namespace, root element) -> syntax. ZUGFeRD 1.0 has its own namespace and root but the same CII model.
_ROOTS: dict[tuple[str, str], str] = {
    ("urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100", "CrossIndustryInvoice"): "cii",
    ("urn:ferd:CrossIndustryDocument:invoice:1p0", "CrossIndustryDocument"): "cii",
    ("urn:oasis:names:specification:ubl:schema:xsd:Invoice-2", "Invoice"): "ubl",
    ("urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2", "CreditNote"): "ubl",
    ("http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2", _FATTURAPA): "fatturapa",
    ("http://www.fatturapa.gov.it/sdi/fatturapa/v1.1", _FATTURAPA): "fatturapa",
    ("http://www.fatturapa.gov.it/sdi/fatturapa/v1.0", _FATTURAPA): "fatturapa",
}
# The UNTDID 1001 codes EN 16931 counts as credit notes (BT-3); 381 is the common one.
_CREDIT_NOTE_CODES = frozenset({"81", "83", "261", "262", "296", "308", "381", "396", "420", "458", "532"})
_FATTURAPA_CREDIT_NOTES = frozenset({"TD04", "TD08"})
# Names the Factur-X, ZUGFeRD 1/2 and XRechnung-in-PDF specifications give the attachment, in lower case.
_ATTACHMENT_NAMES = ("factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

# Where a line keeps its description, quantity, net unit price and net amount; alternatives in order.
# CII names come first, then the ZUGFeRD 1.0 name for the same field.
_LinePaths = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
_CII_LINE: _LinePaths = (
    ("SpecifiedTradeProduct/Name", "SpecifiedTradeProduct/Description"),
    ("SpecifiedLineTradeDelivery/BilledQuantity", "SpecifiedSupplyChainTradeDelivery/BilledQuantity"),
    (
        "SpecifiedLineTradeAgreement/NetPriceProductTradePrice/ChargeAmount",
        "SpecifiedSupplyChainTradeAgreement/NetPriceProductTradePrice/ChargeAmount",
    ),
    (
        "SpecifiedLineTradeSettlement/SpecifiedTradeSettlementLineMonetarySummation/LineTotalAmount",
        "SpecifiedSupplyChainTradeSettlement/SpecifiedTradeSettlementMonetarySummation/LineTotalAmount",
    ),
)
_UBL_LINE: _LinePaths = (
    ("Item/Name", "Item/Description"),
    ("InvoicedQuantity", "CreditedQuantity"),
    ("Price/PriceAmount",),
    ("LineExtensionAmount",),
)
_FATTURAPA_LINE: _LinePaths = (("Descrizione",), ("Quantita",), ("PrezzoUnitario",), ("PrezzoTotale",))

_PROLOG = re.compile(r"\s*(?:<\?.*?\?>|<!--.*?-->)", re.DOTALL)
_ROOT_TAG = re.compile(r"\s*<(?:([\w.\-]+):)?([\w.\-]+)((?:\s+[\w.\-:]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*/?>")
_ATTRIBUTE = re.compile(r"([\w.\-:]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_CII_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")


@dataclass(frozen=True)
class EInvoiceLine:
    """One invoice line; `unit_price` is the net price as written, per its basis quantity (usually 1)."""

    description: str
    quantity: Decimal | None
    unit_price: Decimal | None
    amount: Decimal | None


@dataclass(frozen=True)
class EInvoice:
    """The fields of one e-invoice as its XML states them; None where the XML does not say."""

    syntax: str
    vendor: str | None
    invoice_number: str | None
    issue_date: date | None
    due_date: date | None
    currency: str | None
    subtotal: Decimal | None
    tax: Decimal | None
    total: Decimal | None
    amount_due: Decimal | None
    line_items: tuple[EInvoiceLine, ...]
    credit_note: bool
    buyer: str | None
    language: str | None


def is_einvoice_xml(head: bytes) -> bool:
    """Whether the first bytes of a file (HEAD_BYTES of them) open an e-invoice's root element.

    A lexical look at the root start tag only; a DOCTYPE means no, since no e-invoice schema uses one.
    """
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = head[: len(head) // 2 * 2].decode("utf-16", errors="replace")
    else:
        text = head.decode("utf-8-sig", errors="replace")
    position = 0
    while prolog := _PROLOG.match(text, position):
        position = prolog.end()
    root = _ROOT_TAG.match(text, position)
    if root is None:
        return False
    prefix, name, attributes = root.groups()
    declared = {m[1]: m[2] if m[2] is not None else m[3] for m in _ATTRIBUTE.finditer(attributes)}
    namespace = declared.get(f"xmlns:{prefix}" if prefix else "xmlns", "")
    return (namespace, name) in _ROOTS


def read_einvoice(xml: bytes) -> EInvoice:
    """The fields of a CII, UBL or FatturaPA e-invoice, or InvalidInput saying why it cannot be read."""
    try:
        root: Element = fromstring(xml, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except (ParseError, LookupError) as exc:  # LookupError: an encoding Python does not know
        raise InvalidInput("This e-invoice is not well-formed XML; it may be cut off. Upload a complete copy.") from exc
    except ValueError as exc:  # defusedxml's refusals (DTD, entities, external references)
        raise InvalidInput(
            "This e-invoice declares a DTD or entities, which Quire refuses. Ask for a plain copy."
        ) from exc
    namespace, _, name = root.tag[1:].rpartition("}") if root.tag.startswith("{") else ("", "", root.tag)
    syntax = _ROOTS.get((namespace, name))
    if syntax == "cii":
        return _read_cii(root)
    if syntax == "ubl":
        return _read_ubl(root, credit_note=name == "CreditNote")
    if syntax == "fatturapa":
        return _read_fatturapa(root)
    raise InvalidInput("This XML file is not an e-invoice Quire reads (CII, ZUGFeRD, Factur-X, UBL or FatturaPA).")


def embedded_einvoice(pdf: bytes) -> bytes | None:
    """The e-invoice XML attached to a PDF (Factur-X, ZUGFeRD, XRechnung), or None when it carries none."""
    from pypdf import PdfReader

    try:
        attachments = PdfReader(io.BytesIO(pdf)).attachments
        names = sorted((n for n in attachments if n.lower().endswith(".xml")), key=_attachment_rank)
        for name in names:
            for content in attachments[name]:
                if is_einvoice_xml(content[:HEAD_BYTES]):
                    return content
    except Exception:  # pypdf raises a wide, version-dependent range of errors on damaged files
        return None
    return None


def _attachment_rank(name: str) -> int:
    lowered = name.lower()
    return _ATTACHMENT_NAMES.index(lowered) if lowered in _ATTACHMENT_NAMES else len(_ATTACHMENT_NAMES)


def _read_cii(root: Element) -> EInvoice:
    # Each pair is the CII D16B name first, then the ZUGFeRD 1.0 name for the same part.
    document = _find(root, "ExchangedDocument", "HeaderExchangedDocument")
    trade = _find(root, "SupplyChainTradeTransaction", "SpecifiedSupplyChainTradeTransaction")
    agreement = _find(trade, "ApplicableHeaderTradeAgreement", "ApplicableSupplyChainTradeAgreement")
    settlement = _find(trade, "ApplicableHeaderTradeSettlement", "ApplicableSupplyChainTradeSettlement")
    totals = _find(
        settlement, "SpecifiedTradeSettlementHeaderMonetarySummation", "SpecifiedTradeSettlementMonetarySummation"
    )
    currency = _text(settlement, "InvoiceCurrencyCode")
    return EInvoice(
        syntax="cii",
        vendor=_text(agreement, "SellerTradeParty/Name"),
        invoice_number=_text(document, "ID"),
        issue_date=_cii_date(_find(document, "IssueDateTime/DateTimeString")),
        due_date=_cii_date(_find(settlement, "SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString")),
        currency=currency,
        subtotal=_amount(_text(totals, "TaxBasisTotalAmount")),
        tax=_in_currency(_find_all(totals, "TaxTotalAmount"), currency),
        total=_amount(_text(totals, "GrandTotalAmount")),
        amount_due=_amount(_text(totals, "DuePayableAmount")),
        line_items=tuple(_line(item, _CII_LINE) for item in _find_all(trade, "IncludedSupplyChainTradeLineItem")),
        credit_note=_text(document, "TypeCode") in _CREDIT_NOTE_CODES,
        buyer=_text(agreement, "BuyerTradeParty/Name"),
        language=_text(document, "LanguageID") or root.get(_XML_LANG),
    )


def _line(item: Element, paths: _LinePaths) -> EInvoiceLine:
    description, quantity, unit_price, amount = paths
    return EInvoiceLine(
        description=_text(item, *description) or "",
        quantity=_amount(_text(item, *quantity)),
        unit_price=_amount(_text(item, *unit_price)),
        amount=_amount(_text(item, *amount)),
    )


def _read_ubl(root: Element, *, credit_note: bool) -> EInvoice:
    totals = _find(root, "LegalMonetaryTotal")
    currency = _text(root, "DocumentCurrencyCode")
    return EInvoice(
        syntax="ubl",
        vendor=_ubl_party(_find(root, "AccountingSupplierParty/Party")),
        invoice_number=_text(root, "ID"),
        issue_date=_date(_text(root, "IssueDate"), _ISO_DATE),
        due_date=_date(_text(root, "DueDate", "PaymentMeans/PaymentDueDate"), _ISO_DATE),
        currency=currency,
        subtotal=_amount(_text(totals, "TaxExclusiveAmount")),
        tax=_in_currency(_find_all(root, "TaxTotal/TaxAmount"), currency),
        total=_amount(_text(totals, "TaxInclusiveAmount")),
        amount_due=_amount(_text(totals, "PayableAmount")),
        line_items=tuple(_line(item, _UBL_LINE) for item in _find_all(root, "CreditNoteLine", "InvoiceLine")),
        credit_note=credit_note or _text(root, "InvoiceTypeCode") in _CREDIT_NOTE_CODES,
        buyer=_ubl_party(_find(root, "AccountingCustomerParty/Party")),
        language=root.get(_XML_LANG),
    )


def _ubl_party(party: Element | None) -> str | None:
    return _text(party, "PartyLegalEntity/RegistrationName", "PartyName/Name")


def _read_fatturapa(root: Element) -> EInvoice:
    header = _find(root, "FatturaElettronicaHeader")
    # A FatturaPA file may carry a batch of invoices, one body each; Quire reads the first.
    body = _find(root, "FatturaElettronicaBody")
    general = _find(body, "DatiGenerali/DatiGeneraliDocumento")
    summaries = _find_all(body, "DatiBeniServizi/DatiRiepilogo")
    subtotal = _sum([_amount(_text(summary, "ImponibileImporto")) for summary in summaries])
    tax = _sum([_amount(_text(summary, "Imposta")) for summary in summaries])
    total = _amount(_text(general, "ImportoTotaleDocumento"))
    if total is None and subtotal is not None and tax is not None:
        total = subtotal + tax
    return EInvoice(
        syntax="fatturapa",
        vendor=_fatturapa_party(_find(header, "CedentePrestatore/DatiAnagrafici/Anagrafica")),
        invoice_number=_text(general, "Numero"),
        issue_date=_date(_text(general, "Data"), _ISO_DATE),
        due_date=_date(_text(body, "DatiPagamento/DettaglioPagamento/DataScadenzaPagamento"), _ISO_DATE),
        currency=_text(general, "Divisa"),
        subtotal=subtotal,
        tax=tax,
        total=total,
        # Payment details may list alternatives or instalments, so no single amount due is stated.
        amount_due=None,
        line_items=tuple(_line(item, _FATTURAPA_LINE) for item in _find_all(body, "DatiBeniServizi/DettaglioLinee")),
        credit_note=_text(general, "TipoDocumento") in _FATTURAPA_CREDIT_NOTES,
        buyer=_fatturapa_party(_find(header, "CessionarioCommittente/DatiAnagrafici/Anagrafica")),
        language=root.get(_XML_LANG),
    )


def _fatturapa_party(registry: Element | None) -> str | None:
    """A company's Denominazione, or a person's Nome and Cognome."""
    person = " ".join(part for part in (_text(registry, "Nome"), _text(registry, "Cognome")) if part)
    return _text(registry, "Denominazione") or person or None


def _path(path: str) -> str:
    return "/".join(f"{{*}}{step}" for step in path.split("/"))


def _find(element: Element | None, *paths: str) -> Element | None:
    """The first element found by the first path that finds one; steps are local names in any namespace."""
    if element is None:
        return None
    for path in paths:
        found = element.find(_path(path))
        if found is not None:
            return found
    return None


def _find_all(element: Element | None, *paths: str) -> list[Element]:
    return [] if element is None else [found for path in paths for found in element.findall(_path(path))]


def _text(element: Element | None, *paths: str) -> str | None:
    return _content(_find(element, *paths))


def _content(element: Element | None) -> str | None:
    text = "".join(element.itertext()).strip() if element is not None else ""
    return text or None


def _amount(text: str | None) -> Decimal | None:
    if text is None:
        return None
    if not _DECIMAL.fullmatch(text):
        raise InvalidInput(f"This e-invoice has an amount that is not a number: {text[:40]!r}.")
    return Decimal(text)


def _in_currency(amounts: list[Element], currency: str | None) -> Decimal | None:
    """The amount in the invoice currency when the XML also states it in the tax currency (BT-110, BT-111)."""
    stated = [amount for amount in amounts if amount.get("currencyID") in (currency, None)] or amounts
    return _amount(_content(stated[0])) if stated else None


def _sum(amounts: list[Decimal | None]) -> Decimal | None:
    """The sum of amounts each stated, or None when any is missing (a partial sum would look exact)."""
    if not amounts or None in amounts:
        return None
    return sum((amount for amount in amounts if amount is not None), Decimal(0))


def _cii_date(element: Element | None) -> date | None:
    """A CII date; EN 16931 allows only format 102 (YYYYMMDD)."""
    if element is not None and element.get("format", "102") != "102":
        raise InvalidInput(f"This e-invoice has a date in a format Quire does not read ({element.get('format')}).")
    return _date(_content(element), _CII_DATE)


def _date(text: str | None, pattern: re.Pattern[str]) -> date | None:
    if text is None:
        return None
    match = pattern.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError as exc:
        raise InvalidInput(f"This e-invoice has a date Quire cannot read: {text[:40]!r}.") from exc
