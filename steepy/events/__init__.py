"""The catalogue of timeline events: every kind, what it means and the fields it carries.

An event is a row of a submission's timeline (GET /workflows/ID/events, `steepy events ID`),
of the live feed (GET /events) and of a webhook's body. Its `kind` is one of `EventKind`
(the value is the string stored and shown); its fields are those of the kind's frozen
dataclass below, named in the API in camelCase (`exit_code` is `exitCode`). Writers build
the dataclass (an undeclared field fails there, a TypeError) and store `event.data()`;
readers dispatch on `EventKind`. Agents report their events under the same kinds.

Adding a kind: a member of `EventKind`, its dataclass (the docstring is its description),
a writer; the UI's words for it are in steepy/ui/pages/workflows_events.py. Then
`python -m steepy.events docs/reference/events.md` renders the reference page anew.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any, Callable, ClassVar, Mapping, TypeVar, dataclass_transform

from steepy.model.common import iso_time


class EventKind(StrEnum):
    """The kinds of timeline events."""

    AGENT_ARRIVED = "agent.arrived"
    AGENT_LEFT = "agent.left"
    CHAIN_AGENT_LOST = "chain.agentLost"
    CHAIN_ATTEMPT_FAILED = "chain.attemptFailed"
    CHAIN_ATTEMPT_REQUEUED = "chain.attemptRequeued"
    CHAIN_CANCEL_REQUESTED = "chain.cancelRequested"
    CHAIN_FALLBACK_STARTED = "chain.fallbackStarted"
    CHAIN_FINISHED = "chain.finished"
    CHAIN_PRIORITY = "chain.priority"
    CHAIN_PROGRESS = "chain.progress"
    CHAIN_REGISTERED = "chain.registered"
    CHAIN_REQUEUED = "chain.requeued"
    CHAIN_RESUMED = "chain.resumed"
    CHAIN_RETRY_SCHEDULED = "chain.retryScheduled"
    CHAIN_REUSED = "chain.reused"
    CHAIN_STARTED = "chain.started"
    CHAIN_WAITING = "chain.waiting"
    SCHEDULE_FIRED = "schedule.fired"
    SCHEDULE_SKIPPED = "schedule.skipped"
    SUBMISSION_CANCEL_REQUESTED = "submission.cancelRequested"
    SUBMISSION_PRIORITY = "submission.priority"
    SUBMISSION_RESUMED = "submission.resumed"
    SUBMISSION_RETRIED = "submission.retried"
    SUBMISSION_SKIPPED = "submission.skipped"
    SUBMISSION_STATUS = "submission.status"

    @property
    def group(self) -> str:
        """What the event is about: `agent`, `chain`, `schedule` or `submission`."""
        return self.value.partition(".")[0]

    @property
    def event(self) -> type[Event]:
        """The kind's dataclass."""
        return CATALOGUE[self]

    @property
    def description(self) -> str:
        return (CATALOGUE[self].__doc__ or "").strip()

    @property
    def fields(self) -> tuple[FieldSpec, ...]:
        return CATALOGUE[self].specs()

    def build(self, data: Mapping[str, Any]) -> Event:
        """An event of this kind from its fields as the API names them (an agent's report);
        TypeError for a field the kind does not declare or a required one missing."""
        specs = {s.name: s.attribute for s in self.fields}
        unknown = sorted(set(data) - set(specs))
        if unknown:
            raise TypeError(f"`{self}' has no field {', '.join(map(repr, unknown))}")
        return self.event(**{specs[k]: v for k, v in data.items()})


def kinds(*groups: str) -> tuple[EventKind, ...]:
    """The kinds of these groups (`chain`, `submission`, ...), in the catalogue's order."""
    unknown = set(groups) - {k.group for k in EventKind}
    if unknown:
        raise ValueError(f"no kind of event is in group {', '.join(sorted(unknown))}")
    return tuple(k for k in EventKind if k.group in groups)


