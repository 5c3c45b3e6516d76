"""The one actor, `process_job(job_id)`, and publishing its messages. Thin on purpose."""

from __future__ import annotations

import logging

import dramatiq
import redis
from dramatiq.errors import BrokerConnectionError
from dramatiq.message import Message

from quire.queue.broker import QUEUE, broker

log = logging.getLogger(__name__)


@dramatiq.actor(queue_name=QUEUE, actor_name="process_job")
def process_job(job_id: str) -> None:
    from quire.queue.runner import run_attempt

    run_attempt(job_id)


def new_message(job_id: str) -> Message[None]:
    """A message for the next attempt; its id is recorded on the job before it is sent."""
    message: Message[None] = process_job.message(job_id)
    return message


def publish(message: Message[None], delay_s: float = 0.0) -> bool:
    """Send a message to Redis. False when Redis is unreachable: the recovery loop sends it later."""
    try:
        broker.enqueue(message, delay=int(delay_s * 1000) if delay_s > 0 else None)
    except (redis.RedisError, BrokerConnectionError, OSError) as exc:
        log.warning("could not publish job %s, will republish: %s", message.args[0], exc)
        return False
    return True
