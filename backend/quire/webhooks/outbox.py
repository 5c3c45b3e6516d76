"""The webhook outbox: publish a recorded delivery's message after commit, and again if Redis lost it.

Deliveries are recorded in the transaction that makes their event true (a job's terminal
transition, or the one that marks a batch completed), so a process that dies after that commit loses
nothing: `republish_lost`, run by the recovery loop, sends any pending delivery whose message is
not in Redis. Publishing right after the commit only makes the first attempt prompt.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from sqlmodel import Session

from quire.accounts.service import default_webhook_url
from quire.db import Database, utcnow
from quire.jobs.models import Batch, Job
from quire.queue.dispatch import MessageQueue
from quire.settings import Settings
from quire.views import View, plain
from quire.webhooks import deliveries
from quire.webhooks.deliveries import JOB_EVENTS, Recorded
from quire.webhooks.models import WebhookEvent

log = logging.getLogger(__name__)


@dataclass
class WebhookOutbox:
    """The webhook side of the queue; built once per process by the bootstrap."""

    db: Database
    settings: Settings
    queue: MessageQueue

    def publish(self, recorded: Recorded, delay_s: float = 0.0) -> bool:
        return self.queue.publish(recorded.delivery_id, recorded.message_id, delay_s)

    def after_transition(self, job_id: str, moved: object) -> None:
        """The dispatcher's after-commit hook: send the webhook a job's terminal transition recorded.

        Only a job with a callback URL can have one, so other jobs cost nothing here.
        """
        if isinstance(moved, Job) and moved.callback_url and moved.status in JOB_EVENTS:
            for recorded in deliveries.unsent_of(self.db, job_id):
                self.publish(recorded)

    def record_batch_completed(self, session: Session, batch: Batch) -> Callable[[], object] | None:
        """A batch completion listener (`BatchCompletion.on_completed`): record its `batch.completed`
        delivery in the transaction that marks the batch completed, and return the publish to make
        after that commits (None when there is no target: neither the batch's `callback_url` nor the
        account's default). Its body, the batch's view, is made at the first attempt, as a job's is."""
        url = batch.callback_url or (default_webhook_url(self.db, batch.owner_id, session) if batch.owner_id else None)
        if not url:
            return None
        recorded = deliveries.record(
            self.settings,
            session.connection(),
            event=WebhookEvent.BATCH_COMPLETED,
            subject_id=batch.id,
            owner_id=batch.owner_id,
            url=url,
        )
        return partial(self.publish, recorded)

    def replay(self, delivery_id: str) -> deliveries.DeliveryView | None:
        """Send a delivered or given-up delivery again: the same id and body, fresh attempts. Answers the delivery
        as the replay left it (pending), read before its message goes out: a worker may deliver it at once, and
        what the caller is told should not depend on that race. None if unknown or its job is gone."""
        recorded = deliveries.replay(self.settings, self.db, delivery_id)
        if recorded is None:
            return None
        view = deliveries.delivery_view(self.db, delivery_id)
        self.publish(recorded)
        return view

    def republish_lost(self, reclaim: bool = True) -> int:
        """Recovery: publish again each pending delivery that is due and whose message Redis lost;
        with `reclaim`, have the messages that dead workers took given back."""
        grace = timedelta(seconds=self.settings.republish_after_seconds)
        waiting = deliveries.overdue(self.db, utcnow() - grace)
        if not waiting:
            return 0
        held = self.queue.held([message_id or "" for _, message_id in waiting])
        sent = 0
        for (delivery_id, message_id), is_held in zip(waiting, held, strict=True):
            if is_held:
                continue
            renewed = deliveries.renew_message(self.db, delivery_id, message_id)
            if renewed is not None and self.publish(renewed):
                sent += 1
        if sent:
            log.info("webhooks: republished %d deliveries whose message was lost", sent)
        if reclaim and any(held):
            self.queue.reclaim()  # overdue yet held: perhaps by a worker that died holding it
        return sent


def event_body(event: WebhookEvent, timestamp: str, view: View) -> str:
    """The JSON sent: the view with the event's `type` and `timestamp` at the top level (the view
    "squashed" into the Standard Webhooks payload), minified, as it is signed."""
    return json.dumps({"type": event.value, "timestamp": timestamp, **plain(view)}, separators=(",", ":"))
