"""Live updates through the HTTP API: job streams, the list stream, `Prefer: wait`, queue position
and ETA, fan-out to several web processes, and what happens when Redis goes away."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import redis

from backend.tests.aio import run_async
from backend.tests.integration.conftest import fresh_redis_url, running_stack
from backend.tests.integration.stack import Stack, document, follow, http_client, sse_events
from backend.tests.integration.test_security import browser_session
from quire.db import Database
from quire.jobs.models import Job
from quire.queue.embedded_redis import EmbeddedRedis
from quire.queue.live import CHANNEL, Change, ChangePublisher

ORDER = {"queued": 0, "running": 1, "completed": 2}


def test_job_stream_sends_snapshot_then_each_change_in_order_then_end(shared_stack: Stack) -> None:
    # Given a job that runs for a second
    job_id = shared_stack.submit(document("slow:1"))
    # When a client follows its stream from the start
    events = follow(shared_stack.http, f"/ai-jobs/{job_id}/stream")
    # Then the first event is a snapshot, states only move forward, and `end` comes last, once
    names = [name for name, _ in events]
    assert names[-1] == "end"
    assert names.count("end") == 1
    assert set(names[:-1]) == {"job"}
    views = [data for name, data in events if name == "job"]
    statuses = [view["status"] for view in views]
    assert statuses[0] in ("queued", "running")
    assert statuses == sorted(statuses, key=ORDER.__getitem__)
    assert "running" in statuses
    assert statuses[-1] == "completed"
    # And every event is a state the database held: each one's events are a prefix of the final record's
    final = shared_stack.job(job_id)
    assert views[-1] == final
    for view in views:
        assert view["events"] == final["events"][: len(view["events"])]
        assert view["job_id"] == job_id
        assert set(view) == set(final)
    assert events[-1][1] == {"job_id": job_id, "status": "completed", "reason": "finished"}


def test_a_finished_job_streams_its_snapshot_and_end_at_once(shared_stack: Stack) -> None:
    job_id = shared_stack.submit(document())
    final = shared_stack.wait(job_id)
    started = time.monotonic()
    events = follow(shared_stack.http, f"/ai-jobs/{job_id}/stream")
    assert [name for name, _ in events] == ["job", "end"]
    assert events[0][1] == final
    assert time.monotonic() - started < 2


def test_deleting_a_job_ends_its_open_streams_with_a_last_event_that_says_so(shared_stack: Stack) -> None:
    # Given a running job followed by its JSON stream and by its page's stream
    job_id = shared_stack.submit(document("slow:3"))
    shared_stack.wait(job_id, {"running"})
    with (
        shared_stack.http.stream("GET", f"/ai-jobs/{job_id}/stream", timeout=10) as api,
        shared_stack.http.stream("GET", f"/jobs/{job_id}/stream", timeout=10) as page,
    ):
        api_events, page_events = sse_events(api), sse_events(page)
        assert next(api_events)[0] == "job"
        assert next(page_events)[0] == "job"
        # When its owner deletes it
        deleted = time.monotonic()
        assert shared_stack.http.delete(f"/ai-jobs/{job_id}").status_code == 204
        # Then the JSON stream's last event is `end` with the reason, and the stream closes
        rest = [(name, json.loads(data)) for name, data in api_events if name != "comment"]
        assert rest[-1] == ("end", {"job_id": job_id, "status": None, "reason": "deleted"})
        assert {name for name, _ in rest[:-1]} <= {"job"}  # a progress write made just before, say
        # And the page's stream swaps in a card that says so, then ends the same way
        rest = [(name, data) for name, data in page_events if name != "comment"]
        assert [name for name, _ in rest][-2:] == ["job", "end"]
        assert 'data-status="deleted"' in rest[-2][1]
        assert json.loads(rest[-1][1])["reason"] == "deleted"
        assert time.monotonic() - deleted < 5
    # And the job is gone for a new stream too
    assert stream_status(shared_stack, f"/ai-jobs/{job_id}/stream") == 404


def test_streams_are_the_owners_only(shared_stack: Stack) -> None:
    # Given someone else's job
    job_id = shared_stack.submit(document("slow:1"))
    stranger = shared_stack.client(shared_stack.create_user(f"stranger-{time.monotonic_ns()}@example.com"))
    # Then its streams are a 404 for them, as for a job that never existed
    for path in (f"/ai-jobs/{job_id}/stream", f"/jobs/{job_id}/stream", "/ai-jobs/nope/stream"):
        response = stranger.get(path)
        assert response.status_code == 404, (path, response.text)
    # And without credentials there is no stream at all
    assert httpx.get(f"{shared_stack.base_url}/ai-jobs/{job_id}/stream").status_code == 401
    # And their list stream never shows it, but shows their own job
    seen: list[str] = []
    with stranger.stream("GET", "/ai-jobs/stream", timeout=20) as response:
        shared_stack.wait(job_id)
        files = {"file": ("theirs.txt", document(), "text/plain")}
        theirs = stranger.post("/ai-jobs", data={"workflow": "document_summary"}, files=files).json()["job_id"]
        for event, data in sse_events(response):
            if event == "job":
                seen.append(json.loads(data)["job_id"])
                if seen[-1] == theirs:
                    break
    assert job_id not in seen
    assert theirs in seen


def test_list_stream_follows_every_job_of_the_caller(shared_stack: Stack) -> None:
    # Given an unfinished job before the stream opens
    first = shared_stack.submit(document("slow:1"))
    seen: dict[str, list[str]] = {}
    done = threading.Event()

    def read_list() -> None:
        with shared_stack.http.stream("GET", "/ai-jobs/stream", timeout=30) as response:
            assert response.status_code == 200
            for event, data in sse_events(response):
                if event == "job":
                    view = json.loads(data)
                    seen.setdefault(view["job_id"], []).append(view["status"])
                    if all(seen.get(j, [""])[-1] == "completed" for j in jobs):
                        done.set()
                        return

    jobs = [first]
    reader = threading.Thread(target=read_list, daemon=True)
    reader.start()
    # When more are submitted while it is open
    time.sleep(0.3)
    jobs += [shared_stack.submit(document("slow:0.5")) for _ in range(2)]
    # Then it starts with the unfinished one and follows every job to completion
    assert done.wait(30), seen
    assert seen[first][0] in ("queued", "running")
    for job_id in jobs:
        assert seen[job_id][-1] == "completed"


def test_prefer_wait_answers_when_the_job_finishes(shared_stack: Stack) -> None:
    # A one-second job: GET with Prefer: wait=10 answers completed after about a second
    job_id = shared_stack.submit(document("slow:1"))
    started = time.monotonic()
    response = shared_stack.http.get(f"/ai-jobs/{job_id}", headers={"Prefer": "wait=10"})
    waited = time.monotonic() - started
    assert response.status_code == 200
    assert response.json()["status"] == "completed"
    assert response.headers["preference-applied"] == "wait=10"
    assert 0.5 < waited < 5, waited
    # POST with Prefer: wait answers the finished job itself (200) when it finishes in time
    form = {"workflow": "document_summary"}
    files = {"file": ("doc.txt", document("slow:0.5"), "text/plain")}
    response = shared_stack.http.post("/ai-jobs", data=form, files=files, headers={"Prefer": "wait=10"})
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "completed"
    assert response.json()["artifacts"]
    assert response.headers["content-location"] == f"/ai-jobs/{response.json()['job_id']}"
    # Without the header nothing waits
    response = shared_stack.http.post("/ai-jobs", data=form, files={"file": ("d.txt", document(), "text/plain")})
    assert response.status_code == 202
    assert "preference-applied" not in response.headers


def test_prefer_wait_gives_up_after_n_seconds_with_the_state_then(shared_stack: Stack) -> None:
    job_id = shared_stack.submit(document("slow:12"))
    shared_stack.wait(job_id, {"running"})
    started = time.monotonic()
    response = shared_stack.http.get(f"/ai-jobs/{job_id}", headers={"Prefer": "wait=10"})
    waited = time.monotonic() - started
    assert response.json()["status"] == "running"
    assert response.headers["preference-applied"] == "wait=10"
    assert 9.8 < waited < 12, waited
    # A wait beyond 60 s is held to 60
    assert shared_stack.http.post(f"/ai-jobs/{job_id}/cancel").status_code == 200
    response = shared_stack.http.get(f"/ai-jobs/{job_id}", headers={"Prefer": "wait=3600"})
    assert response.headers["preference-applied"] == "wait=60"


def test_a_thousand_waiting_clients_hold_no_thread_each(shared_stack: Stack) -> None:
    # Given a job that stays running, and the web process
    job_id = shared_stack.submit(document("slow:8"))
    shared_stack.wait(job_id, {"running"})
    web = psutil.Process(shared_stack.processes[0].pid)
    threads_before = web.num_threads()
    peak = 0

    async def wait_all() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=1000)
        headers = {"Authorization": f"Bearer {shared_stack.token}", "Prefer": "wait=4"}
        async with httpx.AsyncClient(base_url=shared_stack.base_url, limits=limits, timeout=30, headers=headers) as c:
            waiting = [asyncio.create_task(c.get(f"/ai-jobs/{job_id}")) for _ in range(1000)]
            await asyncio.sleep(2.5)
            nonlocal peak
            peak = web.num_threads()
            return await asyncio.gather(*waiting)

    # When a thousand clients wait on it at once
    responses = run_async(wait_all)
    shared_stack.http.post(f"/ai-jobs/{job_id}/cancel")
    # Then every one got its answer after the wait, and the web process grew no thread per waiter
    assert all(r.status_code == 200 and r.headers["preference-applied"] == "wait=4" for r in responses)
    assert peak - threads_before < 50, (threads_before, peak)


def test_queued_job_knows_its_place_and_the_eta_holds(redis_server: EmbeddedRedis, tmp_path: Path) -> None:
    with running_stack("sqlite", redis_server, tmp_path, worker=False) as stack:
        stack.start_worker(threads=1)
        # Given one finished 2-second job, the basis of the estimate
        stack.wait(stack.submit(document("slow:2")))
        # When five more are ahead of ours on one worker thread
        ahead = [stack.submit(document("slow:2")) for _ in range(5)]
        ours = stack.submit(document("slow:2"))
        queued_at = time.monotonic()
        view = stack.job(ours)
        # Then it says where it is in line and about how long until its result
        assert view["status"] == "queued"
        assert view["queue"]["position"] in (5, 6), view["queue"]
        eta = view["queue"]["eta_s"]
        assert eta is not None
        # And its place counts down as the line moves (the next job ahead has been claimed)
        stack.wait(ahead[0], {"completed"})
        stack.wait(ahead[1], {"running", "completed"})
        later = stack.job(ours)["queue"]
        assert later["position"] < view["queue"]["position"]
        # And the estimate was within half of the real wait
        stack.wait(ours, timeout=60)
        real = time.monotonic() - queued_at
        assert 0.5 * real <= eta <= 1.5 * real, (eta, real)
        assert stack.job(ours)["queue"] is None


def test_no_estimate_without_a_basis(redis_server: EmbeddedRedis, tmp_path: Path) -> None:
    # No worker alive: the job knows its place but has no ETA
    with running_stack("sqlite", redis_server, tmp_path, worker=False) as stack:
        view = stack.job(stack.submit(document()))
        assert view["queue"] == {"position": 1, "eta_s": None}


def test_every_web_process_serves_every_stream(shared_stack: Stack) -> None:
    # Given a second web process sharing the same Redis and database
    other = http_client(shared_stack.another_web(), headers=shared_stack.http.headers, timeout=30)
    # When the job is submitted through the first and followed through the second
    job_id = shared_stack.submit(document("slow:0.5"))
    events = follow(other, f"/ai-jobs/{job_id}/stream")
    # Then the second one heard the worker's changes
    statuses = [data["status"] for name, data in events if name == "job"]
    assert statuses[-1] == "completed"
    assert events[-1][0] == "end"
    # And a cancel made through the first reaches a stream on the second
    job_id = shared_stack.submit(document("slow:4"))
    shared_stack.wait(job_id, {"running"})
    timer = threading.Timer(0.5, lambda: shared_stack.http.post(f"/ai-jobs/{job_id}/cancel"))
    timer.start()
    events = follow(other, f"/ai-jobs/{job_id}/stream", timeout=10)
    timer.join()  # its request is answered before the stack's client may be closed
    assert [data["status"] for name, data in events if name == "job"][-1] == "cancelled"


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "redis", persistent=False).start()
    yield server
    server.stop()


def test_redis_down_ends_streams_cleanly_and_they_come_back(own_redis: EmbeddedRedis, tmp_path: Path) -> None:
    with running_stack("sqlite", own_redis, tmp_path / "stack", QUIRE_STREAM_KEEPALIVE_S="1") as stack:
        job_id = stack.submit(document("slow:30"))
        stack.wait(job_id, {"running"})
        # Given an open stream
        with stack.http.stream("GET", f"/ai-jobs/{job_id}/stream", timeout=20) as response:
            events = sse_events(response)
            assert next(events)[0] == "job"
            # When Redis goes away
            stopped = time.monotonic()
            own_redis.stop()
            # Then the stream ends cleanly (no error, no hang)
            rest = list(events)
            assert time.monotonic() - stopped < 5
            assert all(name == "comment" for name, _ in rest), rest
        # And new streams are refused at once, so pages poll; waits answer at once, unapplied
        refused = stack.http.get(f"/ai-jobs/{job_id}/stream")
        assert refused.status_code == 503
        assert refused.json()["code"] == "live_updates_unavailable"
        started = time.monotonic()
        waited = stack.http.get(f"/ai-jobs/{job_id}", headers={"Prefer": "wait=5"})
        assert waited.status_code == 200
        assert "preference-applied" not in waited.headers
        assert time.monotonic() - started < 2
        # And once Redis is back, streams work again
        own_redis.start()
        deadline = time.monotonic() + 15
        while (status := stream_status(stack, f"/ai-jobs/{job_id}/stream")) == 503:
            assert time.monotonic() < deadline, "streams did not come back with Redis"
            time.sleep(0.2)
        assert status == 200


def stream_status(stack: Stack, path: str) -> int:
    with stack.http.stream("GET", path, timeout=5) as response:
        return response.status_code


def test_batch_page_stream_sends_the_card_as_its_jobs_change_then_ends(shared_stack: Stack) -> None:
    # Given its owner signed in as a browser is, and a batch of two documents, one of them slow
    owner = browser_session(shared_stack, "owner@example.com")
    batch_id = shared_stack.submit_batch({"quick.txt": document(), "slow.txt": document("slow:4")})
    # When it follows the batch page's stream
    cards: list[str] = []
    with owner.stream("GET", f"/batches/{batch_id}/stream", timeout=30) as stream:
        assert stream.status_code == 200
        for event, data in sse_events(stream):
            if event == "batch":
                cards.append(data)
            if event == "end":
                assert json.loads(data) == {"reason": "finished"}
                break
    # Then the first card came at once, the last says both are done, and none carries a polling schedule
    assert cards[-1].count('data-done="2"') == 1
    assert f'data-batch-id="{batch_id}" data-status="completed"' in cards[-1]
    assert len(cards) >= 2
    assert f'data-batch-id="{batch_id}" data-status="running"' in cards[0]
    assert not any("data-poll" in card for card in cards)
    # And another person's batch stream is a 404, as its page is
    email = f"batch-stranger-{time.monotonic_ns()}@example.com"
    shared_stack.create_user(email)
    stranger = browser_session(shared_stack, email)
    assert stranger.get(f"/batches/{batch_id}/stream").status_code == 404


def test_list_page_stream_makes_the_whole_table_at_most_once_a_second(shared_stack: Stack) -> None:
    # Given its owner's jobs list followed as the page follows it
    owner = browser_session(shared_stack, "owner@example.com")
    tables: list[tuple[float, str]] = []
    shown: dict[str, str] = {}  # each job's badge as the page shows it: the last table, then its rows

    def badges(html: str) -> dict[str, str]:
        found = re.findall(r'data-job-id="([^"]+)".*?<span class="badge[^"]*"[^>]*>([^<]+)<', html, re.S)
        return {job_id: badge.strip() for job_id, badge in found}

    with owner.stream("GET", "/jobs/stream", timeout=30) as stream:
        assert stream.status_code == 200

        def read() -> None:
            try:
                for event, data in sse_events(stream):
                    if event == "table":
                        tables.append((time.monotonic(), data))
                        shown.clear()
                    if event in ("table", "job"):
                        shown.update(badges(data))
            except (httpx.HTTPError, RuntimeError):
                return  # closed by the test

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 10
        while not tables and time.monotonic() < deadline:
            time.sleep(0.05)
        # When a dozen new jobs, none of them in the table yet, are submitted and run at once
        jobs = [shared_stack.submit(document()) for _ in range(12)]
        for job_id in jobs:
            shared_stack.wait(job_id)
        time.sleep(2.5)
        stream.close()
        reader.join(timeout=5)
    # Then the whole table was made again, about once a second (the server spaces the starts of the
    # tables a second apart; a table takes a while to make), and the page ends showing them all done
    # (from the last table, or from the rows sent after it for jobs that table already showed)
    spaced = [b - a for a, b in itertools.pairwise(at for at, _ in tables[1:])]
    assert len(tables) >= 2, "the table was never sent again"
    assert all(gap > 0.5 for gap in spaced), spaced
    assert all(shown.get(job_id) == "Completed" for job_id in jobs), shown


def test_a_saved_review_reaches_the_owners_open_jobs_list_at_once(shared_stack: Stack) -> None:
    # Given a completed invoice with fields to check, and its owner's jobs list open and following
    job_id = shared_stack.submit(b"Acme Supplies Ltd\nInvoice No: 1001\nTotal GBP 10.00\n", workflow="invoice_summary")
    view = shared_stack.wait(job_id)
    assert view["status"] == "completed", view
    result = shared_stack.http.get(view["artifact"]["url"]).json()["result"]
    to_check = result["needs_review"]
    assert to_check, result
    owner = browser_session(shared_stack, "owner@example.com")
    marks: list[str | None] = []  # the row's review mark as the stream shows it, one entry per event
    with owner.stream("GET", "/jobs/stream", timeout=30) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        for event, data in events:
            if event == "table" and job_id in data:
                break
        row = re.search(rf'data-job-id="{job_id}".*?</tr>', data, re.S)
        assert row is not None
        assert "data-review-count" in row.group(0)

        # When the person confirms every field through the API (another tab, another client)
        fields = {name: result.get(name) for name in to_check}
        reviewed = shared_stack.http.post(f"/ai-jobs/{job_id}/review", json={"fields": fields})
        assert reviewed.status_code == 200, reviewed.text

        # Then the open list sends the job's row again, with nothing left to check (its row: a whole table comes
        # only when a job it does not show changes; keep-alive comments come at least every 15 s)
        deadline = time.monotonic() + 20
        for event, data in events:
            if time.monotonic() > deadline:
                break
            if event == "job" and job_id in data:
                row = re.search(rf'data-job-id="{job_id}".*?</tr>', data, re.S)
                marks.append(row.group(0) if row else None)
                if row and "data-review-count" not in row.group(0):
                    break
    assert marks, "the row was not sent again"
    assert marks[-1] is not None
    assert "data-review-count" not in marks[-1], marks


def test_a_busy_process_sends_its_changes_in_batches_and_an_idle_one_at_once(
    redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    url = fresh_redis_url(redis_server)
    listener = redis.Redis.from_url(url).pubsub(ignore_subscribe_messages=True)
    listener.subscribe(CHANNEL)
    client = redis.Redis.from_url(url)
    sends: list[float] = []
    pipeline = client.pipeline

    def counted(*args: Any, **kwargs: Any) -> Any:
        sends.append(time.monotonic())
        return pipeline(*args, **kwargs)

    client.pipeline = counted  # type: ignore[method-assign]
    publisher = ChangePublisher(Database(f"sqlite:///{tmp_path / 'unused.db'}"), client)

    def received(n: int) -> list[str]:
        ids: list[str] = []
        deadline = time.monotonic() + 10
        while len(ids) < n and time.monotonic() < deadline:
            if (message := listener.get_message(timeout=0.5)) is not None:
                change = Change.decode(message["data"])
                assert change is not None
                ids.append(change.job_id)
        return ids

    # Given an idle process, a change goes out by itself
    publisher("j0", Job.model_construct(owner_id="u1", status="running"))
    assert received(1) == ["j0"]
    assert len(sends) == 1
    # When changes come every half millisecond, as from a worker finishing hundreds of jobs a second
    for i in range(1, 41):
        publisher(f"j{i}", Job.model_construct(owner_id="u1", status="completed"))
        time.sleep(0.0005)
    # Then each arrives, in order, and they went out in a few sends: at most one per interval
    assert received(40) == [f"j{i}" for i in range(1, 41)]
    batched = sends[1:]
    assert len(batched) <= (batched[-1] - batched[0]) / ChangePublisher.MIN_INTERVAL_S + 2, len(batched)
