"""Live updates at scale: 1,000 watchers on one web process, streaming versus polling.

    python bench/streams.py [--watchers 1000] [--jobs 100] [--seconds-per-job 0.5]

Each run starts a fresh stack (SQLite, a private Redis, one `quire web`), submits the jobs with
no worker running, lets every watcher settle on its job (watcher i follows job i mod jobs), then
starts one worker (four threads) and waits until every watcher has seen every job complete.

- streams: each watcher holds `GET /ai-jobs/{id}/stream` open on its own connection. The delay of
  an event that carries a new `updated_at` (a transition or a progress write; not the snapshot,
  nor a move in line) is its arrival (wall clock) minus that `updated_at`, which is taken just
  before the commit.
- polling: each watcher polls the job page's status fragment on the page's schedule (2 s, then
  5 s), as a browser without streams does; the delay of a change is the first poll that shows it
  minus the change's event time.

Printed: server CPU (seconds and share of one core over the run), peak RSS of the web process
with the watchers connected, requests made, delay p50/p95/p99, and the machine's 1-minute load
average at the end. Figures only; nothing is asserted.
The load generator shares the machine, so on a busy box the delays include its own queueing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.tests.conftest import make_database  # noqa: E402
from backend.tests.integration.stack import Stack, document, memory_kb  # noqa: E402
from quire.queue.embedded_redis import EmbeddedRedis  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from suite import cpu_seconds, pct  # noqa: E402


class Stamp(msgspec.Struct):
    """The one field of a job view the watchers need; decoding skips the rest (the load generator
    shares the machine, so its own cost per event is kept small)."""

    updated_at: str


STAMP = msgspec.json.Decoder(Stamp)


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


async def stream_watcher(port: int, token: str, job_id: str, delays: list[float], ready: asyncio.Event) -> None:
    """Follow one job's stream on a raw connection (lighter than an HTTP client per watcher)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    writer.write(
        f"GET /ai-jobs/{job_id}/stream HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    await writer.drain()
    event, last = "", ""
    while line := await reader.readline():
        text = line.decode().rstrip("\r\n")
        if text.startswith("event:"):
            event = text[6:].strip()
        elif text.startswith("data:") and event == "job":
            arrived = time.time()
            updated_at = STAMP.decode(text[5:]).updated_at
            # The snapshot, and events that only move the job's place in line, are no commit of it.
            if last and updated_at != last:
                delays.append(arrived - epoch(updated_at))
            last = updated_at
            ready.set()
        elif text.startswith("data:") and event == "end":
            break
    writer.close()


async def polling_watcher(
    http: httpx.AsyncClient, job_id: str, seen: dict[str, float], end: float, errors: list[int]
) -> int:
    """Poll the status fragment on the page's schedule; note when each status was first seen."""
    await asyncio.sleep(random.uniform(0, 2))  # arrivals spread over 2 s, as in bench/suite.py
    requests, since, watched = 0, None, time.monotonic()
    while time.monotonic() < end:
        response = await http.get(f"/jobs/{job_id}/status" + (f"?since={since}" if since else ""))
        requests += 1
        text = response.text
        if 'data-status="' not in text:  # an error answer (the server overloaded): ask again later
            errors.append(response.status_code)
            await asyncio.sleep(2)
            continue
        status = text.split('data-status="', 1)[1].split('"', 1)[0]
        seen.setdefault(status, time.time())
        if status == "completed":
            return requests
        since = since or text.split("?since=", 1)[1].split('"', 1)[0]
        await asyncio.sleep(2 if time.monotonic() - watched < 10 else 5)
    return requests


