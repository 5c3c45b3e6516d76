"""Time per page of text extraction and of each workflow with the local provider.

    python bench/workflows.py [--pages 20] [--repeat 5]

Documents are generated here (a multi-page PDF article, a DOCX, invoices), timed with
time.perf_counter over several repeats, and reported as the median, per page where pages apply.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.tests.documents import FILLER, TOPICS, docx_bytes, make_invoices, pdf_bytes, render  # noqa: E402
from quire.documents.extract import extract  # noqa: E402
from quire.workflows.document_summary import summarize_document  # noqa: E402
from quire.workflows.invoice_summary import summarize_invoice  # noqa: E402
from quire.workflows.models.local import LocalProvider  # noqa: E402


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    sentences = [s for central, supporting in TOPICS for s in central + supporting] + FILLER
    page_lines = [" ".join(sentences[i : i + 2]) for i in range(0, len(sentences), 2)]
    pdf = pdf_bytes(page_lines, pages=args.pages)
    docx = docx_bytes(page_lines * args.pages)
    model = LocalProvider()
    sha = hashlib.sha256(pdf).hexdigest()
    pdf_doc = extract(pdf, "article.pdf", sha)
    invoice_pdf, _ = render(next(i for i in make_invoices(36) if i.doc_type == "pdf"), 0)
    invoice_doc = extract(invoice_pdf, "invoice.pdf", sha)

    figures = {
        "pdf_pages": args.pages,
        "extract_pdf_ms_per_page": median_seconds(lambda: extract(pdf, "a.pdf", sha), args.repeat) * 1000 / args.pages,
        "extract_docx_ms_per_page_equivalent": median_seconds(lambda: extract(docx, "a.docx", sha), args.repeat)
        * 1000
        / args.pages,
        "document_summary_ms_per_page": median_seconds(lambda: summarize_document(pdf_doc, model), args.repeat)
        * 1000
        / args.pages,
        "invoice_summary_ms_per_invoice": median_seconds(lambda: summarize_invoice(invoice_doc, model), args.repeat)
        * 1000,
        "extract_invoice_pdf_ms": median_seconds(lambda: extract(invoice_pdf, "i.pdf", sha), args.repeat) * 1000,
    }
    print("| figure | value |\n|---|---|")
    for key, value in figures.items():
        print(f"| {key} | {value:.2f} |" if isinstance(value, float) else f"| {key} | {value} |")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "workflows.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
