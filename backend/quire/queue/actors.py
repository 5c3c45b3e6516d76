"""The actors, `process_job(job_id)` and `send_webhook(delivery_id)`, declared on the broker the bootstrap
built. Thin on purpose."""

from __future__ import annotations

from collections.abc import Callable

import dramatiq

from quire.queue.broker import ACTOR, QUEUE, WEBHOOK_ACTOR, WEBHOOK_QUEUE, RedisBroker


def declare_process_job(broker: RedisBroker, run_attempt: Callable[[str], None]) -> dramatiq.Actor[[str], None]:
    """Declare `process_job` on `broker`: each delivered message runs one attempt of its job.

    The actor is given its broker explicitly, so no module has to import the broker before the
    actor is declared (Dramatiq's global-broker ordering rule does not arise).
    """

    def process_job(job_id: str) -> None:
        run_attempt(job_id)

    actor: dramatiq.Actor[[str], None] = dramatiq.actor(broker=broker, queue_name=QUEUE, actor_name=ACTOR)(process_job)
    return actor


def declare_send_webhook(broker: RedisBroker, send: Callable[[str], None]) -> dramatiq.Actor[[str], None]:
    """Declare `send_webhook` on `broker`: each delivered message makes one attempt of its delivery."""

    def send_webhook(delivery_id: str) -> None:
        send(delivery_id)

    actor: dramatiq.Actor[[str], None] = dramatiq.actor(
        broker=broker, queue_name=WEBHOOK_QUEUE, actor_name=WEBHOOK_ACTOR
    )(send_webhook)
    return actor
