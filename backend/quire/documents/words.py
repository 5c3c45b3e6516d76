"""A word on a page with its box: what text layers and OCR both produce, and the invoice reader reads.

Its own module so that OCR and extraction can share it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Word:
    """One word on a page, with its box in points from the page's top-left corner.

    `confidence` is 1.0 for a PDF's text layer and the OCR engine's confidence (0-1) for a scan.
    """

    text: str
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float = 1.0
