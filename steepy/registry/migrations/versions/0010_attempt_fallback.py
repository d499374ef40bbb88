"""Which executable an attempt stood in for, when it was an attempt of a fallback
(extensions 10).

Revision ID: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("attempts", sa.Column("fallback_for", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("fallback_for")
