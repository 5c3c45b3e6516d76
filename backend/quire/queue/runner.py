"""Execution control around a workflow: claim, heartbeat, timeout, deadline, artifacts, classify, decide.

The workflow function itself runs in its own thread so that the attempt timeout holds even when
the workflow blocks in one long call that nothing can interrupt: the worker stops waiting,
records the timeout, and fences the abandoned thread out of the job record for good. The job's
deadline is held the same way: under `QUIRE_DEADLINE_POLICY=stop` the worker stops waiting at
the deadline and dead-letters the job; under `finish` it records the deadline passing and waits
on until the attempt's own timeout.

An attempt that reads pages by OCR gets `ocr_seconds_per_page` more time for each such page, on
top of the job's timeout: the reader reports how many pages need OCR as soon as it knows.

A job whose last attempt was lost with its worker runs its next attempt in a process of its own.
If it is the poison that killed the worker, it now kills only that process and is charged for
it; if it was an innocent bystander, it completes. Either way no other job pays for it.
"""

from __future__ import annotations

import contextvars
import json
import multiprocessing
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from multiprocessing.connection import Connection
from typing import Any, TypeVar

import structlog

from quire.documents.extract import Document, Limits, Progress, ProgressCallback, extract
from quire.documents.storage import get_storage
from quire.errors import ERROR_MESSAGES, ErrorCode, JobFailure, RateLimited, WorkerLost
from quire.jobs import policy, states
from quire.jobs.models import Artifact, Job, JobStatus, attempt_prefix, utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.jobs.states import AttemptRef
from quire.jobs.store import get_job
from quire.metrics import get_metrics
from quire.queue.dispatch import Dispatcher
from quire.settings import get_settings
from quire.workflows.models.providers import get_provider
from quire.workflows.registry import get_workflow

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
        self.extra_s = pages * get_settings().ocr_seconds_per_page

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
                    passed = partial(states.pass_deadline, self.ref.job_id, self.policy, self.ref)
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


@dataclass
class ExecutionControl:
    """This worker process's identity and the attempts it currently holds leases for."""

    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}")
    held: dict[str, AttemptRef] = field(default_factory=dict)
    abandoned: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

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

    def abandon(self, thread: threading.Thread) -> None:
        """Count a timed-out attempt thread; too many still alive means this process must restart."""
        with self.lock:
            self.abandoned = [t for t in self.abandoned if t.is_alive()]
            self.abandoned.append(thread)
            stuck = len(self.abandoned)
        if stuck >= get_settings().max_abandoned_attempts:
            log.error("%d timed-out attempts are still blocking threads; restarting this worker", stuck)
            os.kill(os.getpid(), signal.SIGTERM)


class AttemptProgress:
    """The progress callback of one attempt: records progress with the lease, and reports OCR pages
    (to the attempt's limits, or across the pipe from an isolated attempt) so they get their time.

    Writes at most a few times a second (a text PDF reports every page), always the last page.
    """

    MIN_INTERVAL_S = 0.25

    def __init__(
        self,
        ref: AttemptRef,
        on_ocr_pages: Callable[[int], None] | None = None,
        on_written: Callable[[str, object], None] | None = None,
    ) -> None:
        self.ref = ref
        self.ocr_pages = 0
        self._on_ocr_pages = on_ocr_pages
        # The dispatcher's after-commit hooks, told of each progress write that landed (in a
        # worker thread; an isolated attempt's process has no dispatcher and writes silently).
        self._on_written = on_written
        self._written_at = 0.0

    def __call__(self, progress: Progress) -> None:
        if progress.ocr_pages != self.ocr_pages:
            self.ocr_pages = progress.ocr_pages
            if self._on_ocr_pages is not None:
                self._on_ocr_pages(progress.ocr_pages)
        now = time.monotonic()
        if progress.done < progress.total and now - self._written_at < self.MIN_INTERVAL_S:
            return
        self._written_at = now
        view = progress.view()
        if states.report_progress(self.ref, view, get_settings().lease_seconds) and self._on_written is not None:
            self._on_written(self.ref.job_id, view)


def call_with_timeout(fn: Callable[[], T], limits: AttemptLimits, name: str, control: ExecutionControl) -> T:
    """Run `fn` in a fresh thread and wait for it within `limits`; past them, abandon the thread."""
    done = threading.Event()
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:
            outcome["error"] = exc
        finally:
            done.set()

    # The workflow's thread logs with the attempt's context (job id, attempt, worker, workflow).
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(target,), name=name, daemon=True)
    thread.start()
    try:
        limits.wait(done.wait)
    except BaseException:
        # Whatever ended the wait (a limit, or a failure to record one), the thread runs on unwatched.
        control.abandon(thread)
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


@dataclass(frozen=True)
class Outcome:
    artifacts: list[Artifact]
    provenance: dict[str, str]


