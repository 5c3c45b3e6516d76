"""One processor for each worker process.

A worker process runs a job's short steps on several threads that take turns on the interpreter lock. Where those
threads run on different processors, each turn wakes one processor from another; on a two-processor machine a no-op
job's turns cost more than its work. Pinned to one processor, a worker process made about 25 thread switches a no-op
job instead of about 65, and spent a quarter to a third less processor time on each (`bench/suite.py`'s no-op drain).

So `quire worker` gives each of its processes one of the processors it may use (`plan`, then `pin` in the process)
when it runs at least as many processes as there are processors, or when `QUIRE_WORKER_PIN_CPUS` says so; the
operating system still places everything else around them. Long work that runs outside the interpreter (OCR:
Tesseract's own processes, page rendering) reaches every processor the process was given for as long as it runs
(`all_processors`), and so does an isolated attempt's process.

Linux applies an affinity to the calling thread, and a new thread or process starts with its creator's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

# The processors this process was given before it pinned itself; None until it does.
_given: frozenset[int] | None = None


def plan(processes: int, wanted: bool | None) -> list[int | None]:
    """The processor for each of a supervisor's `processes` worker processes, or None to leave them where the system
    puts them: where pinning is not `wanted`, where there is one processor, and by default (`wanted` None) where the
    processes are fewer than the processors. Then the system lends them the spare ones, and other workers on the
    machine (replicas of one container, say) are not pinned to the same processors as these."""
    if wanted is False or not hasattr(os, "sched_getaffinity"):
        return [None] * processes
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2 or (wanted is None and processes < len(allowed)):
        return [None] * processes
    # Supervisors on one machine know nothing of each other (replicas even share their pids): each starts its
    # round at a processor drawn at random.
    start = random.randrange(len(allowed))
    return [allowed[(start + i) % len(allowed)] for i in range(processes)]


def pin(processor: int) -> None:
    """Run this thread, and every thread it starts from now on, on `processor` alone: call it before any other. A
    processor this process may not use (its allowed set changed since the supervisor chose) leaves it unpinned."""
    global _given
    given = frozenset(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, {processor})
    except OSError as exc:
        log.warning("not pinned to processor %d (%s); running on %s", processor, exc, sorted(given))
        return
    _given = given


@contextmanager
def all_processors() -> Iterator[None]:
    """For the length of the block, this thread, and the threads and processes it starts meanwhile, may run on every
    processor the process was given. Nothing changes in a process that did not pin itself; an affinity the system
    refuses (its allowed set changed) is no error, only slower."""
    if _given is None:
        yield
        return
    narrow = os.sched_getaffinity(0)
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, _given)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, narrow)
