"""The delivery record: recorded with the event, claimed for an attempt, finished, replayed, shown.

Every change is one conditional UPDATE, as for jobs: a duplicate queue message, or a late
attempt whose claim ran out, changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Table, insert, update
from sqlmodel import col, select

from quire.db import Database, utcnow
from quire.jobs.models import Job, JobStatus
from quire.jobs.policy import backoff_delay
from quire.jobs.store import iso
from quire.settings import Settings
from quire.views import View
from quire.webhooks.models import DeliveryStatus, WebhookAttempt, WebhookDelivery, WebhookEvent
from quire.webhooks.signing import new_message_id

DELIVERY: Table = WebhookDelivery.__table__  # type: ignore[attr-defined]
ATTEMPT: Table = WebhookAttempt.__table__  # type: ignore[attr-defined]
# A queue message may arrive a little before the time the record names (two clocks).
EARLY_TOLERANCE = timedelta(seconds=1)
JOB_EVENTS = {JobStatus.COMPLETED: WebhookEvent.JOB_COMPLETED, JobStatus.DEAD_LETTER: WebhookEvent.JOB_DEAD_LETTER}


class NotReplayable(Exception):
    """The delivery is still pending: it will be sent, or is being sent, already."""


@dataclass(frozen=True)
class Recorded:
    """A delivery recorded with its first message id: publish it once the transaction commits."""

    delivery_id: str
    message_id: str


def _queue_message_id() -> str:
    return str(uuid.uuid4())


def record(
    settings: Settings,
    connection: Connection,
    *,
    event: WebhookEvent,
    subject_id: str,
    owner_id: str | None,
    url: str,
    body: str | None = None,
    now: datetime | None = None,
) -> Recorded:
    """Record a delivery inside the caller's transaction (the one that makes the event true).

    `body` is the exact JSON to send; None for job events, whose body is the job's view when the
    first attempt is made.
    """
    now = now or utcnow()
    recorded = Recorded(new_message_id(), _queue_message_id())
    connection.execute(
        insert(DELIVERY),
        {
            "id": recorded.delivery_id,
            "owner_id": owner_id,
            "event": event,
            "subject_id": subject_id,
            "url": url,
            "status": DeliveryStatus.PENDING,
            "attempts": 0,
            "max_attempts": settings.webhook_max_attempts,
            "next_attempt_at": now,
            "message_id": recorded.message_id,
            "body": body,
            "created_at": now,
            "updated_at": now,
        },
    )
    return recorded


def record_job_event(settings: Settings, connection: Connection, job: Job, now: datetime) -> None:
    """Called by the transition that ends a job: record its webhook when the job has a target."""
    event = JOB_EVENTS.get(JobStatus(job.status))
    if event is not None and job.callback_url:
        record(
            settings, connection, event=event, subject_id=job.id, owner_id=job.owner_id, url=job.callback_url, now=now
        )


def unsent_of(db: Database, subject_id: str) -> list[Recorded]:
    """Pending deliveries about a job or batch that no attempt has started yet."""
    with db.session() as session:
        rows = session.exec(
            select(WebhookDelivery.id, WebhookDelivery.message_id).where(
                WebhookDelivery.subject_id == subject_id,
                WebhookDelivery.status == DeliveryStatus.PENDING,
                WebhookDelivery.attempts == 0,
                col(WebhookDelivery.message_id).is_not(None),
            )
        ).all()
    return [Recorded(delivery_id, message_id) for delivery_id, message_id in rows if message_id]


def claim(db: Database, delivery_id: str, lease_s: float) -> WebhookDelivery | None:
    """Start the next attempt of a pending, due delivery; None for a duplicate or early message.

    Until the attempt is finished, `next_attempt_at` is the moment it is taken for lost.
    """
    now = utcnow()
    stmt = (
        update(DELIVERY)
        .where(
            DELIVERY.c.id == delivery_id,
            DELIVERY.c.status == DeliveryStatus.PENDING,
            DELIVERY.c.next_attempt_at <= now + EARLY_TOLERANCE,
        )
        .values(
            attempts=DELIVERY.c.attempts + 1,
            next_attempt_at=now + timedelta(seconds=lease_s),
            message_id=None,
            updated_at=now,
        )
        .returning(*DELIVERY.c)
    )
    with db.session() as session:
        row = session.connection().execute(stmt).one_or_none()
    return WebhookDelivery.model_construct(**row._mapping) if row is not None else None


def fix_body(db: Database, delivery_id: str, body: str) -> None:
    """Keep the body the first attempt sends, so that retries and replays send the same bytes."""
    with db.session() as session:
        session.execute(
            update(DELIVERY).where(DELIVERY.c.id == delivery_id, DELIVERY.c.body.is_(None)).values(body=body)
        )


@dataclass(frozen=True)
class Answer:
    """What one attempt got: a status code, or an error (timeout, refused target, connection)."""

    status_code: int | None = None
    error: str | None = None
    duration_ms: int = 0
    # The receiver asked for a pause (Retry-After), or the target can never work (final).
    retry_after_s: float | None = None
    final: bool = False

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


@dataclass(frozen=True)
class Retry(Recorded):
    """The next attempt's message, to publish after `delay_s`."""

    delay_s: float = 0.0


