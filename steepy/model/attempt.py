"""One attempt of one executable, as the agent records it and the registry stores it
(extensions section 4): one shape, written to rows and read back from them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from steepy.model.common import as_utc as _utc
from steepy.model.common import iso_time

# Outcomes of one attempt (extensions section 4)
SUCCESS = "SUCCESS"
FAILED = "FAILED"
TIMEOUT = "TIMEOUT"
CANCELLED = "CANCELLED"
SKIPPED = "SKIPPED"
REQUEUED = "REQUEUED"  # the tool asked to run later (extensions 11): no attempt number spent
PRUNED = "PRUNED"  # the tool wrote `prune' (extensions 11): its chain ends here without error
RUNNING = "RUNNING"  # started, not ended yet (rows are written as attempts start)
AGENT_LOST = "AGENT_LOST"  # cut by the death of the engine that ran it: it counts as spent
INTERRUPTED = "INTERRUPTED"  # cut by a stopping engine that gave its chain back: spent too
# the outcomes of an attempt that does not spend one of the policy's attempts
NOT_SPENT = frozenset({REQUEUED, SKIPPED})
# who re-queued a REQUEUED attempt (`requeued_by')
BY_TOOL = "tool"  # its signal file (extensions 11)
BY_POLICY = "policy"  # its retry policy's `requeue'

@dataclass
class AttemptRecord:
    """One attempt of one executable (attempt 0 with outcome SKIPPED: maxAttempts was 0; outcome
    REQUEUED: the run did not count, the next row has the same attempt number)."""

    executable_id: str
    service_id: str
    attempt: int
    start_time: datetime
    end_time: datetime | None = None
    outcome: str = FAILED
    exit_code: int | None = None
    signal: int | None = None
    timeout_kind: str | None = None  # the timeout that fired, in its words (TimeoutKind.words)
    delay_ms: int | None = None  # pause chosen before the next attempt
    delay_rule: str | None = None  # how that pause was chosen
    last_lines: list[str] = field(default_factory=list)
    message: str | None = None
    fallback_for: str | None = None  # an attempt of a fallback (extensions 10): whose
    ordinal: int | None = None  # its place in its run's list of attempts (the row's key)
    due_time: datetime | None = None  # when the attempt after it is due (a pause follows)
    host: str | None = None  # where its processes ran
    executor_pid: int | None = None  # the process that spawned them, and its start time
    executor_started: float | None = None
    pgid: int | None = None  # the tool's process group
    requeued_by: str | None = None  # a REQUEUED attempt's: BY_TOOL or BY_POLICY

    def to_row(self) -> dict[str, Any]:
        """The columns of the registry's attempts table (but the chain and run)."""
        return {"executable_id": self.executable_id, "service_id": self.service_id,
                "attempt": self.attempt, "start_time": self.start_time,
                "end_time": self.end_time, "outcome": self.outcome,
                "exit_code": self.exit_code, "signal": self.signal,
                "timeout_kind": self.timeout_kind, "delay_ms": self.delay_ms,
                "delay_rule": self.delay_rule, "message": self.message,
                "last_lines": json.dumps(list(self.last_lines), separators=(",", ":")),
                "fallback_for": self.fallback_for, "ordinal": self.ordinal,
                "due_time": self.due_time, "host": self.host,
                "executor_pid": self.executor_pid, "executor_started": self.executor_started,
                "pgid": self.pgid, "requeued_by": self.requeued_by}

    @classmethod
    def from_row(cls, row: Any) -> "AttemptRecord":
        return cls(row.executable_id, row.service_id, row.attempt, _utc(row.start_time),
                   _utc(row.end_time), row.outcome, row.exit_code, row.signal,
                   row.timeout_kind, row.delay_ms, row.delay_rule,
                   json.loads(row.last_lines) if row.last_lines else [], row.message,
                   row.fallback_for, row.ordinal, _utc(row.due_time), row.host,
                   row.executor_pid, row.executor_started, row.pgid, row.requeued_by)

    def to_json(self) -> dict[str, Any]:
        out = {
            "executableId": self.executable_id, "serviceId": self.service_id,
            "attempt": self.attempt, "startTime": iso_time(self.start_time),
            "endTime": iso_time(self.end_time), "outcome": self.outcome,
            "exitCode": self.exit_code, "signal": self.signal, "timeoutKind": self.timeout_kind,
            "delayMs": self.delay_ms, "delayRule": self.delay_rule,
            "lastLines": list(self.last_lines), "message": self.message,
        }
        if self.fallback_for is not None:
            out["fallbackFor"] = self.fallback_for
        if self.due_time is not None:
            out["dueTime"] = iso_time(self.due_time)
        if self.host is not None:
            out["host"] = self.host
        if self.requeued_by is not None:
            out["requeuedBy"] = self.requeued_by
        return out

    @property
    def spent(self) -> bool:
        """It used one of its policy's attempts (a cut one did: it may have run)."""
        return self.outcome not in NOT_SPENT


