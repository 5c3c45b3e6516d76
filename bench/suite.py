"""Quire's benchmark suite: one command, a markdown table, a JSON file.

    python bench/suite.py [--jobs 2000] [--rounds 3] [--rss-jobs 10000] [--watchers 1000] [--skip PARTS]

1. End-to-end no-op throughput (jobs/s), worker CPU per job and transactions per job, Quire vs raw
   Dramatiq running the same actor body, same Redis, one process, same threads; SQLite and
   PostgreSQL; then 2 and 4 worker processes on PostgreSQL.
2. Idle pickup latency p50/p95 (enqueue to running) and the idle worker's CPU share, Quire vs raw
   Dramatiq.
3. API, loaded by Debian's compiled `wrk` (its own CPU share is printed, and the server's beside
   every figure): POST /ai-jobs and GET /ai-jobs/{id} requests/s and p50/p99 at 8 and 64
   connections vs GET /healthz (a hello-world route through the same middleware) on the same
   server, with `quire web --workers 1` and `--workers 2`.
4. 1,000 simulated browsers watching jobs on the adaptive polling schedule: server CPU share, p99.
5. Worker RSS over 10,000 jobs: start, end, peak.

Ratios compare runs made side by side on the same machine; figures are printed, not asserted.
Parts 1 and 2 run `--rounds` times, raw Dramatiq and Quire taking turns: a drain's figures move by a fifth from
one run to the next on a shared machine, so each figure is the median of the rounds, and each ratio the median of
the rounds' own ratios, printed with their lowest and highest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import redis
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PG_ADMIN = os.environ.get("QUIRE_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
DOC = b"A short document for a no-op job. It has two sentences and a few words in it.\n"

from backend.tests.conftest import ScratchDatabase  # noqa: E402
from backend.tests.integration.stack import FAST_TIMERS, Stack, child_pids, memory_kb  # noqa: E402
from quire.queue.embedded_redis import EmbeddedRedis  # noqa: E402
from quire.settings import Settings  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * (len(ordered) - 1)))], 2) if ordered else float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> tuple[float, float]:
    """All CPUs' busy and total time so far (from /proc/stat), to tell a run the machine bounded."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields) - idle, sum(fields)


def busy_share(before: tuple[float, float]) -> float:
    """The machine's busy share of all its CPUs since `before` (1.0: every core busy)."""
    busy, total = machine_busy()
    return round((busy - before[0]) / max(1.0, total - before[1]), 2)


def tree_cpu_seconds(pid: int) -> float:
    """CPU of a process and of its children (a supervisor and its worker or web processes)."""
    total = 0.0
    for each in [pid, *child_pids(pid)]:
        with contextlib.suppress(OSError):  # a process that just exited
            total += cpu_seconds(each)
    return total


# How long a worker may take to become ready: on a machine shared with other work, much longer than
# the test suite's 30 s.
STARTUP_S = 300
WRK = shutil.which("wrk") or "wrk"  # `make bench` installs it (Debian's package) when missing
# wrk's report, as one JSON line (its Lua `done` hook); status errors are answers >= 400.
WRK_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests": %d, "duration_us": %d, "socket_errors": %d, "status_errors": %d, '
    .. '"p50_us": %d, "p99_us": %d}\\n', summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout,
    e.status, latency:percentile(50), latency:percentile(99)))
