"""The baseline: plain Dramatiq running the same actor body as Quire (read the document, extract
its text, run the workflow, write the two artifacts) with no job record at all.

Run by bench/suite.py as `dramatiq bench.raw_dramatiq --processes 1 --threads N`.
"""

from __future__ import annotations

import json
import os
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
    counter.rpush("raw:done_at", time.time())
