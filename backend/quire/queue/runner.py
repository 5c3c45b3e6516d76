"""The runner: one delivered message becomes one attempt, from claim to the transition that ends it.

It ties the parts together and holds none of their detail: execution control (`execution`:
timeouts, the deadline, held attempts; `isolation`: an attempt in a process of its own), result
writing (`results`: the workflow run and its staged files) and the failure policy (`failures`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from functools import partial

import structlog

from quire.db import Database
from quire.documents.storage import Storage
from quire.errors import ErrorCode
from quire.jobs import states
from quire.jobs.models import Job, JobStatus, utcnow
from quire.jobs.policy import DeadlinePolicy
from quire.jobs.states import AttemptRef
from quire.jobs.store import get_job
from quire.metrics import get_metrics
from quire.queue.dispatch import Dispatcher
from quire.queue.execution import (
    AttemptLimits,
    AttemptProgress,
    AttemptTimedOut,
    DeadlinePassed,
    ExecutionControl,
    call_with_timeout,
)
from quire.queue.failures import AttemptFailure, FailedAttempt, classify, record_failure
from quire.queue.isolation import call_isolated
from quire.queue.results import Outcome, discard_staged, execute
from quire.settings import Settings

log = structlog.stdlib.get_logger(__name__)


@dataclass
class Runner:
    """Runs the attempts this worker process is given; built once per process by the bootstrap."""

    db: Database
    storage: Storage
    settings: Settings
    dispatcher: Dispatcher
    control: ExecutionControl = field(default_factory=ExecutionControl)

    def run_attempt(self, job_id: str) -> None:
        """Deliver one message: claim the job, run one attempt, record what happened."""
        job = self.dispatcher.record(
            job_id,
            partial(
                states.claim,
                self.settings,
                self.db,
                job_id,
                self.control.worker_id,
                self.settings.lease_seconds,
                self.settings.deadline_policy is DeadlinePolicy.FINISH,
            ),
        )
        if job is None:
            self._unclaimable(job_id)
            return
        ref = AttemptRef(job.id, job.attempt, self.control.worker_id)
        with structlog.contextvars.bound_contextvars(
            job_id=job.id, attempt=job.attempt, worker_id=self.control.worker_id, workflow=job.workflow
        ):
            log.debug("attempt started")
            self.control.hold(ref)
            try:
                self._run_claimed(job, ref)
            finally:
                self.control.release(job.id)

    def _run_claimed(self, job: Job, ref: AttemptRef) -> None:
        started = time.monotonic()
        outcome_label = "failed"
        limits = AttemptLimits(
            self.db,
            self.settings,
            ref,
            job.timeout_s,
            job.deadline_at,
            self.settings.deadline_policy,
            dispatcher=self.dispatcher,
        )
        # Set when the worker stops waiting for the attempt's thread, which runs on unwatched: what
        # it stages from then on is never published, so it removes it itself when it ends.
        abandoned = threading.Event()
        progress = AttemptProgress(
            self.db,
            ref,
            self.settings.lease_seconds,
            limits.allow_ocr_pages,
            self.dispatcher.committed,
            AttemptProgress.MIN_INTERVAL_S,
        )
        threaded = False

        def attempt() -> Outcome:
            try:
                return execute(self.settings, self.storage, job, ref.worker_id, progress)
            finally:
                if abandoned.is_set():
                    discard_staged(self.storage, ref)
                    log.info("abandoned attempt ended; its files discarded")

        try:
            if job.error_code == ErrorCode.WORKER_LOST:
                log.info("running this attempt in a process of its own: the last one was lost with its worker")
                outcome = call_isolated(job, limits, self.control.worker_id)
            else:
                threaded = True
                outcome = call_with_timeout(attempt, limits, f"attempt-{job.id}-{job.attempt}", self.control)
        except DeadlinePassed:
            log.info("attempt stopped at the job's deadline")
            abandoned.set()
            discard_staged(self.storage, ref)
        except AttemptTimedOut as timed_out:
            abandoned.set()
            message = f"The attempt did not finish within {round(timed_out.seconds, 1):g} s."
            record_failure(
                self.settings,
                self.db,
                self.dispatcher,
                job,
                ref,
                AttemptFailure(ErrorCode.TIMEOUT, message, "AttemptTimedOut"),
            )
            discard_staged(self.storage, ref)
        except Exception as exc:
            failure = classify(exc)
            if failure.code is ErrorCode.INTERNAL_ERROR and not isinstance(exc, FailedAttempt):
                log.exception("attempt raised an unexpected exception")
            recorded = record_failure(self.settings, self.db, self.dispatcher, job, ref, failure)
            # What it wrote before failing (some artifacts, say) is never published; its evidence is
            # kept with the failure it explains, unless the attempt was fenced out and recorded nothing.
            if not failure.evidence or not recorded:
                discard_staged(self.storage, ref)
                if not recorded:
                    log.info("attempt failed after losing the job; its files discarded")
        else:
            unwritten = progress.unwritten if threaded else None
            completed = partial(
                states.complete, self.settings, self.db, ref, outcome.artifacts, outcome.provenance, unwritten
            )
            if self.dispatcher.record(job.id, completed) is None:
                # Logged once the files are gone, so the line means they are.
                discard_staged(self.storage, ref)
                log.info("attempt finished after losing the job; result discarded")
            else:
                outcome_label = "completed"
                log.debug("attempt completed", seconds=round(time.monotonic() - started, 3))
        finally:
            get_metrics().attempt_seconds.labels(job.workflow, outcome_label).observe(time.monotonic() - started)

    def release_held_attempts(self) -> int:
        """At shutdown: give every attempt this process still holds back to the queue at once."""
        released = 0
        for ref in self.control.held_attempts():
            if self.dispatcher.move(ref.job_id, partial(states.release, self.settings, self.db, ref)).moved:
                released += 1
            self.control.release(ref.job_id)
        return released

    def _unclaimable(self, job_id: str) -> None:
        """A message that could not claim its job: a duplicate, an early retry, or a deadline passed."""
        job = get_job(self.db, job_id)
        if job is None:
            log.info("message for unknown job %s dropped", job_id)
        elif job.status == JobStatus.QUEUED and job.deadline_at <= utcnow():
            self.dispatcher.record(job_id, partial(states.expire_deadline, self.settings, self.db, job_id))
        else:
            log.info("duplicate message for job %s (status %s) did nothing", job_id, job.status)