def _isolated_target(fields: dict[str, Any], worker_id: str, conn: Connection) -> None:
    """Child process: run one attempt and send back its outcome or its failure.

    Progress is written under the parent's worker id, which holds the lease; the count of pages
    needing OCR goes to the parent, which keeps the time.
    """
    job = Job(**fields)
    progress = AttemptProgress(AttemptRef(job.id, job.attempt, worker_id), lambda n: conn.send(("ocr_pages", n)))
    try:
        outcome = execute(job, worker_id, progress)
        conn.send(("ok", [a.model_dump() for a in outcome.artifacts], outcome.provenance))
    except JobFailure as failure:
        retry_after = failure.retry_after_s if isinstance(failure, RateLimited) else None
        conn.send(("failure", failure.code.value, failure.message, _operator_detail(failure), retry_after))
    except BaseException as exc:
        conn.send(("error", _operator_detail(exc)))
    finally:
        conn.close()


class IsolatedFailure(JobFailure):
    """A failure reported by an isolated attempt's process, carrying its code and detail."""

    def __init__(self, code: ErrorCode, message: str, detail: str, retry_after_s: float | None) -> None:
        self.code = code
        super().__init__(message)
        self.operator_detail = detail
        self.retry_after_s = retry_after_s


def call_isolated(job: Job, limits: AttemptLimits, worker_id: str) -> Outcome:
    """Run one attempt in a fresh process; kill it past `limits`; a dead process is worker_lost."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    fields = {c: getattr(job, c) for c in Job.model_fields}
    process = context.Process(
        target=_isolated_target, args=(fields, worker_id, sender), name=f"isolated-{job.id}", daemon=True
    )
    process.start()
    sender.close()
    try:
        while True:
            try:
                limits.wait(receiver.poll)
            except BaseException:
                process.kill()
                raise
            try:
                message = receiver.recv()
            except EOFError:
                message = None
            if message is None or message[0] != "ocr_pages":
                break
            limits.allow_ocr_pages(message[1])
    finally:
        process.join(5)
        receiver.close()
    if message is None:
        raise WorkerLost(f"The attempt's process stopped unexpectedly (exit code {process.exitcode}).")
    if message[0] == "ok":
        return Outcome([Artifact(**a) for a in message[1]], message[2])
    if message[0] == "failure":
        raise IsolatedFailure(ErrorCode(message[1]), message[2], message[3], message[4])
    raise IsolatedFailure(ErrorCode.INTERNAL_ERROR, ERROR_MESSAGES[ErrorCode.INTERNAL_ERROR], message[1], None)


def execute(job: Job, worker_id: str, progress: ProgressCallback | None = None) -> Outcome:
    """Read the input, run the workflow, and stage its artifacts under this attempt's own keys."""
    settings = get_settings()
    storage = get_storage()
    workflow = get_workflow(job.workflow)
    model = get_provider(settings.model_provider, job.timeout_s)
    data = storage.read_bytes(job.input_ref)
    limits = Limits(max_pages=settings.max_pages, max_chars=settings.max_text_chars)
    languages = job.language or settings.ocr_languages
    document: Document = extract(data, job.input_filename, job.input_sha256, limits, languages, progress)
    result = workflow.run(document, model)
    provenance: dict[str, Any] = {
        "workflow": workflow.name,
        "workflow_version": workflow.version,
        "provider": model.name,
        "model": model.model_name,
        "prompt_version": workflow.prompt_version,
        "input_sha256": job.input_sha256,
    }
    if model.redacted is not None:
        # Kinds and counts only: the values never leave the attempt.
        provenance["redacted"] = model.redacted
    body = json.dumps({"result": result.model_dump(mode="json"), "provenance": provenance}, indent=2)
    prefix = attempt_prefix(job.id, job.attempt, worker_id)
    files = [
        (f"{workflow.name}.json", body.encode(), "application/json", True),
        (f"{workflow.name}.md", workflow.report(result).encode(), "text/markdown; charset=utf-8", False),
    ]
    if document.ocr_pages:
        # What OCR read, as text to search or copy, and the scan made searchable.
        files.append((f"{workflow.name}.txt", document.text.encode(), "text/plain; charset=utf-8", False))
    if document.searchable_pdf is not None:
        files.append((f"{workflow.name}-searchable.pdf", document.searchable_pdf, "application/pdf", False))
    artifacts = []
    for name, content, content_type, primary in files:
        stored = storage.put_bytes(f"{prefix}/{name}", content)
        artifacts.append(
            Artifact(
                job_id=job.id,
                name=name,
                storage_key=stored.key,
                size=stored.size,
                sha256=stored.sha256,
                content_type=content_type,
                primary=primary,
            )
        )
    return Outcome(
        artifacts,
        {"provider": model.name, "model_name": model.model_name, "prompt_version": workflow.prompt_version},
    )


def _operator_detail(exc: BaseException) -> str:
    """What an operator needs to see: the exception type, its message, the provider's status."""
    if isinstance(exc, IsolatedFailure):
        return exc.operator_detail
    status = getattr(exc, "status_code", None)
    cause = exc.__cause__
    parts = [f"{type(exc).__name__}: {str(exc)[:500]}"]
    if status is not None:
        parts.append(f"provider status {status}")
    if cause is not None:
        parts.append(f"caused by {type(cause).__name__}: {str(cause)[:300]}")
    return "; ".join(parts)


