"""The Dramatiq broker (Redis) and the Redis side of the dispatcher. Built by the bootstrap, never on import."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import redis
from dramatiq.brokers.redis import RedisBroker as DramatiqRedisBroker
from dramatiq.common import current_millis, dq_name
from dramatiq.errors import BrokerConnectionError
from dramatiq.message import Message

from quire.settings import get_settings

log = logging.getLogger(__name__)

QUEUE = "quire"
ACTOR = "process_job"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class RedisBroker(DramatiqRedisBroker):
    """Dramatiq's Redis broker, keyed in Redis by the Dramatiq message id.

    Dramatiq gives each enqueue a fresh Redis id, so nothing outside the broker can ask whether a
    given message still exists. Quire records each job's message id and its recovery loop asks
    exactly that, to republish jobs whose message Redis lost. Quire uses no Retries middleware
    (retries are the job record's business), so a message id is never enqueued twice on one queue.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)  # type: ignore[no-untyped-call]
        self._presence = self.client.register_script(_PRESENCE_SCRIPT)

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
        # One script, so one atomic look: a delayed message moves to the ready queue before it
        # leaves the delay queue, and checking the delay queue first cannot miss it.
        answers: list[int] = self._presence(keys=[delayed, ready], args=message_ids)
        return [bool(answer) for answer in answers]


_PRESENCE_SCRIPT = """
local present = {}
for i, message_id in ipairs(ARGV) do
  present[i] = redis.call('HEXISTS', KEYS[1], message_id) + redis.call('HEXISTS', KEYS[2], message_id)
end
return present
"""


def create_broker(url: str) -> RedisBroker:
    """A broker on the Redis at `url` with Quire's queue declared. It connects on first use."""
    settings = get_settings()
    pool = redis.ConnectionPool.from_url(url, socket_connect_timeout=2, socket_timeout=10, health_check_interval=15)
    broker = RedisBroker(
        client=redis.Redis(connection_pool=pool),
        middleware=[],
        heartbeat_timeout=settings.broker_heartbeat_timeout_ms,
        maintenance_chance=settings.broker_maintenance_chance,
    )
    broker.declare_queue(QUEUE)
    return broker


class RedisQueue:
    """The dispatcher's queue on Redis: a `process_job(job_id)` message per attempt."""

    def __init__(self, broker: RedisBroker) -> None:
        self.broker = broker

    def publish(self, job_id: str, message_id: str, delay_s: float = 0.0) -> bool:
        message: Message[None] = Message(
            queue_name=QUEUE, actor_name=ACTOR, args=(job_id,), kwargs={}, options={}, message_id=message_id
        )
        try:
            self.broker.enqueue(message, delay=int(delay_s * 1000) if delay_s > 0 else None)
        except (redis.RedisError, BrokerConnectionError, OSError) as exc:
            log.warning("could not publish job %s, will republish: %s", job_id, exc)
            return False
        return True

    def held(self, message_ids: Sequence[str]) -> list[bool]:
        return self.broker.messages_present(list(message_ids))