@dataclass(frozen=True)
class FieldSpec:
    """One field of a kind: its name in the API, its type (as annotated) and meaning."""

    name: str
    attribute: str
    type: str
    doc: str
    required: bool


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _field(doc: str, *, default: Any = MISSING) -> Any:
    """A field of a kind, with its meaning (shown in the reference page)."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, kw_only=True)
class Event:
    """The fields of an event of one kind (a subclass per kind)."""

    kind: ClassVar[EventKind]
    _names: ClassVar[tuple[tuple[str, str], ...]] = ()  # (attribute, API name)

    @classmethod
    def specs(cls) -> tuple[FieldSpec, ...]:
        return tuple(FieldSpec(_camel(f.name), f.name, str(f.type), f.metadata.get("doc", ""),
                               f.default is MISSING) for f in fields(cls))

    def data(self) -> dict[str, Any]:
        """The fields as stored and shown: API names, times as ISO 8601, no None values."""
        out = {}
        for attribute, name in self._names:
            value = getattr(self, attribute)
            if value is not None:
                out[name] = iso_time(value) if isinstance(value, datetime) else value
        return out


CATALOGUE: dict[EventKind, type[Event]] = {}
E = TypeVar("E", bound=Event)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(_field,))
def _kind(kind: EventKind) -> Callable[[type[E]], type[E]]:
    """Declares the dataclass of `kind`."""
    def declare(cls: type[E]) -> type[E]:
        made = dataclass(frozen=True, kw_only=True)(cls)
        if kind in CATALOGUE:
            raise TypeError(f"`{kind}' is declared twice")
        made.kind = kind
        made._names = tuple((f.name, _camel(f.name)) for f in fields(made))
        CATALOGUE[kind] = made
        return made
    return declare


# --- agents ---------------------------------------------------------------------------------

@_kind(EventKind.AGENT_ARRIVED)
class AgentArrived(Event):
    """An agent started taking process chains (its engine started it)."""
    agent: str = _field("the agent's id")
    host: str | None = _field("the machine it runs on", default=None)
    capabilities: list[str] = _field("the capabilities it offers")


@_kind(EventKind.AGENT_LEFT)
class AgentLeft(Event):
    """An agent is gone: its engine stopped (`stopped`) or fell silent (`lost`)."""
    agent: str = _field("the agent's id")
    reason: str = _field("`stopped` or `lost`")


# --- process chains -------------------------------------------------------------------------

@_kind(EventKind.CHAIN_REGISTERED)
class ChainRegistered(Event):
    """The generator created a process chain; it waits for an agent."""
    executables: int = _field("how many executables it has")


@_kind(EventKind.CHAIN_REUSED)
class ChainReused(Event):
    """A new process chain is not run: an earlier one did the same work (extensions 15)."""
    from_submission_id: str = _field("the submission of the earlier chain")
    from_chain_id: str = _field("the earlier chain, whose output files it reuses")


@_kind(EventKind.CHAIN_WAITING)
class ChainWaiting(Event):
    """Registered process chains of a submission cannot start yet, and why (no chain id)."""
    reason: str = _field("why, e.g. that no agent offers a required capability")
    chains: int = _field("how many chains wait for this reason")


@_kind(EventKind.CHAIN_STARTED)
class ChainStarted(Event):
    """A run of a process chain started on an agent."""
    run: int = _field("the run's number, from 1")
    agent: str = _field("the id of the agent running it")


@_kind(EventKind.CHAIN_PROGRESS)
class ChainProgress(Event):
    """A running chain's agent estimates how far it is (written at most once a second)."""
    progress: float = _field("from 0 to 1")


@_kind(EventKind.CHAIN_ATTEMPT_FAILED)
class ChainAttemptFailed(Event):
    """An attempt of an executable failed (reported by the agent while the run goes on)."""
    executable_id: str = _field("the executable's id")
    service_id: str = _field("its service's id")
    attempt: int = _field("the attempt's number, from 1")
    outcome: str = _field("how it ended: `FAILED` or `TIMEOUT`")
    exit_code: int | None = _field("the tool's exit code", default=None)
    signal: int | None = _field("the signal that killed it", default=None)
    timeout_kind: str | None = _field("the timeout that fired, in words: `maximum runtime`, "
                                      "`maximum inactivity` or `deadline`", default=None)
    message: str | None = _field("the error, with the tool's last output", default=None)


@_kind(EventKind.CHAIN_RETRY_SCHEDULED)
class ChainRetryScheduled(Event):
    """The next attempt of an executable starts after a pause (reported by the agent)."""
    executable_id: str = _field("the executable's id")
    service_id: str = _field("its service's id")
    attempt: int = _field("the number of the attempt to come")
    delay_ms: int = _field("the pause, in milliseconds")
    at: datetime = _field("when the attempt is due")
    reason: str | None = _field("why the failure may be retried", default=None)
    rule: str | None = _field("the rule that chose the delay", default=None)


@_kind(EventKind.CHAIN_ATTEMPT_REQUEUED)
class ChainAttemptRequeued(Event):
    """A `requeue` rule takes an attempt back: it runs again after a delay, not counted."""
    executable_id: str = _field("the executable's id")
    service_id: str = _field("its service's id")
    attempt: int = _field("the attempt's number, run again")
    exit_code: int | None = _field("the tool's exit code", default=None)
    delay_ms: int = _field("the delay, in milliseconds")
    at: datetime = _field("when it runs again")
    reason: str = _field("the rule that matched and why")
    message: str | None = _field("the error, with the tool's last output", default=None)


