"""Chains stored for a test's set-up, as a controller's first round stores them."""

from __future__ import annotations

from collections.abc import Iterable

from steepy.model.processchain import ProcessChain
from steepy.registry import Registry
from steepy.registry.writes import RoundWrite


def store_chains(registry: Registry, submission_id: str, chains: Iterable[ProcessChain],
                 state: dict | None = None) -> None:
    """Store `chains` (REGISTERED) and the generator `state` that produced them, round 0."""
    registry.submissions.controller_round(
        submission_id, RoundWrite(0, chains=list(chains), save_state=True, state=state))
