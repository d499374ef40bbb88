"""What the scheduler needs of an agent: an id, the capabilities it offers, running one
process chain at a time, and cancelling. `LocalAgent` is one; an agent on another machine
(Steep's RemoteAgent) would be another."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from steepy.agent.config import AttemptRecord, ChainOutcome
from steepy.model.processchain import ProcessChain


@runtime_checkable
class Agent(Protocol):
    id: str
    capabilities: Sequence[str]

    @property
    def current_chain_id(self) -> str | None:
        """The chain it runs now (None: none)."""
        ...

    async def execute(self, chain: ProcessChain, *, submission_id: str = "",
                      run_number: int = 1, history: Sequence[AttemptRecord] = ()) -> ChainOutcome:
        """Run every executable of `chain`; never raises for a failing tool. `history`: the
        attempts of the cut runs this run goes on from (what they spent counts)."""
        ...

    def cancel(self, chain_id: str | None = None) -> None:
        """Cancel the running chain, or the chain `chain_id` even before it starts (any
        thread, any moment)."""
        ...
