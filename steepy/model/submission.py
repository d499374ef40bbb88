"""Submissions (a workflow handed to steepy) and the statuses of submissions and chains."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from steepy.errors import SteepyError
from steepy.model.common import iso_time, put
from steepy.model.macro import Macro
from steepy.model.service import Service
from steepy.model.workflow import ExecuteAction, ForEachAction, IncludeAction, Workflow


class SubmissionStatus(StrEnum):
    ACCEPTED = "ACCEPTED"
    RUNNING = "RUNNING"
    CANCELLED = "CANCELLED"
    SUCCESS = "SUCCESS"
    PARTIAL_SUCCESS = "PARTIAL_SUCCESS"
    ERROR = "ERROR"

    @property
    def finished(self) -> bool:
        return self in FINISHED_SUBMISSION


class ProcessChainStatus(StrEnum):
    REGISTERED = "REGISTERED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    CANCELLED = "CANCELLED"
    SUCCESS = "SUCCESS"
    ERROR = "ERROR"

    @property
    def finished(self) -> bool:
        return self in FINISHED_CHAIN


# The sets of statuses the code asks about, each spelled once
_SS, _CS = SubmissionStatus, ProcessChainStatus
ACTIVE_SUBMISSION = frozenset({_SS.ACCEPTED, _SS.RUNNING})  # may be cancelled, reprioritised
FINISHED_SUBMISSION = frozenset(set(_SS) - ACTIVE_SUBMISSION)
RETRYABLE_SUBMISSION = frozenset({_SS.ERROR, _SS.PARTIAL_SUCCESS, _SS.CANCELLED})  # ext. 5
SUCCEEDED_SUBMISSION = frozenset({_SS.SUCCESS, _SS.PARTIAL_SUCCESS})  # has results
FINISHED_CHAIN = frozenset({_CS.CANCELLED, _CS.SUCCESS, _CS.ERROR})
ACTIVE_CHAIN = frozenset(set(_CS) - FINISHED_CHAIN)  # may be cancelled, reprioritised
WAITING_CHAIN = frozenset({_CS.REGISTERED, _CS.PAUSED})  # not running, not finished
# Steep's counters of a submission's chains, by status
CHAIN_COUNTERS = ((_CS.RUNNING, "runningProcessChains"), (_CS.PAUSED, "pausedProcessChains"),
                  (_CS.CANCELLED, "cancelledProcessChains"),
                  (_CS.SUCCESS, "succeededProcessChains"), (_CS.ERROR, "failedProcessChains"))


def priority_refused(noun: str, status: str) -> str:
    """Why the priority of a finished submission or process chain (`noun`) stays: Steep's
    words (its HTTP API's 422 is the first line alone), then the status. The API's 422 and
    `steepy priority` both say this."""
    return f"Cannot change priority of a finished {noun}\nIts status is {status}."


@dataclass
class Submission:
    id: str
    workflow: Workflow
    name: str | None = None
    priority: int = 0
    status: SubmissionStatus = SubmissionStatus.ACCEPTED
    start_time: datetime | None = None
    end_time: datetime | None = None
    required_capabilities: list[str] = field(default_factory=list)
    source: str | None = None
    error_message: str | None = None
    results: dict[str, list] | None = None
    vars: dict[str, Any] | None = None  # the values given at submit time, by variable id
    # reuse earlier work (`--resume', extensions 15); None: the configuration's `cache.enabled'
    resume: bool | None = None

    def to_json(self, with_workflow: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        put(out, "name", self.name)
        if with_workflow:
            out["workflow"] = self.workflow.to_json()
        out.update(priority=self.priority, status=str(self.status),
                   requiredCapabilities=list(self.required_capabilities))
        put(out, "startTime", iso_time(self.start_time))
        put(out, "endTime", iso_time(self.end_time))
        if with_workflow:
            put(out, "source", self.source)
        put(out, "errorMessage", self.error_message)
        put(out, "results", self.results)
        put(out, "vars", self.vars)
        put(out, "resume", self.resume)
        return out


class MissingMacroError(SteepyError, LookupError):
    pass


def collect_required_capabilities(workflow: Workflow, services: dict[str, Service],
                                  macros: dict[str, Macro]) -> list[str]:
    """Union of requiredCapabilities of every service the workflow uses, looking inside
    for-each bodies and included macros (recursively). Raises MissingMacroError."""
    found: set[str] = set()
    seen_macros: set[str] = set()

    def visit(actions: list) -> None:
        for action in actions:
            if isinstance(action, ExecuteAction):
                for name in action.services():
                    service = services.get(name)
                    if service is not None:
                        found.update(service.required_capabilities)
            elif isinstance(action, ForEachAction):
                visit(action.actions)
            elif isinstance(action, IncludeAction):
                macro = macros.get(action.macro)
                if macro is None:
                    raise MissingMacroError(f"Unable to find included macro `{action.macro}'")
                if macro.id not in seen_macros:  # guards against include cycles
                    seen_macros.add(macro.id)
                    visit(macro.actions)

    visit(workflow.actions)
    return sorted(found)
