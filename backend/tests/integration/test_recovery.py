"""No accepted job is lost: killed workers, workers that die on a job, Redis outages, racing workers."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import redis
from dramatiq.common import dq_name
from dramatiq.message import Message

from backend.tests.conftest import ScratchDatabase
from backend.tests.integration.conftest import fresh_redis_url
from backend.tests.integration.stack import Stack, child_pids, document, event_types, running
from quire.queue.broker import QUEUE, KeyedByMessageId, RedisBroker, RedisQueue, create_broker
from quire.queue.embedded_redis import EmbeddedRedis, free_port
from quire.queue.recovery import Outage, my_turn


def test_killed_worker_job_is_recovered_by_a_new_worker(stack: Stack) -> None:
    # Given a worker running a 3 s attempt
    stack.start_web()
    first = stack.start_worker()
    data = document("slow:3")
    job_id = stack.submit(data)
    stack.wait(job_id, {"running"})
    deadline = time.monotonic() + 10
    while stack.workflow_calls(data) < 1:  # the workflow itself is under way
        assert time.monotonic() < deadline
        time.sleep(0.02)
    # When the worker is SIGKILLed mid-attempt and a new one starts
    stack.kill(first)
    stack.start_worker()
    # Then the lease expires, the job is requeued and completes on attempt 2
    view = stack.wait(job_id, timeout=30)
    assert (view["status"], view["attempt"]) == ("completed", 2)
    assert event_types(view) == ["queued", "running", "requeued_after_restart", "running", "completed"]
    assert [e["code"] for e in view["errors"]] == ["worker_lost"]
    assert stack.workflow_calls(data) == 2


def test_job_that_kills_every_worker_ends_in_dead_letter(stack: Stack) -> None:
    # Given a supervised worker and a job whose workflow exits the process every time
    stack.start()
    job_id = stack.submit(document("exit"), max_attempts=2)
    # Then each lost attempt counts against the budget and the job ends in dead letter
    view = stack.wait(job_id, timeout=40)
    assert (view["status"], view["attempt"]) == ("dead_letter", 2)
    assert [e["code"] for e in view["errors"]] == ["worker_lost", "worker_lost"]
    assert event_types(view) == ["queued", "running", "requeued_after_restart", "running", "dead_letter"]
    # And the supervisor restarted the worker, so the next job still runs
    assert stack.wait(stack.submit(document()), timeout=20)["status"] == "completed"
    assert "restarting" in stack.logs("worker")


def test_an_isolated_attempt_ends_when_its_worker_is_killed(stack: Stack) -> None:
    # Given a job whose first attempt was lost with its worker, so its second runs isolated
    stack.start_web()
    supervisor = stack.start_worker()
    data = document("slow:60")
    job_id = stack.submit(data)
    deadline = time.monotonic() + 20
    while stack.workflow_calls(data) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [first] = child_pids(supervisor.pid)
    os.kill(first, signal.SIGKILL)  # the supervisor starts another worker process
    deadline = time.monotonic() + 40
    while stack.workflow_calls(data) < 2:
        assert time.monotonic() < deadline, stack.job(job_id)["events"]
        time.sleep(0.05)
    [worker] = [pid for pid in child_pids(supervisor.pid) if running(pid)]
    # (the worker process -> the fork server -> the attempt's process)
    attempts = [pid for server in child_pids(worker) for pid in child_pids(server)]
    assert attempts, "no isolated attempt's process under the worker process"
    # When that worker process is killed too
    os.kill(worker, signal.SIGKILL)
    # Then the attempt's process ends rather than run on unwatched
    deadline = time.monotonic() + 5
    while any(running(pid) for pid in attempts):
        assert time.monotonic() < deadline, [
            (pid, Path(f"/proc/{pid}/stat").read_text()[:80], Path(f"/proc/{pid}/cmdline").read_bytes()[:200])
            for pid in attempts
            if running(pid)
        ]
        time.sleep(0.1)
    view = stack.job(job_id)
    assert [e["code"] for e in view["errors"]] == ["worker_lost"]  # the second loss is not charged yet


def test_job_accepted_while_redis_is_down_runs_when_it_returns(database: ScratchDatabase, tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis", persistent=True).start()
    stack = Stack(tmp_path, database, server.url)
    restarted = None
    try:
        stack.start()
        # Given Redis is down
        server.stop()
        # When a job is submitted, it is still accepted and recorded
        started = time.monotonic()
        job_id = stack.submit(document())
        assert time.monotonic() - started < 5
        assert stack.job(job_id)["status"] == "queued"
        time.sleep(1)
        assert stack.job(job_id)["status"] == "queued"
        # Then once Redis is back, the recovery loop publishes it and it completes
        restarted = EmbeddedRedis(server.directory, port=server.port, persistent=True).start()
        view = stack.wait(job_id, timeout=30)
        assert (view["status"], view["attempt"]) == ("completed", 1)
        assert event_types(view) == ["queued", "running", "completed"]
    finally:
        stack.stop()
        server.stop()
        if restarted is not None:
            restarted.stop()


def test_queued_jobs_survive_redis_restarting_empty(database: ScratchDatabase, tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis", persistent=False).start()
    stack = Stack(tmp_path, database, server.url)
    restarted = None
    try:
        # Given jobs accepted while no worker runs, so their messages wait in Redis
        stack.start_web()
        data = [document() for _ in range(3)]
        ids = [stack.submit(d) for d in data]
        assert redis.Redis.from_url(server.url).hlen(f"dramatiq:{QUEUE}.msgs") == 3
        # When Redis restarts with nothing in it
        server.stop()
        restarted = EmbeddedRedis(server.directory, port=server.port, persistent=False).start()
        assert redis.Redis.from_url(server.url).hlen(f"dramatiq:{QUEUE}.msgs") == 0
        # Then a worker's recovery loop republishes them and each runs exactly once
        stack.start_worker()
        for job_id, d in zip(ids, data, strict=True):
            assert stack.wait(job_id, timeout=30)["status"] == "completed"
            assert stack.workflow_calls(d) == 1
    finally:
        stack.stop()
        if restarted is not None:
            restarted.stop()


def test_two_workers_racing_for_one_job_run_one_attempt(stack: Stack) -> None:
    # Given two worker processes and a job delivered several times at once
    stack.start_web()
    stack.start_worker(processes=2, threads=2)
    data = document("slow:0.5")
    job_id = stack.submit(data)
    broker = create_broker(stack.redis_url)
    for _ in range(4):
        broker.enqueue(Message(queue_name=QUEUE, actor_name="process_job", args=(job_id,), kwargs={}, options={}))
    # Then exactly one attempt ran
    view = stack.wait(job_id)
    time.sleep(0.5)
    assert (view["status"], view["attempt"]) == ("completed", 1)
    assert event_types(stack.job(job_id)) == ["queued", "running", "completed"]
    assert stack.workflow_calls(data) == 1
    assert "duplicate message" in stack.logs("worker")


def test_a_worker_process_stops_when_its_supervisor_is_killed(stack: Stack) -> None:
    # Given a supervisor and its worker process
    supervisor = stack.start_worker()
    [child] = child_pids(supervisor.pid)
    # When the supervisor alone is SIGKILLed
    supervisor.kill()
    supervisor.wait()
    # Then the worker process notices and stops on its own instead of running on unwatched
    deadline = time.monotonic() + 15
    while running(child):
        assert time.monotonic() < deadline, "the orphaned worker process is still running"
        time.sleep(0.1)
    assert f"the supervisor (pid {supervisor.pid}) is gone" in stack.logs("worker")


def test_a_worker_process_stops_on_a_burst_of_signals(stack: Stack) -> None:
    # Given a supervisor and its worker process
    supervisor = stack.start_worker()
    [child] = child_pids(supervisor.pid)
    # When Ctrl-C reaches the process group and a service manager sends SIGTERM as well
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGINT, signal.SIGTERM):
        os.kill(child, signum)
    # Then the worker process still stops, and the supervisor with it once stopped the same way
    deadline = time.monotonic() + 15
    while running(child):
        assert time.monotonic() < deadline, "the worker process did not stop"
        time.sleep(0.05)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGINT):
        supervisor.send_signal(signum)
    assert supervisor.wait(timeout=15) == 0


def test_worker_processes_take_turns_at_recovery(redis_server: EmbeddedRedis) -> None:
    # One pass per interval however many worker processes run the loop; the turn comes back
    # once the interval is over (the lock is never released: it expires).
    client = redis.Redis.from_url(fresh_redis_url(redis_server))
    assert my_turn(client, 0.5)
    assert not my_turn(client, 0.5)
    time.sleep(0.6)
    assert my_turn(client, 0.5)
    # Without Redis every process makes its own pass, and the loop notes the outage.
    outage = Outage(heartbeat_timeout_s=60)
    assert my_turn(redis.Redis(port=free_port(), socket_connect_timeout=0.5), 0.5, outage)
    assert not outage.over()


def test_a_retry_a_dead_worker_had_taken_is_given_back_when_recovery_asks(redis_server: EmbeddedRedis) -> None:
    url = fresh_redis_url(redis_server)

    def worker() -> RedisBroker:
        # Dramatiq's own maintenance never runs here: only `reclaim` can give the message back.
        client = redis.Redis.from_url(url)
        middleware = [KeyedByMessageId()]
        broker = RedisBroker(client=client, middleware=middleware, heartbeat_timeout=1000, maintenance_chance=0)
        broker.declare_queue(QUEUE)
        return broker

    # Given a retry waiting in the delay queue, taken by a worker that then died
    dead, alive = worker(), worker()
    assert RedisQueue(dead).publish("job-1", "message-1", delay_s=0.05)
    assert len(dead.do_fetch(dq_name(QUEUE), 1)) == 1
    time.sleep(1.2)  # its heartbeat is older than the timeout
    # Then the message is still held, and no live worker can fetch it
    assert RedisQueue(alive).held(["message-1"]) == [True]
    assert alive.do_fetch(dq_name(QUEUE), 1) == []
    # And a live worker is working on a message of its own
    assert RedisQueue(alive).publish("job-2", "message-2")
    [data] = alive.do_fetch(QUEUE, 1)
    assert Message.decode(data).message_id == "message-2"
    # When recovery has the queue give back what dead workers took
    RedisQueue(alive).reclaim()
    # Then a live worker gets the dead one's message, and the live one's stays where it is
    [data] = alive.do_fetch(dq_name(QUEUE), 1)
    assert Message.decode(data).message_id == "message-1"
    assert alive.do_fetch(QUEUE, 1) == []


def threads_processors(pid: int) -> set[frozenset[int]]:
    """The processors each thread of a process may run on, as a set of distinct sets."""
    placed = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            placed.add(frozenset(os.sched_getaffinity(int(task.name))))
    return placed


def test_worker_processes_run_on_processors_of_their_own_when_told_to(stack: Stack) -> None:
    given = frozenset(os.sched_getaffinity(0))
    # Given two worker processes told to, and a job run by one of them
    stack.start_web()
    stack.env["QUIRE_WORKER_PIN_CPUS"] = "true"
    supervisor = stack.start_worker(processes=2, threads=2)
    assert stack.wait(stack.submit(document("ok")))["status"] == "completed"
    # Then every thread of each runs on one processor, and not the same one where the machine has two or more
    placed = [threads_processors(pid) for pid in child_pids(supervisor.pid)]
    assert all(len(threads) == 1 and len(next(iter(threads))) == 1 for threads in placed), placed
    assert len(set().union(*placed)) == min(2, len(given))
    supervisor.terminate()
    supervisor.wait(60)
    # When nothing is said, one worker process on a machine of several processors runs where the system puts it
    del stack.env["QUIRE_WORKER_PIN_CPUS"]
    supervisor = stack.start_worker()
    assert [threads_processors(pid) for pid in child_pids(supervisor.pid)] == [{given}]
