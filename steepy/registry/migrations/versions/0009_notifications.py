"""The outbox of notifications (extensions 12): one delivery per webhook and event.

Revision ID: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "outbox",
        sa.Column("id", serial, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(64), nullable=False, unique=True),
        sa.Column("event_id", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.String(48), nullable=False),
        sa.Column("submission_id", sa.String(64),
                  sa.ForeignKey("submissions.id", ondelete="CASCADE")),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("created_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_try", sa.DateTime(timezone=True)),
        sa.Column("last_try", sa.DateTime(timezone=True)),
        sa.Column("last_error", sa.Text),
        sa.Column("delivered_time", sa.DateTime(timezone=True)),
        sa.Column("claimed_by", sa.String(64)),
        sa.Column("claimed_until", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_outbox_due", "outbox", ["status", "next_try"])
    op.create_index("ix_outbox_listing", "outbox", ["status", "id"])


def downgrade() -> None:
    op.drop_table("outbox")
