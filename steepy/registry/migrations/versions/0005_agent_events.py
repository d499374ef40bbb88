"""Events of no submission (agents arriving and leaving) on the timeline, and an index for
reading the whole timeline in order.

Revision ID: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.alter_column("submission_id", existing_type=sa.String(64), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM events WHERE submission_id IS NULL")
    with op.batch_alter_table("events") as batch:
        batch.alter_column("submission_id", existing_type=sa.String(64), nullable=False)
