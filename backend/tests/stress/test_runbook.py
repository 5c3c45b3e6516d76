"""The cutover runbook: kill workers, flood the queue, feed it poison, take Redis and PostgreSQL
away, send hostile documents; nothing accepted is lost, duplicated or stuck."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from backend.tests.conftest import ONE_DATABASE, ScratchDatabase, make_database
from backend.tests.documents import encrypted_pdf, pdf_bytes
from backend.tests.integration.stack import TERMINAL, Stack, child_pids, document, memory_kb
from backend.tests.stress.conftest import FULL, scale
from quire.queue.embedded_redis import EmbeddedRedis
from quire.queue.worker import SUPPORT_CONNECTIONS
from quire.settings import Settings

# The runbook loads the whole machine, and one case restarts PostgreSQL: it runs alone (`make test`).
pytestmark = pytest.mark.serial

Record = Callable[[str, str, str, str], None]
STRESS_ENV = {"QUIRE_SUBMISSIONS_PER_MINUTE": "100000", "QUIRE_LOGIN_ATTEMPTS_PER_MINUTE": "1000"}


@contextmanager
def private_stack(
    backend: str, tmp_path: Path, persistent: bool = False, **env: str
) -> Iterator[tuple[Stack, EmbeddedRedis]]:
    """A running web app on its own database and its own Redis, removed afterwards."""
    database: ScratchDatabase = make_database(backend, tmp_path)
    redis_server = EmbeddedRedis(tmp_path / "redis", persistent=persistent).start()
    stack = Stack(tmp_path, database, redis_server.url, **{**STRESS_ENV, **env})
    try:
        stack.start_web()
        yield stack, redis_server
    finally:
        stack.stop()
        redis_server.stop()
        database.drop()


BOTH = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
# The full sizes run every case on both databases. The short ones (in the test command) run the cases that load
# the database hardest (concurrent writers, processes killed mid-transaction) on both, the others on one.
ON_ONE = pytest.mark.parametrize("runbook", BOTH if FULL else ONE_DATABASE, indirect=True)


@pytest.fixture(params=BOTH)
def runbook(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Stack, EmbeddedRedis]]:
    """A stack with its own Redis (append-only), so a case can stop and start it."""
    with private_stack(request.param, tmp_path, persistent=True) as running:
        yield running


def submit_all(stack: Stack, payloads: list[bytes], clients: int = 16, **limits: Any) -> tuple[list[str], Counter[int]]:
    """Submit concurrently; returns the accepted job ids and a count of every status code seen."""
    codes: Counter[int] = Counter()
    accepted: list[str] = []
    lock = threading.Lock()

    def one(data: bytes) -> None:
        with stack.client(stack.token) as http:
            form = {"workflow": "document_summary", **{k: str(v) for k, v in limits.items()}}
            try:
                response = http.post("/ai-jobs", data=form, files={"file": ("d.txt", data, "text/plain")})
            except httpx.TransportError:
                with lock:
                    codes[0] += 1
                return
        with lock:
            codes[response.status_code] += 1
            if response.status_code == 202:
                accepted.append(response.json()["job_id"])

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, payloads))
    return accepted, codes


def wait_all(stack: Stack, ids: list[str], timeout: float) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    views: dict[str, dict[str, Any]] = {}
    pending = set(ids)
    while pending:
        for job_id in list(pending):
            view = stack.job(job_id)
            if view["status"] in TERMINAL:
                views[job_id] = view
                pending.discard(job_id)
        if pending and time.monotonic() > deadline:
            stuck = {j: stack.job(j) for j in pending}
            counts = Counter(view["status"] for view in stuck.values())
            first = next(iter(stuck.values()))
            raise AssertionError(f"{len(pending)} jobs not finished after {timeout}s: {dict(counts)}; one: {first}")
        time.sleep(0.2)
    return views


def test_kill_workers_all_run(runbook: tuple[Stack, EmbeddedRedis], record: Record) -> None:
    stack, _ = runbook
    supervisor = stack.start_worker(processes=2, threads=4)
    total = scale(60, 500)
    payloads = [document("slow:0.5" if i % 2 else "success") for i in range(total)]
    stop = threading.Event()
    kills = 0

    # The chaos ends after a number of kills: a job whose worker died runs its next attempt in a
    # process of its own, and killing forever at a steady rate can outpace a loaded machine's
    # restarts of workers and attempts alike, so that such a job never finishes an attempt.
    most = scale(8, 80)

    def killer() -> None:
        nonlocal kills
        while kills < most and not stop.wait(1.0 if kills == 0 else 3.0):
            children = child_pids(supervisor.pid)
            if children:
                os.kill(random.choice(children), signal.SIGKILL)  # the supervisor starts a new one
                kills += 1

    chaos = threading.Thread(target=killer, daemon=True)
    chaos.start()
    ids, codes = submit_all(stack, payloads)
    try:
        views = wait_all(stack, ids, timeout=scale(120, 600))
    finally:
        stop.set()
        chaos.join()
    assert codes == Counter({202: total})
    failed = [v["events"] for v in views.values() if v["status"] != "completed"]
    assert not failed, failed
    assert kills >= 1
    # Every job published its artifacts exactly once, by exactly one completing attempt.
    assert all(sum(e["type"] == "completed" for e in v["events"]) == 1 for v in views.values())
    assert all(len(v["artifacts"]) == 2 for v in views.values())
    # Every workflow call belongs to an attempt that was started (none ran twice per attempt).
    calls = Counter((stack.data_dir / "fake" / "calls.log").read_text().split())
    assert all(1 <= calls[v["input"]["sha256"]] <= v["attempt"] for v in views.values())
    retried = sum(1 for v in views.values() if v["attempt"] > 1)
    record("kill", f"{len(views)}/{total} completed, 0 queued or running", f"{retried} jobs needed >1 attempt",
           f"{kills} workers SIGKILLed; 1 completed event and 2 artifacts per job")  # fmt: skip


def test_backpressure_and_admission_control(runbook: tuple[Stack, EmbeddedRedis], record: Record) -> None:
    stack, _ = runbook
    stack.start_worker(processes=2, threads=4)
    total = scale(200, 1000)
    samples: list[int] = []
    stop = threading.Event()
    if stack.database.backend == "postgresql":
        url = make_url(stack.database.url).set(drivername="postgresql").render_as_string(hide_password=False)

        def sample() -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                while not stop.wait(0.1):
                    row = conn.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND pid <> pg_backend_pid()"
                    ).fetchone()
                    samples.append(int(row[0]) if row else 0)

        threading.Thread(target=sample, daemon=True).start()
    ids, codes = submit_all(stack, [document() for _ in range(total)], clients=32)
    views = wait_all(stack, ids, timeout=scale(120, 600))
    stop.set()
    assert not any(code >= 500 or code == 0 for code in codes), codes
    assert codes[202] == total
    assert all(v["status"] == "completed" for v in views.values())
    # web: SQLAlchemy's default pool (5 + 10 overflow); each worker process: its pool, sized to its
    # Dramatiq threads, its webhook threads and its support threads.
    bound = 15 + 2 * (4 + Settings.model_fields["webhook_threads"].default + SUPPORT_CONNECTIONS)
    if samples:
        assert max(samples) <= bound, max(samples)
    record("backpressure", f"{total} concurrent submissions: {dict(codes)}", "-",
           f"peak DB connections {max(samples) if samples else 'n/a (SQLite)'} <= {bound}")  # fmt: skip


def test_admission_control_refuses_when_the_queue_is_old(tmp_path: Path, record: Record) -> None:
    with private_stack("sqlite", tmp_path, QUIRE_ADMISSION_MAX_QUEUE_AGE_S="1") as (stack, _):
        first = stack.submit(document())  # no worker: it waits
        time.sleep(1.5)
        refused = stack.http.post(
            "/ai-jobs", data={"workflow": "document_summary"}, files={"file": ("d.txt", document(), "text/plain")}
        )
        assert refused.status_code == 429
        assert refused.json()["code"] == "overloaded"
        assert int(refused.headers["retry-after"]) >= 1
        stack.start_worker()
        stack.wait(first)
        accepted = stack.http.post(
            "/ai-jobs", data={"workflow": "document_summary"}, files={"file": ("d.txt", document(), "text/plain")}
        )
        assert accepted.status_code == 202
        record("admission", "429 overloaded while the oldest job waited > 1 s; 202 once drained", "-",
               f"Retry-After: {refused.headers['retry-after']}")  # fmt: skip


@ON_ONE
@pytest.mark.timeout(300 if not FULL else 1200)
def test_poison_is_contained(runbook: tuple[Stack, EmbeddedRedis], record: Record) -> None:
    stack, _ = runbook
    stack.start_worker(processes=2, threads=4)
    bad, good = scale(10, 100), scale(90, 900)
    poison = [document("crash" if i % 2 else "exit") for i in range(bad)]
    ids, codes = submit_all(stack, poison + [document() for _ in range(good)], max_attempts=2)
    views = wait_all(stack, ids, timeout=scale(240, 900))
    outcome = Counter(v["status"] for v in views.values())
    assert codes[202] == bad + good
    assert outcome == Counter({"completed": good, "dead_letter": bad}), outcome
    errors = Counter(v["error"]["code"] for v in views.values() if v["status"] == "dead_letter")
    assert set(errors) <= {"internal_error", "worker_lost"}
    restarts = (stack.root / "worker.log").read_text().count("); restarting")
    record("poison", f"{outcome['dead_letter']} dead_letter, {outcome['completed']} completed", "max 2",
           f"errors {dict(errors)}; the supervisor restarted workers {restarts} times")  # fmt: skip


@ON_ONE
def test_redis_outage_loses_nothing(runbook: tuple[Stack, EmbeddedRedis], record: Record) -> None:
    stack, redis_server = runbook
    stack.start_worker(processes=1, threads=4)
    outage = scale(5, 30)
    before, _ = submit_all(stack, [document() for _ in range(20)])
    redis_server.stop()
    during: list[str] = []
    deadline = time.monotonic() + outage
    while time.monotonic() < deadline:
        ids, codes = submit_all(stack, [document() for _ in range(5)], clients=5)
        assert codes == Counter({202: 5}), codes
        during += ids
        time.sleep(0.5)
    restarted = EmbeddedRedis(redis_server.directory, port=redis_server.port, persistent=True).start()
    back = time.monotonic()
    try:
        views = wait_all(stack, before + during, timeout=60)
        took = time.monotonic() - back
    finally:
        restarted.stop()
    assert all(v["status"] == "completed" for v in views.values())
    evidence = f"Redis down {outage} s, {len(during)} submissions during it; all done {took:.1f} s after it returned"
    record("redis outage", f"{len(views)} accepted, {len(views)} completed, 0 lost", "-", evidence)


def _local_cluster() -> list[str] | None:
    if shutil.which("pg_lsclusters") is None or shutil.which("pg_ctlcluster") is None:
        return None
    lines = subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True).stdout.split("\n")
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "5432" and parts[3] == "online":
            return [parts[0], parts[1]]
    return None


@pytest.mark.postgres
def test_postgres_restart_loses_nothing(tmp_path: Path, record: Record) -> None:
    cluster = _local_cluster()
    if cluster is None:
        pytest.skip("no local PostgreSQL cluster on port 5432 that this test may restart")
    with private_stack("postgresql", tmp_path) as (stack, _):
        stack.start_worker(processes=1, threads=4)
        before, _ = submit_all(stack, [document("slow:0.3") for _ in range(scale(20, 100))])
        subprocess.run(["pg_ctlcluster", *cluster, "restart"], check=True, timeout=120)
        after: list[str] = []
        deadline = time.monotonic() + 30
        while len(after) < 10 and time.monotonic() < deadline:
            ids, _ = submit_all(stack, [document()], clients=1)
            after += ids
            time.sleep(0.2)
        views = wait_all(stack, before + after, timeout=120)
        assert len(after) == 10, "the web did not reconnect"
        assert all(v["status"] == "completed" for v in views.values()), Counter(v["status"] for v in views.values())
        record("postgres restart", f"{len(views)} accepted before and after, all completed", "-",
               "web and worker reconnected without a restart (idle pooled connections pinged before use)")  # fmt: skip


def _rss_peak_kb(pid: int) -> int:
    return max(memory_kb(p, "VmHWM") for p in [pid, *child_pids(pid)])


def _zip_bomb() -> bytes:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", "<w:document/>")
        archive.writestr("word/media/bomb.bin", b"\x00" * (300 * 1024 * 1024))
    return out.getvalue()


def _page_claim() -> bytes:
    """A one-page PDF whose page tree claims 10,000 pages."""
    import io

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, NumberObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(["one real page"]))))
    writer.root_object["/Pages"][NameObject("/Count")] = NumberObject(10000)  # type: ignore[index]
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _ten_thousand_pages() -> bytes:
    """A PDF that really has 10,000 (blank) pages."""
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(10_000):
        writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_hostile_input_gets_clear_answers(tmp_path: Path, record: Record) -> None:
    with private_stack("sqlite", tmp_path, QUIRE_MAX_UPLOAD_MB="4") as (stack, _):
        worker = stack.start_worker(processes=1, threads=4)
        corpus: dict[str, tuple[bytes, str, set[str]]] = {
            "encrypted pdf": (encrypted_pdf(["secret"]), "a.pdf", {"invalid_input"}),
            "truncated pdf": (pdf_bytes(["cut"])[:200], "b.pdf", {"invalid_input"}),
            "zip bomb docx": (_zip_bomb(), "c.docx", {"invalid_input"}),
            # pypdf counts the real page tree, so a false claim is harmless: the one page is read.
            "10,000-page claim": (_page_claim(), "d.pdf", {"completed"}),
            "10,000 real pages": (_ten_thousand_pages(), "i.pdf", {"invalid_input"}),
            "exe named .pdf": (b"MZ\x90\x00" + os.urandom(2000), "e.pdf", {"415"}),
            "0 bytes": (b"", "f.txt", {"422"}),
            "huge": (b"word " * (1024 * 1024), "g.txt", {"413"}),
            "html named .pdf": (b"<html><body><p>fine after all</p></body></html>", "h.pdf", {"completed"}),
        }
        answers: dict[str, str] = {}
        lock = threading.Lock()

        def send(name: str) -> None:
            data, filename, _ = corpus[name]
            with stack.client(stack.token) as http:
                response = http.post(
                    "/ai-jobs", data={"workflow": "document_summary"}, files={"file": (filename, data, "text/plain")}
                )
                if response.status_code != 202:
                    answer = str(response.status_code)
                else:
                    view = stack.wait(response.json()["job_id"])
                    answer = view["error"]["code"] if view["error"] else view["status"]
            with lock:
                answers[name] = answer

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(send, list(corpus) * scale(1, 3)))
        web_peak, worker_peak = _rss_peak_kb(stack.processes[0].pid), _rss_peak_kb(worker.pid)
        for name, (_, _, expected) in corpus.items():
            assert answers[name] in expected, (name, answers[name])
        assert stack.http.get("/healthz").status_code == 200
        assert web_peak < 400 * 1024, web_peak
        assert worker_peak < 400 * 1024, worker_peak
        record("hostile input", "; ".join(f"{k}: {v}" for k, v in answers.items()), "1 each",
               f"peak RSS web {web_peak // 1024} MB, worker {worker_peak // 1024} MB")  # fmt: skip


def test_full_sizes_are_available() -> None:
    """The same cases at the issue's sizes run with QUIRE_STRESS=full (make stress)."""
    assert scale(1, 2) == (2 if FULL else 1)
