"""Carrying out group replays: workers take on recorded replays and replay their jobs at the rate.

Every worker process runs `run_group_replays` beside its recovery loop. It takes on a replay
nobody holds and replays the group's jobs one at a time, `rate` a second: each job's conditional
transition and the move of the replay's cursor past it commit together, then the dispatcher sends
the job's message. The lease it holds outlasts the wait between two jobs; a worker that dies lets
it run out, and another worker goes on from the cursor. A worker that stops gives it up at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import partial

from quire.db import Database
from quire.jobs import replays
from quire.jobs.models import GroupReplay
from quire.queue.dispatch import Dispatcher
from quire.settings import Settings

log = logging.getLogger(__name__)


def lease_for(settings: Settings, rate: float) -> float:
    """How long a replay is held between two writes: the lease, plus the wait for the next job."""
    return settings.lease_seconds + 1.0 / rate


def carry_out(
    settings: Settings,
    db: Database,
    replay: GroupReplay,
    dispatcher: Dispatcher,
    stop: threading.Event,
    on_replayed: Callable[[str], None] | None = None,
) -> bool:
    """Replay the group's jobs from the cursor on; True when the group is done, False when the
    replay was stopped, lost to another worker, or `stop` was set (the replay is then given up)."""
    lease_s = lease_for(settings, replay.rate)
    interval = 1.0 / replay.rate
    next_at = time.monotonic()
    while not stop.is_set():
        found = replays.next_job(db, replay)
        if found is None:
            replays.finish(db, replay)
            log.info("group replay %s done", replay.id)
            return True
        job_id, updated_at = found
        while (wait := next_at - time.monotonic()) > 0 and not stop.is_set():
            stop.wait(min(wait, lease_s / 3))
            if not replays.renew(db, replay, lease_s):
                return False
        if stop.is_set():
            break
        try:
            replayed = dispatcher.move(
                job_id, partial(replays.replay_next, settings, db, replay, job_id, updated_at, lease_s=lease_s)
            ).moved
        except replays.Lost:
            log.info("group replay %s was stopped or taken on by another worker", replay.id)
            return False
        if replayed is not None:
            next_at = time.monotonic() + interval
            if on_replayed is not None:
                on_replayed(job_id)
    replays.let_go(db, replay)
    return False


def run_group_replays(
    settings: Settings, db: Database, stop: threading.Event, dispatcher: Dispatcher, owner: str
) -> None:
    """Take on and carry out recorded replays until `stop` is set. Survives database outages."""
    interval = settings.recovery_interval_seconds
    while not stop.is_set():
        taken = None
        try:
            taken = replays.take_on(db, owner, settings.lease_seconds)
            if taken is not None:
                log.info("carrying out group replay %s at %g/s", taken.id, taken.rate)
                carry_out(settings, db, taken, dispatcher, stop)
        except Exception:
            log.exception("group replay failed; will try again")
        if taken is None:
            stop.wait(interval)
