"""Indexes for the HTTP API's listings: submissions and chains by status, newest first, and
a submission's chains newest first, so a page needs no sort of the whole table.

Revision ID: 0002
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_submissions_status_seq", "submissions", ["status", "seq"])
    op.create_index("ix_chains_status_seq", "process_chains", ["status", "seq"])
    op.create_index("ix_chains_submission_seq", "process_chains", ["submission_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_chains_submission_seq", "process_chains")
    op.drop_index("ix_chains_status_seq", "process_chains")
    op.drop_index("ix_submissions_status_seq", "submissions")
