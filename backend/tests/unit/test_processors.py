"""A worker process's processor: what pinning reaches, and what `all_processors` widens for a while.

Run in a process of its own, so that the test process keeps every processor it has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = """
import json, os, subprocess, sys, threading
from quire.processors import all_processors, pin

def mine():
    return sorted(os.sched_getaffinity(0))

def child():
    code = "import os; print(sorted(os.sched_getaffinity(0)))"
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)

given = mine()
pin(given[-1])
seen = {"given": given, "pinned": mine(), "child": child()}
asked, looked = threading.Event(), {}
def bystander():
    asked.wait()
    looked["bystander"] = mine()
started_before = threading.Thread(target=bystander)
started_before.start()
with all_processors():
    seen["widened"], seen["widened child"] = mine(), child()
    inside = threading.Thread(target=lambda: looked.update(inside=mine()))
    inside.start()
    inside.join()
    asked.set()
    started_before.join()
seen["after"] = mine()
print(json.dumps({**seen, **looked}))
"""


def test_a_pinned_thread_and_all_it_starts_share_its_processor_until_a_block_widens_one_of_them() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, env=os.environ)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    given, one = seen["given"], [seen["given"][-1]]
    # Pinned: the thread itself and a process it starts run on its one processor
    assert (seen["pinned"], seen["child"], seen["after"]) == (one, one, one)
    # Widened for the block: the thread, a thread and a process it starts meanwhile, but not a thread already running
    assert (seen["widened"], seen["widened child"], seen["inside"]) == (given, given, given)
    assert seen["bystander"] == one


def test_a_supervisor_pins_its_processes_when_they_cover_the_processors_or_when_told() -> None:
    from quire.processors import choose

    allowed = sorted(os.sched_getaffinity(0))
    # Told not to, or asked for fewer processes than there are processors: left to the system
    assert choose(0, 64, False) is None
    assert choose(0, len(allowed) - 1, None) is None
    # As many as the processors, or told to: one each, every processor used once in a round
    for wanted in (None, True):
        chosen = [choose(i, len(allowed), wanted) for i in range(len(allowed))]
        if len(allowed) > 1:
            assert sorted(c for c in chosen if c is not None) == allowed
        else:
            assert chosen == [None]
