"""The registry's tables (SQLAlchemy Core). Times are UTC; JSON is stored as text so the
same schema works on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import (BigInteger, Boolean, Column, DateTime, ForeignKey, Index, Integer,
                        Float, LargeBinary, MetaData, String, Table, Text,
                        UniqueConstraint)

metadata = MetaData()

# BigInteger that SQLite turns into its rowid alias (autoincrement)
Serial = BigInteger().with_variant(Integer(), "sqlite")

submissions = Table(
    "submissions", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),  # insertion order
    Column("id", String(64), nullable=False, unique=True),
    Column("name", Text),
    Column("priority", Integer, nullable=False, default=0),
    Column("workflow_priority", Integer, nullable=False, default=0),
    Column("status", String(16), nullable=False),
    Column("workflow", Text, nullable=False),  # Steep JSON
    Column("source", Text),  # the text as submitted
    Column("required_capabilities", Text, nullable=False, default="[]"),
    Column("created_time", DateTime(timezone=True), nullable=False),
    Column("start_time", DateTime(timezone=True)),
    Column("end_time", DateTime(timezone=True)),
    Column("error_message", Text),
    Column("results", Text),
    Column("generator_state", Text),
    # the rounds the stored generator state includes
    Column("state_round", Integer, nullable=False, default=0, server_default="0"),
    Column("cancel_requested", Boolean, nullable=False, default=False),
    Column("owner", String(64)),  # the controller driving it (lease)
    Column("lease_until", DateTime(timezone=True)),
    Column("vars", Text),  # JSON: the values given at submit time (migration 0012)
    # reuse earlier work (`--resume'; None: the configuration's `cache.enabled', 0013)
    Column("resume", Boolean),
)
# the order ACCEPTED submissions start in: highest priority first, then oldest (0003)
Index("ix_submissions_status", submissions.c.status, submissions.c.priority.desc(),
      submissions.c.seq)

process_chains = Table(
    "process_chains", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("id", String(64), nullable=False, unique=True),
    Column("submission_id", String(64), ForeignKey("submissions.id", ondelete="CASCADE"),
           nullable=False),
    Column("status", String(16), nullable=False),
    Column("priority", Integer, nullable=False, default=0),
    Column("required_capabilities", Text, nullable=False, default="[]"),
    Column("chain", Text, nullable=False),  # Steep JSON of the process chain
    Column("results", Text),
    Column("next_run_at", DateTime(timezone=True)),  # when a PAUSED chain is due again
    # the controller round in which the generator got this chain's outcome (NULL: not yet)
    Column("fed_round", Integer),
    Column("cancel_requested", Boolean, nullable=False, default=False),
    Column("created_time", DateTime(timezone=True), nullable=False),
    Column("waiting", Text),
    Column("progress", Float),  # estimated progress (0..1) of a RUNNING chain, from its agent  # why a REGISTERED chain cannot start, e.g. "no agent offers gpu"
    # JSON {submissionId, processChainId}: the earlier chain whose work it reused (0013)
    Column("reused", Text),
    # that chain's submission: the collector keeps its files while this one is kept (0017)
    Column("reused_from", String(64)),
)
# the claim order: highest priority first, then oldest (migration 0003)
Index("ix_chains_status", process_chains.c.status, process_chains.c.priority.desc(),
      process_chains.c.seq)
# finished chains the generator has not seen yet (migration 0003)
Index("ix_chains_unfed", process_chains.c.submission_id, process_chains.c.fed_round,
      process_chains.c.status)
# the chains that reused a submission's work (migration 0017)
Index("ix_chains_reused_from", process_chains.c.reused_from)
# a submission's chains by status; the claim among the submissions an engine drives, in claim
# order (migration 0015)
Index("ix_chains_submission", process_chains.c.submission_id, process_chains.c.status,
      process_chains.c.priority.desc(), process_chains.c.seq)

runs = Table(
    "runs", metadata,
    Column("chain_id", String(64), ForeignKey("process_chains.id", ondelete="CASCADE"),
           primary_key=True),
    Column("run_number", Integer, primary_key=True),
    Column("agent_id", String(128)),
    Column("start_time", DateTime(timezone=True), nullable=False),
    Column("end_time", DateTime(timezone=True)),
    Column("status", String(16)),
    Column("error_message", Text),
    Column("auto_resume_after", DateTime(timezone=True)),
)

attempts = Table(
    "attempts", metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    Column("chain_id", String(64), ForeignKey("process_chains.id", ondelete="CASCADE"),
           nullable=False),
    Column("run_number", Integer, nullable=False),
    Column("executable_id", Text, nullable=False),
    Column("service_id", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("start_time", DateTime(timezone=True)),
    Column("end_time", DateTime(timezone=True)),
    Column("outcome", String(16), nullable=False),
    Column("exit_code", Integer),
    Column("signal", Integer),
    Column("timeout_kind", String(32)),
    Column("delay_ms", BigInteger),
    Column("delay_rule", Text),
    Column("last_lines", Text),  # JSON list
    Column("message", Text),
    Column("fallback_for", Text),  # an attempt of a fallback: the executable it stood in for
    Column("ordinal", Integer),  # its place in its run: the row is written at its start (0011)
    Column("due_time", DateTime(timezone=True)),  # when the next attempt is due
    Column("host", Text),  # where its processes ran
    Column("executor_pid", Integer),  # the executor process that spawned them
    Column("executor_started", Float),  # its start time (seconds since the epoch)
    Column("pgid", Integer),  # the tool's process group
    Column("requeued_by", String(16)),  # a re-queued attempt's: `tool' or `policy' (0014)
)
Index("ix_attempts_chain", attempts.c.chain_id, attempts.c.run_number)
Index("ux_attempts_place", attempts.c.chain_id, attempts.c.run_number, attempts.c.ordinal,
      unique=True)

events = Table(
    "events", metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    # None: an event of no submission (an agent arrived or left)
    Column("submission_id", String(64), ForeignKey("submissions.id", ondelete="CASCADE")),
    Column("chain_id", String(64)),
    Column("time", DateTime(timezone=True), nullable=False),
    Column("kind", String(48), nullable=False),
    Column("data", Text),  # JSON object
)
Index("ix_events_submission", events.c.submission_id, events.c.id)

agents = Table(
    "agents", metadata,
    Column("id", String(128), primary_key=True),
    Column("capabilities", Text, nullable=False, default="[]"),
    Column("start_time", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
    Column("state_changed_time", DateTime(timezone=True), nullable=False),
    Column("chain_id", String(64)),
    Column("host", Text),
    Column("pid", Integer),
    Column("owner", String(64)),  # the engine process the agent belongs to
)

# listings of the HTTP API, newest first (migration 0002)
Index("ix_submissions_status_seq", submissions.c.status, submissions.c.seq)
Index("ix_chains_status_seq", process_chains.c.status, process_chains.c.seq)
Index("ix_chains_submission_seq", process_chains.c.submission_id, process_chains.c.seq)

# a run's output, in chunks, so that logs of chains run on other machines can be read anywhere
log_chunks = Table(
    "log_chunks", metadata,
    Column("chain_id", String(64), ForeignKey("process_chains.id", ondelete="CASCADE"),
           primary_key=True),
    Column("run_number", Integer, primary_key=True),
    Column("offset", BigInteger, primary_key=True),  # of the chunk's first byte in the log
    Column("data", LargeBinary, nullable=False),
    Column("time", DateTime(timezone=True), nullable=False),
)

# recurring submissions (extensions 13, migration 0008): the workflow as submitted at `add',
# its trigger, and the next time it is due; an engine that fires it moves next_fire_time on
# in the transaction that stores the submission (a compare-and-set: one firing per due time)
schedules = Table(
    "schedules", metadata,
    Column("id", String(64), primary_key=True),
    Column("name", Text, nullable=False),
    Column("workflow", Text, nullable=False),  # Steep JSON
    Column("source", Text),  # the text as submitted
    Column("required_capabilities", Text, nullable=False, default="[]"),
    Column("priority", Integer, nullable=False, default=0),
    Column("kind", String(8), nullable=False),  # "cron" or "every"
    Column("expression", Text, nullable=False),  # the crontab line or the duration
    Column("timezone", Text, nullable=False),
    Column("interval_ms", BigInteger),  # every
    Column("anchor", DateTime(timezone=True)),  # every: the first fire time
    Column("paused", Boolean, nullable=False, default=False),
    Column("created_time", DateTime(timezone=True), nullable=False),
    Column("last_fire_time", DateTime(timezone=True)),
    Column("next_fire_time", DateTime(timezone=True)),
    Column("last_submission_id", String(64)),
    Column("vars", Text),  # the values given for the workflow's variables (JSON), or NULL
)
Index("ix_schedules_due", schedules.c.paused, schedules.c.next_fire_time)

# what each due time became: "fired" (a submission; `count' due times coalesced into it) or
# "skipped" (older than the grace period; `count' times from due_time to last_due_time)
schedule_firings = Table(
    "schedule_firings", metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    Column("schedule_id", String(64), ForeignKey("schedules.id", ondelete="CASCADE"),
           nullable=False),
    Column("due_time", DateTime(timezone=True), nullable=False),
    Column("last_due_time", DateTime(timezone=True)),
    Column("time", DateTime(timezone=True), nullable=False),
    Column("outcome", String(16), nullable=False),
    Column("count", Integer, nullable=False, default=1),
    Column("submission_id", String(64)),
    UniqueConstraint("schedule_id", "due_time", name="uq_schedule_firings_due"),
)

# the engines' own timers (the garbage collector's cron): claimed like schedules
timers = Table(
    "timers", metadata,
    Column("name", String(64), primary_key=True),
    Column("next_fire_time", DateTime(timezone=True)),
    Column("last_fire_time", DateTime(timezone=True)),
    Column("last_owner", String(64)),
)

# deliveries of notifications (extensions 12), written with the event they tell of (0009)
outbox = Table(
    "outbox", metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    Column("key", String(64), nullable=False, unique=True),  # the Idempotency-Key
    Column("event_id", BigInteger, nullable=False),
    Column("kind", String(48), nullable=False),  # the event's
    Column("submission_id", String(64), ForeignKey("submissions.id", ondelete="CASCADE")),
    Column("url", Text, nullable=False),  # the webhook's
    Column("body", Text, nullable=False),  # the JSON sent, the same on every try
    Column("status", String(16), nullable=False),  # PENDING, DELIVERED or FAILED
    Column("attempts", Integer, nullable=False, default=0),
    Column("created_time", DateTime(timezone=True), nullable=False),
    Column("next_try", DateTime(timezone=True)),  # when a PENDING delivery is due
    Column("last_try", DateTime(timezone=True)),
    Column("last_error", Text),
    Column("delivered_time", DateTime(timezone=True)),
    Column("claimed_by", String(64)),  # the engine sending it now
    Column("claimed_until", DateTime(timezone=True)),  # ... until then (a lease)
)
Index("ix_outbox_due", outbox.c.status, outbox.c.next_try)
Index("ix_outbox_listing", outbox.c.status, outbox.c.id)

# reusable work (extensions 15, migration 0013): a row per executable of a chain whose
# keys were taken (steepy.model.cachekeys); `outputs' (JSON, per output argument: path,
# results, fingerprint) is NULL until the chain succeeded. Rows go with their submission.
cache_entries = Table(
    "cache_entries", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("chain_key", String(64), nullable=False),
    Column("key", String(64), nullable=False),  # the executable's
    Column("submission_id", String(64), ForeignKey("submissions.id", ondelete="CASCADE"),
           nullable=False),
    Column("chain_id", String(64), nullable=False),
    Column("executable_id", Text, nullable=False),
    Column("position", Integer, nullable=False),  # in its chain
    Column("outputs", Text),
    Column("created_time", DateTime(timezone=True), nullable=False),
    Column("completed_time", DateTime(timezone=True)),
    Column("shape", String(64)),  # the key without the input files' fingerprints
    Column("inputs", Text),  # those fingerprints: {path: fingerprint}
)
Index("ix_cache_entries_chain_key", cache_entries.c.chain_key)
Index("ix_cache_entries_shape", cache_entries.c.shape)
Index("ix_cache_entries_chain", cache_entries.c.chain_id)
Index("ix_cache_entries_submission", cache_entries.c.submission_id)

# which database this is (migration 0018): one row, a random id given when it was made, so
# that a process whose SQLite file was replaced by another database at the same path can tell
# (registry/identity.py); a copy restored from a backup has the same id
database_identity = Table(
    "database_identity", metadata,
    Column("id", String(32), primary_key=True),
)

# what the garbage collector deleted the records of and has still to delete the files of
# (migration 0019): written with the deletion, dropped once the files are gone, so a
# collector killed in between leaves them to the next (`files': JSON, the submission's runs
# for its log files, the submissions it reused and its end time)
gc_leftovers = Table(
    "gc_leftovers", metadata,
    Column("submission_id", String(64), primary_key=True),
    Column("files", Text, nullable=False),
)

# rows the migrations put in (0008): an empty database made from these tables gets them too
SEEDED_ROWS = [(timers, [{"name": "garbageCollector"}])]
