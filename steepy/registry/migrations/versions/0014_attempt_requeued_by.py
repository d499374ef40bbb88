"""Who re-queued an attempt: its tool's signal file (`tool') or its retry policy's `requeue'
(`policy'). A run that goes on from cut runs counts the tool's re-queues against their limit
and keeps the pause the tool asked for, also without a retry policy.

Revision ID: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("attempts", sa.Column("requeued_by", sa.String(16)))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("requeued_by")
