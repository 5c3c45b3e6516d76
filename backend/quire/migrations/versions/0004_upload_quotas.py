"""upload quotas and expiry: indexes for an owner's recent uploads, old uploads and a job's input

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("upload", schema=None) as batch_op:
        batch_op.create_index("ix_upload_owner_created", ["owner_id", "created_at"], unique=False)
        batch_op.create_index("ix_upload_created", ["created_at"], unique=False)
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.create_index("ix_job_input_ref", ["input_ref"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.drop_index("ix_job_input_ref")
    with op.batch_alter_table("upload", schema=None) as batch_op:
        batch_op.drop_index("ix_upload_created")
        batch_op.drop_index("ix_upload_owner_created")
