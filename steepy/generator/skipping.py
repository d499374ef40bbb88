"""Skipping what depends on an action that ended its chain without an error (extensions 10
and 11: a fallback with `stop: true', a workflow's `catch', a tool's `prune').

Such an action ran, but never produces its outputs; it is not skipped (its chain's document
says where and why it stopped: registry/documents.py). Every remaining action that reads one
of its outputs, or names it in `dependsOn', is skipped, and so on down the graph: it is taken
out of the generator's work and recorded in `skipped' (action id -> why), so the submission
can end SUCCESS. An action of a for-each iteration that stopped or is skipped no longer holds
its for-each up, and what it would have yielded is left out of the for-each's output. A
for-each that has started iterating is not skipped: its input is known already. So a
consumer of a for-each whose every iteration stopped runs with an empty list, as it does
after a for-each over no items.
"""

from __future__ import annotations

from dataclasses import dataclass

from steepy.generator.nodes import ExecNode, ForNode, Node
from steepy.generator.state import GeneratorState


@dataclass(frozen=True)
class Stop:
    """The actions of one chain that ended it without an error: `action_ids` (the action
    that stopped it first, then those after it in the chain), the variables they would have
    written (`outputs`) and why (for the record)."""

    action_ids: tuple[str, ...]
    outputs: tuple[str, ...]
    reason: str


class Skipping(GeneratorState):
    """The part of the generator that skips dependents."""

    def _stop(self, stop: Stop) -> None:
        """The action that stopped its chain is done without its outputs; the rest of the
        chain, and what depends on it, is skipped."""
        first, *rest = stop.action_ids
        self._end_dead(first)
        for action_id in rest:
            self._record_skip(action_id, _needs(first, stop.reason))
        for var in stop.outputs:
            self._kill_var(var)

    def _record_skip(self, action_id: str, why: str) -> None:
        self._skipped.setdefault(action_id, why)
        self._newly_skipped.setdefault(action_id, why)
        self._end_dead(action_id)

    def _end_dead(self, action_id: str) -> None:
        """`action_id' will never produce anything: what depends on it is to be skipped."""
        if action_id not in self._dead_ids:
            self._dead_ids.add(action_id)
            self._new_dead.append(("id", action_id))
        loop_id = self._parent.pop(action_id, None)
        if loop_id is not None and loop_id in self._loops:
            self._release(self._loops[loop_id], action_id)  # type: ignore[attr-defined]

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
                k = loop.pending_out.pop(var, None)
            else:
                entry = loop.pending_in.pop(var, None)
                k = None if entry is None else entry[0]
                self._touch(self._for_seq[loop_id])
            if k is not None and loop.private(var, k):
                self._iteration_step(loop, k)
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
                        f"needs `{name}', which was skipped" if name in self._skipped else
                        _needs(name) if kind == "id" else
                        f"needs variable `{name}', which will not get a value"))
        return True

    def _skippable(self, node: Node) -> bool:
        return not (isinstance(node, ForNode) and node.id in self._loops)

    def _skip_node(self, seq: int, node: Node, why: str) -> None:
        self._remove(seq)
        self._record_skip(node.id, why)
        for var in _writes(node):
            self._kill_var(var)


def _needs(action_id: str, reason: str = "") -> str:
    """Why what needs `action_id', which ended its chain early, is skipped."""
    return f"needs `{action_id}', which ended its chain early" + (f" ({reason})" if reason else "")


def _writes(node: Node) -> list[str]:
    if isinstance(node, ExecNode):
        return [o.var for o in node.outputs]
    return [] if node.output is None else [node.output]
