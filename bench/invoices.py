"""Field accuracy of the local invoice reader on labelled invoice sets, with held-out parts apart.

    python bench/invoices.py [SET_DIR ...] [--show-misses] [--by-author]

Each set is a folder with a `truth.json` (file name -> vendor, invoice_number, issue_date, due_date,
currency, subtotal, tax, total). With no arguments the sets are the ZUGFeRD corpus committed under
backend/tests/corpus (its XML e-invoices, its Factur-X PDFs, its PDFs without XML), our own invoices in
the languages and kinds the real sets lack (backend/tests/corpus/own), invoices written by authors who had
not seen the reader (backend/tests/corpus/blind), the real invoices of invoice2data's
test suite when bench/fetch_invoice2data.py has laid them out under var/invoice2data, and the generated
invoices.
`--by-author` adds a row for each author's set of the blind corpus (its file names' prefix).
`--only` scores the folders given and none of the usual sets: a new set's first score, before anyone reads it.
`--show-misses` lists the tuning parts' misses, never a held-out file nor one of the blind sets that stay unread.
A fixed third of every set, chosen by a hash of the file name, is held out: rules are tuned
on the rest, and the held-out rows are reported apart. Scanned files are skipped when no OCR engine
is installed.

A field is right when the reader's value equals the label, or when both are null. Only labelled fields
are scored: the receipts taken from the SROIE set (marked by their `sroie_labels`) label the company,
date and total alone (with the currency printed beside it), so their other fields are null because
nobody labelled them, not because nothing is printed, and are left out. Amounts compare
as decimals, numbers ignoring spaces and case, vendors after folding case, accents, punctuation and
a trailing company form. A "confidently wrong total" ("bad tot") is a total given (not null) that
differs; "unmarked" counts the wrong fields of every kind given without a review mark, which a person
would have no reason to check.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sys
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.tests.documents import make_invoices, render  # noqa: E402
from quire.documents.extract import extract  # noqa: E402
from quire.errors import InvalidInput  # noqa: E402
from quire.settings import Settings  # noqa: E402
from quire.workflows.invoice_summary import summarize_invoice  # noqa: E402
from quire.workflows.models.local import LocalProvider  # noqa: E402

FIELDS = ["vendor", "invoice_number", "issue_date", "due_date", "currency", "subtotal", "tax", "total"]
SROIE_FIELDS = ["vendor", "issue_date", "currency", "total"]
CORPUS = ROOT / "backend" / "tests" / "corpus" / "zugferd"
OWN = ROOT / "backend" / "tests" / "corpus" / "own"
BLIND = ROOT / "backend" / "tests" / "corpus" / "blind"
INVOICE2DATA = ROOT / "var" / "invoice2data"
# The blind corpus's sets that were scored as they arrived and are never read (its README): `--show-misses` leaves
# their files out, so a listing of misses cannot make them read.
UNREAD = ("qq-", "kk-", "jj-", "ff-", "ee-", "bb-", "ac-")
_FORMS = re.compile(
    r"\b(gmbh|ag|kg|ug|e\.?k|inc|llc|ltd|limited|lp|plc|corp|co|sa|sas|sarl|sl|slu|spa|srl|bv|nv|ltda|"
    r"sp z o o|pty|as|ab|oy)\b"
)


def held_out(name: str) -> bool:
    """A fixed third of every set, the same on every run and machine."""
    return hashlib.sha256(name.encode()).digest()[0] % 3 == 0


def fold(text: str) -> str:
    """Case, accents and punctuation folded away; letters of any script kept (a Greek name is not empty)."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def same_vendor(expected: str, got: str) -> bool:
    a, b = (" ".join(_FORMS.sub(" ", fold(v)).split()) for v in (expected, got))
    return bool(a) and bool(b) and (a == b or (len(b) >= 4 and (a.startswith(b) or b.startswith(a))))


def same(name: str, expected: Any, got: Any) -> bool:
    if expected is None or got is None:
        return expected is None and got is None
    if name in ("subtotal", "tax", "total"):
        try:
            return Decimal(str(expected)) == Decimal(str(got))
        except InvalidOperation:
            return False
    if name == "vendor":
        return same_vendor(str(expected), str(got))
    if name == "invoice_number":
        return fold(str(expected)).replace(" ", "") == fold(str(got)).replace(" ", "")
    return str(expected) == str(got)


def labelled(truth: dict[str, Any]) -> list[str]:
    """The fields a truth entry gives a label for (see the module's docstring)."""
    return SROIE_FIELDS if "sroie_labels" in truth else FIELDS


@dataclass
class Tally:
    right: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    scored: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    rows: int = 0
    totals_given: int = 0
    totals_wrong: int = 0
    # Fields given without a review mark that are wrong: what a person would trust and should not.
    sure_wrong: int = 0
    pages: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def add(self, name: str, truth: dict[str, Any], result: dict[str, Any], pages: int, seconds: float) -> None:
        self.rows += 1
        self.pages += pages
        self.seconds += seconds
        for key in labelled(truth):
            self.scored[key] += 1
            if same(key, truth.get(key), result.get(key)):
                self.right[key] += 1
            else:
                self.misses.append(f"{name} {key}: expected {truth.get(key)!r}, got {result.get(key)!r}")
                self.sure_wrong += result.get(key) is not None and key not in result.get("needs_review", [])
        if result.get("total") is not None:
            self.totals_given += 1
            self.totals_wrong += not same("total", truth.get("total"), result.get("total"))

    def accuracy(self) -> float:
        return sum(self.right.values()) / max(sum(self.scored.values()), 1)

    def cell(self, key: str) -> str:
        """The share of the rows labelled for `key` that the reader got right; "-" when none is."""
        return f"{self.right[key] / self.scored[key]:.0%}" if self.scored[key] else "-"


