"""Live updates, the telling side: after each committed change, one Redis message says which job moved.

`ChangePublisher` is a dispatcher after-commit hook in every process (web and worker), so it
hears every transition and progress write once the database has it: a client can never be told
of a state the database does not hold. Every web process subscribes to the one channel and
wakes the streams and waiting requests it holds for that job or its owner (`web/live.py`).

Redis pub/sub is fire and forget: a message sent while no web process listens is gone. Nothing
depends on it: every stream starts with a snapshot read from the database, and a reconnect reads
a fresh one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
import redis

from quire.db import Database
from quire.jobs.models import Job, JobRemoved, JobReviewed
from quire.jobs.store import get_job

log = logging.getLogger(__name__)

CHANNEL = "quire:job-changes"
# The status a change carries when the job's record was deleted (no job status of its own).
DELETED = "deleted"
# After a failed publish (Redis down), the next ones are skipped for this long rather than each
# transition waiting out a connection timeout.
QUIET_AFTER_FAILURE_S = 5.0
# msgspec's encoder (Litestar's own JSON library): a change is encoded for every transition.
_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True)
class Change:
    """One committed change of a job: its owner (for the owner's list stream) and its new status
    (None for a progress write, which moves no job in the line; `deleted` when the record is gone)."""

    job_id: str
    owner_id: str | None
    status: str | None

    def encode(self) -> bytes:
        return _encode({"job_id": self.job_id, "owner_id": self.owner_id, "status": self.status})

    @classmethod
    def decode(cls, data: str | bytes) -> Change | None:
        try:
            fields = json.loads(data)
            return cls(str(fields["job_id"]), fields.get("owner_id"), fields.get("status"))
        except (ValueError, KeyError, TypeError):
            return None


class ChangePublisher:
    """The after-commit hook `(job_id, moved)` that publishes a `Change`.

    A transition hands over the job row it wrote; a progress write hands over only the progress,
    so owners are remembered from the transitions this process made (a claim always comes before
    its attempt's progress) and read from the database otherwise.

    The hook only queues the change; one thread of this process sends whatever has queued up in
    one pipeline, in order, at most once every `MIN_INTERVAL_S`. A busy worker thus makes one round
    trip for many changes instead of one per change (it was a seventh of a short job's CPU), and
    wakes this thread a few hundred times a second at most (each wake took the interpreter from the
    threads running jobs: waking for every change was a quarter of a no-op job's thread switches);
    an idle one sends a change at once.
    """

    MAX_BATCH = 256
    MIN_INTERVAL_S = 0.005

    def __init__(self, db: Database, client: redis.Redis[bytes], owners_kept: int = 256) -> None:
        self.db = db
        self._client = client
        self._owners: OrderedDict[str, str | None] = OrderedDict()
        self._owners_kept = owners_kept
        self._quiet_until = 0.0
        self._pending: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._sender: threading.Thread | None = None
        self._lock = threading.Lock()

    def __call__(self, job_id: str, moved: object) -> None:
        if time.monotonic() < self._quiet_until:
            return
        if isinstance(moved, Job):
            change = Change(job_id, self._remember(job_id, moved.owner_id), str(moved.status))
        elif isinstance(moved, JobRemoved):
            self._owners.pop(job_id, None)
            change = Change(job_id, moved.owner_id, DELETED)
        elif isinstance(moved, JobReviewed):  # its views changed, not its place in the line
            change = Change(job_id, self._remember(job_id, moved.owner_id), None)
        else:
            change = Change(job_id, self._owner(job_id), None)
        self._pending.put(change.encode())
        if self._sender is None:
            with self._lock:
                if self._sender is None:
                    self._sender = threading.Thread(target=self._send_forever, name="live-updates", daemon=True)
                    self._sender.start()

    def _send_forever(self) -> None:
        sent_at = 0.0
        while True:
            batch = [self._pending.get()]
            # A change soon after the last send waits out the rest of the interval, gathering those that follow.
            if (wait := sent_at + self.MIN_INTERVAL_S - time.monotonic()) > 0:
                time.sleep(wait)
            with contextlib.suppress(queue.Empty):
                while len(batch) < self.MAX_BATCH:
                    batch.append(self._pending.get_nowait())
            if time.monotonic() < self._quiet_until:
                continue
            try:
                with self._client.pipeline(transaction=False) as pipe:
                    for data in batch:
                        pipe.publish(CHANNEL, data)
                    pipe.execute()
            except (redis.RedisError, OSError) as exc:
                self._quiet_until = time.monotonic() + QUIET_AFTER_FAILURE_S
                log.warning("%d live updates not sent (%s); open streams fall back to polling", len(batch), exc)
            sent_at = time.monotonic()

    def many(self, moves: Sequence[tuple[str, object]]) -> None:
        """Many transitions that committed together (a batch's jobs accepted): one Redis pipeline."""
        if time.monotonic() < self._quiet_until:
            return
        changes = [
            Change(job_id, self._remember(job_id, moved.owner_id), str(moved.status))
            if isinstance(moved, Job)
            else Change(job_id, self._owner(job_id), None)
            for job_id, moved in moves
        ]
        try:
            with self._client.pipeline(transaction=False) as pipeline:
                for change in changes:
                    pipeline.publish(CHANNEL, change.encode())
                pipeline.execute()
        except (redis.RedisError, OSError) as exc:
            self._quiet_until = time.monotonic() + QUIET_AFTER_FAILURE_S
            log.warning("live updates for %d jobs not sent (%s); open streams fall back to polling", len(changes), exc)

    def _remember(self, job_id: str, owner_id: str | None) -> str | None:
        self._owners[job_id] = owner_id
        self._owners.move_to_end(job_id)
        while len(self._owners) > self._owners_kept:
            self._owners.popitem(last=False)
        return owner_id

    def _owner(self, job_id: str) -> str | None:
        if job_id in self._owners:
            return self._owners[job_id]
        job = get_job(self.db, job_id)
        return self._remember(job_id, job.owner_id) if job is not None else None
