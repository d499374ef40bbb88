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
    # the names private to one iteration (None in states stored before they were kept)
    names: BodyNames | None = None
    # iteration -> its actions not executed and its private yields not collected; derived
    live: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        out = {"id": self.id, "output": self.output, "consumed": self.consumed,
               "extra": [list(e) for e in self.extra], "open": self.open,
               "waiting": sorted(self.waiting), "pendingOut": dict(self.pending_out),
               "pendingIn": {k: list(v) for k, v in self.pending_in.items()},
               "outputDone": self.output_done, "done": self.done}
        if self.names is not None:
            out["names"] = {"vars": sorted(self.names.vars),
                            "actions": sorted(self.names.actions)}
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Loop":
        names = data.get("names")
        loop = cls(data["id"], data["output"], data["consumed"],
                   [list(e) for e in data["extra"]], data["open"], set(data["waiting"]),
                   dict(data["pendingOut"]), {k: list(v) for k, v in data["pendingIn"].items()},
                   data["outputDone"], data["done"],
                   None if names is None else BodyNames(set(names["vars"]),
                                                        set(names["actions"])))
        loop.count_live()
        return loop

    def private(self, var: str, iteration: int) -> bool:
        """Whether `var' is a name private to that iteration (not one all iterations share)."""
        suffix = f"${iteration}"
        return (self.names is not None and var.endswith(suffix)
                and var[:-len(suffix)] in self.names.vars)

    def count_live(self) -> None:
        """`live' from what the loop waits for (after loading a state)."""
        self.live = {}
        if self.names is None:
            return  # nothing is forgotten for it
        pending = [(v, k) for v, k in self.pending_out.items()]
        pending += [(v, entry[0]) for v, entry in self.pending_in.items()]
        iterations = [iteration_of(a) for a in self.waiting]
        iterations += [k for v, k in pending if self.private(v, k)]
        for k in iterations:
            self.live[k] = self.live.get(k, 0) + 1


def iteration_of(action_id: str) -> int:
    """The iteration an action of a for-each body belongs to: its copy's id ends in `$k'."""
    return int(action_id.rpartition("$")[2])


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
        self._yields: dict[str, list[tuple[str, str]]] = {}  # var -> [(loop id, "out"|"in")]
        self._parent: dict[str, str] = {}  # iteration action id -> loop id
        # iterations that have nothing left: their private names are forgotten at the end of
        # the generate() call (loops.py), so a finished iteration costs no memory
        self._finished: list[tuple[BodyNames, str]] = []
        for_nodes = {n.id: n for n in nodes if isinstance(n, ForNode)}
        for loop in loops:
            if loop.names is None and loop.id in for_nodes:  # a state stored without them
                loop.names = BodyNames.of(for_nodes[loop.id])
                loop.count_live()
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
        # for-eaches with items left to unroll when the window has room (window.py)
        self._backlog: set[int] = set()
        self._budget: int | None = None  # actions that may still be unrolled in this pass
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

    def _iteration_step(self, loop: Loop, iteration: int) -> None:
        """One of the things an iteration waits for is done (an action executed or skipped,
        a private yield collected or dropped); after the last one its names are forgotten."""
        left = loop.live.get(iteration)
        if left is None:
            return
        if left > 1:
            loop.live[iteration] = left - 1
            return
        del loop.live[iteration]
        if loop.names is not None:
            self._finished.append((loop.names, f"${iteration}"))

    def _forget_finished(self) -> None:
        """Drop the values and executed ids private to iterations that are done: nothing
        can read them any more (every action that could is one of the iteration's own)."""
        values, from_results, executed = self._values, self._from_results, self._executed
        for names, suffix in self._finished:
            for var in names.vars:
                values.pop(var + suffix, None)
                from_results.discard(var + suffix)
            for action_id in names.actions:
                executed.discard(action_id + suffix)
        self._finished.clear()


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
