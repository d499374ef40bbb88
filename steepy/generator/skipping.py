"""Skipping what depends on an action that ended its chain without an error (extensions 10
and 11: a fallback with `stop: true', a workflow's `catch', a tool's `prune').

Such an action never produces its outputs. Every remaining action that reads one of them, or
names the action in `dependsOn', is skipped too, and so on down the graph: it is taken out of
the generator's work and recorded in `skipped' (action id -> why), so the submission can end
SUCCESS. An action of a for-each iteration that is skipped no longer holds its for-each up,
and what it would have yielded is left out of the for-each's output. A for-each that has
started iterating is not skipped: its input is known already.
"""

from __future__ import annotations

from dataclasses import dataclass

from steepy.generator.nodes import ExecNode, ForNode, Node
from steepy.generator.state import GeneratorState


@dataclass(frozen=True)
class Stop:
    """The actions of one chain that ended it without an error: `action_ids` (the action
    that stopped it first, then those after it in the chain), the variables they would have
    written (`outputs`), why (for the record), the chain, and whether the workflow's catch
    ended it (`caught`: it used one of the catch's maxRecoveries)."""

    action_ids: tuple[str, ...]
    outputs: tuple[str, ...]
    reason: str
    chain_id: str = ""
    caught: bool = False


class Skipping(GeneratorState):
    """The part of the generator that skips dependents."""

    def _stop(self, stop: Stop) -> None:
        """Record the stopped actions and skip what depends on them."""
        first, *rest = stop.action_ids
        self._record_skip(first, stop.reason)
        for action_id in rest:
            self._record_skip(action_id, f"needs `{first}', which was skipped")
        for var in stop.outputs:
            self._kill_var(var)

    def _record_skip(self, action_id: str, why: str) -> None:
        self._skipped.setdefault(action_id, why)
        self._newly_skipped.setdefault(action_id, why)
        if action_id not in self._dead_ids:
            self._dead_ids.add(action_id)
            self._new_dead.append(("id", action_id))
        loop_id = self._parent.pop(action_id, None)
        if loop_id is not None and loop_id in self._loops:
            loop = self._loops[loop_id]
            loop.waiting.discard(action_id)
            self._settle(loop)  # type: ignore[attr-defined]

    def _kill_var(self, var: str) -> None:
        if var in self._dead_vars or var in self._values:
            return
        self._dead_vars.add(var)
        self._new_dead.append(("var", var))
        for loop_id, kind in self._yields.pop(var, ()):
            loop = self._loops.get(loop_id)
            if loop is None:
                continue
            if kind == "out":
                loop.pending_out.pop(var, None)
            else:
                loop.pending_in.pop(var, None)
                self._touch(self._for_seq[loop_id])
            self._settle(loop)  # type: ignore[attr-defined]

    def _spread_skips(self) -> bool:
        """Skip the remaining actions that need something dead; True if there was work."""
        if not self._new_dead:
            return False
        while self._new_dead:
            kind, name = self._new_dead.pop()
            index = self._consumers if kind == "var" else self._dependents
            for seq in sorted(index.get(name, ())):
                node = self._actions.get(seq)
                if node is not None and self._skippable(node):
                    self._skip_node(seq, node, (
                        f"needs `{name}', which was skipped" if kind == "id" else
                        f"needs variable `{name}', which will not get a value"))
        return True

    def _skippable(self, node: Node) -> bool:
        return not (isinstance(node, ForNode) and node.id in self._loops)

    def _skip_node(self, seq: int, node: Node, why: str) -> None:
        self._remove(seq)
        self._record_skip(node.id, why)
        for var in _writes(node):
            self._kill_var(var)


def _writes(node: Node) -> list[str]:
    if isinstance(node, ExecNode):
        return [o.var for o in node.outputs]
    return [] if node.output is None else [node.output]
