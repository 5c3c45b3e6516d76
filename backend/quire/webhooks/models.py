"""The webhook records: one delivery per event and target, and one row per attempt to send it."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Column, ForeignKey, Index, String, Text
from sqlmodel import Field, SQLModel

from quire.db import utcnow

# Standard Webhooks: a URL a person types; 2048 is what browsers and proxies reliably carry.
MAX_URL_CHARS = 2048


class WebhookEvent(StrEnum):
    JOB_COMPLETED = "job.completed"
    JOB_DEAD_LETTER = "job.dead_letter"
    BATCH_COMPLETED = "batch.completed"


class DeliveryStatus(StrEnum):
    PENDING = "pending"  # waiting for its next attempt (or being sent)
    DELIVERED = "delivered"  # the receiver answered 2xx
    FAILED = "failed"  # given up: attempts spent, or the target refused


class WebhookDelivery(SQLModel, table=True):
    """One event for one URL. Its id is the `webhook-id` header: the same on every attempt and replay.

    Recorded in the transaction that ends the job, so a delivery is never lost with a process;
    `message_id` is the queue message that should make its next attempt (the outbox: recovery
    republishes a pending delivery whose message Redis no longer holds).
    """

    __tablename__ = "webhook_delivery"
    __table_args__ = (Index("ix_webhook_delivery_status_next", "status", "next_attempt_at"),)

    id: str = Field(primary_key=True, max_length=64)
    owner_id: str | None = Field(default=None, max_length=64)
    event: str = Field(max_length=32)
    # The job (or batch) the event is about.
    subject_id: str = Field(max_length=64, index=True)
    url: str = Field(max_length=MAX_URL_CHARS)
    status: str = Field(default=DeliveryStatus.PENDING, max_length=16)
    attempts: int = 0
    max_attempts: int
    # When the next attempt may start; while an attempt runs, when it is given up as lost.
    next_attempt_at: datetime = Field(default_factory=utcnow)
    message_id: str | None = Field(default=None, max_length=64)
    # The exact bytes signed and sent: fixed by the first attempt (or given with the event), so
    # every retry and replay sends the same body.
    body: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    last_error: str | None = Field(default=None, max_length=200)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    delivered_at: datetime | None = None


class WebhookAttempt(SQLModel, table=True):
    """One try at sending a delivery: what the receiver answered, or why nothing came back."""

    __tablename__ = "webhook_attempt"

    id: int | None = Field(default=None, primary_key=True)
    delivery_id: str = Field(
        sa_column=Column(String(64), ForeignKey("webhook_delivery.id", ondelete="CASCADE"), nullable=False, index=True)
    )
    attempt: int
    at: datetime = Field(default_factory=utcnow)
    status_code: int | None = None
    error: str | None = Field(default=None, max_length=200)
    duration_ms: int = 0
