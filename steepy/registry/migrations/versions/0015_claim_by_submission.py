"""The claim of one submission's chains in claim order straight from an index: (submission_id,
status) becomes (submission_id, status, priority DESC, seq). The engine claims among the
submissions it drives; PostgreSQL walked the status index past every REGISTERED entry a chain
had left (1.3 ms per claim at 10,000 chains; 0.09 ms with this one).

Revision ID: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_chains_submission", "process_chains")
    op.create_index("ix_chains_submission", "process_chains",
                    ["submission_id", "status", sa.text("priority DESC"), "seq"])


def downgrade() -> None:
    op.drop_index("ix_chains_submission", "process_chains")
    op.create_index("ix_chains_submission", "process_chains", ["submission_id", "status"])
