"""The Dramatiq broker (Redis) and the Redis side of the dispatcher. Built by the bootstrap, never on import."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any, cast

import dramatiq
import redis
from dramatiq.broker import MessageProxy
from dramatiq.brokers.redis import RedisBroker as DramatiqRedisBroker
from dramatiq.brokers.redis import _RedisConsumer
from dramatiq.common import compute_backoff, current_millis, dq_name
from dramatiq.errors import BrokerConnectionError, ConnectionClosed
from dramatiq.message import Message

from quire.settings import Settings

log = logging.getLogger(__name__)

QUEUE = "quire"
ACTOR = "process_job"
# Webhook deliveries: a queue of their own, served by threads of their own (queue/worker.py).
WEBHOOK_QUEUE = "quire_webhooks"
WEBHOOK_ACTOR = "send_webhook"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# The option Dramatiq's Redis broker keys a message by in Redis (not part of its public API).
REDIS_MESSAGE_ID = "redis_message_id"


class KeyedByMessageId(dramatiq.Middleware):
    """Key each message in Redis by its Dramatiq message id.

    Dramatiq's Redis broker gives each enqueue a fresh Redis id, so nothing outside the broker
    can ask whether a given message still exists. Quire records each job's message id and its
    recovery loop asks exactly that, to republish jobs whose message Redis lost. Quire uses no
    Retries middleware (retries are the job record's business), so a message id is never enqueued
    twice on one queue.

    The one shim on Dramatiq's internals (checked by backend/tests/unit/test_library_shims.py):
    the broker reads the `redis_message_id` option after the public `before_enqueue` hook, so the
    hook sets it; `RedisBroker.messages_present` reads the broker's hashes of held messages.
    """

    def before_enqueue(self, broker: dramatiq.Broker, message: Message[Any], delay: int | None) -> None:
        message.options[REDIS_MESSAGE_ID] = message.message_id


# How long an idle consumer blocks on its queue's wake-up list before it looks at the queue anyway:
# the bound on pickup latency for a message whose wake-up was lost (or never sent: a message Dramatiq
# moved back from a dead worker). Well under Dramatiq's heartbeat timeout.
IDLE_WAIT_S = 1.0
# Wake-ups nobody has taken yet (every consumer was busy) are capped, and forgotten after a while:
# a consumer that becomes idle then makes a few needless fetches, never a long run of them.
WAKE_BACKLOG = 16
WAKE_TTL_MS = 60_000


class WakeOnPublish(dramatiq.Middleware):
    """After each enqueue, push a wake-up on the queue's wake list (the consumer's half is
    `WakingConsumer`). A failed wake-up is only logged: the message is in the queue, and an idle
    consumer looks there at least every `IDLE_WAIT_S` anyway."""

    def after_enqueue(self, broker: dramatiq.Broker, message: Message[Any], delay: int | None) -> None:
        try:
            cast("RedisBroker", broker).wake(message.queue_name)
        except (redis.RedisError, OSError) as exc:
            log.debug("wake-up for %s not sent: %s", message.queue_name, exc)


class WakingConsumer(_RedisConsumer):
    """Dramatiq's Redis consumer, except that when it has nothing in hand and the queue is empty it
    blocks on the queue's wake list (BLPOP) instead of polling every few milliseconds: a publish
    wakes it at once, and an idle worker costs next to nothing.

    While some of its messages are still being worked on it polls as Dramatiq's does (the acks
    of those messages are sent from this same thread, between calls)."""

    def __next__(self) -> MessageProxy | None:
        broker = cast("RedisBroker", self.broker)
        try:
            while True:
                if self.message_cache:
                    data = self.message_cache.pop(0)
                    if data is None:
                        continue
                    self.misses = 0
                    message = Message.decode(data)
                    self.queued_message_ids.add(message.message_id)
                    return MessageProxy(message)
                free = self.prefetch - self.outstanding_message_count
                if free > 0:  # each fetch is also this worker's heartbeat: it goes on while stopping
                    self.message_cache = broker.do_fetch(self.queue_name, free)
                    if self.message_cache:
                        continue
                if self.outstanding_message_count == 0 and not broker.stopping.is_set():
                    broker.wait_for_wake(self.queue_name, IDLE_WAIT_S)
                else:
                    self.misses, backoff_ms = compute_backoff(self.misses, max_backoff=self.timeout)
                    time.sleep(backoff_ms / 1000)
                return None
        except redis.ConnectionError as exc:
            raise ConnectionClosed(exc) from None  # type: ignore[no-untyped-call]


class RedisBroker(DramatiqRedisBroker):
    """Dramatiq's Redis broker, which can also say whether it still holds a message, and whose
    idle consumers are woken by a publish instead of polling."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)  # type: ignore[no-untyped-call]
        self._presence = self.client.register_script(_PRESENCE_SCRIPT)
        self._wake = self.client.register_script(_WAKE_SCRIPT)
        # Set when this process's workers stop: its consumers then poll until they are stopped, and the
        # ones blocked are woken through a list only this process waits on (see `stop_waiting`).
        self.stopping = threading.Event()
        self._stop_key = f"{self.namespace}:stop-waiting.{uuid.uuid4().hex}"

    @property
    def consumer_class(self) -> type[WakingConsumer]:
        return WakingConsumer

    def wake_key(self, queue_name: str) -> str:
        return f"{self.namespace}:{queue_name}.wake"

    def wake(self, queue_name: str) -> None:
        """Wake one consumer blocked on `queue_name` (one round trip)."""
        self._wake(keys=[self.wake_key(queue_name)], args=[WAKE_BACKLOG, WAKE_TTL_MS])

    def wait_for_wake(self, queue_name: str, timeout_s: float) -> bool:
        """Block until a wake-up for `queue_name` (or this process's stop) arrives or `timeout_s` passes;
        True if woken."""
        return self.client.blpop([self.wake_key(queue_name), self._stop_key], timeout=timeout_s) is not None

    def stop_waiting(self, consumers: int) -> None:
        """Stop this process's idle consumers from blocking, as its workers stop: each would otherwise
        hold the shutdown for up to IDLE_WAIT_S, as Dramatiq joins the consumers one by one. A wake-up on
        the queues themselves could be taken by another process's consumer instead."""
        self.stopping.set()
        try:
            with self.client.pipeline() as pipe:
                pipe.rpush(self._stop_key, *["stop"] * consumers).pexpire(self._stop_key, WAKE_TTL_MS).execute()
        except (redis.RedisError, OSError) as exc:  # Redis is down: the consumers' waits end on their own
            log.debug("stop wake-up not sent: %s", exc)

    def messages_present(self, message_ids: list[str], queue_name: str = QUEUE) -> list[bool]:
        """For each message id: is it still held by Redis (waiting, delayed or being worked on)?"""
        delayed = f"{self.namespace}:{dq_name(queue_name)}.msgs"
        ready = f"{self.namespace}:{queue_name}.msgs"
        # One script, so one atomic look: a delayed message moves to the ready queue before it
        # leaves the delay queue, and checking the delay queue first cannot miss it.
        answers: list[int] = self._presence(keys=[delayed, ready], args=message_ids)
        return [bool(answer) for answer in answers]

    def enqueue_many(self, messages: Sequence[Message[Any]]) -> None:
        """Enqueue undelayed messages in one Redis pipeline: one round trip instead of one each.

        What `enqueue` does for each (the middleware's enqueue hooks, the broker's `dispatch`
        script with its arguments), with the script's calls queued on a pipeline; a second shim on
        Dramatiq's internals (`scripts`, `_should_do_maintenance`, `_max_unpack_size`), checked
        with the first.
        """
        dispatch = self.scripts["dispatch"]
        sent: list[Message[Any]] = []
        with self.client.pipeline(transaction=False) as pipeline:
            for message in messages:
                self.emit_before("enqueue", message, None)
                args = self._dispatch_args(
                    "enqueue",
                    message.queue_name,
                    self._should_do_maintenance("enqueue"),
                    message.options[REDIS_MESSAGE_ID],
                    message.encode(),
                )
                dispatch(keys=[self.namespace], args=args, client=pipeline)
                sent.append(message)
            pipeline.execute()
        for message in sent:
            self.emit_after("enqueue", message, None)

    def reclaim(self, queue_name: str) -> None:
        """Move the messages that dead workers had fetched from `queue_name` (and its delay queue)
        back onto it. A worker is dead to Dramatiq once its heartbeat is older than
        `heartbeat_timeout`.

        Dramatiq does this in its "maintenance", which runs for the queue of one command in
        `maintenance_chance` per million: on a quiet delay queue that can take minutes, and a
        retry fetched by a worker that then died waits that long. The same dispatch script, asked
        for the queue's size with maintenance on, does it when called.
        """
        dispatch = self.scripts["dispatch"]
        for name in (queue_name, dq_name(queue_name)):
            dispatch(keys=[self.namespace], args=self._dispatch_args("qsize", name, 1))

    def _dispatch_args(self, command: str, queue_name: str, maintenance: int, *args: Any) -> list[Any]:
        """The arguments of the dispatch script, as Dramatiq's `_dispatch` passes them."""
        return [
            command,
            current_millis(),
            queue_name,
            self.broker_id,
            self.heartbeat_timeout,
            self.dead_message_ttl,
            maintenance,
            self._max_unpack_size(),  # type: ignore[no-untyped-call]
            *args,
        ]


