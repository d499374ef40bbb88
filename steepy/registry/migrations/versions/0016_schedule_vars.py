"""The values given for a workflow's variables when a schedule was added (`steepy schedule
add --var`, `vars` in the body of POST /schedules), kept with the schedule as JSON: each
of its submissions carries them, to be shown.

Revision ID: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("schedules", sa.Column("vars", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("schedules") as batch:
        batch.drop_column("vars")
