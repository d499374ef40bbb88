"""A process chain as the API shows it: its status, results and runs, each run with its
attempts (why each ended, and how long steepy waited before the next), and its output."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from steepy.api.backends import Backend
from steepy.api.errors import NotFound, Refused
from steepy.api.values import results_of, time_of
from steepy.model.submission import ProcessChainStatus


@dataclass(frozen=True)
class Attempt:
    """One start of one executable (a tool) in a run."""

    run_number: int
    number: int  # 1, 2, ... within the run
    service_id: str | None
    outcome: str | None  # SUCCESS, FAILED, TIMEOUT, CANCELLED, ... (None: running)
    exit_code: int | None
    signal: int | None
    start_time: datetime | None
    end_time: datetime | None
    timeout_kind: str | None = None  # the timeout that ended it, if one did
    delay_ms: int | None = None  # the wait before the next attempt
    delay_rule: str | None = None  # the retry rule that chose it
    message: str | None = None
    last_lines: tuple[str, ...] = ()  # the end of the tool's output

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Attempt":
        return cls(data["runNumber"], data["attempt"], data.get("serviceId"),
                   data.get("outcome"), data.get("exitCode"), data.get("signal"),
                   time_of(data.get("startTime")), time_of(data.get("endTime")),
                   data.get("timeoutKind"), data.get("delayMs"), data.get("delayRule"),
                   data.get("message"), tuple(data.get("lastLines") or ()))


@dataclass(frozen=True)
class Run:
    """One execution of the whole chain by an agent (a retried chain has several)."""

    number: int
    status: str | None  # None: running
    agent_id: str | None
    start_time: datetime | None
    end_time: datetime | None
    error_message: str | None
    attempts: tuple[Attempt, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Run":
        return cls(data["runNumber"], data.get("status"), data.get("agentId"),
                   time_of(data.get("startTime")), time_of(data.get("endTime")),
                   data.get("errorMessage"),
                   tuple(Attempt.from_json(a) for a in data.get("attempts", [])))


@dataclass(eq=False)
class Chain:
    """A process chain, as of when it was read (`refresh()` reads it again)."""

    id: str
    submission_id: str
    status: ProcessChainStatus
    results: dict[str, list] = field(default_factory=dict)
    runs: tuple[Run, ...] = ()
    executables: list[dict] = field(default_factory=list, repr=False)  # Steep's shape
    _backend: Backend | None = field(default=None, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], backend: Backend | None = None) -> "Chain":
        return cls(data["id"], data["submissionId"], ProcessChainStatus(data["status"]),
                   results_of(data), tuple(Run.from_json(r) for r in data.get("runs", [])),
                   list(data.get("executables") or []), backend)

    @property
    def attempts(self) -> list[Attempt]:
        """Every attempt of every run, first to last."""
        return [a for run in self.runs for a in run.attempts]

    @property
    def error_message(self) -> str | None:
        """Why its last run failed (None: it did not)."""
        return self.runs[-1].error_message if self.runs else None

    def refresh(self) -> "Chain":
        found = self._need().chain_document(self.id)
        if found is None:
            raise NotFound(f"No process chain with the id `{self.id}'.")
        fresh = Chain.from_json(found, self._backend)
        self.status, self.results, self.runs = fresh.status, fresh.results, fresh.runs
        return self

    def logs(self, run: int | None = None) -> str:
        """The output of run `run` (default: the latest) as text: what the tools printed,
        also while it runs; empty when they printed nothing (or when the run's log is on
        another machine, without a shared log store). NotFound for a run it did not have."""
        backend = self._need()
        if run is not None and (isinstance(run, bool) or not isinstance(run, int) or run < 1):
            raise NotFound(f"Process chain `{self.id}' has no run {run!r}: runs are numbered "
                           "from 1.")
        number = run if run is not None else (self.runs[-1].number if self.runs else None)
        if number is None:
            raise NotFound(f"Process chain `{self.id}' has not run yet ({self.status}).")
        found = backend.log(self.id, number, 0)
        if found is not None:
            return found.decode("utf-8", "replace")
        now = backend.chain(self.id)
        if now is None:
            raise NotFound(f"No process chain with the id `{self.id}'.")
        if now.latest_run is not None and 1 <= number <= now.latest_run:
            return ""  # no log: it printed nothing
        raise NotFound(f"Process chain `{self.id}' has no run {number}: it has run "
                       f"{now.latest_run or 0} time(s).")

    def cancel(self) -> ProcessChainStatus:
        """Cancel this chain (its submission goes on with the others); the status it had.
        Refused when it has finished already."""
        answer = self._need().cancel(self.id)
        if answer is None or answer.kind == "submission":
            raise NotFound(f"No process chain with the id `{self.id}'.")
        if not answer.done:
            raise Refused(f"Process chain `{self.id}' has already finished ({answer.before}); "
                          "nothing to cancel.", answer.before)
        self.refresh()
        return ProcessChainStatus(answer.before)

    def _need(self) -> Backend:
        if self._backend is None:
            raise RuntimeError("this Chain was made without a client")
        return self._backend
