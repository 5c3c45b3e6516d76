"""The `fake` provider: fault injection for tests and demos, chosen by a `quire-fake: MODE` line.

Modes: success | slow:SECONDS | malformed | always_fail | flaky:N | crash | exit | rejected.
Every call is appended to `<data dir>/fake/calls.log` (the document's sha256), so tests can count
how many times a workflow really ran and `flaky:N` can fail exactly N times.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from quire.documents.extract import Document
from quire.errors import UpstreamRejected, UpstreamUnavailable
from quire.workflows.models import Task
from quire.workflows.models.local import LocalProvider

_MODE = re.compile(r"^\s*quire-fake:\s*(\S+)\s*$", re.MULTILINE)


class FakeCrash(RuntimeError):
    """An unexpected exception, as a buggy dependency would raise."""


def fake_mode(text: str) -> str:
    match = _MODE.search(text)
    return match.group(1) if match else "success"


def _record_call(path: Path, sha256: str) -> int:
    """Append this call to the log at `path` and return how many calls for the same document came
    before it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_text().split().count(sha256) if path.exists() else 0
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{sha256}\n".encode())
    finally:
        os.close(fd)
    return before


class FakeProvider:
    name = "fake"
    redacted: dict[str, int] | None = None  # nothing leaves the machine
    model_name = "quire-fake-1"

    def __init__(self, data_dir: Path) -> None:
        self._local = LocalProvider()
        self.calls_log = data_dir / "fake" / "calls.log"  # shared by every worker on the data directory

    def answer(self, task: Task, document: Document, schema: type[BaseModel]) -> dict[str, Any]:
        mode, _, argument = fake_mode(document.text).partition(":")
        previous_calls = _record_call(self.calls_log, document.sha256)
        if mode == "slow":
            time.sleep(float(argument or "1"))
        elif mode == "malformed":
            return {"unexpected": "shape"}
        elif mode == "always_fail":
            raise UpstreamUnavailable("The fake provider is configured to be unavailable.")
        elif mode == "flaky" and previous_calls < int(argument or "1"):
            raise UpstreamUnavailable(f"The fake provider failed on purpose (call {previous_calls + 1}).")
        elif mode == "crash":
            raise FakeCrash("the fake provider crashed on purpose")
        elif mode == "exit":
            os._exit(70)
        elif mode == "rejected":
            raise UpstreamRejected("The fake provider refused the request.")
        return self._local.answer(task, document, schema)
