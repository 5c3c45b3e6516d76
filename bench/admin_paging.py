"""Operator job list paging with 100,000 jobs in PostgreSQL: milliseconds per page.

    python bench/admin_paging.py [--jobs 100000] [--pages 20]

Needs a PostgreSQL admin URL (QUIRE_TEST_DATABASE_URL, default the local server); creates and
drops its own database. Prints a markdown table and writes bench/results/admin_paging.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
ADMIN_URL = os.environ.get("QUIRE_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()

    name = f"quire_bench_{uuid.uuid4().hex[:8]}"
    admin = make_url(ADMIN_URL).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    data_dir = tempfile.TemporaryDirectory(prefix=f"{name}-")
    os.environ.update(
        {"QUIRE_DATABASE_URL": url, "QUIRE_DATA_DIR": data_dir.name, "QUIRE_REDIS_URL": "redis://127.0.0.1:1/0"}
    )
    try:
        figures = run(url, args.jobs, args.pages)
    finally:
        data_dir.cleanup()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())
    print("| figure | value |\n|---|---|")
    for key, value in figures.items():
        print(f"| {key} | {value} |")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "admin_paging.json").write_text(json.dumps(figures, indent=2))


def run(url: str, count: int, pages: int) -> dict[str, float | int]:
    from quire.db import Database
    from quire.jobs import operations
    from quire.jobs.models import JobStatus
    from quire.migrations import upgrade

    upgrade(url)
    seed(url, count)
    db = Database(url)
    timings: dict[str, list[float]] = {"first_page": [], "deep_pages": [], "by_state": [], "by_error": []}

    def timed(key: str, flt: operations.JobFilter, cursor: str | None = None) -> str | None:
        started = time.perf_counter()
        _, next_cursor = operations.search(db, flt, limit=50, cursor=cursor)
        timings[key].append((time.perf_counter() - started) * 1000)
        return next_cursor

    everything = operations.JobFilter()
    for _ in range(pages):
        timed("first_page", everything)
    cursor = None
    for _ in range(pages * 10):  # walk 200 pages deep (10,000 jobs)
        cursor = timed("deep_pages", everything, cursor)
    for _ in range(pages):
        timed("by_state", operations.JobFilter(status=JobStatus.DEAD_LETTER))
        timed("by_error", operations.JobFilter(status=JobStatus.DEAD_LETTER, error="timeout"))
    figures: dict[str, float | int] = {"jobs": count, "page_size": 50}
    for key, values in timings.items():
        figures[f"{key}_ms_p50"] = round(statistics.median(values), 2)
        figures[f"{key}_ms_max"] = round(max(values), 2)
    db.dispose()
    return figures


def seed(url: str, count: int) -> None:
    """Insert `count` jobs with COPY: a realistic mix of states, workflows and errors."""
    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    states = ["completed"] * 8 + ["dead_letter", "queued"]
    errors = ["timeout", "upstream_unavailable", "malformed_output"]
    with psycopg.connect(plain) as conn, conn.cursor() as cur:
        columns = (
            "id, workflow, workflow_version, input_ref, input_filename, input_size, input_sha256, "
            "input_content_type, status, attempt, attempt_floor, max_attempts, timeout_s, deadline_s, "
            "deadline_at, available_at, created_at, updated_at, error_code"
        )
        with cur.copy(f"COPY job ({columns}) FROM STDIN".encode()) as copy:
            for i in range(count):
                at = start + timedelta(seconds=i * 7)
                status = states[i % len(states)]
                error = errors[i % len(errors)] if status == "dead_letter" else None
                workflow = "invoice_summary" if i % 3 == 0 else "document_summary"
                copy.write_row((
                    f"bench{i:010d}", workflow, "1", f"uploads/u{i}", "doc.pdf", 1000, "0" * 64, "application/pdf",
                    status, 1, 0, 3, 60.0, 3600.0, at + timedelta(hours=1), at, at, at, error,
                ))  # fmt: skip
        conn.commit()
        cur.execute(b"ANALYZE job")
        conn.commit()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
