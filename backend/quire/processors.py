"""One processor for each worker process.

A worker process runs a job's short steps on several threads that take turns on the interpreter lock. Where those
threads run on different processors, each turn wakes one processor from another; on a two-processor machine a no-op
job's turns cost more than its work. Pinned to one processor, a worker process made about 25 thread switches a no-op
job instead of about 65, and spent a quarter to a third less processor time on each (`bench/suite.py`'s no-op drain).

So `quire worker` gives each of its processes one of the processors it may use (`choose`, then `pin` in the process)
when it runs at least as many processes as there are processors, or when `QUIRE_WORKER_PIN_CPUS` says so; the
operating system still places everything else around them. Long work that runs outside the interpreter (OCR:
Tesseract's own processes, page rendering) reaches every processor the process was given for as long as it runs
(`all_processors`), and so does an isolated attempt's process.

Linux applies an affinity to the calling thread, and a new thread or process starts with its creator's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

# The processors this process was given before it pinned itself; None until it does.
_given: frozenset[int] | None = None


def choose(index: int, processes: int, wanted: bool | None) -> int | None:
    """The processor for the `index`th of a supervisor's `processes` worker processes, or None to leave the process
    where the system puts it: where pinning is not `wanted`, where there is one processor, and by default (`wanted`
    None) where the processes are fewer than the processors. Then the system lends them the spare ones, and other
    workers on the machine (containers of one image, say) are not pinned to the same processor as this one."""
    if wanted is False or not hasattr(os, "sched_getaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2 or (wanted is None and processes < len(allowed)):
        return None
    # Supervisors on one machine know nothing of each other: each starts its round at a processor of its own.
    return allowed[(os.getpid() + index) % len(allowed)]


def pin(processor: int) -> None:
    """Run this thread, and every thread it starts from now on, on `processor` alone: call it before any other."""
    global _given
    _given = frozenset(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {processor})


@contextmanager
def all_processors() -> Iterator[None]:
    """For the length of the block, this thread, and the threads and processes it starts meanwhile, may run on every
    processor the process was given. Nothing changes in a process that did not pin itself."""
    if _given is None:
        yield
        return
    narrow = os.sched_getaffinity(0)
    os.sched_setaffinity(0, _given)
    try:
        yield
    finally:
        os.sched_setaffinity(0, narrow)
