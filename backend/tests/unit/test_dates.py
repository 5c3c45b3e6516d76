"""Dates and times people type into filters, as the records compare them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from quire.db import moment


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-06", datetime(2026, 12, 6, tzinfo=UTC)),  # a date is its first moment, in UTC
        ("2026-12-06T10:00", datetime(2026, 12, 6, 10, tzinfo=UTC)),
        ("2026-12-06T10:00+02:00", datetime(2026, 12, 6, 8, tzinfo=UTC)),
        ("2026-12-06T10:00Z", datetime(2026, 12, 6, 10, tzinfo=UTC)),
    ],
)
def test_a_date_or_time_is_an_aware_utc_moment(text: str, expected: datetime) -> None:
    assert moment(text) == expected
    assert moment(text).tzinfo is UTC


@pytest.mark.parametrize("text", ["yesterday", "06/12/2026", "", "0001-01-01T00:00+01:00", "9999-12-31T23:59-01:00"])
def test_anything_else_is_a_value_error_not_a_crash(text: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 (the callers turn any ValueError into a plain 400)
        moment(text)
