"""Execution control: how long the worker waits for an attempt, and what it holds meanwhile.

The workflow runs in a thread of its own so that the attempt timeout holds even when the
workflow blocks in one long call that nothing can interrupt: the worker stops waiting, records
the timeout, and the abandoned thread is fenced out of the job record for good. The job's
deadline is held the same way: under `QUIRE_DEADLINE_POLICY=stop` the worker stops waiting at
the deadline and dead-letters the job; under `finish` it records the deadline passing and waits
on until the attempt's own timeout. An attempt that reads pages by OCR gets
`ocr_seconds_per_page` more time for each such page, counted as soon as the reader knows.
"""

from __future__ import annotations

import contextvars
import os
import queue
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TypeVar

import structlog

from quire.db import Database
from quire.documents.extract import Progress
from quire.jobs import states
from quire.jobs.models import utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.jobs.states import AttemptRef
from quire.queue.dispatch import Dispatcher
from quire.settings import Settings

log = structlog.stdlib.get_logger(__name__)
T = TypeVar("T")


class AttemptTimedOut(Exception):
    """The attempt ran past the time it was given, `seconds` (its timeout plus any OCR allowance)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"{seconds:g} s")
        self.seconds = seconds


class DeadlinePassed(Exception):
    """The job's deadline passed while its attempt ran, and the policy stopped the attempt."""


@dataclass
class AttemptLimits:
    """How long the worker waits for one attempt: its timeout (plus the time its OCR pages are
    allowed, which grows as the reader finds them), and the job's deadline by policy."""

    db: Database
    settings: Settings
    ref: AttemptRef
    timeout_s: float
    deadline_at: datetime
    policy: DeadlinePolicy
    extra_s: float = 0.0
    started: float = field(default_factory=time.monotonic)
    deadline_recorded: bool = False
    dispatcher: Dispatcher | None = None  # told of the deadline's passing, when given

    @property
    def given_s(self) -> float:
        return self.timeout_s + self.extra_s

    def allow_ocr_pages(self, pages: int) -> None:
        self.extra_s = pages * self.settings.ocr_seconds_per_page

    def wait(self, finished: Callable[[float], bool]) -> None:
        """Return once `finished(seconds)` says the attempt is done; raise when a limit comes first.

        Under `stop` the deadline ends the job (recorded before raising); under `finish` the
        deadline's passing is recorded and the wait goes on to the timeout. The wait runs in
        slices of at most a second: the OCR allowance may grow meanwhile, and the deadline is
        wall-clock time while the wait is monotonic, so it is recorded only once it has really passed.
        """
        while True:
            left = self.started + self.given_s - time.monotonic()
            if left <= 0:
                if finished(0.0):
                    return
                raise AttemptTimedOut(self.given_s)
            step = min(left, 1.0)
            if not self.deadline_recorded:
                to_deadline = (self.deadline_at - utcnow()).total_seconds()
                if to_deadline <= 0:
                    passed = partial(
                        states.pass_deadline, self.settings, self.db, self.ref.job_id, self.policy, self.ref
                    )
                    if self.dispatcher is not None:
                        self.dispatcher.record(self.ref.job_id, passed)
                    else:
                        passed()
                    self.deadline_recorded = True
                    if self.policy is DeadlinePolicy.STOP:
                        raise DeadlinePassed
                else:
                    step = min(step, to_deadline)
            if finished(step):
                return


class _Call:
    """One function run on an attempt thread; `is_alive()` while it has not returned."""

    def __init__(self, fn: Callable[[], object], context: contextvars.Context) -> None:
        self.fn = fn
        self.context = context
        self.done = threading.Event()
        self.value: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.context.run(self.fn)
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()

    def is_alive(self) -> bool:
        return not self.done.is_set()


class AttemptThreads:
    """Threads that run workflows, kept between attempts: starting a thread per attempt was a
    visible share of a short job's cost. A thread whose call was abandoned (timed out) is simply
    busy until that call returns, and a fresh thread is started meanwhile if one is needed."""

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue[_Call | None]] = []
        self._lock = threading.Lock()
        self._started = 0

    def submit(self, call: _Call) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
            if inbox is None:
                self._started += 1
                number = self._started
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name=f"attempt-{number}", daemon=True).start()
        inbox.put(call)

    def _serve(self, inbox: queue.SimpleQueue[_Call | None]) -> None:
        while (call := inbox.get()) is not None:
            call.run()
            del call  # nothing of a finished attempt stays referenced by an idle thread
            with self._lock:
                self._idle.append(inbox)