_WAKE_SCRIPT = """
redis.call('LPUSH', KEYS[1], '1')
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

_PRESENCE_SCRIPT = """
local present = {}
for i, message_id in ipairs(ARGV) do
  present[i] = redis.call('HEXISTS', KEYS[1], message_id) + redis.call('HEXISTS', KEYS[2], message_id)
end
return present
"""


def create_broker(
    url: str,
    heartbeat_timeout_ms: int = Settings.model_fields["broker_heartbeat_timeout_ms"].default,
    maintenance_chance: int = Settings.model_fields["broker_maintenance_chance"].default,
) -> RedisBroker:
    """A broker on the Redis at `url` with Quire's queue declared (the two numbers are
    `QUIRE_BROKER_HEARTBEAT_TIMEOUT_MS` and `QUIRE_BROKER_MAINTENANCE_CHANCE`). It connects on first use."""
    pool = redis.ConnectionPool.from_url(url, socket_connect_timeout=2, socket_timeout=10, health_check_interval=15)
    broker = RedisBroker(
        client=redis.Redis(connection_pool=pool),
        middleware=[KeyedByMessageId(), WakeOnPublish()],
        heartbeat_timeout=heartbeat_timeout_ms,
        maintenance_chance=maintenance_chance,
    )
    broker.declare_queue(QUEUE)
    broker.declare_queue(WEBHOOK_QUEUE)
    return broker


class RedisQueue:
    """A queue on Redis for one actor: by default the dispatcher's, a `process_job(job_id)`
    message per attempt; the webhook outbox's sends `send_webhook(delivery_id)`."""

    def __init__(self, broker: RedisBroker, queue_name: str = QUEUE, actor_name: str = ACTOR) -> None:
        self.broker = broker
        self.queue_name = queue_name
        self.actor_name = actor_name

    def publish(self, job_id: str, message_id: str, delay_s: float = 0.0) -> bool:
        message = self._message(job_id, message_id)
        try:
            self.broker.enqueue(message, delay=int(delay_s * 1000) if delay_s > 0 else None)
        except (redis.RedisError, BrokerConnectionError, OSError) as exc:
            log.warning("could not publish %s for %s, will republish: %s", self.actor_name, job_id, exc)
            return False
        return True

    def publish_many(self, messages: Sequence[tuple[str, str]]) -> bool:
        batch = [self._message(job_id, message_id) for job_id, message_id in messages]
        try:
            self.broker.enqueue_many(batch)
        except (redis.RedisError, BrokerConnectionError, OSError) as exc:
            log.warning("could not publish %d %s messages, will republish: %s", len(batch), self.actor_name, exc)
            return False
        return True

    def _message(self, job_id: str, message_id: str) -> Message[None]:
        return Message(
            queue_name=self.queue_name,
            actor_name=self.actor_name,
            args=(job_id,),
            kwargs={},
            options={},
            message_id=message_id,
        )

    def held(self, message_ids: Sequence[str]) -> list[bool]:
        return self.broker.messages_present(list(message_ids), self.queue_name)

    def reclaim(self) -> None:
        self.broker.reclaim(self.queue_name)
