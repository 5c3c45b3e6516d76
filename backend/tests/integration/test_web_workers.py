"""`quire web --workers N`: N processes answer on one port, and what one of them starts (a session,
a rate-limit count) holds on the others."""

from __future__ import annotations

import http.client
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.tests.conftest import ScratchDatabase, make_database
from backend.tests.integration.conftest import fresh_redis_url
from backend.tests.integration.stack import PASSWORD, Stack, child_pids
from backend.tests.integration.test_recovery import threads_processors
from quire.queue.embedded_redis import EmbeddedRedis


@pytest.fixture
def two_process_web(redis_server: EmbeddedRedis, tmp_path: Path) -> Iterator[Stack]:
    database: ScratchDatabase = make_database("sqlite", tmp_path)
    stack = Stack(tmp_path, database, fresh_redis_url(redis_server), QUIRE_LOGIN_ATTEMPTS_PER_MINUTE="3")
    try:
        stack.start_web(workers=2)
        yield stack
    finally:
        stack.stop()
        database.drop()


def web_processes(stack: Stack) -> list[int]:
    """The processes uvicorn started to serve the port (its supervisor only hands out the socket)."""
    assert stack.web is not None
    return [pid for pid in child_pids(stack.web.pid) if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def serving_process(connection: http.client.HTTPConnection, server_port: int, pids: list[int]) -> int:
    """Which of `pids` holds the server end of this (open) TCP connection."""
    assert connection.sock is not None
    client_port = connection.sock.getsockname()[1]
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)
        if (local, remote) == (server_port, client_port):
            inode = fields[9]
    assert inode is not None
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if fd.readlink().name == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    raise AssertionError("no web process holds the connection")


def request(stack: Stack, method: str, path: str, headers: dict[str, str], body: str | None = None) -> tuple[int, int]:
    """One request on a connection of its own: (status, the web process that answered)."""
    connection = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status, serving_process(connection, stack.port, web_processes(stack))
    finally:
        connection.close()


def test_two_processes_share_the_port_and_the_sessions_and_limits(two_process_web: Stack) -> None:
    stack = two_process_web
    assert len(web_processes(stack)) == 2
    # Sign in once, on whichever process takes the connection (one login attempt of the three).
    browser = stack.client(None)
    browser.get("/login")
    csrf = str(browser.cookies["quire_csrf"])
    signed_in = browser.post("/login", data={"email": "owner@example.com", "password": PASSWORD, "_csrf_token": csrf})
    assert signed_in.status_code == 303
    cookie = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
    # The session works on both processes.
    served: set[int] = set()
    for _ in range(60):
        status, pid = request(stack, "GET", "/jobs", {"Cookie": cookie, "Accept": "text/html"})
        assert status == 200
        served.add(pid)
        if len(served) == 2:
            break
    assert served == set(web_processes(stack))
    # The login limit (3 a minute per address) counts across both: two more attempts pass, then 429,
    # on whichever process answers.
    anonymous = stack.client(None)
    anonymous.get("/login")
    form = f"email=nobody%40example.com&password=wrong&_csrf_token={anonymous.cookies['quire_csrf']}"
    cookies = "; ".join(f"{name}={value}" for name, value in anonymous.cookies.items())
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookies}
    statuses = [request(stack, "POST", "/login", headers, form)[0] for _ in range(6)]
    assert [status == 429 for status in statuses] == [False, False, True, True, True, True]
    # And neither process writes a line for each request: the access log is off by default.
    log = stack.logs("web")
    assert "Application startup complete" in log
    assert "GET /jobs HTTP/1.1" not in log


def test_each_web_process_runs_on_a_processor_of_its_own_when_they_cover_the_processors(two_process_web: Stack) -> None:
    stack = two_process_web
    given = frozenset(os.sched_getaffinity(0))
    # Given two web processes that have served requests (their worker threads start with the first ones)
    for _ in range(20):
        assert stack.http.get(f"/ai-jobs/{stack.submit(b'a short note')}").status_code == 200
    # Then, on a machine of two processors, each runs every thread of its own on one, and not the same one
    placed = [threads_processors(pid) for pid in web_processes(stack)]
    if len(given) == 2:
        assert all(len(threads) == 1 and len(next(iter(threads))) == 1 for threads in placed), placed
        assert set().union(*placed) == {frozenset({p}) for p in given}
    else:  # fewer processes than processors, or one processor: where the system puts them
        assert placed == [{given}, {given}]
    # And the locks that kept them apart are gone once the server has stopped
    assert stack.web is not None
    parent = stack.web.pid
    stack.stop()
    assert not list(Path(tempfile.gettempdir(), f"quire-processors-{os.getuid()}").glob(f"web-*-{parent}-*.lock"))
