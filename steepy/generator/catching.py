"""The workflow's `catch' (extensions 10) in the generator: which executables get it as their
fallback, and how `maxRecoveries' is kept.

The catch runs inside the chain, as a fallback with `stop: true' does, so it is attached to
every executable it covers when the chain is made. With `maxRecoveries: N' a chain is a
holder: it takes one of N places when it is made (its catch can run once at most: it ends
the chain), gives it back when it ends without its catch having run, and keeps it for good
when the catch ran. So the catch never runs more than N times in the submission, even
across engines and restarts (the places are part of the stored generator state); the price
is that a chain made while N others hold places gets no catch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from steepy.generator.nodes import ExecNode
from steepy.generator.state import GeneratorState
from steepy.model.workflow import Catch


@dataclass
class Recoveries:
    """How many times the catch ran (`used`) and which chains hold a place now."""

    limit: int | None = None
    used: int = 0
    holding: set[str] = field(default_factory=set)

    def free(self) -> bool:
        return self.limit is None or self.used + len(self.holding) < self.limit

    def to_json(self) -> dict:
        return {"used": self.used, "holding": sorted(self.holding)}

    def load(self, data: dict | None) -> None:
        data = data or {}
        self.used = int(data.get("used", 0))
        self.holding = set(data.get("holding") or ())


class Catching(GeneratorState):
    """The part of the generator that attaches the catch."""

    _catch: ExecNode | None
    _catch_model: Catch | None
    _recoveries: Recoveries

    def _catch_for(self, node: ExecNode, holding: bool) -> ExecNode | None:
        """The catch node for `node` (which has no fallback), if it gets one; `holding`:
        the chain being made holds a place already."""
        catch, model = self._catch, self._catch_model
        if catch is None or model is None or not model.covers(node.id.split("$")[0]):
            return None
        if any(var not in self._values for var in catch.consumed()):
            return None  # its inputs are not known yet
        if holding or self._recoveries.free():
            return catch
        return None

    def _chains_ended(self, chain_ids: set[str], caught: set[str]) -> None:
        """Chains ended: those in `caught` used their place, the others give it back."""
        holding = self._recoveries.holding
        self._recoveries.used += len(caught & holding)
        holding -= chain_ids
