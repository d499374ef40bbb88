"""Stored rows as typed records, and the JSON text columns: what every audience's SQL
implementation shares (and the reads through Python's own sqlite3: no SQLAlchemy here)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from steepy.model.attempt import AttemptRecord
from steepy.model.common import as_utc, utcnow
from steepy.model.jsontext import compact_encoder
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus, Submission, SubmissionStatus
from steepy.model.workflow import Workflow

if TYPE_CHECKING:  # (a command that only reads imports this module, but neither of these)
    from sqlalchemy import Connection

    from steepy.events import Event

CS = ProcessChainStatus
SS = SubmissionStatus
PENDING_EVENTS = "steepy.events"  # a write transaction's events, in Connection.info


_COMPACT = compact_encoder()  # (60,000 calls store 10,000 chains)


def dump(value: Any) -> str | None:
    return None if value is None else _COMPACT(value)


def load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def event_row(submission_id: str | None, event: Event, chain_id: str | None,
              time: datetime) -> dict:
    """A row of the timeline: an event of the catalogue (steepy/events/) and what it is about."""
    return {"submission_id": submission_id, "chain_id": chain_id, "time": time,
            "kind": event.kind.value, "data": dump(event.data())}


def add_events(conn: Connection, rows: list[dict]) -> None:
    """Add events to the timeline, in the transaction of the change they tell of. They are
    written when the transaction commits (`Connector.write`), so that their ids follow the
    order of commits: a reader that has seen id N has seen everything committed before it."""
    conn.info[PENDING_EVENTS].extend(rows)


def add_event(conn: Connection, submission_id: str | None, event: Event,
              chain_id: str | None = None) -> None:
    add_events(conn, [event_row(submission_id, event, chain_id, utcnow())])


@dataclass
class ChainRecord:
    """A process chain as stored, with its registry fields."""

    chain: ProcessChain
    submission_id: str
    status: ProcessChainStatus
    results: dict | None
    next_run_at: datetime | None
    seq: int
    waiting: str | None = None  # why it cannot start (REGISTERED only)
    requeued_runs: int = 0  # runs a chain-level re-queue took back (known when claimed)
    # the attempts of the runs this run goes on from (their engine died, or stopped and gave
    # the chain back): what they spent counts (known when claimed)
    history: list[AttemptRecord] = field(default_factory=list)
    # {submissionId, processChainId}: the earlier chain whose work it reused (extensions 15)
    reused: dict | None = None
    # the controller round stored as the one that feeds it, where known (a reused chain is
    # stored fed by the round after the one that made it): that round need not mark it
    fed_round: int | None = None


@dataclass
class RunRecord:
    chain_id: str
    run_number: int
    agent_id: str | None
    start_time: datetime
    end_time: datetime | None
    status: str | None
    error_message: str | None
    auto_resume_after: datetime | None


def submission_record(row: Any) -> Submission:
    return Submission(
        id=row.id, workflow=Workflow.from_json(load(row.workflow)), name=row.name,
        priority=row.priority, status=SS(row.status), start_time=as_utc(row.start_time),
        end_time=as_utc(row.end_time), required_capabilities=load(row.required_capabilities) or [],
        source=row.source, error_message=row.error_message, results=load(row.results),
        vars=load(row.vars), resume=getattr(row, "resume", None))


def chain_record(row: Any) -> ChainRecord:
    chain = ProcessChain.from_json(load(row.chain))
    priority = getattr(row, "priority", None)  # the column is current; the JSON has the first
    if priority is not None:
        chain.priority = priority
    return ChainRecord(chain=chain,
                       submission_id=row.submission_id, status=CS(row.status),
                       results=load(row.results), next_run_at=as_utc(row.next_run_at),
                       seq=row.seq, waiting=row.waiting if row.status == CS.REGISTERED else None,
                       requeued_runs=getattr(row, "requeued_runs", None) or 0,
                       reused=load(getattr(row, "reused", None)))


def run_record(row: Any) -> RunRecord:
    return RunRecord(row.chain_id, row.run_number, row.agent_id, as_utc(row.start_time),
                     as_utc(row.end_time), row.status, row.error_message,
                     as_utc(row.auto_resume_after))


@dataclass
class Delivery:
    """A notification to send: one webhook's copy of one event (the outbox's row)."""

    id: int
    key: str  # the Idempotency-Key, the same on every try
    kind: str  # the event's
    url: str
    body: str  # the JSON to send, as stored
    attempts: int  # tries so far, this one included
