"""Scans and photos through the real stack: Tesseract in the worker, progress in the job view."""

from __future__ import annotations

import io
import json
import re
import struct
import time
import zlib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pypdf import PdfReader

from backend.tests.conftest import ONE_DATABASE
from backend.tests.integration.conftest import running_stack
from backend.tests.integration.stack import Stack, follow
from backend.tests.integration.test_security import browser_session
from backend.tests.scans import degrade, encode, page_images
from quire.queue.embedded_redis import EmbeddedRedis

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "zugferd" / "pdf"
TRUTH = json.loads((CORPUS / "truth.json").read_text())


# Reading is the same on either database (their transitions are tested on both elsewhere).
@pytest.fixture(scope="module", params=ONE_DATABASE)
def ocr_stack(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """A web and a worker with the offline `local` provider; OCR tries English and German only, for speed."""
    root = tmp_path_factory.mktemp(f"ocr-{request.param}")
    env = {"QUIRE_MODEL_PROVIDER": "local", "QUIRE_OCR_LANGUAGES": "eng+deu"}
    with running_stack(request.param, redis_server, root, **env) as stack:
        yield stack


def _submit(stack: Stack, filename: str, data: bytes, **form: str) -> str:
    response = stack.http.post(
        "/ai-jobs",
        data={"workflow": "invoice_summary", **form},
        files={"file": (filename, data, "application/octet-stream")},
    )
    assert response.status_code == 202, response.text
    job_id: str = response.json()["job_id"]
    return job_id


def _scan(name: str, fmt: str, dpi: int = 150, **damage: Any) -> bytes:
    pages = page_images((CORPUS / name).read_bytes(), dpi=dpi, pages=1)
    return encode([degrade(page, **damage) for page in pages], fmt, dpi=dpi)


@pytest.mark.parametrize(
    ("name", "fmt", "damage"),
    [
        ("d05.pdf", "JPEG", {"skew": 1.5, "noise": 0.002}),
        ("d01.pdf", "PNG", {"turn": 90}),
        ("d05.pdf", "PDF", {"noise": 0.001}),
    ],
    ids=["noisy-skewed-jpeg", "quarter-turned-png", "image-only-pdf"],
)
def test_a_scanned_invoice_is_read_by_ocr(ocr_stack: Stack, name: str, fmt: str, damage: dict[str, Any]) -> None:
    # Given a scan of a real invoice, damaged as scanners and phones damage pages
    truth = TRUTH[name]
    job_id = _submit(ocr_stack, f"scan.{fmt.lower()}", _scan(name, fmt, **damage))
    # When the worker reads it
    view = ocr_stack.wait(job_id, timeout=60)
    # Then the invoice's fields come from OCR, with the recognised text and a searchable PDF beside them
    assert view["status"] == "completed", view["events"]
    result = ocr_stack.http.get(view["artifact"]["url"]).json()["result"]
    assert result["source"] == "ocr"
    assert Decimal(result["total"]) == Decimal(truth["total"])
    assert result["invoice_number"] == truth["invoice_number"]
    assert result["issue_date"] == truth["issue_date"]
    names = {a["name"] for a in view["artifacts"]}
    assert names == {
        "invoice_summary.json",
        "invoice_summary.md",
        "invoice_summary.txt",
        "invoice_summary-searchable.pdf",
    }
    text = ocr_stack.http.get(f"/ai-jobs/{job_id}/artifacts/invoice_summary.txt").text
    assert truth["invoice_number"] in text
    searchable = ocr_stack.http.get(f"/ai-jobs/{job_id}/artifacts/invoice_summary-searchable.pdf").content
    assert truth["invoice_number"] in (PdfReader(io.BytesIO(searchable)).pages[0].extract_text() or "")
    assert view["progress"] == {"done": 1, "total": 1, "unit": "pages", "message": "Read 1 of 1 pages"}


def _three_pages() -> bytes:
    """An image-only PDF of three pages. After the first, pages are read side by side on the machine's
    cores, so the third holds the second's text twice: it is still being read when the second is done,
    and "2 of 3" is there to be seen."""
    page = page_images((CORPUS / "d05.pdf").read_bytes(), dpi=150, pages=1)[0]
    long = Image.new("L", (page.width, 2 * page.height), 255)
    long.paste(page, (0, 0))
    long.paste(page, (0, page.height))
    return encode([page, page, long], "PDF", dpi=150)


def test_a_three_page_scan_shows_its_progress_page_by_page(ocr_stack: Stack) -> None:
    # Given an image-only PDF of three pages
    job_id = _submit(ocr_stack, "three.pdf", _three_pages())
    # When the job view is read while the worker reads the pages
    seen: list[tuple[int, int]] = []
    deadline = time.monotonic() + 60
    view = ocr_stack.job(job_id)
    while view["status"] in ("queued", "running") and time.monotonic() < deadline:
        progress = view["progress"]
        if progress is not None and (not seen or seen[-1] != (progress["done"], progress["total"])):
            seen.append((progress["done"], progress["total"]))
            assert progress["unit"] == "pages"
            assert progress["message"].startswith(("Reading page", "Read 3 of 3"))
        time.sleep(0.05)
        view = ocr_stack.job(job_id)
    # Then it advanced in order to 3 of 3, and the completed job keeps the last count. Pages after the
    # first are read side by side and may finish together, so 2 of 3 can be overtaken before it is written;
    # 1 of 3 stays for the length of the third page's reading.
    assert view["status"] == "completed", view["events"]
    final = view["progress"]
    seen.append((final["done"], final["total"]))
    assert {(1, 3), (3, 3)} <= set(seen), seen
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_a_scans_stream_sends_its_page_progress_in_order_then_end(ocr_stack: Stack) -> None:
    # Given an image-only PDF of three pages, followed by its stream from the moment it is accepted
    job_id = _submit(ocr_stack, "three.pdf", _three_pages())
    # When the worker reads it page by page
    events = follow(ocr_stack.http, f"/ai-jobs/{job_id}/stream", timeout=90)
    # Then the stream tells the pages as they are read (two finishing together are told once), then the
    # completion, then `end`
    assert [name for name, _ in events][-1] == "end"
    views = [data for name, data in events if name == "job"]
    running = [view["progress"] for view in views if view["status"] == "running" and view["progress"]]
    done = [progress["done"] for progress in running]
    assert 1 in done, running
    assert done == sorted(done)
    assert all(progress["total"] == 3 and progress["unit"] == "pages" for progress in running)
    assert views[-1]["status"] == "completed"
    # And the last event is exactly what the database holds
    assert views[-1] == ocr_stack.job(job_id)


def test_a_scans_preview_is_the_page_as_read_with_each_box_on_its_words(ocr_stack: Stack) -> None:
    # Given a scan uploaded a quarter turn off, read by OCR
    job_id = _submit(ocr_stack, "turned.png", _scan("d01.pdf", "PNG", turn=90))
    assert ocr_stack.wait(job_id, timeout=60)["status"] == "completed"
    turned = Image.open(io.BytesIO(_scan("d01.pdf", "PNG", turn=90)))
    assert turned.width > turned.height
    # When its owner opens the job page
    owner = browser_session(ocr_stack, "owner@example.com")
    page = owner.get(f"/jobs/{job_id}").text
    # Then the preview shows the page upright, as OCR read it, with the reader's boxes on it
    assert 'data-preview="pages"' in page
    view_box = re.search(r'<svg viewBox="0 0 ([\d.]+) ([\d.]+)"[^>]*data-page="1"', page)
    assert view_box is not None, page
    width_pt, height_pt = (float(v) for v in view_box.groups())
    assert height_pt > width_pt
    rendered = owner.get(f"/jobs/{job_id}/preview/1")
    assert rendered.status_code == 200
    image = Image.open(io.BytesIO(rendered.content)).convert("L")
    assert image.height > image.width
    # And each box outlines printed words (grey ones too), not blank paper
    boxes = re.findall(r'data-box="(\w+)"\s+x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"', page)
    assert "total" in {name for name, *_ in boxes}, page
    scale = image.width / width_pt
    for name, *numbers in boxes:
        x, y, w, h = (float(v) * scale for v in numbers)
        inside = image.crop((round(x), round(y), round(x + w), round(y + h)))
        ink = sum(1 for value in inside.get_flattened_data() if value < 200) / max(inside.width * inside.height, 1)
        assert ink > 0.04, (name, ink)


def _png_declaring(width: int, height: int) -> bytes:
    """A PNG whose header claims a size far beyond its data: a decompression bomb's signature."""
    small = encode([Image.new("L", (8, 8), 255)], "PNG")
    chunk = b"IHDR" + struct.pack(">II", width, height) + small[24:29]
    return small[:8] + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk)) + small[33:]


