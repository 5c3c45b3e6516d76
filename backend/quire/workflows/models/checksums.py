"""Numbers that carry their own check digits, found in text: a pattern proposes, a checksum decides.

Kept apart from `redaction` (which also reads phone numbers, a heavy import) so that the invoice reader can
tell a whole IBAN from a masked one or a lookalike without loading it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from stdnum import iban

# Candidates only; a checksum decides. Groups may be separated by single spaces (IBANs) or dashes (cards).
IBAN_CANDIDATE = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}\b")


def checked_spans(pattern: re.Pattern[str], text: str, is_valid: Callable[[str], bool]) -> Iterator[tuple[int, int]]:
    """Spans of `pattern` matches that pass `is_valid`, each trimmed at a separator if it ran into
    the next group of characters (an IBAN followed by `EUR`), and retried one word later if it began
    too early (a reference number before an IBAN)."""
    position = 0
    while (match := pattern.search(text, position)) is not None:
        start, end = match.span()
        cuts = [end] + [start + i for i in range(end - start - 1, 0, -1) if text[start + i] in " -"]
        valid_end = next((cut for cut in cuts if is_valid(text[start:cut])), None)
        if valid_end is None:
            position = start + 1
            continue
        yield start, valid_end
        position = valid_end


def has_iban(text: str) -> bool:
    """Whether the text prints an IBAN whose check digits hold: not a masked one ("DE89 XXXX XXXX") or a lookalike."""
    return next(checked_spans(IBAN_CANDIDATE, text, iban.is_valid), None) is not None
