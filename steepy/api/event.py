"""An event of a submission's timeline (`Submission.events()`): what changed, when, and for
which process chain. `docs/reference/events.md` lists the kinds and their data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from steepy.api.values import time_of


@dataclass(frozen=True)
class Event:
    id: int  # increasing in the order of commits
    time: datetime
    kind: str  # e.g. "submission.status", "chain.finished", "chain.attemptFailed"
    chain_id: str | None = None  # the process chain it concerns (None: the submission)
    data: dict[str, Any] = field(default_factory=dict)  # the rest, e.g. {"status": "SUCCESS"}

    @property
    def status(self) -> str | None:
        """The new status, for `submission.status` and `chain.finished`."""
        return self.data.get("status")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Event":
        rest = {k: v for k, v in data.items()
                if k not in ("id", "time", "kind", "chainId", "submissionId")}
        return cls(int(data["id"]), time_of(data["time"]) or datetime.min, data["kind"],
                   data.get("chainId"), rest)

    def __str__(self) -> str:
        about = f" {self.chain_id}" if self.chain_id else ""
        details = " ".join(f"{k}={v}" for k, v in self.data.items())
        return f"{self.time.isoformat()} {self.kind}{about} {details}".rstrip()