@pytest.mark.parametrize(
    ("filename", "data", "sentence"),
    [
        ("blank.png", encode([degrade(Image.new("L", (1240, 1754), 255), noise=0.0005)], "PNG"), "found no text"),
        ("bomb.png", _png_declaring(60_000, 60_000), "million pixels"),
    ],
    ids=["blank", "decompression-bomb"],
)
def test_unreadable_images_end_in_invalid_input_with_a_sentence(
    ocr_stack: Stack, filename: str, data: bytes, sentence: str
) -> None:
    view = ocr_stack.wait(_submit(ocr_stack, filename, data), timeout=60)
    assert view["status"] == "dead_letter"
    assert [e["code"] for e in view["errors"]] == ["invalid_input"]
    assert sentence in view["events"][-1]["detail"]


def test_a_job_names_its_documents_language(ocr_stack: Stack) -> None:
    data = _scan("d05.pdf", "PNG")
    refused = ocr_stack.http.post(
        "/ai-jobs",
        data={"workflow": "invoice_summary", "language": "tlh"},
        files={"file": ("scan.png", data, "image/png")},
    )
    assert refused.status_code == 422
    assert refused.json()["code"] == "unknown_language"
    view = ocr_stack.wait(_submit(ocr_stack, "scan.png", data, language="de"), timeout=60)
    assert view["status"] == "completed", view["events"]
