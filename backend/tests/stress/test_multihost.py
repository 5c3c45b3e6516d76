"""Scale-out: a web host and two worker hosts that share only PostgreSQL, Redis and a bucket.

Each host has its own empty data directory (no shared disk). One worker host is SIGKILLed while
the jobs run; every job still completes, and every artifact downloads through the web host with
the sha256 its record holds.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from pathlib import Path

import pytest

from backend.tests.conftest import S3Server, make_database
from backend.tests.integration.stack import Stack, document
from backend.tests.stress.conftest import FULL, scale
from backend.tests.stress.test_runbook import STRESS_ENV, Record, submit_all, wait_all
from quire.queue.embedded_redis import EmbeddedRedis

# Several hosts' worth of processes, and a kill timed against the jobs one host runs: it runs alone (`make test`).
pytestmark = pytest.mark.serial


@pytest.mark.timeout(900 if FULL else 300)
def test_web_and_two_worker_hosts_share_only_postgres_redis_and_a_bucket(
    tmp_path: Path, s3_server: S3Server, record: Record
) -> None:
    database = make_database("postgresql", tmp_path)
    redis_server = EmbeddedRedis(tmp_path / "redis", persistent=False).start()
    env = {**STRESS_ENV, **s3_server.env()}
    hosts: list[Stack] = []
    try:
        # Given a web host and two worker hosts, each with a data directory of its own
        web = Stack(tmp_path / "web", database, redis_server.url, **env).start_web()
        hosts = [web, *(Stack(tmp_path / f"worker-{n}", database, redis_server.url, **env) for n in (1, 2))]
        doomed, survivor = hosts[1], hosts[2]
        doomed_process = doomed.start_worker(processes=1, threads=4)
        survivor.start_worker(processes=1, threads=4)
        total = scale(12, 100)  # the job list's one page holds them all
        payloads = [document("slow:1") for _ in range(total)]
        # When the jobs are submitted to the web host, and one worker host dies while it runs some
        ids, codes = submit_all(web, payloads)
        calls_log = doomed.data_dir / "fake" / "calls.log"
        deadline = time.monotonic() + 120
        while True:
            jobs = web.http.get("/ai-jobs", params={"limit": 100}).json()["items"]
            on_doomed = set(calls_log.read_text().split()) if calls_log.exists() else set()
            held = [j["job_id"] for j in jobs if j["status"] == "running" and j["input"]["sha256"] in on_doomed]
            # The list may be a moment old: a job it shows running there must still run when the host dies.
            # (Waiting for some jobs to finish first could miss it: the other host may take all the rest.)
            if any(web.job(job_id)["status"] == "running" for job_id in held[:1]):
                break
            assert time.monotonic() < deadline, "the doomed host never ran a job"
            time.sleep(0.05)
        doomed.kill(doomed_process)
        views = wait_all(web, ids, timeout=scale(120, 600))
        # Then every job completed, and every artifact downloads through the web host, checked
        assert codes == Counter({202: total})
        assert [v["events"] for v in views.values() if v["status"] != "completed"] == []
        downloads = 0
        for view in views.values():
            for artifact in view["artifacts"]:
                response = web.http.get(artifact["url"])
                assert response.status_code == 200
                assert hashlib.sha256(response.content).hexdigest() == artifact["sha256"]
                downloads += 1
        # And no host kept a document or an artifact on its own disk
        for host in hosts:
            assert not (host.data_dir / "files").exists()
            spool = host.data_dir / "spool"
            assert not spool.exists() or list(spool.iterdir()) == []
        recovered = sum(1 for v in views.values() if "requeued_after_restart" in {e["type"] for e in v["events"]})
        assert recovered >= 1
        record("multi-host", f"{len(views)}/{total} completed on 2 worker hosts, 1 SIGKILLed",
               f"{recovered} jobs recovered from the killed host",
               f"{downloads} artifacts downloaded via the web host, sha256 right; no files on any host")  # fmt: skip
    finally:
        for host in hosts:
            host.stop()
        redis_server.stop()
        database.drop()
