"""Which database this is: a table of one row, a random id given when the database was made
(here, for a database made before), by which a process whose SQLite file was replaced by
another database at the same path tells that it is not the one it opened.

Revision ID: 0018
"""

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table("database_identity", sa.Column("id", sa.String(32), primary_key=True))
    op.bulk_insert(table, [{"id": uuid.uuid4().hex}])


def downgrade() -> None:
    op.drop_table("database_identity")
