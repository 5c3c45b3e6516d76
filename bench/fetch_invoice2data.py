"""Lay out the real invoices shipped in the test suite of invoice2data (MIT licence) for bench/invoices.py.

    python bench/fetch_invoice2data.py [TARGET]      (default: var/invoice2data)

The files come from two of the package's source archives on PyPI, checked against their SHA-256, and are
not committed here: bench/corpus/invoice2data.json holds our labels for them (read from the page, as
bench/corpus/SOURCES.md says) and is copied beside them as the set's truth.json. Nothing was tuned on this
set before it was measured; a fixed part of it stays held out (bench/invoices.py).
"""

from __future__ import annotations

import hashlib
import io
import shutil
import sys
import tarfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PYPI = "https://files.pythonhosted.org/packages"
# (archive, its SHA-256, {path inside it: file name here})
ARCHIVES = [
    (
        f"{PYPI}/0c/38/e2f5b9e98a219c251594b1ffca2da66d8b8981233141d42bf43695e48455/invoice2data-0.4.0.tar.gz",
        "d84f2384903ff38e3ba9fb38104d4dbc9016b6559a848b8134691e0d3796c2c8",
        {
            f"invoice2data-0.4.0/tests/compare/{name}": name
            for name in (
                "AmazonWebServices.pdf",
                "FlipkartInvoice.pdf",
                "NetpresseInvoice.pdf",
                "Orlen.txt",
                "QualityHosting.pdf",
                "SammyMaystoneLinesTest.pdf",
                "free_fiber.pdf",
                "oyo.pdf",
            )
        }
        | {"invoice2data-0.4.0/LICENSE.txt": "LICENSE.txt"},
    ),
    (
        f"{PYPI}/92/cd/1c098f745f9d66090e2b0234edec173902ad6fcb67c86f9d3375fe965422/invoice2data-0.2.88.tar.gz",
        "c781bb2964d1b50e14890f00f4692e807560dc3997f9bf1404ffc57ab9348749",
        {"invoice2data-0.2.88/invoice2data/test/pdfs/2015-01-29 PAYPAL ENVATO MKPL EN 4029357733 AU.pdf": "envato.pdf"},
    ),
]


def fetch(target: Path) -> None:
    if target.exists() and any(target.iterdir()) and not (target / "truth.json").exists():
        sys.exit(f"{target} exists and holds no set laid out by this script: give an empty or new folder")
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for url, sha256, members in ARCHIVES:
        data = httpx.get(url, timeout=60, follow_redirects=True).raise_for_status().content
        if hashlib.sha256(data).hexdigest() != sha256:
            sys.exit(f"{url}: the archive's SHA-256 is not the one recorded here")
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member, name in members.items():
                source = archive.extractfile(member)
                if source is None:
                    sys.exit(f"{url}: {member} is missing")
                (staging / name).write_bytes(source.read())
    shutil.copy(ROOT / "bench" / "corpus" / "invoice2data.json", staging / "truth.json")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)  # last: the Makefile fetches again while the folder is missing
    print(f"{len(list(target.iterdir())) - 2} invoices in {target}")


if __name__ == "__main__":
    fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "var" / "invoice2data")