def finish(settings: Settings, db: Database, claimed: WebhookDelivery, answer: Answer) -> Retry | None:
    """Record the attempt and what follows: delivered, a retry after a backoff, or given up."""
    now = utcnow()
    values: dict[str, Any] = {"updated_at": now, "last_error": None if answer.ok else _error_text(answer)}
    retry: Recorded | None = None
    delay = 0.0
    if answer.ok:
        values.update(status=DeliveryStatus.DELIVERED, delivered_at=now, next_attempt_at=now)
    elif answer.final or claimed.attempts >= claimed.max_attempts:
        values.update(status=DeliveryStatus.FAILED, next_attempt_at=now)
    else:
        delay = backoff_delay(claimed.attempts, settings.webhook_retry_base_s, settings.webhook_retry_max_s)
        if answer.retry_after_s is not None:
            delay = max(delay, min(answer.retry_after_s, settings.webhook_retry_max_s))
        retry = Recorded(claimed.id, _queue_message_id())
        values.update(next_attempt_at=now + timedelta(seconds=delay), message_id=retry.message_id)
    with db.session() as session:
        connection = session.connection()
        moved = connection.execute(
            update(DELIVERY)
            .where(
                DELIVERY.c.id == claimed.id,
                DELIVERY.c.status == DeliveryStatus.PENDING,
                DELIVERY.c.attempts == claimed.attempts,
            )
            .values(**values)
        )
        if not getattr(moved, "rowcount", 0):
            return None  # the claim ran out and another attempt took over: this one changes nothing
        connection.execute(
            insert(ATTEMPT),
            {
                "delivery_id": claimed.id,
                "attempt": claimed.attempts,
                "at": now,
                "status_code": answer.status_code,
                "error": answer.error[:200] if answer.error else None,
                "duration_ms": answer.duration_ms,
            },
        )
    return Retry(retry.delivery_id, retry.message_id, delay) if retry is not None else None


def _error_text(answer: Answer) -> str:
    text = answer.error or f"HTTP {answer.status_code}"
    return text[:200]


def replay(settings: Settings, db: Database, delivery_id: str) -> Recorded | None:
    """Send a finished delivery again (same id and body) with a fresh attempt budget; None if unknown."""
    now = utcnow()
    recorded = Recorded(delivery_id, _queue_message_id())
    with db.session() as session:
        found = session.get(WebhookDelivery, delivery_id)
        if found is None:
            return None
        moved = session.connection().execute(
            update(DELIVERY)
            .where(DELIVERY.c.id == delivery_id, DELIVERY.c.status != DeliveryStatus.PENDING)
            .values(
                status=DeliveryStatus.PENDING,
                max_attempts=DELIVERY.c.attempts + settings.webhook_max_attempts,
                next_attempt_at=now,
                message_id=recorded.message_id,
                delivered_at=None,
                updated_at=now,
            )
        )
        if not getattr(moved, "rowcount", 0):
            raise NotReplayable("This delivery is still being sent.")
    return recorded


