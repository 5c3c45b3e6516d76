"""The `quire` command, run as a user would: in a subprocess, against real services."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from backend.tests.conftest import ONE_DATABASE
from backend.tests.integration.stack import Stack, document, http_client
from quire.queue.embedded_redis import free_port


def quire(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return stack.quire(*args)


@pytest.mark.parametrize("database", ONE_DATABASE, indirect=True)  # the service is tested on both
def test_jobs_commands_show_list_cancel_and_replay(stack: Stack) -> None:
    stack.start_web()
    # jobs cancel stops a queued job (no worker runs yet)
    queued = stack.submit(document())
    cancelled = quire(stack, "jobs", "cancel", queued)
    assert cancelled.returncode == 0, cancelled.stderr
    assert stack.job(queued)["status"] == "cancelled"
    stack.start_worker()
    dead = stack.submit(document("rejected"))
    stack.wait(dead)
    # jobs show prints the same record as the API
    shown = quire(stack, "jobs", "show", dead)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "dead_letter"
    assert json.loads(shown.stdout)["events"] == stack.job(dead)["events"]
    # jobs list filters by status
    assert dead in quire(stack, "jobs", "list", "--status", "dead_letter").stdout
    assert quire(stack, "jobs", "list", "--status", "completed").stdout.strip() == ""
    # a finished job cannot be cancelled, and an unknown one cannot be shown
    refused = quire(stack, "jobs", "cancel", dead)
    assert refused.returncode != 0
    assert "Only a queued or running job" in refused.stderr
    assert quire(stack, "jobs", "show", "no-such-job").returncode != 0
    # jobs replay queues the cancelled job again and the worker completes it
    assert quire(stack, "jobs", "replay", queued).returncode == 0
    assert stack.wait(queued)["status"] == "completed"


@pytest.mark.parametrize("database", ONE_DATABASE, indirect=True)  # the service is tested on both
def test_users_and_tokens_commands_make_an_account_an_api_client_can_use(stack: Stack) -> None:
    stack.start_web()
    # users create reads the password from stdin and says what it made
    made = stack.quire("users", "create", "Ops@Example.com", "--password-stdin", "--admin", stdin="long enough pass\n")
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "created ops@example.com (admin)"
    # a second account with that email, a short password and an unknown person are refused clearly
    again = stack.quire("users", "create", "ops@example.com", "--password-stdin", stdin="long enough pass\n")
    assert (again.returncode, "already exists" in again.stderr) == (1, True), again.stderr
    short = stack.quire("users", "create", "new@example.com", "--password-stdin", stdin="short\n")
    assert (short.returncode, "at least" in short.stderr) == (1, True), short.stderr
    unknown = stack.quire("tokens", "create", "nobody@example.com")
    assert (unknown.returncode, "no account nobody@example.com" in unknown.stderr) == (1, True), unknown.stderr
    # tokens create prints a token the API accepts, for that person
    token = stack.quire("tokens", "create", "ops@example.com", "--name", "deploy")
    assert token.returncode == 0, token.stderr
    with stack.client(token.stdout.strip()) as client:
        assert client.get("/ai-jobs").status_code == 200
    with stack.client("not-a-token") as client:
        assert client.get("/ai-jobs").status_code == 401


def test_quire_dev_runs_everything_without_redis_or_postgres(tmp_path: Path) -> None:
    # Given no Redis URL and no database URL: quire dev brings its own Redis and uses SQLite
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_")}
    env.update({"QUIRE_DATA_DIR": str(tmp_path / "var"), "QUIRE_WORKER_IDLE_POLL_MS": "20"})
    port = free_port()
    log = (tmp_path / "dev.log").open("wb")
    dev = subprocess.Popen(
        [sys.executable, "-m", "quire", "dev", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert dev.poll() is None, (tmp_path / "dev.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "dev.log").read_text()
            time.sleep(0.2)
        output = (tmp_path / "dev.log").read_text()
        assert f"Quire is running at http://127.0.0.1:{port}/" in output
        assert "embedded Redis" in output
        # The first start made a local admin and printed how to sign in
        email, password = re.search(r"Sign in with:\s+(\S+)\s+/\s+(\S+)", output).groups()  # type: ignore[union-attr]
        login = http_client(base)
        login.get("/login")
        signed_in = login.post(
            "/login",
            data={"email": email, "password": password, "_csrf_token": login.cookies["quire_csrf"]},
        )
        assert (signed_in.status_code, signed_in.headers["location"]) == (303, "/")
        token = subprocess.run(
            [sys.executable, "-m", "quire", "tokens", "create", email], env=env, capture_output=True, text=True
        ).stdout.strip()
        headers = {"Authorization": f"Bearer {token}"}
        # When a job is submitted with the default (local) provider
        response = httpx.post(
            f"{base}/ai-jobs",
            headers=headers,
            data={"workflow": "document_summary"},
            files={"file": ("notes.md", document(), "text/markdown")},
        )
        assert response.status_code == 202
        status_url = base + response.json()["status_url"]
        deadline = time.monotonic() + 30
        while (view := httpx.get(status_url, headers=headers).json())["status"] != "completed":
            assert time.monotonic() < deadline, view
            time.sleep(0.1)
        assert view["artifact"] is not None
        assert (tmp_path / "var" / "quire.db").exists()
    finally:
        # Then Ctrl-C (SIGINT to the whole process group) stops every process cleanly
        os.killpg(dev.pid, signal.SIGINT)
        dev.wait(timeout=60)
    assert processes_of(tmp_path) == []


def processes_of(tmp_path: Path) -> list[str]:
    """Live processes started for this test: its path is in their command line or environment."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            seen = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if str(tmp_path).encode() in seen:
            found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    return found
