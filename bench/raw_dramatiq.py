"""The baseline: plain Dramatiq running the same actor body as Quire (read the document, extract
its text, run the workflow, write the two artifacts) with no job record at all.

Run by bench/suite.py as `python -m bench.raw_dramatiq THREADS IDLE_POLL_MS`: one process, a
Dramatiq worker with the same threads and the same idle poll (`worker_timeout`) as Quire's.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker

from quire.documents.extract import extract
from quire.documents.storage import LocalStorage
from quire.workflows.models.local import LocalProvider
from quire.workflows.registry import get_workflow

URL = os.environ["BENCH_REDIS_URL"]
broker = RedisBroker(url=URL, middleware=[])
dramatiq.set_broker(broker)
counter = redis.Redis.from_url(URL)
storage = LocalStorage(Path(os.environ["BENCH_DIR"]) / "raw-files")
workflow = get_workflow("document_summary")
model = LocalProvider()


@dramatiq.actor(queue_name="raw", actor_name="raw_process")
def raw_process(document_path: str, sha256: str, enqueued_at: float) -> None:
    picked = time.time()
    document = extract(Path(document_path).read_bytes(), "bench.txt", sha256)
    result = workflow.run(document, model)
    key = f"raw/{os.getpid()}-{time.monotonic_ns()}"
    storage.put_bytes(f"{key}/document_summary.json", json.dumps(result.model_dump(mode="json")).encode())
    storage.put_bytes(f"{key}/document_summary.md", workflow.report(result).encode())
    counter.rpush("raw:pickup", picked - enqueued_at)
    # This process's CPU so far: the suite takes the difference between the first and last job.
    counter.rpush("raw:cpu_at", time.process_time())
    counter.rpush("raw:done_at", time.time())


def main() -> None:
    threads, idle_poll_ms = int(sys.argv[1]), int(sys.argv[2])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker = dramatiq.Worker(broker, worker_threads=threads, worker_timeout=idle_poll_ms)
    worker.start()
    stop.wait()
    worker.stop()


if __name__ == "__main__":
    main()