def overdue(db: Database, grace_before: datetime, limit: int = 500) -> list[tuple[str, str | None]]:
    """(delivery id, message id) of pending deliveries whose attempt should have started by now."""
    with db.session() as session:
        rows = session.exec(
            select(WebhookDelivery.id, WebhookDelivery.message_id)
            .where(
                WebhookDelivery.status == DeliveryStatus.PENDING, col(WebhookDelivery.next_attempt_at) < grace_before
            )
            .order_by(col(WebhookDelivery.next_attempt_at))
            .limit(limit)
        ).all()
    return [(delivery_id, message_id) for delivery_id, message_id in rows]


def renew_message(db: Database, delivery_id: str, old_message_id: str | None) -> Recorded | None:
    """Record a new message for a pending delivery whose message was lost. Not an attempt."""
    recorded = Recorded(delivery_id, _queue_message_id())
    old = DELIVERY.c.message_id == old_message_id if old_message_id is not None else DELIVERY.c.message_id.is_(None)
    with db.session() as session:
        moved = session.execute(
            update(DELIVERY)
            .where(DELIVERY.c.id == delivery_id, DELIVERY.c.status == DeliveryStatus.PENDING, old)
            .values(message_id=recorded.message_id)
        )
        return recorded if getattr(moved, "rowcount", 0) else None


class AttemptView(View, frozen=True):
    attempt: int
    at: str | None
    status_code: int | None
    error: str | None
    duration_ms: int


class DeliveryView(View, frozen=True):
    """A delivery as its owner sees it (docs/api.md, "Webhooks")."""

    delivery_id: str
    event: str
    url: str
    status: str
    max_attempts: int
    next_attempt_at: str | None
    last_error: str | None
    created_at: str | None
    delivered_at: str | None
    attempts: tuple[AttemptView, ...]


def deliveries_of(db: Database, subject_id: str) -> list[DeliveryView]:
    """Every delivery about a job or batch, oldest first, each with its attempts."""
    return _views(db, col(WebhookDelivery.subject_id) == subject_id)


def delivery_view(db: Database, delivery_id: str) -> DeliveryView | None:
    found = _views(db, col(WebhookDelivery.id) == delivery_id)
    return found[0] if found else None


def _views(db: Database, condition: Any) -> list[DeliveryView]:
    with db.session() as session:
        found = session.exec(
            select(WebhookDelivery).where(condition).order_by(col(WebhookDelivery.created_at), col(WebhookDelivery.id))
        ).all()
        ids = [d.id for d in found]
        tries: Sequence[WebhookAttempt] = (
            session.exec(
                select(WebhookAttempt).where(col(WebhookAttempt.delivery_id).in_(ids)).order_by(col(WebhookAttempt.id))
            ).all()
            if ids
            else []
        )
    by_delivery: dict[str, list[AttemptView]] = {}
    for t in tries:
        by_delivery.setdefault(t.delivery_id, []).append(
            AttemptView(
                attempt=t.attempt, at=iso(t.at), status_code=t.status_code, error=t.error, duration_ms=t.duration_ms
            )
        )
    return [
        DeliveryView(
            delivery_id=d.id,
            event=d.event,
            url=d.url,
            status=d.status,
            max_attempts=d.max_attempts,
            next_attempt_at=iso(d.next_attempt_at) if d.status == DeliveryStatus.PENDING else None,
            last_error=d.last_error,
            created_at=iso(d.created_at),
            delivered_at=iso(d.delivered_at),
            attempts=tuple(by_delivery.get(d.id, ())),
        )
        for d in found
    ]


def get_delivery(db: Database, delivery_id: str) -> WebhookDelivery | None:
    with db.session() as session:
        return session.get(WebhookDelivery, delivery_id)
