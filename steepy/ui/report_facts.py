"""What a submission's report says (`steepy report ID`), read from the API's JSON: the whole
document of a submission (its chains with their runs and attempts, as GET
/workflows/ID/document answers) and its timeline events. One row per attempt of an
executable, the summary, and the durations per service. The HTML page (report.py) and the
trace (trace.py) are both made from these."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from steepy.events import EventKind
from steepy.model.durations import format_duration
from steepy.ui.render import parse_time


@dataclass(frozen=True)
class AttemptRow:
    """One attempt of one executable. `submit`: when it was next in line (its run started, or
    the attempt before it in the run ended: a retry's pause counts to its `duration`)."""

    task_id: int  # 1, 2, ...: chain by chain, run by run, in the order of the attempts
    chain_id: str
    run: int
    agent: str | None
    executable_id: str
    service_id: str
    attempt: int
    outcome: str
    exit_code: int | None
    submit: datetime | None
    start: datetime | None
    end: datetime | None
    reason: str  # how it ended and what followed: `exit code 1; next attempt after ...`

    @property
    def duration_ms(self) -> int | None:
        return _ms(self.submit, self.end)

    @property
    def realtime_ms(self) -> int | None:
        return _ms(self.start, self.end)


@dataclass(frozen=True)
class ServiceDurations:
    """The attempts of one service that ended: how many and how long they ran."""

    service_id: str
    count: int
    total_ms: int
    max_ms: int

    @property
    def mean_ms(self) -> int:
        return self.total_ms // self.count if self.count else 0


@dataclass
class Summary:
    chains: dict[str, int] = field(default_factory=dict)  # by status, e.g. {"SUCCESS": 3}
    total_chains: int = 0
    runs: int = 0
    attempts: int = 0
    rerun_chains: int = 0  # chains that ran more than once (a chain retry, a resume)
    retried_executables: int = 0  # executables that needed more than one attempt in a run
    retried_attempts: int = 0  # attempts after the first (attempt 2, 3, ...)
    requeued_attempts: int = 0  # attempts a `requeue` rule took back
    reused_chains: int = 0  # succeeded before the submission was last retried: not run again


def _ms(begin: datetime | None, finish: datetime | None) -> int | None:
    if begin is None or finish is None:
        return None
    return max(0, int((finish - begin).total_seconds() * 1000))


def reason(attempt: dict) -> str:
    """Why an attempt ended as it did and what followed: the exit code, signal or timeout, the
    pause before the next attempt and the rule that chose it (or why none came)."""
    what = []
    if attempt.get("fallbackFor"):
        what.append(f"fallback for {attempt['fallbackFor']}")
    if attempt.get("timeoutKind"):
        what.append(f"{attempt['timeoutKind']} timeout")
    elif attempt.get("exitCode") is not None and attempt.get("outcome") != "SUCCESS":
        what.append(f"exit code {attempt['exitCode']}")
    if attempt.get("signal") is not None:
        what.append(f"signal {attempt['signal']}")
    rule = attempt.get("delayRule")
    if attempt.get("delayMs") is not None and attempt.get("outcome") != "SUCCESS":
        what.append(f"next attempt after {format_duration(int(attempt['delayMs']))}"
                    + (f" ({rule})" if rule else ""))
    elif rule:
        what.append(rule)
    return "; ".join(what)


def attempt_rows(document: dict) -> list[AttemptRow]:
    """Every attempt of every run of every chain of a submission document, chain by chain
    (in the document's order), run by run."""
    rows: list[AttemptRow] = []
    for chain in document.get("processChains", []):
        for run in chain.get("runs", []):
            previous_end = parse_time(run.get("startTime"))
            for a in run.get("attempts", []):
                start, end = parse_time(a.get("startTime")), parse_time(a.get("endTime"))
                rows.append(AttemptRow(
                    len(rows) + 1, chain["id"], int(run["runNumber"]), run.get("agentId"),
                    a.get("executableId", ""), a.get("serviceId", ""), int(a.get("attempt", 0)),
                    str(a.get("outcome", "")), a.get("exitCode"), previous_end, start, end,
                    reason(a)))
                previous_end = end or previous_end
    return rows


def service_durations(rows: list[AttemptRow]) -> list[ServiceDurations]:
    """Per service (by id), of its attempts that ended: count, total and longest run time."""
    times: dict[str, list[int]] = {}
    for row in rows:
        if row.realtime_ms is not None:
            times.setdefault(row.service_id, []).append(row.realtime_ms)
    return [ServiceDurations(service, len(ms), sum(ms), max(ms))
            for service, ms in sorted(times.items())]


def summary(document: dict, events: list[dict], rows: list[AttemptRow]) -> Summary:
    """The chains by status and what was retried or reused."""
    chains = document.get("processChains", [])
    found = Summary(dict(sorted(Counter(str(c.get("status")) for c in chains).items())),
                    len(chains), sum(len(c.get("runs", [])) for c in chains), len(rows))
    found.rerun_chains = sum(1 for c in chains if len(c.get("runs", [])) > 1)
    found.retried_attempts = sum(1 for r in rows if r.attempt > 1 and r.outcome != "REQUEUED")
    found.requeued_attempts = sum(1 for r in rows if r.outcome == "REQUEUED")
    found.retried_executables = len({(r.chain_id, r.run, r.executable_id)
                                     for r in rows if r.attempt > 1})
    found.reused_chains = _reused(chains, events)
    return found


def _reused(chains: list[dict], events: list[dict]) -> int:
    """Chains whose success is older than the submission's last retry (`steepy retry`)."""
    retried = [parse_time(e.get("time")) for e in events
               if e.get("kind") == EventKind.SUBMISSION_RETRIED]
    last = max((t for t in retried if t is not None), default=None)
    if last is None:
        return 0
    count = 0
    for chain in chains:
        runs = chain.get("runs", [])
        end = parse_time(runs[-1].get("endTime")) if runs else None
        if chain.get("status") == "SUCCESS" and end is not None and end < last:
            count += 1
    return count


def describe(value: Any) -> str:
    """A value in a table cell: `-` for nothing (as Nextflow's trace writes it)."""
    return "-" if value is None or value == "" else str(value)
