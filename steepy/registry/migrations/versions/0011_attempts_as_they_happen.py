"""Attempts are stored as they happen: each row is keyed by its place in its run (written
when the attempt starts, updated when it ends), when the next attempt is due after a failed or
re-queued one, and where an attempt's processes ran (the host, the executor process that
spawned them with its start time, and the tool's process group), so that an engine taking
over a dead engine's run knows what was spent and what may still be running.

Revision ID: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_COLUMNS = (("ordinal", sa.Integer), ("due_time", sa.DateTime(timezone=True)), ("host", sa.Text),
            ("executor_pid", sa.Integer), ("executor_started", sa.Float), ("pgid", sa.Integer))


def upgrade() -> None:
    for name, kind in _COLUMNS:
        op.add_column("attempts", sa.Column(name, kind))
    op.create_index("ux_attempts_place", "attempts", ["chain_id", "run_number", "ordinal"],
                    unique=True)


def downgrade() -> None:
    op.drop_index("ux_attempts_place", "attempts")
    with op.batch_alter_table("attempts") as batch:
        for name, _ in reversed(_COLUMNS):
            batch.drop_column(name)
