"""Pickup latency and throughput of no-op (`success`) jobs with one worker process.

Runs against a private redis-server and a fresh SQLite database (or QUIRE_DATABASE_URL), prints a
markdown table and writes the figures as JSON under bench/results/.

    python bench/throughput.py [--jobs 200] [--threads 4] [--latency-samples 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--latency-samples", type=int, default=30)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="quire-bench-"))
    os.environ.update({"QUIRE_DATA_DIR": str(workdir / "var"), "QUIRE_MODEL_PROVIDER": "fake", "QUIRE_ENV": "test"})
    from quire.queue.embedded_redis import EmbeddedRedis

    redis_server = EmbeddedRedis(workdir / "redis", persistent=False).start()
    os.environ["QUIRE_REDIS_URL"] = redis_server.url
    # Imported only now: the broker and the engine read the environment set above.
    from sqlmodel import col, select

    from quire.db import session_scope
    from quire.jobs import service
    from quire.jobs.models import Job, JobEvent, JobStatus
    from quire.migrations import upgrade
    from quire.settings import get_settings

    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.resolved_database_url)
    upload = service.store_upload("bench.txt", open_document(workdir))

    def submit_many(n: int) -> list[str]:
        return [service.submit("document_summary", upload, service.Limits()).job.id for _ in range(n)]

    def wait_all(ids: list[str], timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with session_scope() as session:
                done = session.exec(select(Job.id).where(col(Job.id).in_(ids), Job.status == JobStatus.COMPLETED)).all()
            if len(done) == len(ids):
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"only {len(done)} of {len(ids)} jobs completed")
            time.sleep(0.01)

    def event_times(ids: list[str], kind: str) -> dict[str, float]:
        with session_scope() as session:
            rows = session.exec(select(JobEvent).where(col(JobEvent.job_id).in_(ids), JobEvent.type == kind)).all()
        return {row.job_id: row.at.timestamp() for row in rows}

    def start_worker() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-m", "quire", "worker", "--processes", "1", "--threads", str(args.threads)],
            stdout=(workdir / "worker.log").open("ab"),
            stderr=subprocess.STDOUT,
        )
        time.sleep(2)  # let the worker boot and go idle
        return process

    def stop_worker(process: subprocess.Popen[bytes]) -> None:
        process.terminate()
        process.wait(timeout=60)

    worker = start_worker()
    try:
        # Pickup latency: one job at a time into an idle worker, accepted -> running.
        latencies = []
        for _ in range(args.latency_samples):
            ids = submit_many(1)
            wait_all(ids)
            queued, running = event_times(ids, "queued"), event_times(ids, "running")
            latencies.append((running[ids[0]] - queued[ids[0]]) * 1000)
            time.sleep(0.2)  # idle again
        # End to end: a burst submitted while the worker runs, first accepted -> last completed.
        started = time.monotonic()
        ids = submit_many(args.jobs)
        submitted = time.monotonic() - started
        wait_all(ids)
        queued, completed = event_times(ids, "queued"), event_times(ids, "completed")
        end_to_end = max(completed.values()) - min(queued.values())
        # Drain: the same burst waiting in the queue before the worker starts, first running -> last completed.
        stop_worker(worker)
        ids = submit_many(args.jobs)
        worker = start_worker()
        wait_all(ids)
        running, completed = event_times(ids, "running"), event_times(ids, "completed")
        drain = max(completed.values()) - min(running.values())
    finally:
        stop_worker(worker)
        redis_server.stop()

    latencies.sort()
    figures = {
        "database": settings.resolved_database_url.split(":", 1)[0],
        "worker_processes": 1,
        "worker_threads": args.threads,
        "jobs": args.jobs,
        "end_to_end_jobs_per_s": round(args.jobs / end_to_end, 1),
        "submit_jobs_per_s": round(args.jobs / submitted, 1),
        "drain_jobs_per_s": round(args.jobs / drain, 1),
        "pickup_latency_ms_p50": round(statistics.median(latencies), 1),
        "pickup_latency_ms_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        "pickup_latency_samples": len(latencies),
    }
    print("| figure | value |\n|---|---|")
    for key, value in figures.items():
        print(f"| {key} | {value} |")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "throughput.json").write_text(json.dumps(figures, indent=2))


def open_document(workdir: Path):  # type: ignore[no-untyped-def]
    path = workdir / "bench.txt"
    path.write_text("A short document for a no-op job. It has two sentences and a few words.\n")
    return path.open("rb")


if __name__ == "__main__":
    main()
