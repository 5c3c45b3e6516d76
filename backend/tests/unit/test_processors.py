"""A worker process's processor: what pinning reaches, and what `all_processors` widens for a while.

Run in a process of its own, so that the test process keeps every processor it has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from quire.processors import plan

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
    allowed = sorted(os.sched_getaffinity(0))
    # Told not to, or asked for fewer processes than there are processors: left to the system
    assert plan(64, False) == [None] * 64
    assert plan(len(allowed) - 1, None) == [None] * (len(allowed) - 1)
    # As many as the processors, or told to: one each, every processor used once in a round
    for wanted in (None, True):
        chosen = plan(len(allowed), wanted)
        if len(allowed) > 1:
            assert sorted(c for c in chosen if c is not None) == allowed
        else:
            assert chosen == [None]


OCR_SCRIPT = """
import json, os
from PIL import Image
from quire.documents import ocr
from quire.processors import pin

given = sorted(os.sched_getaffinity(0))
pin(given[-1])
seen = []
def read_page(image, dpi, page, languages):
    seen.append({"thread": sorted(os.sched_getaffinity(0)), "page_threads": ocr.page_threads()})
ocr.read_page = read_page
pages = [(n, Image.new("L", (8, 8), 255), 200.0) for n in (1, 2, 3)]
ocr.read_pages(iter(pages), "eng", lambda done, number: None)
print(json.dumps({"given": given, "pages": seen, "after": sorted(os.sched_getaffinity(0))}))
"""


def test_ocr_in_a_pinned_worker_reads_pages_on_every_processor() -> None:
    run = subprocess.run([sys.executable, "-c", OCR_SCRIPT], capture_output=True, text=True, timeout=60, env=os.environ)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    given = seen["given"]
    # Each page is read by a thread that may use every processor, as many at once as they allow (at most 4)
    assert seen["pages"] == [{"thread": given, "page_threads": min(len(given), 4)}] * 3
    # And the worker's own thread is back on its one processor afterwards
    assert seen["after"] == [given[-1]]


CLAIM_SCRIPT = """
import sys
from quire.processors import claim
print(claim(sys.argv[1]), flush=True)
sys.stdin.read()  # holds its processor until told to end
"""


def claimant(siblings: str) -> subprocess.Popen[str]:
    """A process that claims a processor among `siblings`, says which, and holds it until its input ends."""
    return subprocess.Popen(
        [sys.executable, "-c", CLAIM_SCRIPT, siblings], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def test_siblings_claim_one_processor_each_and_a_freed_one_is_claimed_again() -> None:
    from quire.processors import forget

    siblings, allowed = f"test-{os.getpid()}", sorted(os.sched_getaffinity(0))

    def sibling() -> tuple[subprocess.Popen[str], str]:
        process = claimant(siblings)
        assert process.stdout is not None
        return process, process.stdout.readline().strip()

    running = [sibling() for _ in allowed]
    try:
        # Each holds a processor of its own, and one more finds none free
        assert sorted(int(claimed) for _, claimed in running) == allowed
        extra, claimed = sibling()
        running.append((extra, claimed))
        assert claimed == "None"
        # Once the first has ended, its processor is free for the next
        first, first_claimed = running.pop(0)
        first.communicate("")
        again, claimed = sibling()
        running.append((again, claimed))
        assert claimed == first_claimed
    finally:
        for process, _ in running:
            process.communicate("")
        forget(siblings)


LATE_SCRIPT = """
import os, sys, time
from quire.processors import SIBLINGS, pin_among_siblings
os.environ[SIBLINGS] = f"{sys.argv[1]}:{sys.argv[2]}"
pin_among_siblings(True)
print(",".join(map(str, sorted(os.sched_getaffinity(0)))), flush=True)
sys.stdin.readline()  # a sibling has ended
deadline = time.monotonic() + 10
while len(os.sched_getaffinity(0)) > 1 and time.monotonic() < deadline:
    time.sleep(0.1)
print(",".join(map(str, sorted(os.sched_getaffinity(0)))), flush=True)
"""


def test_a_process_started_while_its_siblings_hold_every_processor_takes_the_first_one_freed() -> None:
    from quire.processors import forget

    siblings, allowed = f"late-{os.getpid()}", sorted(os.sched_getaffinity(0))
    holders = [claimant(siblings) for _ in allowed]
    held = [int(h.stdout.readline()) for h in holders if h.stdout is not None]
    late = subprocess.Popen(
        [sys.executable, "-c", LATE_SCRIPT, siblings, str(len(allowed))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert late.stdin is not None
        assert late.stdout is not None
        # Given every processor held (as in uvicorn's graceful restart), the new process starts where the system puts it
        assert late.stdout.readline().strip() == ",".join(map(str, allowed))
        # When a sibling ends, the new process takes its processor
        holders[0].communicate("")
        late.stdin.write("\n")
        late.stdin.flush()
        assert late.stdout.readline().strip() == str(held[0])
    finally:
        late.kill()
        for holder in holders:
            holder.kill()
        forget(siblings)
