"""The stress suite: the cutover runbook at scale. `QUIRE_STRESS=full` runs the full sizes
(`make stress`); otherwise the short sizes run inside the normal test command.

Every case records a row (case, observed result, attempts, evidence); the table is printed at
the end of the run and written to test-results/stress.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

FULL = os.environ.get("QUIRE_STRESS") == "full"
ROWS: list[tuple[str, str, str, str, str]] = []
ROOT = Path(__file__).resolve().parents[3]


def scale(short: int, full: int) -> int:
    return full if FULL else short


@pytest.fixture
def record(request: pytest.FixtureRequest) -> Callable[[str, str, str, str], None]:
    def add(case: str, observed: str, attempts: str, evidence: str) -> None:
        ROWS.append((request.node.name, case, observed, attempts, evidence))

    return add


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not ROWS:
        return
    lines = [
        f"Stress results ({'full' if FULL else 'short'} sizes)",
        "",
        "| test | case | observed result | attempts | evidence |",
        "|---|---|---|---|---|",
        *[f"| {t} | {c} | {o} | {a} | {e} |" for t, c, o, a, e in ROWS],
    ]
    terminalreporter.write_sep("=", "stress results")
    for line in lines:
        terminalreporter.write_line(line)
    out = ROOT / "test-results"
    out.mkdir(exist_ok=True)
    (out / "stress.md").write_text("\n".join(lines) + "\n")