@_kind(EventKind.CHAIN_FALLBACK_STARTED)
class ChainFallbackStarted(Event):
    """An executable failed after all its attempts; its fallback runs instead."""
    executable_id: str = _field("the failed executable's id")
    service_id: str = _field("its service's id")
    fallback_id: str = _field("the fallback executable's id")
    fallback_service_id: str = _field("the fallback's service id")
    exit_code: int | None = _field("the failed tool's last exit code", default=None)
    message: str | None = _field("the failure", default=None)


@_kind(EventKind.CHAIN_FINISHED)
class ChainFinished(Event):
    """A run of a process chain ended; the chain is now in `status`."""
    run: int = _field("the run's number")
    status: str = _field("the chain's status: final, or `PAUSED` before a retry")
    error_message: str | None = _field("why it failed", default=None)
    resume_at: datetime | None = _field("when a paused chain runs again", default=None)
    requeued: str | None = _field("why a chain-level `requeue` took the run back", default=None)


@_kind(EventKind.CHAIN_REQUEUED)
class ChainRequeued(Event):
    """A running chain was given back (its engine stopped): it waits for an agent again."""
    run: int = _field("the number of the run cut short")
    reason: str = _field("why")
    status: str = _field("the chain's status now: `REGISTERED`, or `CANCELLED`")


@_kind(EventKind.CHAIN_AGENT_LOST)
class ChainAgentLost(Event):
    """The agent running a chain was lost with its engine; the chain waits again."""
    run: int = _field("the number of the run cut short")
    agent: str = _field("the lost agent's id")


@_kind(EventKind.CHAIN_RESUMED)
class ChainResumed(Event):
    """A paused process chain's pause is over: it waits for an agent again."""


@_kind(EventKind.CHAIN_CANCEL_REQUESTED)
class ChainCancelRequested(Event):
    """Someone asked to cancel a process chain."""
    previous: str = _field("its status when asked")
    status: str = _field("its status now (a running chain stops when its agent sees it)")


@_kind(EventKind.CHAIN_PRIORITY)
class ChainPriority(Event):
    """A process chain's priority changed."""
    priority: int = _field("the new priority")


# --- submissions ----------------------------------------------------------------------------

@_kind(EventKind.SUBMISSION_STATUS)
class SubmissionStatusChanged(Event):
    """A submission's status changed (`ACCEPTED` when it is submitted)."""
    status: str = _field("the new status")
    error_message: str | None = _field("why it failed", default=None)


@_kind(EventKind.SUBMISSION_SKIPPED)
class SubmissionActionSkipped(Event):
    """An action is skipped: it needs one that ran and ended its chain early, or a skipped one."""
    action_id: str = _field("the action's id (with `$k` for iteration k of a for-each)")
    reason: str = _field("why: what it needs, and how the action that stopped ended")


@_kind(EventKind.SUBMISSION_RESUMED)
class SubmissionResumed(Event):
    """An engine took over a running submission whose engine was lost."""
    owner: str = _field("the id of the engine that took it over")


@_kind(EventKind.SUBMISSION_RETRIED)
class SubmissionRetried(Event):
    """A finished submission is retried: its failed and cancelled chains run again."""
    previous: str = _field("its status before")


@_kind(EventKind.SUBMISSION_CANCEL_REQUESTED)
class SubmissionCancelRequested(Event):
    """Someone asked to cancel a running submission."""
    cancelled: int = _field("how many waiting chains were cancelled at once")


@_kind(EventKind.SUBMISSION_PRIORITY)
class SubmissionPriority(Event):
    """A submission's priority (and that of its unfinished chains) changed."""
    priority: int = _field("the new priority")


# --- schedules ------------------------------------------------------------------------------

@_kind(EventKind.SCHEDULE_FIRED)
class ScheduleFired(Event):
    """A schedule fired: the second event of the submission it made, after ACCEPTED."""
    schedule: str = _field("the schedule's id")
    name: str | None = _field("its name", default=None)
    due_time: datetime = _field("the due time it fired for")
    coalesced: int = _field("how many due times this one firing stands for")


@_kind(EventKind.SCHEDULE_SKIPPED)
class ScheduleSkipped(Event):
    """A schedule's due times passed unfired beyond its grace time (no submission)."""
    schedule: str = _field("the schedule's id")
    count: int = _field("how many due times were skipped")
    first_due_time: datetime = _field("the first of them")
    last_due_time: datetime = _field("the last of them")


_undeclared = [str(k) for k in EventKind if k not in CATALOGUE]
if _undeclared:
    raise TypeError(f"event kinds without a dataclass: {', '.join(_undeclared)}")

