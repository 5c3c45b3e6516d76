"""An idle worker waits on a wake-up list instead of polling: a publish wakes it at once, and a
message whose wake-up never arrives is still taken, at the latest after the idle wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from backend.tests.integration.conftest import fresh_redis_url
from quire.queue.broker import IDLE_WAIT_S, QUEUE, RedisBroker, RedisQueue, create_broker
from quire.queue.dispatch import new_message_id
from quire.queue.embedded_redis import EmbeddedRedis


@pytest.fixture
def broker(redis_server: EmbeddedRedis) -> Iterator[RedisBroker]:
    broker = create_broker(fresh_redis_url(redis_server))
    yield broker
    broker.close()


def take_one(broker: RedisBroker, taken: list[tuple[str, float]], ready: threading.Event) -> None:
    """Consume as a worker's consumer thread does until one message arrives."""
    consumer = broker.consume(QUEUE, prefetch=1, timeout=20)
    ready.set()
    try:
        while not taken:
            message = next(consumer)
            if message is not None:
                taken.append((message.args[0], time.monotonic()))
                consumer.ack(message)
    finally:
        consumer.close()


def consume_in_background(broker: RedisBroker) -> tuple[threading.Thread, list[tuple[str, float]]]:
    taken: list[tuple[str, float]] = []
    ready = threading.Event()
    thread = threading.Thread(target=take_one, args=(broker, taken, ready), daemon=True)
    thread.start()
    ready.wait(5)
    time.sleep(0.3)  # the consumer found the queue empty and now blocks on the wake-up list
    return thread, taken


def test_a_message_published_while_the_consumer_blocks_wakes_it(broker: RedisBroker) -> None:
    thread, taken = consume_in_background(broker)
    published = time.monotonic()
    assert RedisQueue(broker).publish("job-1", new_message_id())
    thread.join(IDLE_WAIT_S * 3)
    [(job_id, at)] = taken
    assert job_id == "job-1"
    # Woken by the publish, not by the end of the idle wait.
    assert at - published < IDLE_WAIT_S / 2


def test_a_message_whose_wake_up_is_lost_is_still_taken(broker: RedisBroker) -> None:
    thread, taken = consume_in_background(broker)
    # A message enqueued without a wake-up (as Dramatiq does when it moves a dead worker's
    # messages back to the queue) is found when the idle wait runs out.
    queue = RedisQueue(broker)
    broker.middleware = [m for m in broker.middleware if type(m).__name__ != "WakeOnPublish"]
    assert queue.publish("job-2", new_message_id())
    assert not broker.client.exists(broker.wake_key(QUEUE))
    thread.join(IDLE_WAIT_S * 3)
    assert [job_id for job_id, _ in taken] == ["job-2"]


def test_wake_ups_nobody_takes_are_capped(broker: RedisBroker) -> None:
    queue = RedisQueue(broker)
    for i in range(100):
        assert queue.publish(f"job-{i}", new_message_id())
    assert broker.client.llen(broker.wake_key(QUEUE)) <= 16
    assert broker.client.pttl(broker.wake_key(QUEUE)) > 0


def test_stopping_releases_this_process_consumers_at_once_and_no_other(redis_server: EmbeddedRedis) -> None:
    # Given a consumer of this process and one of another process, both blocked on the empty queue
    url = fresh_redis_url(redis_server)
    broker, other = create_broker(url), create_broker(url)
    try:
        started: dict[str, float] = {}
        released: dict[str, float] = {}

        def wait(name: str, waiting: RedisBroker) -> None:
            consumer = waiting.consume(QUEUE, prefetch=1, timeout=20)
            try:
                started[name] = time.monotonic()
                next(consumer)  # returns None once its wait ends
                released[name] = time.monotonic()
            finally:
                consumer.close()

        threads = [
            threading.Thread(target=wait, args=(name, waiting), daemon=True)
            for name, waiting in (("ours", broker), ("theirs", other))
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.3)  # both found the queue empty and now block on the wake-up list
        # When this process stops waiting
        stopped = time.monotonic()
        broker.stop_waiting(consumers=1)
        for thread in threads:
            thread.join(IDLE_WAIT_S * 3)
        # Then its consumer returns at once, having taken the one wake-up it was sent; the other
        # process's consumer waits out its whole idle wait
        assert released["ours"] - stopped < IDLE_WAIT_S / 2
        assert broker.client.llen(broker._stop_key) == 0
        assert released["theirs"] - started["theirs"] >= IDLE_WAIT_S * 0.9
    finally:
        broker.close()
        other.close()
