"""One processor for each worker process, and for each web process.

A worker process runs a job's short steps on several threads that take turns on the interpreter lock. Where those
threads run on different processors, each turn wakes one processor from another; on a two-processor machine a no-op
job's turns cost more than its work. Pinned to one processor, a worker process made about 25 thread switches a no-op
job instead of about 65, and spent a quarter to a third less processor time on each (`bench/suite.py`'s no-op drain).

So `quire worker` gives each of its processes one of the processors it may use (`plan`, then `pin` in the process)
when it runs at least as many processes as there are processors, or when `QUIRE_WORKER_PIN_CPUS` says so; the
operating system still places everything else around them. Long work that runs outside the interpreter (OCR:
Tesseract's own processes, page rendering) reaches every processor the process was given for as long as it runs
(`all_processors`), and so does an isolated attempt's process.

`quire web` does the same for its processes (`QUIRE_WEB_PIN_CPUS`): a request that reads the database hops from the
event loop's thread to a worker thread and back. uvicorn starts its processes itself, so each claims the first
processor none of its siblings holds (`claim`). Pinned, a web process served a job's status in 0.39 to 0.41 ms of
processor time instead of 0.63 to 0.69 ms, and an accepted job in 1.7 to 1.9 ms instead of 2.7 to 2.8 ms.

Linux applies an affinity to the calling thread, and a new thread or process starts with its creator's.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import logging
import os
import random
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

# Set by `quire web` for the processes uvicorn starts: "<siblings' name>:<how many>".
SIBLINGS = "QUIRE_WEB_SIBLINGS"
# How many times, a second apart, a web process tries again for a processor when its siblings hold every one.
CLAIM_TRIES = 120

# The processors this process was given before it pinned itself; None until it does.
_given: frozenset[int] | None = None
# The lock on the processor this process claimed among its siblings, held open for its life.
_held: list[int] = []


def _locks() -> str | None:
    """Where siblings' locks live: a folder of this user's own in the temporary folder (asked only when needed:
    finding the temporary folder writes a probe file), or None where that is not so (another user made it)."""
    try:
        folder = os.path.join(tempfile.gettempdir(), f"quire-processors-{os.getuid()}")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        found = os.lstat(folder)
    except OSError as exc:
        log.warning("not pinned: no folder for the processors' locks (%s)", exc)
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        log.warning("not pinned: %s is not a private folder of this user", folder)
        return None
    return folder


def _pinnable(processes: int, wanted: bool | None) -> list[int]:
    """The processors `processes` sibling processes may be pinned to, or none to leave them where the system puts
    them: where pinning is not `wanted`, where there is one processor, and by default (`wanted` None) where the
    processes are fewer than the processors. Then the system lends them the spare ones, and other workers on the
    machine (replicas of one container, say) are not pinned to the same processors as these."""
    if wanted is False or not hasattr(os, "sched_getaffinity"):
        return []
    allowed = sorted(os.sched_getaffinity(0))
    return [] if len(allowed) < 2 or (wanted is None and processes < len(allowed)) else allowed


def plan(processes: int, wanted: bool | None) -> list[int | None]:
    """The processor for each of a supervisor's `processes` worker processes, None for each where `_pinnable` finds
    none."""
    if not (allowed := _pinnable(processes, wanted)):
        return [None] * processes
    # Supervisors on one machine know nothing of each other (replicas even share their pids): each starts its
    # round at a processor drawn at random.
    start = random.randrange(len(allowed))
    return [allowed[(start + i) % len(allowed)] for i in range(processes)]


def claim(siblings: str) -> int | None:
    """For one of sibling processes that are not told their index (uvicorn's web processes, which it starts and
    restarts itself): the first processor no sibling holds, or None where every one is held. A processor is held by
    an exclusive lock on a file named by `siblings` (unique to their parent) and the processor, for as long as this
    process lives."""
    if (folder := _locks()) is None:
        return None
    for processor in sorted(os.sched_getaffinity(0)):
        path = os.path.join(folder, f"{siblings}-{processor}.lock")
        try:
            fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            log.warning("not pinned: no lock for processor %d (%s)", processor, exc)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a sibling holds it
            os.close(fd)
            continue
        except OSError as exc:  # a file system without locks
            os.close(fd)
            log.warning("not pinned: processor %d's lock cannot be taken (%s)", processor, exc)
            return None
        _held.append(fd)  # released when the process ends, however it ends
        return processor
    return None


def forget(siblings: str) -> None:
    """Remove the lock files of siblings that have all ended."""
    with contextlib.suppress(OSError):
        if (folder := _locks()) is not None:
            for name in glob.glob(os.path.join(folder, f"{glob.escape(siblings)}-*.lock")):
                os.unlink(name)


def pin(processor: int) -> None:
    """Run this process on `processor` alone: every thread it has (uvicorn's web processes start one of their own
    first), and so every thread they start from now on. A processor this process may not use (its allowed set
    changed since it was chosen) leaves it unpinned."""
    global _given
    given = frozenset(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, {processor})
        with contextlib.suppress(FileNotFoundError):  # no /proc: the threads to come, then
            for task in os.listdir("/proc/self/task"):
                with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                    os.sched_setaffinity(int(task), {processor})
    except OSError as exc:
        log.warning("not pinned to processor %d (%s); running on %s", processor, exc, sorted(given))
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, given)
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


def pin_among_siblings(wanted: bool | None) -> None:
    """In a web process `quire web` started: pin it to a processor no sibling holds. When every one is held (uvicorn's
    graceful restart starts each new process before it stops the old one), a thread of its own tries again for a
    while, as the old processes stop."""
    siblings, _, processes = os.environ.get(SIBLINGS, "").rpartition(":")
    if not siblings or not processes.isdigit() or not _pinnable(int(processes), wanted):
        return

    def pinned() -> bool:
        if (processor := claim(siblings)) is None:
            return False
        pin(processor)
        return True

    def again() -> None:
        for _ in range(CLAIM_TRIES):
            time.sleep(1.0)
            if pinned():
                return

    if not pinned():
        threading.Thread(target=again, name="claim-processor", daemon=True).start()
