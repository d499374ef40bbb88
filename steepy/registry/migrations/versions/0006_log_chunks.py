"""Chains' output in the database, so a chain's log can be read where it did not run.

Revision ID: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "log_chunks",
        sa.Column("chain_id", sa.String(64),
                  sa.ForeignKey("process_chains.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("run_number", sa.Integer, primary_key=True),
        sa.Column("offset", sa.BigInteger, primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("time", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("log_chunks")
