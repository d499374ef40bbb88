"""Indexes that keep the engine's per-chain work independent of how many chains there are:
the claim order (priority descending, then oldest) straight from an index instead of a sort
of every REGISTERED chain, a submission's finished chains not yet fed to the generator, and
the start order of ACCEPTED submissions by their (changeable) priority.

Revision ID: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_submissions_status", "submissions")
    op.create_index("ix_submissions_status", "submissions",
                    ["status", sa.text("priority DESC"), "seq"])
    op.drop_index("ix_chains_status", "process_chains")
    op.create_index("ix_chains_status", "process_chains",
                    ["status", sa.text("priority DESC"), "seq"])
    op.create_index("ix_chains_unfed", "process_chains", ["submission_id", "fed_round", "status"])


def downgrade() -> None:
    op.drop_index("ix_chains_unfed", "process_chains")
    op.drop_index("ix_chains_status", "process_chains")
    op.create_index("ix_chains_status", "process_chains", ["status", "priority", "seq"])
    op.drop_index("ix_submissions_status", "submissions")
    op.create_index("ix_submissions_status", "submissions",
                    ["status", "workflow_priority", "seq"])
