"""OCR: seconds per page, and invoice field accuracy on scanned copies beside the text layer's.

    python bench/ocr.py [INVOICE_DIR ...] [--receipts DIR] [--languages eng+deu] [--dpi 200]

Each INVOICE_DIR holds PDFs with a text layer and a `truth.json` (as for bench/invoices.py); with
none, the ZUGFeRD PDFs committed under backend/tests/corpus are used. Every PDF is read twice:
from its text layer, and as a scan made from it (rendered at --dpi, then in turn: a noisy,
slightly skewed JPEG; a PNG turned a quarter; an image-only PDF; a multi-page TIFF), so the
difference is what OCR costs. `--receipts DIR` adds the photographed receipts of a folder whose
`truth.json` marks them `"scanned": true`: vendor, date, currency and total, reported on their own.
Scoring and the held-out split are bench/invoices.py's.

`--languages-check` compares, on every scan, how the languages are chosen, side by side: all the
languages on every page (the reference), the languages narrowed after the first page by the languages
Tesseract read it in (no look), and the quick look before each page until the language is told
(documents/ocr.py, `look_at`, which also turns a sideways page before it is read). It prints Tesseract CPU
seconds per page of single-page and multi-page scans for each, and the share of the reference's words
each one reads too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.tests.scans import degrade, encode, page_images  # noqa: E402
from bench.invoices import FIELDS, SROIE_FIELDS, Tally, held_out, labelled, same  # noqa: E402
from quire.documents import ocr as ocr_module  # noqa: E402
from quire.documents.extract import extract  # noqa: E402
from quire.errors import InvalidInput  # noqa: E402
from quire.settings import Settings  # noqa: E402
from quire.workflows.invoice_summary import summarize_invoice  # noqa: E402
from quire.workflows.models.local import LocalProvider  # noqa: E402

CORPUS = ROOT / "backend" / "tests" / "corpus" / "zugferd" / "pdf"
# Scans as people send them, taken in turn: (name, file format, damage).
VARIANTS: list[tuple[str, str, dict[str, Any]]] = [
    ("noisy skewed JPEG", "JPEG", {"skew": 1.2, "noise": 0.002}),
    ("quarter-turned PNG", "PNG", {"turn": 90}),
    ("image-only PDF", "PDF", {"noise": 0.001}),
    ("TIFF", "TIFF", {"skew": -0.7}),
]


def tesseract_cpu_s() -> float:
    """CPU time of finished child processes (each Tesseract run is one, on one thread): what a page
    costs a core, whatever else the machine is doing while the wall clock runs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def read(data: bytes, name: str, languages: str) -> tuple[dict[str, Any], int, float, int]:
    """The invoice result, page count, seconds, and pages read by OCR."""
    started = time.perf_counter()
    try:
        document = extract(data, name, hashlib.sha256(data).hexdigest(), languages=languages)
    except InvalidInput:
        return {}, 1, time.perf_counter() - started, 0
    result = summarize_invoice(document, LocalProvider()).model_dump(mode="json")
    return result, document.pages or 1, time.perf_counter() - started, len(document.ocr_pages)


def scan_of(pdf: bytes, index: int, dpi: int) -> tuple[str, bytes, str]:
    images = page_images(pdf, dpi=dpi)
    label, fmt, damage = VARIANTS[index % len(VARIANTS)]
    if len(images) > 1 and fmt not in ("PDF", "TIFF"):
        label, fmt, damage = VARIANTS[2]  # a PNG or JPEG holds one page: a longer invoice is scanned to a PDF
    pages = [degrade(page, seed=index, **damage) for page in images]
    return label, encode(pages, fmt, dpi=dpi), f"scan.{fmt.lower()}"


# How the languages of a scan's pages are chosen, compared by --languages-check: (name, narrow the
# first page by a quick reading, narrow the next pages by the page read before).
STRATEGIES = [("all languages", False, False), ("narrowed after page 1", False, True), ("quick look", True, True)]


def _keep(page: Any, languages: str) -> str:
    return languages


def read_words(data: bytes, name: str, languages: str, look: bool, narrow: bool) -> tuple[Counter[str], float, int]:
    """The words a scan is read as (a multiset), Tesseract CPU seconds and pages, with the way of
    choosing languages switched as asked."""
    saved = ocr_module.look_at, ocr_module.languages_after
    if not look:
        ocr_module.look_at = lambda image, dpi, languages: ocr_module.Look(languages)  # type: ignore[assignment]
    if not narrow:
        ocr_module.languages_after = _keep  # type: ignore[assignment]
    try:
        cpu = tesseract_cpu_s()
        document = extract(data, name, hashlib.sha256(data).hexdigest(), languages=languages)
        return Counter(w.text for w in document.words), tesseract_cpu_s() - cpu, len(document.ocr_pages)
    except InvalidInput:
        return Counter(), tesseract_cpu_s() - cpu, 0
    finally:
        ocr_module.look_at, ocr_module.languages_after = saved


def languages_check(folders: list[Path], languages: str, dpi: int) -> None:
    # per (strategy, "single"/"multi"): cpu seconds, pages, words agreeing with the reference, reference words
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for folder in folders:
        truth: dict[str, Any] = json.loads((folder / "truth.json").read_text())
        for index, name in enumerate(sorted(truth)):
            path = folder / name
            if not name.endswith(".pdf") or not path.exists():
                continue
            _, scan, scan_name = scan_of(path.read_bytes(), index, dpi)
            reference: Counter[str] = Counter()
            for label, look, narrow in STRATEGIES:
                found, cpu, pages = read_words(scan, scan_name, languages, look, narrow)
                if not pages:
                    break
                reference = reference or found
                row = sums[(label, "single" if pages == 1 else "multi")]
                row[0] += cpu
                row[1] += pages
                row[2] += sum((found & reference).values())
                row[3] += sum(reference.values())
    print(f"languages {languages}, scans at {dpi} dpi; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| languages chosen | scans | pages | Tesseract CPU s/page | words of the all-languages read kept |")
    print("|---|---|---:|---:|---:|")
    for label, _, _ in STRATEGIES:
        for kind in ("single", "multi"):
            cpu, pages, kept, total = sums[(label, kind)]
            if pages:
                print(f"| {label} | {kind}-page | {int(pages)} | {cpu / pages:.2f} | {kept / max(total, 1):.1%} |")


