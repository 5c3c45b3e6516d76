"""A real Quire stack for tests: `quire web` and `quire worker` processes on a real Redis and database."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from backend.tests.conftest import ScratchDatabase
from quire.migrations import upgrade
from quire.queue.embedded_redis import free_port

TERMINAL = {"completed", "dead_letter", "cancelled"}
# An account and an API token for it, as `quire users create` and `quire tokens create` make them.
NEW_ACCOUNT = """
import sys
from quire.accounts import service
from quire.db import open_database
from quire.settings import Settings
db = open_database(Settings())
person = service.create_user(db, sys.argv[1], sys.stdin.readline().rstrip("\\n"), is_admin=sys.argv[2] == "admin")
print(service.create_token(db, person.user_id, "cli")[1])
"""
PASSWORD = "correct horse battery"

# Short timers so that recovery and retries happen within a test's patience.
FAST_TIMERS = {
    "QUIRE_LEASE_SECONDS": "2",
    "QUIRE_RECOVERY_INTERVAL_SECONDS": "0.3",
    "QUIRE_REPUBLISH_AFTER_SECONDS": "1",
    "QUIRE_RETRY_BASE_S": "0.05",
    "QUIRE_RETRY_MAX_S": "0.2",
    "QUIRE_BROKER_HEARTBEAT_TIMEOUT_MS": "3000",
    "QUIRE_WORKER_IDLE_POLL_MS": "20",
    # Webhooks: receivers on 127.0.0.1 (started by the tests), short attempts, quick retries.
    "QUIRE_WEBHOOK_ALLOW_PRIVATE": "true",
    "QUIRE_WEBHOOK_TIMEOUT_S": "1.5",
    "QUIRE_WEBHOOK_RETRY_BASE_S": "0.05",
    "QUIRE_WEBHOOK_RETRY_MAX_S": "0.2",
    "QUIRE_WEBHOOK_MAX_ATTEMPTS": "3",
}
# How long a stack's processes get to stop at the end of a test before they are killed.
STOP_GRACE_S = 5
# One test token submits every document of a module; the per-person upload quotas are tested
# where they are set low on purpose (test_security).
GENEROUS_QUOTAS = {
    "QUIRE_UPLOADS_PER_MINUTE": "1000000",
    "QUIRE_UPLOAD_MB_PER_MINUTE": "1000000",
    "QUIRE_STORAGE_QUOTA_MB": "1000000",
}


def document(mode: str = "success", words: str = "") -> bytes:
    """A unique small text document; its `quire-fake` line picks the fake provider's behaviour."""
    nonce = uuid.uuid4().hex
    body = (
        f"Quarterly operations report {nonce}.\n\n"
        "The warehouse team shipped more orders than in any previous quarter. "
        "Shipping delays fell because the new routing system balanced the load across carriers. "
        "Customer complaints about late orders dropped by half. "
        f"{words}\n"
    )
    if mode != "success":
        body += f"quire-fake: {mode}\n"
    return body.encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


log = logging.getLogger(__name__)


class RetryingTransport(httpx.HTTPTransport):
    """httpx's transport, retrying a read once when the server closed the pooled connection just as
    the request went out on it (the server's keep-alive deadline can fire first when its process was
    held off the CPU past it). Browsers and urllib3 retry an idempotent request on a fresh
    connection the same way; httpx does not (encode/httpx#2983)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except (httpx.RemoteProtocolError, httpx.ReadError) as dropped:  # closed, or reset with the request unread
            if request.method not in ("GET", "HEAD"):
                raise
            # Logged, so a failing test's report shows every drop: with one web process (a stack's default), a
            # crashed one leaves nothing to answer the retry and the test fails; with several, this line shows it.
            log.warning("%s %s: %r; retrying once on a new connection", request.method, request.url, dropped)
            return super().handle_request(request)


def http_client(base_url: str, **options: Any) -> httpx.Client:
    """An HTTP client for a stack's web process, retrying a GET or HEAD once on a dropped keep-alive connection."""
    return httpx.Client(base_url=base_url, transport=RetryingTransport(), **options)


