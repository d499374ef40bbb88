"""Reusable work (extensions 15): the cache entries (a row per executable of a chain whose
keys were taken, with its outputs once the chain succeeded, and its shape and input files
to tell what changed), whether a submission resumes (`--resume'), and which earlier chain a
reused chain stands for.

Revision ID: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("submissions", sa.Column("resume", sa.Boolean))
    op.add_column("process_chains", sa.Column("reused", sa.Text))
    serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "cache_entries",
        sa.Column("seq", serial, primary_key=True, autoincrement=True),
        sa.Column("chain_key", sa.String(64), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("submission_id", sa.String(64),
                  sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("chain_id", sa.String(64), nullable=False),
        sa.Column("executable_id", sa.Text, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("outputs", sa.Text),
        sa.Column("created_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_time", sa.DateTime(timezone=True)),
        sa.Column("shape", sa.String(64)),
        sa.Column("inputs", sa.Text),
    )
    op.create_index("ix_cache_entries_chain_key", "cache_entries", ["chain_key"])
    op.create_index("ix_cache_entries_shape", "cache_entries", ["shape"])
    op.create_index("ix_cache_entries_chain", "cache_entries", ["chain_id"])
    op.create_index("ix_cache_entries_submission", "cache_entries", ["submission_id"])


def downgrade() -> None:
    op.drop_table("cache_entries")
    with op.batch_alter_table("process_chains") as batch:
        batch.drop_column("reused")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("resume")
