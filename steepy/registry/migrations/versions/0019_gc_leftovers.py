"""What the garbage collector has still to delete of submissions whose records it deleted: a
row per submission, written with the deletion and dropped once its files are gone, so that a
collector killed in between leaves them to the next instead of on disk for ever.

Revision ID: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("gc_leftovers",
                    sa.Column("submission_id", sa.String(64), primary_key=True),
                    sa.Column("files", sa.Text, nullable=False))


def downgrade() -> None:
    op.drop_table("gc_leftovers")
