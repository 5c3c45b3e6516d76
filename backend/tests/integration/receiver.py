"""A real webhook receiver on 127.0.0.1 for tests: it records every POST and answers by script.

Each test takes a path of its own (`receiver.url("flaky")`); the last part of the path picks the
answers: `ok` (200), `flaky` (500 twice, then 200), `hang` (no answer for 10 s), `gone` (410),
`redirect` (302 to `/ok`, which a sender must not follow).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_S = 10.0


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int


class WebhookReceiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                behaviour = self.path.rstrip("/").rsplit("/", 1)[-1]
                with receiver._lock:
                    receiver._seen[self.path] += 1
                    seen = receiver._seen[self.path]
                status, headers = 200, {}
                if behaviour == "flaky" and seen <= 2:
                    status = 500
                elif behaviour == "hang":
                    time.sleep(HANG_S)
                elif behaviour == "gone":
                    status = 410
                elif behaviour == "redirect":
                    status, headers = 302, {"Location": "/ok"}
                with receiver._lock:
                    receiver.received.append(Received(self.path, dict(self.headers.items()), body, status))
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender gave up waiting

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, behaviour: str = "ok", host: str = "127.0.0.1") -> str:
        """A URL of its own for one test, answering by `behaviour`."""
        return f"http://{host}:{self.port}/hooks/{uuid.uuid4().hex}/{behaviour}"

    def at(self, url: str) -> list[Received]:
        path = url.split(str(self.port), 1)[1]
        with self._lock:
            return [r for r in self.received if r.path == path]

    def wait_for(self, url: str, count: int = 1, timeout: float = 20) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(got := self.at(url)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(got)} of {count} webhooks arrived at {url} within {timeout} s")
            time.sleep(0.05)
        return got
