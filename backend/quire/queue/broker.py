"""The Dramatiq broker (Redis). Imported before any module that declares actors."""

from __future__ import annotations

from typing import Any

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker as DramatiqRedisBroker
from dramatiq.common import current_millis, dq_name
from dramatiq.message import Message

from quire.settings import get_settings

QUEUE = "quire"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class RedisBroker(DramatiqRedisBroker):
    """Dramatiq's Redis broker, keyed in Redis by the Dramatiq message id.

    Dramatiq gives each enqueue a fresh Redis id, so nothing outside the broker can ask whether a
    given message still exists. Quire records each job's message id and its recovery loop asks
    exactly that, to republish jobs whose message Redis lost. Quire uses no Retries middleware
    (retries are the job record's business), so a message id is never enqueued twice on one queue.
    """

    def enqueue(self, message: Message[Any], *, delay: int | None = None) -> Message[Any]:
        queue_name = message.queue_name
        message = message.copy(options={"redis_message_id": message.message_id})
        if delay is not None:
            queue_name = dq_name(queue_name)
            message = message.copy(queue_name=queue_name, options={"eta": current_millis() + delay})
        self.emit_before("enqueue", message, delay)
        self.do_enqueue(queue_name, message.message_id, message.encode())
        self.emit_after("enqueue", message, delay)
        return message

    def messages_present(self, message_ids: list[str], queue_name: str = QUEUE) -> list[bool]:
        """For each message id: is it still held by Redis (waiting, delayed or being worked on)?"""
        delayed = f"{self.namespace}:{dq_name(queue_name)}.msgs"
        ready = f"{self.namespace}:{queue_name}.msgs"
        # One MULTI block: a delayed message moves to the ready queue before it leaves the delay
        # queue, and checking the delay queue first inside one transaction cannot miss it.
        pipe = self.client.pipeline(transaction=True)
        for message_id in message_ids:
            pipe.hexists(delayed, message_id)
            pipe.hexists(ready, message_id)
        answers: list[Any] = pipe.execute()
        return [bool(answers[i] or answers[i + 1]) for i in range(0, len(answers), 2)]


def create_broker(url: str) -> RedisBroker:
    settings = get_settings()
    pool = redis.ConnectionPool.from_url(url, socket_connect_timeout=2, socket_timeout=10, health_check_interval=15)
    return RedisBroker(  # type: ignore[no-untyped-call]
        client=redis.Redis(connection_pool=pool),
        middleware=[],
        heartbeat_timeout=settings.broker_heartbeat_timeout_ms,
        maintenance_chance=settings.broker_maintenance_chance,
    )


broker = create_broker(get_settings().redis_url or DEFAULT_REDIS_URL)
broker.declare_queue(QUEUE)
dramatiq.set_broker(broker)
