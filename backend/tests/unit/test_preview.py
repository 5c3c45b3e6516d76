"""The preview outlines each invoice field where the reader found it, on the page it was found."""

from __future__ import annotations

from quire.web.preview import FieldBox, field_boxes

RESULT = {
    "needs_review": ["total"],
    "fields": {
        "vendor": {"confidence": 0.9, "page": 1, "text": "Bei Spiel GmbH", "bbox": [56.0, 70.5, 140.0, 82.0]},
        "total": {"confidence": 0.6, "page": 2, "text": "Total 571,04", "bbox": [400, 700, 520, 712]},
        "currency": {"confidence": 0.9, "page": 1, "text": "EUR"},
    },
}


def test_boxes_are_in_points_from_the_top_left_of_their_own_page() -> None:
    assert field_boxes(RESULT, 1) == (FieldBox("vendor", 56.0, 70.5, 84.0, 11.5, review=False),)
    assert field_boxes(RESULT, 2) == (FieldBox("total", 400.0, 700.0, 120.0, 12.0, review=True),)
    assert field_boxes(RESULT, 3) == ()


def test_a_summary_or_a_field_without_a_box_has_none() -> None:
    assert field_boxes(None, 1) == ()
    assert field_boxes({"title": "Report"}, 1) == ()