@dataclass
class ExecutionControl:
    """This worker process's identity, the attempts it currently holds leases for, and the
    threads their workflows run on."""

    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}")
    held: dict[str, AttemptRef] = field(default_factory=dict)
    abandoned: list[_Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    threads: AttemptThreads = field(default_factory=AttemptThreads)
    # QUIRE_MAX_ABANDONED_ATTEMPTS (the worker's runner passes it): the process restarts past it.
    max_abandoned: int = Settings.model_fields["max_abandoned_attempts"].default

    def hold(self, ref: AttemptRef) -> None:
        with self.lock:
            self.held[ref.job_id] = ref

    def release(self, job_id: str) -> None:
        with self.lock:
            self.held.pop(job_id, None)

    def held_jobs(self) -> list[str]:
        with self.lock:
            return list(self.held)

    def held_attempts(self) -> list[AttemptRef]:
        with self.lock:
            return list(self.held.values())

    def abandon(self, call: _Call) -> None:
        """Count a timed-out attempt still running; too many of them means this process must restart."""
        with self.lock:
            self.abandoned = [c for c in self.abandoned if c.is_alive()]
            self.abandoned.append(call)
            stuck = len(self.abandoned)
        if stuck >= self.max_abandoned:
            log.error("%d timed-out attempts are still blocking threads; restarting this worker", stuck)
            os.kill(os.getpid(), signal.SIGTERM)


class AttemptProgress:
    """The progress callback of one attempt: records progress with the lease, and reports OCR pages
    (to the attempt's limits, or across the pipe from an isolated attempt) so they get their time.

    Writes at most a few times a second (a text PDF reports every page), always the last page.
    With `hold_first_s`, nothing is written that early in the attempt: a short attempt's progress
    (`unwritten`) is recorded by the transition that completes it, not by a write of its own.
    """

    MIN_INTERVAL_S = 0.25

    def __init__(
        self,
        db: Database,
        ref: AttemptRef,
        lease_s: float,
        on_ocr_pages: Callable[[int], None] | None = None,
        on_written: Callable[[str, object], None] | None = None,
        hold_first_s: float = 0.0,
    ) -> None:
        self.db = db
        self.ref = ref
        self.lease_s = lease_s
        self.ocr_pages = 0
        self._on_ocr_pages = on_ocr_pages
        # The dispatcher's after-commit hooks, told of each progress write that landed (in a
        # worker thread; an isolated attempt's process has no dispatcher and writes silently).
        self._on_written = on_written
        self._written_at = 0.0
        self._hold_until = time.monotonic() + hold_first_s if hold_first_s > 0 else 0.0
        self.unwritten: dict[str, object] | None = None

    def __call__(self, progress: Progress) -> None:
        if progress.ocr_pages != self.ocr_pages:
            self.ocr_pages = progress.ocr_pages
            if self._on_ocr_pages is not None:
                self._on_ocr_pages(progress.ocr_pages)
        now = time.monotonic()
        if now < self._hold_until:
            self.unwritten = progress.as_record()
            return
        if progress.done < progress.total and now - self._written_at < self.MIN_INTERVAL_S:
            return
        self._written_at = now
        self.unwritten = None
        view = progress.as_record()
        if states.report_progress(self.db, self.ref, view, self.lease_s) and self._on_written is not None:
            self._on_written(self.ref.job_id, view)


def call_with_timeout(fn: Callable[[], T], limits: AttemptLimits, name: str, control: ExecutionControl) -> T:
    """Run `fn` on one of the control's attempt threads and wait for it within `limits`; past
    them, abandon it (the thread runs on unwatched, and is fenced out of the job record)."""
    # The workflow's thread logs with the attempt's context (job id, attempt, worker, workflow).
    call = _Call(fn, contextvars.copy_context())
    control.threads.submit(call)
    try:
        limits.wait(call.done.wait)
    except BaseException:
        # Whatever ended the wait (a limit, or a failure to record one), the call runs on unwatched.
        control.abandon(call)
        raise
    if call.error is not None:
        raise call.error
    return call.value  # type: ignore[return-value]
