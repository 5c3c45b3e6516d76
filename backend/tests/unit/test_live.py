"""The pure parts of live updates: the change message, whom a change wakes, `Prefer: wait`, the words."""

from __future__ import annotations

import asyncio

import pytest

from backend.tests.aio import run_async
from quire.jobs.line import QueuePlace
from quire.queue.live import Change
from quire.web import live
from quire.web.live import LiveHub, LiveUnavailable
from quire.web.presenters import about, ordinal
from quire.web.streams import wait_preference


def test_a_change_survives_the_wire_and_garbage_is_dropped() -> None:
    change = Change("j1", "u1", "running")
    assert Change.decode(change.encode()) == change
    assert Change.decode(Change("j1", None, None).encode()) == Change("j1", None, None)
    assert Change.decode(b"not json") is None
    assert Change.decode(b'{"owner_id": "u1"}') is None


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("", None),
        ("wait=10", 10),
        ("respond-async, wait=5", 5),
        ("Wait = 7", 7),
        ('wait="3"', 3),
        ("wait=3600", 60),
        ("wait=-1", None),
        ("wait=soon", None),
        ("handling=lenient", None),
    ],
)
def test_prefer_wait_is_read_as_rfc_7240_says_and_held_to_a_minute(header: str | None, seconds: int | None) -> None:
    assert wait_preference(header) == seconds


def test_places_and_durations_read_as_people_say_them() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip
    assert [about(s) for s in (0.2, 35, 89, 90, 240, 5400, 7200)] == [
        "1 s",
        "35 s",
        "89 s",
        "2 min",
        "4 min",
        "2 h",
        "2 h",
    ]


def test_a_change_wakes_its_job_its_owner_and_after_a_while_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "LINE_WAKE_INTERVAL_S", 0.01)

    async def scenario() -> None:
        hub = LiveHub("redis://unused", max_watchers=3, read_line=lambda ids: {"j2": {"position": 1, "eta_s": 2.0}})
        hub.subscribed = True
        job, owner, other = hub.watch(job_id="j1"), hub.watch(owner_id="u1"), hub.watch(job_id="j2")
        other.line_jobs = frozenset({"j2"})
        # Given a full process, no more watchers are taken
        with pytest.raises(LiveUnavailable):
            hub.watch(job_id="j3")
        # When j1 of u1 starts running
        hub.deliver(Change("j1", "u1", "running"))
        # Then its job's and its owner's watchers wake at once, the queued one when the line moves
        assert await job.changed(0.1)
        assert await owner.changed(0.1)
        assert job.take() == ({"j1"}, False)
        assert await other.changed(1.0)
        assert other.take() == (set(), True)
        # And a progress write moves no line
        hub.deliver(Change("j1", "u1", None))
        assert not await other.changed(0.05)
        # And losing Redis tells every watcher, and a removed watcher frees its place
        with job:
            pass
        assert hub.watchers == 2
        hub._lose_all()
        assert owner.lost
        assert other.lost

    run_async(scenario)


def test_a_read_is_shared_by_the_watchers_of_a_change_but_a_failed_one_is_not() -> None:
    async def scenario() -> None:
        hub = LiveHub("redis://unused", max_watchers=10, read_line=lambda ids: {})
        hub.subscribed = True
        watches = [hub.watch(job_id="j1") for _ in range(3)]
        reads: list[int] = []

        async def read() -> int:
            reads.append(1)
            await asyncio.sleep(0.01)
            if len(reads) == 1:
                raise RuntimeError("the database went away for a moment")
            return len(reads)

        # Given a read that fails, the watchers waiting on it hear the failure together
        answers = await asyncio.gather(*(hub.shared("j1", read) for _ in watches), return_exceptions=True)
        assert [type(answer) for answer in answers] == [RuntimeError] * 3
        # Then the next ask reads again, though the job has not changed, and that read is shared
        assert await asyncio.gather(*(hub.shared("j1", read) for _ in watches)) == [2, 2, 2]
        assert len(reads) == 2
        # And a change of the job makes the next ask read once more
        hub.deliver(Change("j1", "u1", "running"))
        assert await hub.shared("j1", read) == 3

    run_async(scenario)


def test_the_line_is_read_once_for_all_and_wakes_only_the_watchers_whose_place_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "LINE_WAKE_INTERVAL_S", 0.01)
    line = {"q1": {"position": 1, "eta_s": 2.0}, "q2": {"position": 2, "eta_s": 4.0}}
    reads: list[frozenset[str]] = []

    def read_line(job_ids: frozenset[str]) -> dict[str, QueuePlace]:
        reads.append(job_ids)
        return {job_id: place for job_id, place in line.items() if job_id in job_ids}  # type: ignore[misc]

    async def scenario() -> None:
        hub = LiveHub("redis://unused", max_watchers=10, read_line=read_line)
        hub.subscribed = True
        first = [hub.watch(job_id="q1") for _ in range(3)]
        second = hub.watch(job_id="q2")
        running = hub.watch(job_id="r1")
        for watch in first:
            watch.line_jobs = frozenset({"q1"})
        second.line_jobs = frozenset({"q2"})
        # When a job leaves the line
        hub.deliver(Change("r1", "u1", "running"))
        # Then the line is read once, for the queued jobs watched, and their watchers learn it
        assert await second.changed(1.0)
        assert second.take() == (set(), True)
        assert reads == [frozenset({"q1", "q2"})]
        assert hub.line == line
        assert await running.changed(0.1)
        assert running.take() == ({"r1"}, False)
        for watch in first:
            assert await watch.changed(0.1)
            assert watch.take() == (set(), True)
        # And when the line moves again but only q2's place changed, only q2's watcher wakes
        line["q2"] = {"position": 1, "eta_s": 2.0}
        hub.deliver(Change("r1", "u1", "completed"))
        assert await second.changed(1.0)
        assert [await watch.changed(0.05) for watch in first] == [False, False, False]
        assert len(reads) == 2

    run_async(scenario)
