"""The supervisor `quire worker` runs: it keeps worker processes running and restarts one that dies.

It imports next to nothing: each worker process (`quire worker-process`, `queue/worker.py`) loads
the job engine itself, and the supervisor, which never runs a job, does not pay for it again.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
from types import FrameType

from quire.processors import plan
from quire.settings import Settings

log = logging.getLogger(__name__)

# A worker process that dies sooner than this after starting counts as a crash loop.
CRASH_LOOP_S = 3.0
MAX_RESTART_DELAY_S = 10.0


class StopRequest:
    """Whether SIGTERM or SIGINT has arrived.

    The handler only sets a flag, which the main thread polls. Setting a threading.Event from a
    handler can deadlock: the handler runs in the main thread, and if the signal lands while that
    thread holds the Event's lock inside Event.wait, Event.set waits for that lock forever.
    """

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        self.requested = True

    def sleep(self, seconds: float) -> bool:
        """Sleep for up to `seconds`; True as soon as a stop is requested."""
        end = time.monotonic() + seconds
        while not self.requested and (left := end - time.monotonic()) > 0:
            time.sleep(min(0.1, left))
        return self.requested


def supervise(settings: Settings, processes: int, threads: int) -> int:
    """Keep `processes` worker processes running; restart one that dies, backing off only when
    a process keeps dying right after it starts (a crash loop), never for an occasional kill."""
    command = [sys.executable, "-m", "quire", "worker-process", "--threads", str(threads)]
    # Each process keeps its processor through restarts.
    commands = [
        command + ([] if processor is None else ["--processor", str(processor)])
        for processor in plan(processes, settings.worker_pin_cpus)
    ]
    children: list[subprocess.Popen[bytes]] = [subprocess.Popen(each) for each in commands]
    started = [time.monotonic()] * processes
    quick_deaths = [0] * processes
    signals = StopRequest()
    while not signals.sleep(0.2):
        for i, child in enumerate(children):
            code = child.poll()
            if code is None:
                continue
            lived = time.monotonic() - started[i]
            quick_deaths[i] = quick_deaths[i] + 1 if lived < CRASH_LOOP_S else 0
            delay = min(MAX_RESTART_DELAY_S, 0.5 * 2 ** (quick_deaths[i] - 1)) if quick_deaths[i] else 0.0
            log.warning(
                "worker process %d exited with %s after %.1f s; restarting in %.1f s", child.pid, code, lived, delay
            )
            sys.stderr.write(f"quire worker process {child.pid} exited ({code}); restarting\n")
            if signals.sleep(delay):
                break
            started[i] = time.monotonic()
            children[i] = subprocess.Popen(commands[i])
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.wait(timeout=settings.shutdown_grace_s + 10)
        except subprocess.TimeoutExpired:
            child.kill()
    return 0
