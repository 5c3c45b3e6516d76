"""signed webhooks: callback URLs, the account's secret, deliveries and their attempts

Revision ID: 0008
Revises: 0005
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.add_column(sa.Column("callback_url", sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=True))
    with op.batch_alter_table("user", schema=None) as batch_op:
        batch_op.add_column(sa.Column("webhook_url", sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=True))
        batch_op.add_column(sa.Column("webhook_secret", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True))
    op.create_table(
        "webhook_delivery",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("owner_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("event", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("subject_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("url", sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("message_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("body", sa.Text(), nullable=True),
        sa.Column("last_error", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("delivered_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_webhook_delivery_status_next", "webhook_delivery", ["status", "next_attempt_at"])
    op.create_index("ix_webhook_delivery_subject_id", "webhook_delivery", ["subject_id"])
    op.create_table(
        "webhook_attempt",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("delivery_id", sa.String(length=64), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["delivery_id"], ["webhook_delivery.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_webhook_attempt_delivery_id", "webhook_attempt", ["delivery_id"])


def downgrade() -> None:
    op.drop_index("ix_webhook_attempt_delivery_id", table_name="webhook_attempt")
    op.drop_table("webhook_attempt")
    op.drop_index("ix_webhook_delivery_subject_id", table_name="webhook_delivery")
    op.drop_index("ix_webhook_delivery_status_next", table_name="webhook_delivery")
    op.drop_table("webhook_delivery")
    with op.batch_alter_table("user", schema=None) as batch_op:
        batch_op.drop_column("webhook_secret")
        batch_op.drop_column("webhook_url")
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.drop_column("callback_url")