@dataclass
class Runner:
    """Runs the attempts this worker process is given; built once per process by the bootstrap."""

    dispatcher: Dispatcher
    control: ExecutionControl = field(default_factory=ExecutionControl)

    def run_attempt(self, job_id: str) -> None:
        """Deliver one message: claim the job, run one attempt, record what happened."""
        settings = get_settings()
        job = self.dispatcher.record(
            job_id,
            partial(
                states.claim,
                job_id,
                self.control.worker_id,
                settings.lease_seconds,
                settings.deadline_policy is DeadlinePolicy.FINISH,
            ),
        )
        if job is None:
            self._unclaimable(job_id)
            return
        ref = AttemptRef(job.id, job.attempt, self.control.worker_id)
        with structlog.contextvars.bound_contextvars(
            job_id=job.id, attempt=job.attempt, worker_id=self.control.worker_id, workflow=job.workflow
        ):
            log.info("attempt started")
            self.control.hold(ref)
            try:
                self._run_claimed(job, ref)
            finally:
                self.control.release(job.id)

    def _run_claimed(self, job: Job, ref: AttemptRef) -> None:
        started = time.monotonic()
        outcome_label = "failed"
        limits = AttemptLimits(
            ref, job.timeout_s, job.deadline_at, get_settings().deadline_policy, dispatcher=self.dispatcher
        )
        try:
            if job.error_code == ErrorCode.WORKER_LOST:
                log.info("running this attempt in a process of its own: the last one was lost with its worker")
                outcome = call_isolated(job, limits, self.control.worker_id)
            else:
                progress = AttemptProgress(ref, limits.allow_ocr_pages, self.dispatcher.committed)
                outcome = call_with_timeout(
                    lambda: execute(job, ref.worker_id, progress),
                    limits,
                    f"attempt-{job.id}-{job.attempt}",
                    self.control,
                )
        except DeadlinePassed:
            log.info("attempt stopped at the job's deadline")
        except AttemptTimedOut as timed_out:
            message = f"The attempt did not finish within {round(timed_out.seconds, 1):g} s."
            self._fail(job, ref, ErrorCode.TIMEOUT, message, "AttemptTimedOut")
        except JobFailure as failure:
            retry_after = failure.retry_after_s if isinstance(failure, RateLimited) else None
            self._fail(job, ref, failure.code, failure.message, _operator_detail(failure), retry_after)
        except Exception as exc:
            log.exception("attempt raised an unexpected exception")
            message = ERROR_MESSAGES[ErrorCode.INTERNAL_ERROR]
            self._fail(job, ref, ErrorCode.INTERNAL_ERROR, message, _operator_detail(exc))
        else:
            completed = partial(states.complete, ref, outcome.artifacts, outcome.provenance)
            if self.dispatcher.record(job.id, completed) is None:
                log.info("attempt finished after losing the job; result discarded")
            else:
                outcome_label = "completed"
                log.info("attempt completed", seconds=round(time.monotonic() - started, 3))
        finally:
            get_metrics().attempt_seconds.labels(job.workflow, outcome_label).observe(time.monotonic() - started)

    def _fail(
        self,
        job: Job,
        ref: AttemptRef,
        code: ErrorCode,
        message: str,
        operator_detail: str,
        retry_after_s: float | None = None,
    ) -> None:
        settings = get_settings()
        decision = policy.decide(
            code,
            attempt=job.attempt - job.attempt_floor,
            max_attempts=job.max_attempts,
            now=utcnow(),
            deadline_at=job.deadline_at,
            base_s=settings.retry_base_s,
            max_s=settings.retry_max_s,
            retry_after_s=retry_after_s,
        )
        log.info("attempt failed", error=code.value, retry=isinstance(decision, policy.Retry))
        if isinstance(decision, policy.Retry):
            detail = f"{message} Retrying in {decision.delay_s:.1f} s."
            self.dispatcher.move(
                job.id,
                lambda message_id: states.retry(ref, code, decision.delay_s, message_id, detail, operator_detail),
                delay_s=decision.delay_s,
            )
            return
        if decision.code is not code:
            # The failure was retryable, but its backoff would end past the deadline: no retry is scheduled.
            message = f"{ERROR_MESSAGES[decision.code]} A retry after this failure ({code.value}) would start too late."
        self.dispatcher.record(job.id, partial(states.dead_letter, ref, decision.code, message, operator_detail))

    def release_held_attempts(self) -> int:
        """At shutdown: give every attempt this process still holds back to the queue at once."""
        released = 0
        for ref in self.control.held_attempts():
            if self.dispatcher.move(ref.job_id, partial(states.release, ref)).moved:
                released += 1
            self.control.release(ref.job_id)
        return released

    def _unclaimable(self, job_id: str) -> None:
        """A message that could not claim its job: a duplicate, an early retry, or a deadline passed."""
        job = get_job(job_id)
        if job is None:
            log.info("message for unknown job %s dropped", job_id)
        elif job.status == JobStatus.QUEUED and job.deadline_at <= utcnow():
            self.dispatcher.record(job_id, partial(states.expire_deadline, job_id))
        else:
            log.info("duplicate message for job %s (status %s) did nothing", job_id, job.status)
