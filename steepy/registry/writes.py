"""What crosses the registry's interfaces (interfaces.py) besides the records it reads back
(records.py): a run's end, an attempt's row and a controller's round to be stored, what a
round reads, and an agent's claim."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

from steepy.model.attempt import AttemptRecord
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from steepy.registry.cache import CacheWrite
from steepy.registry.records import ChainRecord

Claimed = tuple[ChainRecord, int]  # a chain now RUNNING, and the number of its new run


@dataclass
class RunEnd:
    """How a run ended, to be recorded: the run's status, the chain's next status (and when a
    PAUSED chain is due again), its results, the attempts. `requeued' says why a chain-level
    re-queue took the run back (extensions 11); `submission_id', the chain's, when known."""

    chain_id: str
    run_number: int
    run_status: str
    chain_status: ProcessChainStatus
    results: dict | None = None
    error_message: str | None = None
    attempts: Sequence[AttemptRecord] = field(default_factory=list)
    auto_resume_after: datetime | None = None
    requeued: str | None = None
    submission_id: str | None = None


@dataclass(frozen=True)
class AttemptWrite:
    """An attempt's row as it is now, to be stored (new or again): the chain, the run and
    `AttemptRecord.to_row()` taken when the write was asked for."""

    chain_id: str
    run_number: int
    row: dict

    @classmethod
    def of(cls, chain_id: str, run_number: int, record: AttemptRecord) -> "AttemptWrite":
        return cls(chain_id, run_number, record.to_row())


@dataclass(frozen=True)
class RoundWrite:
    """What a controller's round learnt, to be stored: the finished chains it fed to the
    generator in round `round_number`, the new chains that produced, and (when `save_state`,
    always with new chains) the generator state after the round. With `owner`, it is stored
    only while the submission is that engine's (else `TakenOver`)."""

    round_number: int
    fed: Sequence[str] = ()
    chains: Sequence[ProcessChain] = ()
    save_state: bool = False
    state: dict | None = None
    skipped: Sequence[tuple[str, str]] = ()  # (action id, why): events, stored with the state
    cache: CacheWrite | None = None  # reusable work (extensions 15), stored with the chains
    owner: str | None = None  # the engine that drives the submission


@dataclass(frozen=True)
class RoundView:
    """What a controller's round reads: the finished chains whose outcome it has not fed yet
    (oldest first), whether a cancel was requested, the submission's priority, and whether a
    chain of it is still to run or running."""

    finished: list[ChainRecord]
    cancel_requested: bool
    priority: int | None
    active: bool

    @property
    def settled(self) -> bool:
        """Nothing is left to run nor to feed: the submission can end."""
        return not self.active and not self.finished


@dataclass(frozen=True)
class ClaimFor:
    """An agent that wants a chain: it offers these capabilities; with `only', it takes
    chains of those submissions only (`steepy run': its own and those it resumed)."""

    agent_id: str
    capabilities: frozenset[str] = frozenset()
    only: frozenset[str] | None = None
