"""The estimated progress of a running chain, as its agent last reported it.

Revision ID: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("process_chains", sa.Column("progress", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("process_chains") as batch:
        batch.drop_column("progress")