def invoices(folder: Path, languages: str, dpi: int, tallies: dict[str, Tally], ocr: dict[str, float]) -> None:
    truth: dict[str, dict[str, Any]] = json.loads((folder / "truth.json").read_text())
    for index, (name, expected) in enumerate(sorted(truth.items())):
        path = folder / name
        if not name.endswith(".pdf") or not path.exists():
            continue
        part = "held-out" if held_out(name) else "tuning"
        data = path.read_bytes()
        result, pages, seconds, _ = read(data, name, languages)
        tallies[f"{folder.name} text layer ({part})"].add(name, expected, result, pages, seconds)
        tallies[f"{folder.name} text layer (all)"].add(name, expected, result, pages, seconds)
        label, scan, scan_name = scan_of(data, index, dpi)
        cpu = tesseract_cpu_s()
        result, pages, seconds, ocr_pages = read(scan, scan_name, languages)
        ocr["cpu"] += tesseract_cpu_s() - cpu
        tallies[f"{folder.name} scanned ({part})"].add(name, expected, result, pages, seconds)
        tallies[f"{folder.name} scanned (all)"].add(name, expected, result, pages, seconds)
        ocr["pages"] += ocr_pages
        ocr["seconds"] += seconds
        scored = labelled(expected)
        ocr[f"variant:{label}:right"] += sum(same(k, expected.get(k), result.get(k)) for k in scored)
        ocr[f"variant:{label}:fields"] += len(scored)


def receipts(folder: Path, languages: str) -> tuple[dict[str, int], int, float, int]:
    truth: dict[str, dict[str, Any]] = json.loads((folder / "truth.json").read_text())
    right: dict[str, int] = defaultdict(int)
    count, seconds, pages = 0, 0.0, 0
    for name, expected in sorted(truth.items()):
        path = folder / name
        if not expected.get("scanned") or name.endswith(".pdf") or not path.exists():
            continue  # a scanned PDF with a text layer is an invoice above
        result, page_count, spent, _ = read(path.read_bytes(), name, languages)
        count, seconds, pages = count + 1, seconds + spent, pages + page_count
        for key in SROIE_FIELDS:  # what the receipts label (see bench/invoices.py)
            right[key] += same(key, expected.get(key), result.get(key))
    return right, count, seconds, pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="*", type=Path, help="folders of text-layer PDFs with a truth.json")
    parser.add_argument("--receipts", type=Path, help="a folder of photographed receipts with a truth.json")
    parser.add_argument("--languages", default=Settings().ocr_languages, help="Tesseract languages tried")
    parser.add_argument("--dpi", type=int, default=200, help="resolution of the scans made from the PDFs")
    parser.add_argument("--languages-check", action="store_true", help="compare the ways of choosing languages")
    args = parser.parse_args()
    if args.languages_check:
        languages_check(args.sets or [CORPUS], args.languages, args.dpi)
        return
    tallies: dict[str, Tally] = defaultdict(Tally)
    ocr: dict[str, float] = defaultdict(float)
    for folder in args.sets or [CORPUS]:
        invoices(folder, args.languages, args.dpi, tallies, ocr)

    print(f"languages {args.languages}, scans at {args.dpi} dpi\n")
    print(f"| set | docs | {' | '.join(FIELDS)} | overall |")
    print("|---|---:|" + "---:|" * (len(FIELDS) + 1))
    for label, tally in sorted(tallies.items()):
        cells = " | ".join(tally.cell(k) for k in FIELDS)
        print(f"| {label} | {tally.rows} | {cells} | {tally.accuracy():.1%} |")
    print()
    for label in sorted({k.rsplit(" text layer", 1)[0] for k in tallies if " text layer " in k}):
        for part in ("all", "held-out"):
            text, scanned = tallies.get(f"{label} text layer ({part})"), tallies.get(f"{label} scanned ({part})")
            if text and scanned:
                gap = (text.accuracy() - scanned.accuracy()) * 100
                print(f"{label} ({part}): text layer {text.accuracy():.1%}, scanned {scanned.accuracy():.1%}, "
                      f"{gap:.1f} points lower")  # fmt: skip
    for label, _, _ in VARIANTS:
        fields = ocr[f"variant:{label}:fields"]
        if fields:
            print(f"  {label}: {ocr[f'variant:{label}:right'] / fields:.1%} of fields right")
    if ocr["pages"]:
        print(
            f"\nOCR: {ocr['seconds'] / ocr['pages']:.2f} s per page read by OCR (wall clock), "
            f"{ocr['cpu'] / ocr['pages']:.2f} s of Tesseract CPU per page ({int(ocr['pages'])} pages)"
        )
    if args.receipts:
        right, count, seconds, pages = receipts(args.receipts, args.languages)
        if count:
            cells = ", ".join(f"{key} {right[key] / count:.0%}" for key in SROIE_FIELDS)
            overall = sum(right.values()) / (count * len(SROIE_FIELDS))
            print(
                f"\nreceipts ({count} photos): {cells}; overall {overall:.1%}; {seconds / max(pages, 1):.2f} s per page"
            )


if __name__ == "__main__":
    main()
