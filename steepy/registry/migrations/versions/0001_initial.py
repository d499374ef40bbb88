"""Initial registry: submissions, process chains, runs, attempts, events, agents.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)
SERIAL = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("seq", SERIAL, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(64), nullable=False, unique=True),
        sa.Column("name", sa.Text),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("workflow_priority", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("workflow", sa.Text, nullable=False),
        sa.Column("source", sa.Text),
        sa.Column("required_capabilities", sa.Text, nullable=False),
        sa.Column("created_time", TZ, nullable=False),
        sa.Column("start_time", TZ),
        sa.Column("end_time", TZ),
        sa.Column("error_message", sa.Text),
        sa.Column("results", sa.Text),
        sa.Column("generator_state", sa.Text),
        sa.Column("state_round", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cancel_requested", sa.Boolean, nullable=False),
        sa.Column("owner", sa.String(64)),
        sa.Column("lease_until", TZ),
    )
    op.create_index("ix_submissions_status", "submissions", ["status", "workflow_priority", "seq"])
    op.create_table(
        "process_chains",
        sa.Column("seq", SERIAL, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(64), nullable=False, unique=True),
        sa.Column("submission_id", sa.String(64),
                  sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("required_capabilities", sa.Text, nullable=False),
        sa.Column("chain", sa.Text, nullable=False),
        sa.Column("results", sa.Text),
        sa.Column("next_run_at", TZ),
        sa.Column("fed_round", sa.Integer),
        sa.Column("cancel_requested", sa.Boolean, nullable=False),
        sa.Column("created_time", TZ, nullable=False),
    )
    op.create_index("ix_chains_status", "process_chains", ["status", "priority", "seq"])
    op.create_index("ix_chains_submission", "process_chains", ["submission_id", "status"])
    op.create_table(
        "runs",
        sa.Column("chain_id", sa.String(64), sa.ForeignKey("process_chains.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("run_number", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.String(128)),
        sa.Column("start_time", TZ, nullable=False),
        sa.Column("end_time", TZ),
        sa.Column("status", sa.String(16)),
        sa.Column("error_message", sa.Text),
        sa.Column("auto_resume_after", TZ),
    )
    op.create_table(
        "attempts",
        sa.Column("id", SERIAL, primary_key=True, autoincrement=True),
        sa.Column("chain_id", sa.String(64), sa.ForeignKey("process_chains.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("run_number", sa.Integer, nullable=False),
        sa.Column("executable_id", sa.Text, nullable=False),
        sa.Column("service_id", sa.Text, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("start_time", TZ),
        sa.Column("end_time", TZ),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("exit_code", sa.Integer),
        sa.Column("signal", sa.Integer),
        sa.Column("timeout_kind", sa.String(32)),
        sa.Column("delay_ms", sa.BigInteger),
        sa.Column("delay_rule", sa.Text),
        sa.Column("last_lines", sa.Text),
        sa.Column("message", sa.Text),
    )
    op.create_index("ix_attempts_chain", "attempts", ["chain_id", "run_number"])
    op.create_table(
        "events",
        sa.Column("id", SERIAL, primary_key=True, autoincrement=True),
        sa.Column("submission_id", sa.String(64), sa.ForeignKey("submissions.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("chain_id", sa.String(64)),
        sa.Column("time", TZ, nullable=False),
        sa.Column("kind", sa.String(48), nullable=False),
        sa.Column("data", sa.Text),
    )
    op.create_index("ix_events_submission", "events", ["submission_id", "id"])
    op.create_table(
        "agents",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("capabilities", sa.Text, nullable=False),
        sa.Column("start_time", TZ, nullable=False),
        sa.Column("last_seen", TZ, nullable=False),
        sa.Column("state_changed_time", TZ, nullable=False),
        sa.Column("chain_id", sa.String(64)),
        sa.Column("host", sa.Text),
        sa.Column("pid", sa.Integer),
        sa.Column("owner", sa.String(64)),
    )


def downgrade() -> None:
    for table in ("agents", "events", "attempts", "runs", "process_chains", "submissions"):
        op.drop_table(table)