end
"""


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.dir = Path(tempfile.mkdtemp(prefix="quire-bench-"))
        self.redis = EmbeddedRedis(self.dir / "redis", persistent=False).start()
        self.results: dict[str, Any] = {}

    # -- stacks --------------------------------------------------------------------------------

    def stack(self, backend: str, name: str) -> Stack:
        root = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.dir))  # a round's stack beside the last one's
        database = ScratchDatabase(backend, root)
        self._dbs = [*getattr(self, "_dbs", []), database]
        url = f"redis://127.0.0.1:{self.redis.port}/{len(self._dbs) % 16}"
        redis.Redis.from_url(url).flushdb()
        stack = Stack(
            root, database, url,
            QUIRE_MODEL_PROVIDER="local", QUIRE_SUBMISSIONS_PER_MINUTE="10000000",
            QUIRE_LEASE_SECONDS="30", QUIRE_LOG_JSON="false",
            QUIRE_ADMISSION_MAX_QUEUE_AGE_S="100000",
        )  # fmt: skip
        # The test suite's fast timers (recovery every 0.3 s, a 20 ms idle poll, ...) are not what
        # Quire ships with: the benchmark measures the defaults unless the environment sets them.
        for name in FAST_TIMERS:
            if name in os.environ:
                stack.env[name] = os.environ[name]
            else:
                stack.env.pop(name)
        return stack

    def submitter(self, stack: Stack) -> subprocess.Popen[str]:
        """A helper process pointed at the stack that accepts jobs through the service layer.

        It stays up, like the web app does, so a pickup-latency sample does not include the
        start of a Python process or its first Redis connection.
        """
        code = (
            "import sys, io\n"
            "from quire.bootstrap import bootstrap\n"
            "from quire.jobs import service\n"
            "quire = bootstrap()\n"
            "from quire.accounts.service import user_by_email\n"
            "owner = user_by_email(quire.db, 'owner@example.com').user_id\n"
            f"document = io.BytesIO({DOC!r})\n"
            "upload = service.store_upload(quire.settings, quire.storage, quire.db, 'bench.txt', document, owner)\n"
            "def one():\n"
            "    submitted = service.submit(\n"
            "        quire.settings, quire.db, quire.dispatcher, 'document_summary', upload, service.Limits(), owner)\n"
            "    return submitted.job.id\n"
            "for line in sys.stdin:\n"
            "    print(' '.join(one() for _ in range(int(line))), flush=True)\n"
        )
        return subprocess.Popen(
            [sys.executable, "-c", code], env=stack.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def submit_direct(self, submitter: subprocess.Popen[str], n: int) -> list[str]:
        assert submitter.stdin is not None
        assert submitter.stdout is not None
        submitter.stdin.write(f"{n}\n")
        submitter.stdin.flush()
        return submitter.stdout.readline().split()

    def job_events(self, stack: Stack, kind: str) -> list[float]:
        from sqlalchemy import create_engine, text

        engine = create_engine(stack.database.url)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT at FROM job_event WHERE type = :k"), {"k": kind}).all()
        engine.dispose()
        stamps = []
        for (value,) in rows:
            moment = datetime.fromisoformat(value) if isinstance(value, str) else value
            stamps.append((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())
        return stamps

    def wait_completed(self, stack: Stack, n: int, timeout: float = 900) -> None:
        from sqlalchemy import create_engine, text

        engine = create_engine(stack.database.url)
        deadline = time.monotonic() + timeout
        while True:
            with engine.connect() as conn:
                done = conn.execute(text("SELECT count(*) FROM job WHERE status = 'completed'")).scalar_one()
            if done >= n:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"only {done}/{n} completed")
            time.sleep(0.05)
        engine.dispose()

    def xacts(self, stack: Stack) -> int:
        if stack.database.backend != "postgresql":
            return 0
        url = make_url(PG_ADMIN).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s", (stack.database.name,)
            ).fetchone()
        return int(row[0]) if row else 0

    # -- 1 and 2: Quire vs raw Dramatiq -------------------------------------------------------

    def drain(self, stack: Stack, processes: int, n: int) -> dict[str, Any]:
        """N jobs waiting, then `processes` worker processes drain them: jobs/s from the first
        attempt started to the last completed, and the workers' CPU per job (from ready to done)."""
        submitter = self.submitter(stack)
        done_before = len(self.job_events(stack, "completed"))
        self.submit_direct(submitter, n)
        submitter.stdin.close()  # type: ignore[union-attr]
        submitter.wait(30)
        before = self.xacts(stack)
        supervisor = stack.start_worker(processes=processes, threads=self.args.threads, within=STARTUP_S)
        cpu_ready, machine, ready_at = tree_cpu_seconds(supervisor.pid), machine_busy(), time.monotonic()
        self.wait_completed(stack, done_before + n)
        cpu = tree_cpu_seconds(supervisor.pid) - cpu_ready
        # Both shares over the same window as the CPU: from ready until the drain was seen done.
        window_s, machine_share = time.monotonic() - ready_at, busy_share(machine)
        completed = sorted(self.job_events(stack, "completed"))[done_before:]
        running = sorted(self.job_events(stack, "running"))[-n:]
        supervisor.terminate()
        supervisor.wait(60)
        # Read once the workers have exited: a server process reports its transactions to the statistics at most
        # once a second while it runs, and at its end, which comes a moment after its client's.
        time.sleep(1.5)
        tx = (self.xacts(stack) - before) / n if stack.database.backend == "postgresql" else None
        return {
            "jobs_per_s": round(n / (max(completed) - min(running)), 1),
            "worker_cpu_ms_per_job": round(1000 * cpu / n, 2),
            "transactions_per_job": round(tx, 2) if tx is not None else "n/a (SQLite)",
            # The workers' share of one core, and how busy the whole machine was meanwhile (the
            # database server, Redis and the workers together): near 1.0, more processes cannot help.
            "worker_cpu_share_of_one_core": round(cpu / window_s, 2),
            "machine_busy_share": machine_share,
            "load_average": round(os.getloadavg()[0], 2),
        }

    def quire_throughput(self, backend: str) -> None:
        stack = self.stack(backend, f"quire-{backend}")
        stack.start_web()
        worker = stack.start_worker(processes=1, threads=self.args.threads, within=STARTUP_S)
        [child] = child_pids(worker.pid)
        submitter = self.submitter(stack)
        self.submit_direct(submitter, 0)  # warm: imported and connected
        time.sleep(1)
        # Pickup latency on an idle worker: one job at a time, accepted -> running.
        for i in range(self.args.latency_samples):
            self.submit_direct(submitter, 1)
            self.wait_completed(stack, i + 1)
            time.sleep(0.15)
        queued, running = sorted(self.job_events(stack, "queued")), sorted(self.job_events(stack, "running"))
        latencies = [(r - q) * 1000 for q, r in zip(queued, running, strict=False)]
        idle = self.idle_share(child)
        submitter.stdin.close()  # type: ignore[union-attr]
        submitter.wait(30)
        worker.terminate()
        worker.wait(60)
        result = self.drain(stack, 1, self.args.jobs)
        result |= {
            "pickup_ms_p50": pct(latencies, 0.5),
            "pickup_ms_p95": pct(latencies, 0.95),
            "idle_worker_cpu_share_of_one_core": idle,
        }
        self.results[f"quire_{backend}"] = result
        if backend == "postgresql":
            scaling: dict[str, Any] = {"processes_1_jobs_per_s": result["jobs_per_s"]}
            for processes in (2, 4):
                drained = self.drain(stack, processes, self.args.jobs)
                scaling[f"processes_{processes}_jobs_per_s"] = drained["jobs_per_s"]
                scaling[f"processes_{processes}_worker_cpu_ms_per_job"] = drained["worker_cpu_ms_per_job"]
                scaling[f"processes_{processes}_machine_busy_share"] = drained["machine_busy_share"]
                scaling[f"processes_{processes}_load_average"] = drained["load_average"]
            self.results["quire_postgresql_processes"] = scaling
        stack.stop()

    @staticmethod
    def idle_share(pid: int, seconds: float = 5.0) -> float:
        """The share of one core an idle process uses over `seconds`."""
        before, started = cpu_seconds(pid), time.monotonic()
        time.sleep(seconds)
        return round((cpu_seconds(pid) - before) / (time.monotonic() - started), 4)

    def raw_dramatiq(self) -> None:
        url = f"redis://127.0.0.1:{self.redis.port}/15"
        client = redis.Redis.from_url(url)
        client.flushdb()
        env = {**os.environ, "BENCH_REDIS_URL": url, "BENCH_DIR": str(self.dir),
               "PYTHONPATH": f"{ROOT}:{ROOT / 'backend'}", "QUIRE_DATA_DIR": str(self.dir / "raw")}  # fmt: skip
        sys.path.insert(0, str(ROOT))
        os.environ.update({"BENCH_REDIS_URL": url, "BENCH_DIR": str(self.dir)})
        from bench import raw_dramatiq

        doc = self.dir / "raw-doc.txt"
        doc.write_bytes(DOC)
        idle_poll_ms = int(
            os.environ.get("QUIRE_WORKER_IDLE_POLL_MS", Settings.model_fields["worker_idle_poll_ms"].default)
        )
        command = [sys.executable, "-m", "bench.raw_dramatiq", str(self.args.threads), str(idle_poll_ms)]
        worker = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)
        idle = self.idle_share(worker.pid)
        for i in range(self.args.latency_samples):
            raw_dramatiq.raw_process.send(str(doc), "0" * 64, time.time())
            while client.llen("raw:done_at") < i + 1:
                time.sleep(0.005)
            time.sleep(0.15)
        latencies = [float(x) * 1000 for x in client.lrange("raw:pickup", 0, -1)]
        worker.terminate()
        worker.wait(60)
        client.delete("raw:done_at", "raw:cpu_at")
        n = self.args.jobs
        for _ in range(n):
            raw_dramatiq.raw_process.send(str(doc), "0" * 64, time.time())
        started = time.time()
        worker = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while client.llen("raw:done_at") < n:
            time.sleep(0.05)
        done = [float(x) for x in client.lrange("raw:done_at", 0, -1)]
        cpu_at = [float(x) for x in client.lrange("raw:cpu_at", 0, -1)]
        worker.terminate()
        worker.wait(60)
        # The raw worker's own startup is not part of its throughput: count from its first job.
        first = min(done)
        elapsed = max(done) - first
        self.results["raw_dramatiq"] = {
            "jobs_per_s": round((n - 1) / elapsed, 1),
            "worker_cpu_ms_per_job": round(1000 * (max(cpu_at) - min(cpu_at)) / (n - 1), 2),
            "wall_s": round(time.time() - started, 1),
            "pickup_ms_p50": pct(latencies, 0.5),
            "pickup_ms_p95": pct(latencies, 0.95),
            "idle_worker_cpu_share_of_one_core": idle,
            "load_average": round(os.getloadavg()[0], 2),
        }

    # -- 3: API latency ------------------------------------------------------------------------

    def api(self) -> None:
        for workers in self.args.web_workers:
            self.results[f"api_web_workers_{workers}"] = self.api_on(workers)

    def api_on(self, workers: int) -> dict[str, Any]:
        stack = self.stack("sqlite", f"api-{workers}")
        stack.env["QUIRE_WEB_WORKERS"] = str(workers)
        stack.start_web(workers=workers)
        upload = stack.http.post("/uploads", files={"file": ("b.txt", DOC, "text/plain")}).json()["input_ref"]
        job_id = stack.submit(DOC)
        assert stack.web is not None
        web_pid = stack.web.pid
        body = json.dumps({"workflow": "document_summary", "input_ref": upload})
        out: dict[str, Any] = {}
        for connections in self.args.connections:
            for name, method, path, payload in [
                ("hello", "GET", "/healthz", None),
                ("get_job", "GET", f"/ai-jobs/{job_id}", None),
                ("post_job", "POST", "/ai-jobs", body),
            ]:
                out[f"{name}_c{connections}"] = self.wrk(
                    stack, web_pid, method, path, payload, connections, self.args.api_seconds
                )
        for connections in self.args.connections:
            hello = out[f"hello_c{connections}"]["rps"]
            out[f"post_vs_hello_c{connections}"] = round(out[f"post_job_c{connections}"]["rps"] / hello, 2)
            out[f"get_vs_hello_c{connections}"] = round(out[f"get_job_c{connections}"]["rps"] / hello, 2)
        stack.stop()
        return out

    def wrk(self, stack: Stack, web_pid: int, method: str, path: str, payload: str | None, connections: int,
            seconds: float) -> dict[str, Any]:  # fmt: skip
        """One wrk run; the server's CPU (all its processes) and wrk's own, as shares of one core."""
        script = self.dir / "wrk.lua"
        lines = [f"wrk.method = {json.dumps(method)}", f'wrk.headers["Authorization"] = "Bearer {stack.token}"']
        if payload is not None:
            lines += [f"wrk.body = {json.dumps(payload)}", 'wrk.headers["Content-Type"] = "application/json"']
        script.write_text("\n".join(lines) + WRK_REPORT)
        threads = min(2, connections)
        command = [WRK, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", str(script),
                   stack.base_url + path]  # fmt: skip
        cpu_before, started = tree_cpu_seconds(web_pid), time.monotonic()
        client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        finished = subprocess.run(command, capture_output=True, text=True, check=True)
        wall = time.monotonic() - started
        client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_cpu = (tree_cpu_seconds(web_pid) - cpu_before) / wall
        client_cpu = client_after.ru_utime + client_after.ru_stime - client_before.ru_utime - client_before.ru_stime
        [report] = [line for line in finished.stdout.splitlines() if line.startswith("WRK ")]
        figures = json.loads(report[4:])
        return {
            "rps": round(figures["requests"] / (figures["duration_us"] / 1e6), 1),
            "p50_ms": round(figures["p50_us"] / 1000, 2),
            "p99_ms": round(figures["p99_us"] / 1000, 2),
            "errors": figures["socket_errors"] + figures["status_errors"],
            # Where the server is well under the cores it may use, something else (the load
            # generator, or other work on the machine) is the limit.
            "server_cpu": round(server_cpu, 2),
            "wrk_cpu": round(client_cpu / wall, 2),
            "load_average": round(os.getloadavg()[0], 2),
        }

    # -- 4: watchers ---------------------------------------------------------------------------

    def watchers(self) -> None:
        stack = self.stack("sqlite", "watchers")
        stack.start_web()
        ids = [stack.submit(DOC) for _ in range(20)]  # no worker: they stay queued, so pages keep polling
        web_pid = stack.processes[-1].pid
        cpu_before, started, client_before = cpu_seconds(web_pid), time.monotonic(), time.process_time()
        result = asyncio.run(self.watch(stack, ids, self.args.watchers, self.args.watch_seconds))
        wall = time.monotonic() - started
        result["server_cpu_share_of_one_core"] = round((cpu_seconds(web_pid) - cpu_before) / wall, 2)
        # The simulated browsers share this machine and one event loop: when this share nears 1.0
        # the latencies measure the load generator, not the server.
        result["client_cpu_share_of_one_core"] = round((time.process_time() - client_before) / wall, 2)
        stack.stop()
        self.results["watchers"] = result

    @staticmethod
    async def watch(stack: Stack, ids: list[str], watchers: int, seconds: float) -> dict[str, Any]:
        latencies: list[float] = []
        headers = {"Authorization": f"Bearer {stack.token}", "HX-Request": "true"}

        async def watcher(i: int) -> None:
            # Each browser has its own connection. (One shared httpx pool of 1,000 connections
            # scans every connection on every request and made the load generator the bottleneck.)
            limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
            async with httpx.AsyncClient(base_url=stack.base_url, headers=headers, limits=limits, timeout=60) as http:
                job_id = ids[i % len(ids)]
                await asyncio.sleep((i % 100) / 50)  # arrivals spread over 2 s
                since = None
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    started = time.perf_counter()
                    url = f"/jobs/{job_id}/status" + (f"?since={since}" if since else "")
                    try:
                        response = await http.get(url)
                    except (httpx.ReadError, httpx.RemoteProtocolError):
                        # The server closed an idle keep-alive connection as this request went out
                        # on it; a browser sends the request again on a new one, and so does this.
                        response = await http.get(url)
                    latencies.append((time.perf_counter() - started) * 1000)
                    text = response.text
                    if 'hx-trigger="load delay:' not in text:
                        return  # the server said stop
                    delay = float(text.split('hx-trigger="load delay:', 1)[1].split("s", 1)[0])
                    since = text.split("?since=", 1)[1].split('"', 1)[0]
                    await asyncio.sleep(delay)

        await asyncio.gather(*(watcher(i) for i in range(watchers)))
        return {"watchers": watchers, "seconds": seconds, "requests": len(latencies),
                "p50_ms": pct(latencies, 0.5), "p99_ms": pct(latencies, 0.99)}  # fmt: skip

    # -- 5: worker RSS -------------------------------------------------------------------------

    def rss(self) -> None:
        stack = self.stack("sqlite", "rss")
        stack.start_web()
        supervisor = stack.start_worker(processes=1, threads=self.args.threads, within=STARTUP_S)
        [child] = child_pids(supervisor.pid)
        submitter = self.submitter(stack)
        time.sleep(1)
        start = memory_kb(child)
        samples = [start]
        after_batch: list[int] = []
        n = self.args.rss_jobs
        batch = 1000
        for i in range(0, n, batch):
            self.submit_direct(submitter, min(batch, n - i))
            deadline = time.monotonic() + 600
            from sqlalchemy import create_engine, text

            engine = create_engine(stack.database.url)
            while True:
                with engine.connect() as conn:
                    done = conn.execute(text("SELECT count(*) FROM job WHERE status='completed'")).scalar_one()
                samples.append(memory_kb(child))
                if done >= i + min(batch, n - i) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            engine.dispose()
            after_batch.append(memory_kb(child))
        end = memory_kb(child)
        submitter.stdin.close()  # type: ignore[union-attr]
        submitter.wait(30)
        stack.stop()
        mb = [round(kb / 1024, 1) for kb in after_batch]
        # Growth from a cold start counts one-time costs (modules imported by the first job,
        # compiled statements, pools); growth after the first batch is what a leak would show.
        warm = after_batch[0]
        self.results["worker_rss"] = {"jobs": n, "start_mb": round(start / 1024, 1), "end_mb": round(end / 1024, 1),
                                      "peak_mb": round(max(samples) / 1024, 1),
                                      "growth_pct": round(100 * (end - start) / start, 1),
                                      "after_each_1000_mb": mb,
                                      "growth_after_first_1000_pct": round(100 * (end - warm) / warm, 1)}  # fmt: skip

    def close(self) -> None:
        for database in getattr(self, "_dbs", []):
            database.drop()
        self.redis.stop()


