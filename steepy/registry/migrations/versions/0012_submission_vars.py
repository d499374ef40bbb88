"""The values given for a workflow's variables at submit time (`--var`, `--vars`, the API's
`vars`), kept with the submission as JSON to be shown.

Revision ID: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("submissions", sa.Column("vars", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("vars")
