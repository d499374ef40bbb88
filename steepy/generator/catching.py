"""The workflow's `catch' (extensions 10) in the generator: which executables get it as their
fallback.

The catch runs inside the chain, as a fallback with `stop: true' does, so it is attached to
every executable it covers when the chain is made. Its `maxRecoveries' is not kept here: a
chain runs again (`retries.processChains', `steepy retry') without the generator, so the
engine counts the catch's runs in the database and the agent asks before each one
(steepy/agent/recovery.py, steepy/registry/recoveries.py).
"""

from __future__ import annotations

from steepy.generator.nodes import ExecNode
from steepy.generator.state import GeneratorState
from steepy.model.workflow import Catch


class Catching(GeneratorState):
    """The part of the generator that attaches the catch."""

    _catch: ExecNode | None
    _catch_model: Catch | None

    def _catch_for(self, node: ExecNode) -> ExecNode | None:
        """The catch node for `node` (which has no fallback), if it gets one."""
        catch, model = self._catch, self._catch_model
        if catch is None or model is None or not model.covers(node.id.split("$")[0]):
            return None
        if any(var not in self._values for var in catch.consumed()):
            return None  # its inputs are not known yet
        return catch
