"""What the executables of one chain run share (`ExecContext`), and how one of them ended
(`ExecOutcome`)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Sequence

from steepy.agent.cancel import CancelToken
from steepy.agent.config import AgentConfig, AttemptRecord
from steepy.events import EventKind
from steepy.model.clock import SYSTEM, Clock
from steepy.model.processchain import Executable

# (the attempt as it is now, whether the tool must wait until it is stored) -> stored
SaveAttempt = Callable[[AttemptRecord, bool], Awaitable[None]]
# (the workflow catch's attempt 1) -> whether it may run; stored if so (agent/recovery.py)
ClaimRecovery = Callable[[AttemptRecord], Awaitable[bool]]


@dataclass
class ExecContext:
    """What every executable of one chain run shares."""

    config: AgentConfig
    token: CancelToken
    chain_id: str
    submission_id: str
    run_number: int
    base_env: dict[str, str]  # the agent's environment plus config.env
    on_lines: Callable[[Executable, list[str]], None]  # log file, progress
    emit: Callable[[EventKind, dict], None]  # events of the catalogue: kind, fields + chainId
    records: list[AttemptRecord] = field(default_factory=list)
    rng: random.Random | None = None
    on_attempt: Callable[[Executable, int], None] | None = None  # an attempt starts
    capabilities: tuple[str, ...] = ()  # the chain's required capabilities (for runtimes)
    # the attempts of the cut runs this run goes on from (agent/resume.py)
    history: Sequence[AttemptRecord] = ()
    save: SaveAttempt | None = None  # stores an attempt as it starts, pauses and ends
    clock: Clock = SYSTEM  # stamps the records, measures the deadline, waits the pauses
    claim_recovery: ClaimRecovery | None = None  # the catch's maxRecoveries (agent/recovery.py)

    async def store(self, record: AttemptRecord, durable: bool) -> None:
        """Store the attempt as it is now; `durable`: return only once it is committed."""
        if self.save is not None:
            await self.save(record, durable)


@dataclass
class ExecOutcome:
    status: str  # SUCCESS | SKIPPED | ERROR | CANCELLED | PRUNED (the tool's signal) | STOPPED (a
    # stopping fallback or the workflow's catch ran: agent/fallback.py)
    message: str | None = None
    by: str | None = None  # PRUNED, STOPPED: the executable that ended it, if not the step's