# The sections of the throughput part's results, which its rounds each make.
THROUGHPUT = ("raw_dramatiq", "quire_sqlite", "quire_postgresql", "quire_postgresql_processes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the throughput part (parts 1 and 2)")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--latency-samples", type=int, default=30)
    parser.add_argument("--api-seconds", type=int, default=5)
    parser.add_argument("--web-workers", type=lambda v: [int(w) for w in v.split(",")], default=[1, 2])
    parser.add_argument(
        "--connections", type=lambda v: [int(c) for c in v.split(",")], default=[8, 64], help="e.g. 8,64"
    )
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--watch-seconds", type=float, default=30)
    parser.add_argument("--rss-jobs", type=int, default=10000)
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: throughput,api,watchers,rss")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    os.environ.setdefault("QUIRE_DATA_DIR", tempfile.mkdtemp(prefix="quire-bench-env-"))
    bench = Bench(args)
    rounds: list[dict[str, Any]] = []
    try:
        if "throughput" not in skip:
            for _ in range(args.rounds):
                bench.results = {}  # a round that fails part way is left out
                bench.raw_dramatiq()
                bench.quire_throughput("sqlite")
                bench.quire_throughput("postgresql")
                rounds.append(bench.results)
            bench.results = {}
        if "api" not in skip:
            bench.api()
        if "watchers" not in skip:
            bench.watchers()
        if "rss" not in skip:
            bench.rss()
    finally:
        bench.close()
        # What was measured, even when a later part failed; a round that failed part way only when no round was whole.
        whole = medians(rounds) if rounds else {k: v for k, v in bench.results.items() if k in THROUGHPUT}
        report({**whole, **{k: v for k, v in bench.results.items() if k not in THROUGHPUT}}, rounds)


