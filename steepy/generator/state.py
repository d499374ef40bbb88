"""What the process chain generator knows between two calls (see `steepy.generator.core`).

The remaining actions in workflow order, with the indexes that make the generator event
driven (which actions consume a variable, which depend on an action id), the values known so
far, the executed action ids and the for-each actions that are iterating (`Loop`). The
generator's other parts (`loops`, `chains`, `core`) read and change it through these methods.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from steepy.generator.nodes import BodyNames, ExecNode, ForNode, Node

STREAM = "$$"  # suffix of the variable a for-each collects its output in while it runs


@dataclass
class Loop:
    """What the generator remembers about a for-each that has started iterating."""

    id: str
    output: str | None
    consumed: int = 0  # items of the input already turned into iterations
    extra: list = field(default_factory=list)  # [item, round] yielded back, not iterated yet
    open: bool = True  # still in the action list: more items may come
    waiting: set[str] = field(default_factory=set)  # ids of iteration actions not executed yet
    pending_out: dict[str, int] = field(default_factory=dict)  # yieldToOutput var -> iteration
    pending_in: dict[str, list[int]] = field(default_factory=dict)  # var -> [iteration, round]
    output_done: bool = False
    done: bool = False

    def to_json(self) -> dict:
        return {"id": self.id, "output": self.output, "consumed": self.consumed,
                "extra": [list(e) for e in self.extra], "open": self.open,
                "waiting": sorted(self.waiting), "pendingOut": dict(self.pending_out),
                "pendingIn": {k: list(v) for k, v in self.pending_in.items()},
                "outputDone": self.output_done, "done": self.done}

    @classmethod
    def from_json(cls, data: dict) -> "Loop":
        return cls(data["id"], data["output"], data["consumed"], [list(e) for e in data["extra"]],
                   data["open"], set(data["waiting"]), dict(data["pendingOut"]),
                   {k: list(v) for k, v in data["pendingIn"].items()}, data["outputDone"],
                   data["done"])


@dataclass
class Skipped:
    """What stopped chains left out: action id -> why it was skipped, and the variables and
    action ids that will never be there."""

    why: dict[str, str] = field(default_factory=dict)
    vars: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)

    def to_json(self) -> dict:
        return {"why": dict(self.why), "vars": sorted(self.vars), "ids": sorted(self.ids)}

    @classmethod
    def from_json(cls, data: dict | None) -> "Skipped":
        data = data or {}
        return cls(dict(data.get("why") or {}), set(data.get("vars") or ()),
                   set(data.get("ids") or ()))


class GeneratorState:
    """The generator's state and its indexes; `_restore` (re)builds them."""

    loop_round_limit: int | None

    def _restore(self, nodes: list[Node], values: dict[str, Any], from_results: set[str],
                 executed: set[str], counters: dict[str, int], loops: list[Loop],
                 skipped: Skipped | None = None) -> None:
        self._values = values
        self._from_results = from_results  # vars whose value earlier chains reported
        self._executed = executed
        # what a stopped chain left out (generator/skipping.py): action id -> why, and the
        # variables and action ids that will never be there
        done = skipped or Skipped()
        self._skipped, self._dead_vars, self._dead_ids = done.why, done.vars, done.ids
        self._newly_skipped: dict[str, str] = {}  # since the last generate() call
        self._new_dead: list[tuple[str, str]] = []  # ("var" | "id", name) to spread
        self._counters = counters  # enumerator id -> next iteration number
        self._loops = {loop.id: loop for loop in loops}
        self._actions: dict[int, Node] = {}  # remaining actions in workflow order
        self._next_seq = 0
        # indexes, rebuilt from the above
        self._consumers: dict[str, set[int]] = {}
        self._dependents: dict[str, set[int]] = {}
        self._for_seq: dict[str, int] = {}
        self._body_names: dict[str, BodyNames] = {}
        self._yields: dict[str, list[tuple[str, str]]] = {}  # var -> [(loop id, "out"|"in")]
        self._parent: dict[str, str] = {}  # iteration action id -> loop id
        for loop in loops:
            for var in loop.pending_out:
                self._yields.setdefault(var, []).append((loop.id, "out"))
            for var in loop.pending_in:
                self._yields.setdefault(var, []).append((loop.id, "in"))
            for action_id in loop.waiting:
                self._parent[action_id] = loop.id
        # pending work
        self._candidates: set[int] = set()
        self._rejected: set[int] = set()  # refused by the consistency checker: try again
        self._loop_queue: list[int] = []
        self._queued: set[int] = set()
        self._new_vars: list[str] = []
        self._new_ids: list[str] = []
        for node in nodes:
            self._add(node)

    def _add(self, node: Node) -> None:
        seq = self._next_seq
        self._next_seq += 1
        self._actions[seq] = node
        for var in consumed_vars(node):
            self._consumers.setdefault(var, set()).add(seq)
        for dep in node.depends_on:
            self._dependents.setdefault(dep, set()).add(seq)
        if isinstance(node, ForNode):
            self._for_seq[node.id] = seq
        if self._dead_vars or self._dead_ids:  # e.g. an iteration needing a skipped action
            self._new_dead.extend(("id", d) for d in node.depends_on if d in self._dead_ids)
            self._new_dead.extend(("var", v) for v in consumed_vars(node) if v in self._dead_vars)
        self._touch(seq)

    def _remove(self, seq: int) -> None:
        node = self._actions.pop(seq)
        for var in consumed_vars(node):
            discard_entry(self._consumers, var, seq)
        for dep in node.depends_on:
            discard_entry(self._dependents, dep, seq)
        if isinstance(node, ForNode):
            self._for_seq.pop(node.id, None)
            self._body_names.pop(node.id, None)
        self._candidates.discard(seq)
        self._rejected.discard(seq)

    def _touch(self, seq: int) -> None:
        node = self._actions.get(seq)
        if isinstance(node, ExecNode):
            self._candidates.add(seq)
        elif node is not None and seq not in self._queued:
            self._queued.add(seq)
            heapq.heappush(self._loop_queue, seq)

    def _set(self, var_id: str, value: Any, from_results: bool) -> None:
        self._values[var_id] = value
        if from_results:
            self._from_results.add(var_id)
        else:
            self._from_results.discard(var_id)
        self._new_vars.append(var_id)

    def _mark_executed(self, action_id: str) -> None:
        if action_id not in self._executed:
            self._executed.add(action_id)
            self._new_ids.append(action_id)


def copy_values(values: dict[str, Any]) -> dict[str, Any]:
    """A copy that shares no list the generator extends in place (the `$$` collections)."""
    return {k: list(v) if k.endswith(STREAM) else v for k, v in values.items()}


def consumed_vars(node: Node) -> list[str]:
    if isinstance(node, ExecNode):
        return node.consumed()
    return [node.input, node.input + STREAM]


def discard_entry(index: dict[str, set[int]], key: str, seq: int) -> None:
    entries = index.get(key)
    if entries is not None:
        entries.discard(seq)
        if not entries:
            del index[key]