class Run:
    def __init__(self, mode: str, args: argparse.Namespace, root: Path) -> None:
        self.mode, self.args = mode, args
        self.redis = EmbeddedRedis(root / "redis", persistent=False).start()
        self.database = make_database("sqlite", root)
        # Browsers keep their connections between polls.
        self.stack = Stack(
            root,
            self.database,
            self.redis.url,
            QUIRE_LIVE_MAX_WATCHERS=str(args.watchers + 100),
            QUIRE_KEEP_ALIVE_S="30",
            QUIRE_HEADER_TIMEOUT_S="60",
        )
        self.stack.start_web()
        self.web = self.stack.processes[-1].pid
        self.jobs = [self.stack.submit(document(f"slow:{args.seconds_per_job}")) for _ in range(args.jobs)]

    def close(self) -> None:
        self.stack.stop()
        self.database.drop()
        self.redis.stop()

    async def measure(self) -> dict[str, Any]:
        n = self.args.watchers
        cpu0, wall0, peak = cpu_seconds(self.web), time.monotonic(), 0
        if self.mode == "streams":
            delays: list[float] = []
            readies = [asyncio.Event() for _ in range(n)]
            port, token = self.stack.port, self.stack.token
            tasks = [
                asyncio.create_task(stream_watcher(port, token, self.jobs[i % len(self.jobs)], delays, readies[i]))
                for i in range(n)
            ]
            await asyncio.gather(*(ready.wait() for ready in readies))
            requests = n
        else:
            seen: list[dict[str, float]] = [{} for _ in range(n)]
            errors: list[int] = []
            end = time.monotonic() + 600
            limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
            headers = {"Authorization": f"Bearer {self.stack.token}", "HX-Request": "true"}
            clients = [
                httpx.AsyncClient(base_url=self.stack.base_url, headers=headers, limits=limits, timeout=60)
                for _ in range(n)
            ]
            tasks = [
                asyncio.create_task(polling_watcher(clients[i], self.jobs[i % len(self.jobs)], seen[i], end, errors))
                for i in range(n)
            ]
            await asyncio.sleep(3)
        connected_rss = memory_kb(self.web)
        # In a thread: the watchers must keep reading while the worker starts and takes its first jobs.
        await asyncio.to_thread(self.stack.start_worker, threads=4)
        while not all(task.done() for task in tasks):
            peak = max(peak, memory_kb(self.web))
            await asyncio.sleep(0.5)
        results = [task.result() for task in tasks]
        wall = time.monotonic() - wall0
        cpu = cpu_seconds(self.web) - cpu0
        if self.mode == "polling":
            requests = sum(int(r) for r in results)
            if errors:
                print(f"polling: {len(errors)} error answers ({sorted(set(errors))})", flush=True)
            for client in clients:
                await client.aclose()
            views = {job_id: self.stack.job(job_id) for job_id in self.jobs}
            delays, missed = [], 0
            for i, first_seen in enumerate(seen):
                events = views[self.jobs[i % len(self.jobs)]]["events"]
                for status in ("running", "completed"):
                    if status not in first_seen:  # over between two polls: never seen at all
                        missed += 1
                        continue
                    at = max(epoch(e["at"]) for e in events if e["type"] == status)
                    delays.append(first_seen[status] - at)
        else:
            missed = 0
        return {
            "mode": self.mode,
            "watchers": n,
            "jobs": len(self.jobs),
            "wall_s": round(wall, 1),
            "server_cpu_s": round(cpu, 1),
            "server_cpu_share": round(cpu / wall, 2),
            "web_rss_connected_mb": round(connected_rss / 1024, 1),
            "web_rss_peak_mb": round(max(peak, connected_rss) / 1024, 1),
            "requests": requests,
            "updates": len(delays),
            "changes_never_seen": missed,
            "delay_p50_ms": pct([d * 1000 for d in delays], 0.5),
            "delay_p95_ms": pct([d * 1000 for d in delays], 0.95),
            "delay_p99_ms": pct([d * 1000 for d in delays], 0.99),
            # The machine's load while measuring: on a shared box the delays include its queueing.
            "load_avg_1m": round(os.getloadavg()[0], 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--seconds-per-job", type=float, default=0.5)
    parser.add_argument("--modes", default="streams,polling")
    args = parser.parse_args()
    rows = []
    for mode in args.modes.split(","):
        with tempfile.TemporaryDirectory(prefix=f"quire-bench-{mode}-") as directory:
            run = Run(mode, args, Path(directory))
            try:
                rows.append(asyncio.run(run.measure()))
            finally:
                run.close()
        print(json.dumps(rows[-1]), flush=True)
    keys = list(rows[0])
    print("\n| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