class Stack:
    """Web and worker processes sharing one database, one Redis database and one data directory."""

    def __init__(self, root: Path, database: ScratchDatabase, redis_url: str, **env: str) -> None:
        self.root = root
        self.database = database
        self.data_dir = root / "var"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "QUIRE_ENV": "test",
            "QUIRE_DATABASE_URL": database.url,
            "QUIRE_REDIS_URL": redis_url,
            "QUIRE_DATA_DIR": str(self.data_dir),
            "QUIRE_MODEL_PROVIDER": "fake",
            **FAST_TIMERS,
            **GENEROUS_QUOTAS,
            # One web process per stack unless a test asks for more (`quire web --workers N`).
            "QUIRE_WEB_WORKERS": "1",
            **env,
        }
        self.redis_url = redis_url
        self.processes: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.web: subprocess.Popen[bytes] | None = None  # the latest `quire web` started by start_web
        self.port = 0
        self._client: httpx.Client | None = None
        self.token = ""
        upgrade(database.url)

    # Processes

    def _spawn(self, name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = (self.root / f"{name}.log").open("ab")
        process = subprocess.Popen(
            [sys.executable, "-m", "quire", *args],
            env={**self.env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def quire(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run the `quire` command against this stack, as an operator would."""
        command = [sys.executable, "-m", "quire", *args]
        return subprocess.run(command, env=self.env, input=stdin, capture_output=True, text=True, timeout=60)

    def create_user(self, email: str, password: str = PASSWORD, admin: bool = False) -> str:
        """Create an account and return an API token for it, in one process with the stack's settings
        (the CLI's `users create` and `tokens create` are tested in test_cli.py; two CLI processes
        per account cost seconds of start-up on every stack)."""
        command = [sys.executable, "-c", NEW_ACCOUNT, email, "admin" if admin else "user"]
        made = subprocess.run(command, env=self.env, input=password + "\n", capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        return made.stdout.strip()

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return http_client(self.base_url, timeout=30, headers=headers)

    def start_web(self, owner: str = "owner@example.com", port: int | None = None, workers: int = 1) -> Stack:
        """Start `quire web` (on `port`, or a free one, with `workers` processes), with an account
        whose token `http` uses; the account is made while the web process starts."""
        process = self._spawn_web(port, workers)
        if not self.token:
            self.token = self.create_user(owner)
        self._await_web(process)
        return self

    def start(self) -> Stack:
        """Start a web and a worker side by side, as `start_web` and `start_worker` one after the other
        would (each process's start is mostly its own imports)."""
        web = self._spawn_web(None, 1)
        ready_before = self._ready_count()
        worker = self._spawn_worker(1, 4)
        if not self.token:
            self.token = self.create_user("owner@example.com")
        self._await_web(web)
        self._await_worker(worker, ready_before + 1, 30)
        return self

    def _spawn_web(self, port: int | None, workers: int) -> subprocess.Popen[bytes]:
        self.port = port or free_port()
        if self._client is not None:  # bound to the port of a web process before this one
            self._client.close()
            self._client = None
        extra = ["--workers", str(workers)] if workers != 1 else []
        self.web = self._spawn("web", "web", "--port", str(self.port), *extra)
        return self.web

    def _await_web(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"quire web exited: {self.logs('web')}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError("quire web did not become healthy")

    def another_web(self, **env: str) -> str:
        """Start a second `quire web` on its own port, sharing this stack's Redis and database (with
        `env` added to its environment); its base URL."""
        port = free_port()
        self._spawn(f"web-{port}", "web", "--port", str(port), env=env)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    return url
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the second quire web did not become ready: {self.logs(f'web-{port}')}")

    def start_worker(self, processes: int = 1, threads: int = 4, within: float = 30) -> subprocess.Popen[bytes]:
        """Start `quire worker` and wait up to `within` seconds for its processes to be ready."""
        ready_before = self._ready_count()
        worker = self._spawn_worker(processes, threads)
        self._await_worker(worker, ready_before + processes, within)
        return worker

    def _spawn_worker(self, processes: int, threads: int) -> subprocess.Popen[bytes]:
        worker = self._spawn("worker", "worker", "--processes", str(processes), "--threads", str(threads))
        self.workers.append(worker)
        return worker

    def _await_worker(self, worker: subprocess.Popen[bytes], ready: int, within: float) -> None:
        deadline = time.monotonic() + within
        while self._ready_count() < ready:
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"quire worker did not start: {self.logs('worker')}")
            time.sleep(0.05)

    def _ready_count(self) -> int:
        log = self.root / "worker.log"
        return log.read_text().count(" ready\n") if log.exists() else 0

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """SIGKILL a process and all its children, as a crash or an OOM kill would."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        """Stop every process: SIGTERM, then SIGKILL what still runs after STOP_GRACE_S. A test is over
        by now; a worker would otherwise wait out an attempt still running (its graceful shutdown is
        tested on its own, in test_operations)."""
        if self._client is not None:
            self._client.close()
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def logs(self, name: str) -> str:
        path = self.root / f"{name}.log"
        return path.read_text()[-5000:] if path.exists() else ""

    # HTTP

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def http(self) -> httpx.Client:
        if self._client is None:
            self._client = self.client(self.token)
        return self._client

    def submit_batch(self, documents: dict[str, bytes], workflow: str = "document_summary", **fields: Any) -> str:
        """Submit text documents as one batch (`fields`: its other form fields); returns its id."""
        files = [("file", (name, data, "text/plain")) for name, data in documents.items()]
        form = {"workflow": workflow, **{k: str(v) for k, v in fields.items()}}
        response = self.http.post("/batches", data=form, files=files)
        assert response.status_code == 202, response.text
        batch_id: str = response.json()["batch_id"]
        return batch_id

    def submit(self, data: bytes, workflow: str = "document_summary", **fields: Any) -> str:
        """Submit a document as a multipart form; `fields` are the form's other fields (limits,
        `callback_url`, ...)."""
        form = {"workflow": workflow, **{k: str(v) for k, v in fields.items()}}
        response = self.http.post("/ai-jobs", data=form, files={"file": ("doc.txt", data, "text/plain")})
        assert response.status_code == 202, response.text
        job_id: str = response.json()["job_id"]
        return job_id

    def job(self, job_id: str) -> dict[str, Any]:
        response = self.http.get(f"/ai-jobs/{job_id}")
        assert response.status_code == 200, response.text
        view: dict[str, Any] = response.json()
        return view

    def wait(self, job_id: str, statuses: set[str] = TERMINAL, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            view = self.job(job_id)
            if view["status"] in statuses:
                return view
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} still {view['status']} after {timeout}s: {view['events']}")
            time.sleep(0.05)

    # Evidence

    def _bucket(self) -> tuple[Any, str, str] | None:
        """(S3 client, bucket, key prefix) when this stack keeps its files in a bucket."""
        url = self.env.get("QUIRE_STORAGE_URL", "")
        if not url.startswith("s3://"):
            return None
        import boto3

        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        return boto3.client("s3", endpoint_url=self.env["QUIRE_S3_ENDPOINT_URL"]), bucket, prefix.strip("/")

    def stored(self, prefix: str) -> list[str]:
        """The keys of the stored objects under `prefix` (`uploads`, `artifacts/<job id>`), read
        straight from the data directory or the bucket."""
        bucket = self._bucket()
        if bucket is None:
            root = self.data_dir / "files"
            found = [root / prefix] if (root / prefix).is_file() else (root / prefix).rglob("*")
            return sorted(str(p.relative_to(root)) for p in found if p.is_file() and not p.name.startswith("."))
        client, name, key_prefix = bucket
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix=f"{key_prefix}/{prefix}")
        return sorted(item["Key"].removeprefix(f"{key_prefix}/") for page in pages for item in page.get("Contents", []))

    def overwrite(self, key: str, data: bytes) -> None:
        """Change a stored object behind Quire's back (as a damaged disk or a careless operator would)."""
        bucket = self._bucket()
        if bucket is None:
            (self.data_dir / "files" / key).write_bytes(data)
        else:
            client, name, key_prefix = bucket
            client.put_object(Bucket=name, Key=f"{key_prefix}/{key}", Body=data)

    def workflow_calls(self, data: bytes) -> int:
        """How many times the fake provider ran for this document."""
        log = self.data_dir / "fake" / "calls.log"
        return log.read_text().split().count(sha256(data)) if log.exists() else 0


def event_types(view: dict[str, Any]) -> list[str]:
    return [event["type"] for event in view["events"]]


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state, parent pid, ...); None when gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def child_pids(pid: int) -> list[int]:
    """The direct children of a process (a supervisor's worker processes)."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None and int(fields[1]) == pid
    ]


def running(pid: int) -> bool:
    """Whether the process is there and neither a zombie waiting to be reaped nor dead."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in {"Z", "X"}


def memory_kb(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (VmRSS) or its peak (VmHWM), in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def sse_events(response: httpx.Response) -> Iterator[tuple[str, str]]:
    """The (event, data) pairs of a text/event-stream response as they arrive; comments as
    ("comment", text)."""
    event, data = "message", []
    for line in response.iter_lines():
        if line.startswith(":"):
            yield "comment", line[1:].strip()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:
            yield event, "\n".join(data)
            event, data = "message", []


def follow(client: httpx.Client, path: str, until: str = "end", timeout: float = 30) -> list[tuple[str, Any]]:
    """Read a stream's events (comments left out) up to and including the first `until` event."""
    seen: list[tuple[str, Any]] = []
    with client.stream("GET", path, timeout=timeout) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for event, data in sse_events(response):
            if event != "comment":
                seen.append((event, json.loads(data)))
            if event == until:
                break
    return seen
