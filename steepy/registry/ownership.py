"""Which engine drives a submission: the one whose id its row's `owner` holds, while that
engine's heartbeats keep its lease (registry/leases.py). An engine that could not write its
heartbeats for longer than the lease may still be running when another engine takes the
submission over; its controller's writes then change nothing and raise `TakenOver`, so one
engine at a time makes a submission's chains (two would run each tool twice)."""

from __future__ import annotations

from typing import Any

from steepy.errors import SteepyError
from steepy.registry.tables import submissions


class TakenOver(SteepyError):
    """The submission is no longer this engine's to drive: another engine took it over.
    Nothing of the write that found it out was stored."""

    def __init__(self, submission_id: str):
        super().__init__(f"submission {submission_id} was taken over by another engine")
        self.submission_id = submission_id


def owned_by(owner: str | None) -> list[Any]:
    """The condition that a submission is `owner`'s (none without an owner: tests and tools
    that write for no engine)."""
    return [] if owner is None else [submissions.c.owner == owner]
