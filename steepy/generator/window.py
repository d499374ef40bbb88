"""The window of chains in flight: the engine lets the generator have at most `window` chains
made and not ended yet. A for-each unrolls only as many items as the window has room for;
the rest waits in the backlog (loops.py) until half of the window has ended. So a for-each
over a million items holds, stores and re-stores the state of a few thousand iterations at a
time, never of all of them. Without a window (`steepy plan`, tests) everything that can run
is made at once, as Steep does.
"""

from __future__ import annotations

from steepy.generator.state import GeneratorState
from steepy.model import ProcessChain

# the engine's window: enough to keep many agents busy between two refills (of half of it),
# few enough that the chains, their rows and the state stay small (~20 MB)
CHAIN_WINDOW = 10_000


class ChainWindow(GeneratorState):
    """The part of the generator that keeps to the window."""

    window: int | None  # None: no limit
    _outstanding: int  # chains made and not reported ended (stored with the state)

    def _chains_gone(self, count: int) -> None:
        self._outstanding = max(0, self._outstanding - count)

    def _make_within_window(self) -> list[ProcessChain]:
        """Handle the events and make chains; with a window, in passes: each unrolls what
        the room left allows, and another follows while unrolled iterations made no chains
        (they wait for something) and items are left."""
        window, chains = self.window, []
        refill = window is None or self._outstanding <= window // 2
        while True:
            if window is None:
                self._budget = None
            else:
                self._budget = max(0, window - self._outstanding - len(chains)) if refill else 0
            started = self._budget
            if started:
                backlog, self._backlog = self._backlog, set()
                for seq in sorted(backlog):
                    self._touch(seq)
            self._propagate()  # type: ignore[attr-defined]
            chains.extend(self._make_chains())  # type: ignore[attr-defined]
            if not self._backlog or not started:
                self._outstanding += len(chains)
                return chains
