"""Recurring submissions (extensions 13) and their firings; the engines' timers (the
garbage collector's cron).

Revision ID: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

Serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("workflow", sa.Text, nullable=False),
        sa.Column("source", sa.Text),
        sa.Column("required_capabilities", sa.Text, nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("expression", sa.Text, nullable=False),
        sa.Column("timezone", sa.Text, nullable=False),
        sa.Column("interval_ms", sa.BigInteger),
        sa.Column("anchor", sa.DateTime(timezone=True)),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("created_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_fire_time", sa.DateTime(timezone=True)),
        sa.Column("next_fire_time", sa.DateTime(timezone=True)),
        sa.Column("last_submission_id", sa.String(64)),
    )
    op.create_index("ix_schedules_due", "schedules", ["paused", "next_fire_time"])
    op.create_table(
        "schedule_firings",
        sa.Column("id", Serial, primary_key=True, autoincrement=True),
        sa.Column("schedule_id", sa.String(64),
                  sa.ForeignKey("schedules.id", ondelete="CASCADE"), nullable=False),
        sa.Column("due_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_due_time", sa.DateTime(timezone=True)),
        sa.Column("time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("submission_id", sa.String(64)),
        sa.UniqueConstraint("schedule_id", "due_time", name="uq_schedule_firings_due"),
    )
    timers = op.create_table(
        "timers",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("next_fire_time", sa.DateTime(timezone=True)),
        sa.Column("last_fire_time", sa.DateTime(timezone=True)),
        sa.Column("last_owner", sa.String(64)),
    )
    # present from the start, so engines claim it with an update and never race to insert
    op.bulk_insert(timers, [{"name": "garbageCollector"}])


def downgrade() -> None:
    op.drop_table("timers")
    op.drop_table("schedule_firings")
    op.drop_index("ix_schedules_due", "schedules")
    op.drop_table("schedules")
