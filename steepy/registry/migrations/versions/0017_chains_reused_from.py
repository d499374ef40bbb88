"""The submission whose work a reused chain reused, as a column of its own: the garbage
collector keeps an old submission's files while a submission it keeps reuses them (their
results name those files), and finds them again when the last such submission goes. Filled
from the JSON marker of the chains reused before.

Revision ID: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("process_chains", sa.Column("reused_from", sa.String(64)))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE process_chains SET reused_from = (reused::json ->> 'submissionId') "
                   "WHERE reused IS NOT NULL")
    else:
        op.execute("UPDATE process_chains SET reused_from = json_extract(reused, "
                   "'$.submissionId') WHERE reused IS NOT NULL")
    op.create_index("ix_chains_reused_from", "process_chains", ["reused_from"])


def downgrade() -> None:
    op.drop_index("ix_chains_reused_from", "process_chains")
    with op.batch_alter_table("process_chains") as batch:
        batch.drop_column("reused_from")
