"""Scans made from real PDFs, as a scanner or phone would: rendered to pixels, turned, noisy, compressed.

The tests and the OCR benchmark submit these instead of the PDFs' text layers.
"""

from __future__ import annotations

import io
import random

import pypdfium2 as pdfium
from PIL import Image, ImageFilter


def page_images(pdf: bytes, dpi: int = 200, pages: int | None = None) -> list[Image.Image]:
    """The PDF's pages as grey images, the way a flatbed scanner sees them."""
    document = pdfium.PdfDocument(pdf)
    try:
        count = len(document) if pages is None else min(pages, len(document))
        return [document[i].render(scale=dpi / 72, grayscale=True).to_pil().convert("L") for i in range(count)]
    finally:
        document.close()


def degrade(image: Image.Image, skew: float = 0.0, turn: int = 0, noise: float = 0.0, seed: int = 0) -> Image.Image:
    """A slight skew (degrees), a quarter turn (90/180/270, clockwise), speckle noise and a little blur."""
    out = image
    if skew:
        out = out.rotate(skew, expand=True, fillcolor=255, resample=Image.Resampling.BICUBIC)
    if noise:
        rng = random.Random(seed)
        pixels = out.load()
        assert pixels is not None
        width, height = out.size
        for _ in range(int(width * height * noise)):
            x, y = rng.randrange(width), rng.randrange(height)
            pixels[x, y] = rng.choice((0, 255))
        out = out.filter(ImageFilter.GaussianBlur(0.4))
    if turn:
        out = out.rotate(-turn, expand=True)
    return out


def encode(images: list[Image.Image], fmt: str, dpi: int = 200, quality: int = 70) -> bytes:
    """Images as one file: PNG/JPEG/WEBP (first page), TIFF or PDF (every page; a PDF of images has no text)."""
    buffer = io.BytesIO()
    first, rest = images[0], images[1:]
    if fmt in ("TIFF", "PDF"):
        options = {"resolution": float(dpi)} if fmt == "PDF" else {"dpi": (dpi, dpi), "compression": "tiff_lzw"}
        first.save(buffer, format=fmt, save_all=True, append_images=rest, **options)
    elif fmt == "JPEG":
        first.save(buffer, format=fmt, quality=quality, dpi=(dpi, dpi))
    else:
        first.save(buffer, format=fmt, dpi=(dpi, dpi))
    return buffer.getvalue()
