"""Users and API tokens. Passwords are Argon2id hashes; tokens are stored only as a sha256."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, ForeignKey, String
from sqlmodel import Field, SQLModel

from quire.db import new_id, utcnow


class User(SQLModel, table=True):
    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    email: str = Field(max_length=320, unique=True, index=True)
    password_hash: str = Field(max_length=255)
    is_admin: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    password_changed_at: datetime = Field(default_factory=utcnow)
    # Webhooks: the URL a job without its own callback_url is reported to, and the signing secret
    # (`whsec_...`, made on first use and rotated by `quire webhooks secret EMAIL`).
    webhook_url: str | None = Field(default=None, max_length=2048)
    webhook_secret: str | None = Field(default=None, max_length=128)


class ApiToken(SQLModel, table=True):
    __tablename__ = "api_token"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    user_id: str = Field(
        sa_column=Column(String(32), ForeignKey("user.id", ondelete="CASCADE"), nullable=False, index=True)
    )
    name: str = Field(max_length=100)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    # The first characters, so a person can tell their tokens apart without the secret.
    prefix: str = Field(max_length=16)
    created_at: datetime = Field(default_factory=utcnow)
    revoked_at: datetime | None = None