def medians(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure of the rounds' results: the median of the rounds that have it where it is a number in all of them,
    with every round's value beside it (`<figure>_rounds`) when there were several; else the first round's."""
    merged: dict[str, Any] = {}
    for each in rounds:
        for section, figures in each.items():
            for key in figures:
                merged.setdefault(section, {}).setdefault(key, None)
    for section, figures in merged.items():
        for key in list(figures):
            values = [each[section][key] for each in rounds if key in each.get(section, {})]
            if all(isinstance(v, int | float) and not isinstance(v, bool) and v == v for v in values):  # no NaN
                figures[key] = round(statistics.median(values), 4)
                if len(values) > 1:
                    figures[f"{key}_rounds"] = values
            else:
                figures[key] = values[0]
    return merged


def targets(results: dict[str, Any]) -> list[tuple[str, float, str, bool]]:
    """The issue's measures: (what, figure, target, met)."""
    rows: list[tuple[str, float, str, bool]] = []

    def add(what: str, figure: float, op: str, bound: float = 0.0) -> None:
        """op: ">=", "<", "<=", or "reported" (a figure with no target)."""
        target = "-" if op == "reported" else f"{op} {bound:g}"
        rows.append((what, figure, target, target != "-" and meets(figure, target)))

    raw = results.get("raw_dramatiq")
    for backend in ("sqlite", "postgresql"):
        quire = results.get(f"quire_{backend}")
        if quire and raw:
            add(
                f"no-op drain, {backend}: Quire / raw Dramatiq jobs/s",
                quire["jobs_per_s"] / raw["jobs_per_s"],
                ">=",
                0.5,
            )
            add(f"worker CPU per job, {backend}: Quire / raw Dramatiq", quire["worker_cpu_ms_per_job"]
                / raw["worker_cpu_ms_per_job"], "reported")  # fmt: skip
    if sqlite := results.get("quire_sqlite"):
        add("no-op drain, SQLite: jobs/s", sqlite["jobs_per_s"], ">=", 450)
        add("pickup p50 ms (SQLite)", sqlite["pickup_ms_p50"], "<=", 5)
        add("pickup p95 ms (SQLite)", sqlite["pickup_ms_p95"], "<=", 20)
        add("idle worker, share of one core", sqlite["idle_worker_cpu_share_of_one_core"], "<", 0.02)
    if scaling := results.get("quire_postgresql_processes"):
        one = scaling["processes_1_jobs_per_s"]
        add("PostgreSQL worker processes 2 / 1", scaling["processes_2_jobs_per_s"] / one, ">=", 1.6)
        add("PostgreSQL worker processes 4 / 1", scaling["processes_4_jobs_per_s"] / one, "reported")
    for workers in (1, 2):
        api = results.get(f"api_web_workers_{workers}")
        if not api:
            continue
        for key in sorted(k for k in api if k.startswith(("post_vs_hello", "get_vs_hello"))):
            connections = key.rsplit("_c", 1)[1]
            bound = 0.3 if key.startswith("post") else 0.5
            what = "POST /ai-jobs" if key.startswith("post") else "GET /ai-jobs/{id}"
            add(f"--workers {workers}: {what} / GET /healthz at {connections} connections", api[key], ">=", bound)
        for name in ("hello", "get_job", "post_job"):
            if f"{name}_c64" in api:
                add(f"--workers {workers}: {name} p99 ms at 64 connections", api[f"{name}_c64"]["p99_ms"], "<", 50)
        if workers == 2 and "api_web_workers_1" in results:
            for key in ("hello_c64", "get_job_c64", "post_job_c64"):
                if key in api:
                    ratio = api[key]["rps"] / results["api_web_workers_1"][key]["rps"]
                    add(f"{key}: --workers 2 / --workers 1 requests/s", ratio, "reported")
    if rss := results.get("worker_rss"):
        add("worker RSS growth over the run, %", rss["growth_pct"], "<", 5)
    return rows


def meets(figure: float, target: str) -> bool:
    """Whether a figure meets a target written as ">= 0.5", "< 0.02" or "<= 5"."""
    op, bound = target.split()
    return figure >= float(bound) if op == ">=" else figure < float(bound) if op == "<" else figure <= float(bound)


def report(results: dict[str, Any], rounds: list[dict[str, Any]]) -> None:
    """The figures, then the issue's measures against their targets. A measure the throughput rounds each made is
    the median of the rounds' own (a ratio of two drains run side by side in one round), with its range."""
    lines = ["| figure | value |", "|---|---|"]
    for section, figures in results.items():
        for key, value in figures.items():
            lines.append(f"| {section}.{key} | {value} |")
    lines += ["", "| measure | figure | target | met |", "|---|---|---|---|"]
    per_round: dict[str, list[float]] = {}
    for each in rounds:
        for what, figure, _, _ in targets(each):
            per_round.setdefault(what, []).append(figure)
    for what, figure, target, met in targets(results):
        shown = f"{figure:.4g}"
        if len(per_round.get(what, [])) > 1:
            figures = per_round[what]
            figure = statistics.median(figures)
            met = target != "-" and meets(figure, target)
            shown = f"{figure:.4g} ({min(figures):.4g}-{max(figures):.4g})"
        reported = target == "-"
        lines.append(f"| {what} | {shown} | {target} | {'-' if reported else 'yes' if met else 'NO'} |")
    lines.append(f"\nload average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("\n".join(lines))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "suite.json").write_text(json.dumps({**results, "throughput_rounds": rounds}, indent=2))
    (out / "suite.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
