"""operator-only artifacts (the evidence of a malformed answer) and recorded group replays

Revision ID: 0010
Revises: 0005
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0010"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("artifact", schema=None) as batch_op:
        batch_op.add_column(sa.Column("operator_only", sa.Boolean(), server_default=sa.false(), nullable=False))
    text = sqlmodel.sql.sqltypes.AutoString
    op.create_table(
        "group_replay",
        sa.Column("id", text(length=32), nullable=False),
        sa.Column("error", text(length=32), nullable=False),
        sa.Column("workflow", text(length=64), nullable=True),
        sa.Column("workflow_version", text(length=16), nullable=True),
        sa.Column("rate", sa.Float(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("replayed", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.Integer(), nullable=False),
        sa.Column("cutoff_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("cursor_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("cursor_id", text(length=32), nullable=True),
        sa.Column("owner", text(length=128), nullable=True),
        sa.Column("lease_until", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("created_by", text(length=320), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_group_replay_state"), "group_replay", ["state"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_group_replay_state"), table_name="group_replay")
    op.drop_table("group_replay")
    with op.batch_alter_table("artifact", schema=None) as batch_op:
        batch_op.drop_column("operator_only")