@cache
def _languages() -> str:
    """The configured OCR languages, read once (settings are read from the environment)."""
    return Settings().ocr_languages


def read(data: bytes, filename: str) -> tuple[dict[str, Any], int, float]:
    started = time.perf_counter()
    try:
        # Scans are read in the configured languages, as a worker reads a job that names none.
        document = extract(data, filename, hashlib.sha256(data).hexdigest(), languages=_languages())
    except InvalidInput:
        return {}, 1, time.perf_counter() - started
    result = summarize_invoice(document, LocalProvider()).model_dump(mode="json")
    return result, document.pages or 1, time.perf_counter() - started


def run_set(
    label: str, folder: Path, truth: dict[str, dict[str, Any]], tallies: dict[str, Tally], by_author: bool = False
) -> None:
    """Score the reader on one labelled folder; `by_author` adds a row per file-name prefix ("gg-"), one author's set
    in the blind corpus."""
    for name, expected in sorted(truth.items()):
        path = folder / name
        if not path.exists() or (expected.get("scanned") and not _ocr_installed()):
            continue
        result, pages, seconds = read(path.read_bytes(), name)
        part = "held-out" if held_out(name) else "tuning"
        kind = f"{label} scans" if expected.get("scanned") else label  # scans are read by OCR: reported apart
        rows = [kind, f"{label} {name.split('-')[0]}-"] if by_author else [kind]
        for row, share in itertools.product(rows, (part, "all")):
            tallies[f"{row} ({share})"].add(name, expected, result, pages, seconds)


def _ocr_installed() -> bool:
    try:
        from quire.documents import ocr
    except ImportError:
        return False
    return bool(ocr.ocr_available())


def einvoice_truth() -> dict[str, dict[str, Any]]:
    """The XML e-invoices' values as their XML states them, a credit note's amounts turned negative: the reader
    gives every credit note's amounts negative, as the blind sets' labels do."""
    path = CORPUS / "xml" / "expected.json"
    truth: dict[str, dict[str, Any]] = json.loads(path.read_text()) if path.exists() else {}
    for values in truth.values():
        if values.get("document_type") == "credit_note":
            for name in ("subtotal", "tax", "total"):
                if values.get(name) is not None and Decimal(values[name]) > 0:
                    values[name] = str(-Decimal(values[name]))
    return truth


def generated(tallies: dict[str, Tally]) -> None:
    for i, invoice in enumerate(make_invoices(36)):
        data, filename = render(invoice, variant=i)
        result, pages, seconds = read(data, filename)
        truth = invoice.truth()
        tallies["generated (all)"].add(f"generated-{i}", truth, result, pages, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sets", nargs="*", type=Path, help="more folders with a truth.json")
    parser.add_argument(
        "--show-misses", action="store_true", help="list the tuning part's misses (never the held-out, nor unread sets)"
    )
    parser.add_argument("--by-author", action="store_true", help="a row per author's set of the blind corpus too")
    parser.add_argument("--only", action="store_true", help="score the folders given and none of the usual sets")
    args = parser.parse_args()
    tallies: dict[str, Tally] = defaultdict(Tally)
    if not args.only:
        usual_sets(tallies, args.by_author)
    for folder in args.sets:
        run_set(folder.name, folder, json.loads((folder / "truth.json").read_text()), tallies)

    header = f"{'set':28} {'docs':>4} " + " ".join(f"{k[:8]:>8}" for k in FIELDS)
    header += f" {'overall':>8} {'bad tot':>8} {'unmarked':>8} {'ms/page':>8}"
    print(header)
    for label, tally in sorted(tallies.items()):
        cells = " ".join(f"{tally.cell(k):>8}" for k in FIELDS)
        wrong = f"{tally.totals_wrong}/{tally.totals_given}"
        ms = tally.seconds * 1000 / max(tally.pages, 1)
        print(f"{label:28} {tally.rows:4} {cells} {tally.accuracy():8.1%} {wrong:>8} {tally.sure_wrong:8} {ms:8.1f}")
        if args.show_misses and label.endswith(("(tuning)", "generated (all)")):
            for miss in (m for m in tally.misses if not m.startswith(UNREAD)):
                print("    " + miss)


def usual_sets(tallies: dict[str, Tally], by_author: bool) -> None:
    """The sets scored on every run: generated, the committed corpora, and invoice2data's where it was fetched."""
    generated(tallies)
    run_set("zugferd xml", CORPUS / "xml", einvoice_truth(), tallies)
    twins = {f"XML-Rechnung__CII__{pdf.stem}.cii.xml": pdf.name for pdf in (CORPUS / "factur-x").glob("*.pdf")}
    facturx = {pdf: einvoice_truth()[xml] for xml, pdf in twins.items() if xml in einvoice_truth()}
    run_set("zugferd factur-x", CORPUS / "factur-x", facturx, tallies)
    run_set("zugferd pdf", CORPUS / "pdf", json.loads((CORPUS / "pdf" / "truth.json").read_text()), tallies)
    run_set("own", OWN, json.loads((OWN / "truth.json").read_text()), tallies)
    run_set("blind", BLIND, json.loads((BLIND / "truth.json").read_text()), tallies, by_author)
    if INVOICE2DATA.is_dir():  # bench/fetch_invoice2data.py lays it out; the labels are committed here
        run_set(
            "invoice2data",
            INVOICE2DATA,
            json.loads((ROOT / "bench" / "corpus" / "invoice2data.json").read_text()),
            tallies,
        )


if __name__ == "__main__":
    main()
