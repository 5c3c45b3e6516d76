"""Batches at scale on a real stack: a 50-file mixed batch, and 1,000 files as a ZIP and as separate parts.

    python bench/batches.py [--files 1000] [--backend sqlite|postgresql] [--skip-finish] [--baseline FILE]

For each: seconds until the 202 (the batch accepted), the batch's JSON view, page and polled
fragment while it runs (p50/p95 ms), seconds until every job finished, and the CSV and XLSX
exports. Prints a markdown table and writes bench/results/batches-<backend>.json with the load
average. With `--baseline` (such a file from an earlier run, of another revision say) it also
prints the seconds to the 202 of both runs side by side, with their ratio and load averages.
Figures, not assertions: they depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "backend" / "tests" / "corpus"

from backend.tests.conftest import ScratchDatabase  # noqa: E402
from backend.tests.documents import zip_of  # noqa: E402
from backend.tests.integration.stack import Stack, document  # noqa: E402
from quire.queue.embedded_redis import EmbeddedRedis  # noqa: E402

Files = list[tuple[str, tuple[str, bytes, str]]]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * (len(ordered) - 1)))], 1) if ordered else float("nan")


def mixed_fifty() -> Files:
    """40 real invoices, 3 corrupt PDFs, 3 unsupported files and a ZIP (3 invoices, a ZIP inside it)."""
    invoices = sorted((CORPUS / "zugferd" / "pdf").glob("*.pdf")) + sorted((CORPUS / "own").glob("*.pdf"))
    files: Files = []
    for i in range(40):
        path = invoices[i % len(invoices)]
        files.append(("file", (f"{i:02d}-{path.name}", path.read_bytes(), "application/pdf")))
    for i in range(3):
        files.append(("file", (f"broken-{i}.pdf", b"%PDF-1.7\n" + os.urandom(2000), "application/pdf")))
        files.append(("file", (f"tool-{i}.bin", b"\x7fELF" + os.urandom(2000), "application/octet-stream")))
    inner = zip_of({"x.pdf": invoices[0].read_bytes()})
    entries = {f"zip/{p.name}": p.read_bytes() for p in invoices[:3]} | {"zip/inner.zip": inner}
    files.append(("file", ("invoices.zip", zip_of(entries), "application/zip")))
    return files


def timed_ms(client: httpx.Client, path: str, **kwargs: Any) -> float:
    started = time.perf_counter()
    response = client.get(path, **kwargs)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def run_batch(stack: Stack, name: str, workflow: str, files: Files, finish: bool) -> dict[str, Any]:
    client = stack.http
    started = time.perf_counter()
    response = client.post("/batches", data={"workflow": workflow}, files=files, timeout=600)
    accepted_s = time.perf_counter() - started
    response.raise_for_status()
    body = response.json()
    batch_id = body["batch_id"]
    html = {"Accept": "text/html"}
    view_ms, page_ms, card_ms = [], [], []
    first_view: dict[str, Any] = {}
    deadline = time.monotonic() + 1800
    while True:
        view_ms.append(timed_ms(client, f"/batches/{batch_id}"))
        page_ms.append(timed_ms(client, f"/batches/{batch_id}", headers=html))
        card_ms.append(timed_ms(client, f"/batches/{batch_id}/card", headers={"HX-Request": "true", **html}))
        view = client.get(f"/batches/{batch_id}").json()
        first_view = first_view or view
        if view["status"] == "completed" or not finish or time.monotonic() > deadline:
            break
        time.sleep(1)
    finished_s = time.perf_counter() - started if view["status"] == "completed" else None
    csv_ms = timed_ms(client, f"/batches/{batch_id}/export.csv", timeout=600)
    xlsx_ms = timed_ms(client, f"/batches/{batch_id}/export.xlsx", timeout=600)
    return {
        "batch": name,
        "files sent": len(files),
        "jobs": len(body["jobs"]),
        "rejected": len(body["rejected"]),
        "accepted in s": round(accepted_s, 2),
        "finished in s": round(finished_s, 1) if finished_s is not None else "not waited for",
        "counts": view["counts"],
        "JSON view p50/p95 ms": f"{pct(view_ms, 0.5)} / {pct(view_ms, 0.95)}",
        "page p50/p95 ms": f"{pct(page_ms, 0.5)} / {pct(page_ms, 0.95)}",
        "polled fragment p50/p95 ms": f"{pct(card_ms, 0.5)} / {pct(card_ms, 0.95)}",
        "CSV export ms": round(csv_ms),
        "XLSX export ms": round(xlsx_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--skip-finish", action="store_true", help="measure admission and the page, not the run")
    parser.add_argument("--baseline", type=Path, help="a results file of an earlier run to compare with")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="quire-bench-batches-"))
    redis_server = EmbeddedRedis(root / "redis", persistent=False).start()
    database = ScratchDatabase(args.backend, root)
    stack = Stack(
        root, database, redis_server.url,
        QUIRE_MODEL_PROVIDER="local", QUIRE_SUBMISSIONS_PER_MINUTE="100000", QUIRE_LOG_JSON="false",
        QUIRE_ADMISSION_MAX_QUEUE_AGE_S="100000", QUIRE_BATCH_MAX_FILES=str(max(1000, args.files)),
    )  # fmt: skip
    results = []
    try:
        stack.start_web()
        stack.start_worker(threads=4)
        finish = not args.skip_finish
        results.append(run_batch(stack, "50 mixed files", "invoice_summary", mixed_fifty(), finish))
        docs = {f"doc-{i:04d}.txt": document() for i in range(args.files)}
        archive: Files = [("file", ("month.zip", zip_of(docs), "application/zip"))]
        results.append(run_batch(stack, f"{args.files:,} documents in one ZIP", "document_summary", archive, finish))
        parts: Files = [("file", (name, data, "text/plain")) for name, data in docs.items()]
        results.append(run_batch(stack, f"{args.files:,} documents as parts", "document_summary", parts, False))
    finally:
        stack.stop()
        redis_server.stop()
        database.drop()
        shutil.rmtree(root, ignore_errors=True)
    keys = list(results[0])
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"Batches on {args.backend}, one worker process with 4 threads, the local provider;")
    print(f"load average {load} on {os.cpu_count()} cores at the end (figures scale with it)\n")
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in results:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    run = {"backend": args.backend, "load_average": load, "results": results}
    (out / f"batches-{args.backend}.json").write_text(json.dumps(run, indent=2))
    if args.baseline is not None:
        side_by_side(json.loads(args.baseline.read_text()), run)


def side_by_side(baseline: dict[str, Any], run: dict[str, Any]) -> None:
    """Seconds to the 202 of an earlier run and of this one, batch by batch."""
    before = {row["batch"]: row for row in baseline["results"]}
    print(f"\nAccepted (seconds to the 202): baseline at load {baseline['load_average']}, this run at load "
          f"{run['load_average']}\n")  # fmt: skip
    print("| batch | baseline s | this run s | ratio |")
    print("|---|---|---|---|")
    for row in run["results"]:
        old = before.get(row["batch"])
        if old is None:
            continue
        was, now = old["accepted in s"], row["accepted in s"]
        ratio = f"{was / now:.1f}x faster" if now else ""
        print(f"| {row['batch']} | {was} | {now} | {ratio} |")


if __name__ == "__main__":
    main()
