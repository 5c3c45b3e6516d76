"""batches of jobs, and a person's review of an invoice result

Revision ID: 0007
Revises: 0005
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0007"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "batch",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("owner_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("workflow", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("callback_url", sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=True),
        sa.Column("rejected", sa.JSON(), nullable=False),
        sa.Column("idempotency_key", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True),
        sa.Column("request_fingerprint", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("sealed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("completed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("idempotency_key"),
    )
    with op.batch_alter_table("batch", schema=None) as batch_op:
        batch_op.create_index("ix_batch_owner_created", ["owner_id", "created_at"], unique=False)
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.add_column(sa.Column("batch_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True))
        batch_op.add_column(sa.Column("review", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("reviewed_by", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True))
        batch_op.add_column(sa.Column("reviewed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.create_index("ix_job_batch_status", ["batch_id", "status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.drop_index("ix_job_batch_status")
        batch_op.drop_column("reviewed_at")
        batch_op.drop_column("reviewed_by")
        batch_op.drop_column("review")
        batch_op.drop_column("batch_id")
    with op.batch_alter_table("batch", schema=None) as batch_op:
        batch_op.drop_index("ix_batch_owner_created")
    op.drop_table("batch")
