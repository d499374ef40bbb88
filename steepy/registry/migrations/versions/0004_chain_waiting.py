"""Why a REGISTERED chain waits (e.g. "no agent offers gpu"), so every view can say so.

Revision ID: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("process_chains", sa.Column("waiting", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("process_chains") as batch:
        batch.drop_column("waiting")
