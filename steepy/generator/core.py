"""The process chain generator (reference 3.2).

`generate()` is called repeatedly: each call takes the results of the chains that finished
since the last call, unrolls for-each actions whose input is now known, and groups every
execute action that can now run into process chains (longest linear sequences).

Everything the generator knows is event driven, so that one call costs about as much as the
work it does (a for-each over 100,000 items must not rescan all actions per item):

* a variable getting a value wakes the actions consuming it and the for-each waiting for it
  to yield something;
* an action id being executed wakes the actions depending on it and the for-each it belongs to.

Only woken execute actions ("candidates") are tried as chain starts, in workflow order.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from steepy.generator.executables import ExecutableBuilder
from steepy.generator.nodes import (BodyNames, ExecNode, ForNode, GeneratorError, Node, Renamer,
                                    execute_action_model, node_from_json, node_to_json,
                                    nodes_from_actions)
from steepy.ids import unique_id
from steepy.macros import expand_includes, has_includes
from steepy.model import ExecuteAction, Executable, Macro, ProcessChain, Service, Workflow

ConsistencyChecker = Callable[[list[Executable], ExecuteAction], bool]

STATE_VERSION = 1
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


class ProcessChainGenerator:
    """Turns a workflow into process chains, step by step (see module docstring)."""

    def __init__(self, workflow: Workflow, tmp_path: str, out_path: str,
                 services: dict[str, Service], macros: dict[str, Macro] | None = None, *,
                 consistency_checker: ConsistencyChecker | None = None,
                 output_adapters: Collection[str] = (),
                 id_generator: Callable[[], str] = unique_id):
        if has_includes(workflow.actions):
            workflow = expand_includes(workflow, macros)
        self._workflow = workflow
        self.default_priority: int = workflow.priority
        self.retries = workflow.retries
        # Recursive for-each actions stop feeding items back after this many rounds
        # (None = never); only simulations set it, to keep a plan finite.
        self.loop_round_limit: int | None = None
        self._builder = ExecutableBuilder(tmp_path, out_path, services, id_generator)
        self._next_id = id_generator
        self._checker = consistency_checker
        self._adapters = frozenset(output_adapters)
        values: dict[str, Any] = {v.id: v.value for v in workflow.vars if v.value is not None}
        nodes = nodes_from_actions(workflow.actions, values)
        self._restore(nodes, values, set(), set(), {}, [])

    # -- public API ------------------------------------------------------------------------------

    def generate(self, results: dict[str, list] | None = None,
                 executed_executable_ids: Collection[str] | None = None) -> list[ProcessChain]:
        """Feed back results and executed executable ids; return the chains that can run now."""
        with _collector_paused():
            for var_id, value in (results or {}).items():
                self._set(var_id, _unwrap(value), from_results=True)
            for action_id in executed_executable_ids or ():
                self._mark_executed(action_id)
            self._propagate()
            return self._make_chains()

    def is_finished(self) -> bool:
        """True when no action is left (every one was turned into chains or unrolled)."""
        return not self._actions

    def persist_state(self) -> dict:
        """The whole progress as plain JSON data (the id generator is not part of it)."""
        return {"version": STATE_VERSION,
                "actions": [node_to_json(n) for n in self._actions.values()],
                "values": _copy_values(self._values),
                "fromResults": sorted(self._from_results),
                "executed": sorted(self._executed),
                "counters": dict(self._counters),
                "loops": [loop.to_json() for loop in self._loops.values()]}

    def load_state(self, state: dict) -> None:
        """Continue from a state made by persist_state() (of a generator for this workflow)."""
        if state.get("version") != STATE_VERSION:
            raise GeneratorError(f"cannot load generator state version {state.get('version')!r}"
                                 f" (this steepy writes version {STATE_VERSION})")
        loops = [Loop.from_json(d) for d in state["loops"]]
        self._restore([node_from_json(d) for d in state["actions"]], _copy_values(state["values"]),
                      set(state["fromResults"]), set(state["executed"]),
                      dict(state["counters"]), loops)

    # -- state -----------------------------------------------------------------------------------

    def _restore(self, nodes: list[Node], values: dict[str, Any], from_results: set[str],
                 executed: set[str], counters: dict[str, int], loops: list[Loop]) -> None:
        self._values = values
        self._from_results = from_results  # vars whose value earlier chains reported
        self._executed = executed
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
        for var in _consumed_vars(node):
            self._consumers.setdefault(var, set()).add(seq)
        for dep in node.depends_on:
            self._dependents.setdefault(dep, set()).add(seq)
        if isinstance(node, ForNode):
            self._for_seq[node.id] = seq
        self._touch(seq)

    def _remove(self, seq: int) -> None:
        node = self._actions.pop(seq)
        for var in _consumed_vars(node):
            _discard(self._consumers, var, seq)
        for dep in node.depends_on:
            _discard(self._dependents, dep, seq)
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

    # -- events ----------------------------------------------------------------------------------

    def _propagate(self) -> None:
        """Handle every event until nothing changes any more."""
        while True:
            if self._new_ids:
                ids, self._new_ids = self._new_ids, []
                for action_id in ids:
                    self._on_executed(action_id)
            elif self._new_vars:
                names, self._new_vars = self._new_vars, []
                self._collect_yields(names)
                for var in names:
                    for seq in self._consumers.get(var, ()):
                        self._touch(seq)
            elif self._loop_queue:
                seq = heapq.heappop(self._loop_queue)
                self._queued.discard(seq)
                self._iterate_loop(seq)
            else:
                return

    def _on_executed(self, action_id: str) -> None:
        for seq in self._dependents.get(action_id, ()):
            self._touch(seq)
        loop_id = self._parent.pop(action_id, None)
        if loop_id is not None:
            loop = self._loops[loop_id]
            loop.waiting.discard(action_id)
            self._settle(loop)

    # -- for-each actions ------------------------------------------------------------------------

    def _iterate_loop(self, seq: int) -> None:
        """Unroll the items of a for-each that are known and not iterated yet."""
        node = self._actions.get(seq)
        if not isinstance(node, ForNode):
            return
        if any(dep not in self._executed for dep in node.depends_on):
            return
        final = node.input in self._values
        if final:
            value = self._values[node.input]
        elif node.input + STREAM in self._values:
            value = self._values[node.input + STREAM]  # another for-each is still filling it
        else:
            return
        items = value if isinstance(value, list) else [value]
        loop = self._loops.get(node.id)
        if loop is None:
            loop = self._loops[node.id] = Loop(node.id, node.output,
                                               output_done=node.output is None)
        new = [(item, 0) for item in items[loop.consumed:]]
        loop.consumed = len(items)
        if loop.extra:
            new.extend((item, round_) for item, round_ in loop.extra)
            loop.extra = []
        if new:
            names = self._body_names.get(node.id)
            if names is None:
                names = self._body_names[node.id] = BodyNames.of(node)
            for item, round_ in new:
                self._iteration(node, loop, names, item, round_)
        if final and not loop.pending_in:
            self._remove(seq)
            loop.open = False
            self._settle(loop)

    def _iteration(self, node: ForNode, loop: Loop, names: BodyNames, item: Any,
                   round_: int) -> None:
        k = self._counters.get(node.enumerator, 0)
        self._counters[node.enumerator] = k + 1
        rename = Renamer(names, k)
        self._values[rename.var(node.enumerator)] = item
        for child in node.body:
            copy = rename.node(child)
            self._add(copy)
            loop.waiting.add(copy.id)
            self._parent[copy.id] = loop.id
        if node.yield_to_output is not None:
            var = rename.var(node.yield_to_output)
            loop.pending_out[var] = k
            self._await_yield(var, loop.id, "out")
        if node.yield_to_input is not None:
            var = rename.var(node.yield_to_input)
            loop.pending_in[var] = [k, round_]
            self._await_yield(var, loop.id, "in")

    def _await_yield(self, var: str, loop_id: str, kind: str) -> None:
        self._yields.setdefault(var, []).append((loop_id, kind))
        if var in self._values:
            self._new_vars.append(var)

    def _collect_yields(self, names: list[str]) -> None:
        """Values yielded by iterations: append to the loop's output or feed them back."""
        batches: dict[str, list[tuple[int, str, str]]] = {}
        for var in names:
            for loop_id, kind in self._yields.pop(var, ()):
                loop = self._loops[loop_id]
                pending = loop.pending_out.get(var) if kind == "out" else loop.pending_in.get(var)
                if pending is not None:
                    k = pending if kind == "out" else pending[0]
                    batches.setdefault(loop_id, []).append((k, kind, var))
        for loop_id, entries in batches.items():
            loop = self._loops[loop_id]
            for _, kind, var in sorted(entries):  # in iteration order
                items = _items(self._values[var])
                if kind == "out":
                    del loop.pending_out[var]
                    if loop.output is not None:
                        stream = loop.output + STREAM
                        self._values.setdefault(stream, []).extend(items)
                        self._new_vars.append(stream)
                else:
                    _, round_ = loop.pending_in.pop(var)
                    if self.loop_round_limit is None or round_ < self.loop_round_limit:
                        loop.extra.extend([item, round_ + 1] for item in items)
                    self._touch(self._for_seq[loop_id])
            self._settle(loop)

    def _settle(self, loop: Loop) -> None:
        """Publish the output and mark the for-each executed once that is due."""
        if loop.open:
            return
        if not loop.output_done and not loop.pending_out:
            loop.output_done = True
            self._set(loop.output, self._values.pop(loop.output + STREAM, []), from_results=True)
        if not loop.done and not loop.waiting:
            loop.done = True
            self._mark_executed(loop.id)
        if loop.done and loop.output_done:
            del self._loops[loop.id]

    # -- process chains --------------------------------------------------------------------------

    def _make_chains(self) -> list[ProcessChain]:
        chains = []
        for seq in sorted(self._candidates | self._rejected):
            node = self._actions.get(seq)
            if isinstance(node, ExecNode) and self._ready(node, {}, set()):
                chain = self._chain(seq, node)
                if chain is not None:
                    chains.append(chain)
        self._candidates.clear()
        return chains

    def _ready(self, node: ExecNode, produced: dict[str, str], in_chain: set[str]) -> bool:
        """All dependencies executed (or earlier in this chain) and every input known."""
        for dep in node.depends_on:
            if dep not in self._executed and dep not in in_chain:
                return False
        for inp in node.inputs:
            if inp.var not in self._values and inp.var not in produced:
                return False
        return True

    def _chain(self, seq: int, node: ExecNode) -> ProcessChain | None:
        executables: list[Executable] = []
        produced: dict[str, str] = {}
        in_chain: set[str] = set()
        capabilities: set[str] = set()

        def value_of(var: str) -> tuple[Any, bool]:
            if var in produced:
                return produced[var], False
            return self._values[var], var in self._from_results

        while True:
            if self._checker is not None and not self._checker(
                    list(executables), execute_action_model(node, self._values)):
                self._rejected.add(seq)
                break
            executable, outputs = self._builder.build(node, value_of)
            capabilities.update(self._builder.service(node).required_capabilities)
            executables.append(executable)
            self._remove(seq)
            in_chain.add(node.id)
            produced.update(outputs)
            if any(a.type == "output" and a.data_type in self._adapters
                   for a in executable.arguments):
                break  # an output adapter decides what this output is: end the chain here
            following = self._next_in_chain(node, produced, in_chain)
            if following is None:
                break
            seq, node = following
        if not executables:
            return None
        return ProcessChain(id=self._next_id(), executables=executables,
                            required_capabilities=sorted(capabilities),
                            priority=self.default_priority, retries=self.retries)

    def _next_in_chain(self, node: ExecNode, produced: dict[str, str],
                       in_chain: set[str]) -> tuple[int, ExecNode] | None:
        """The single action that follows `node` and may run right after it, if any."""
        successors = self._successors(node)
        if not successors:
            return None
        root = self._root(successors)
        if root is None:
            return None  # a fork: the successors become separate chains
        candidate = self._actions[root]
        if isinstance(candidate, ExecNode) and self._ready(candidate, produced, in_chain):
            return root, candidate
        return None

    def _successors(self, node: Node) -> set[int]:
        result: set[int] = set()
        if isinstance(node, ExecNode):
            produced = [o.var for o in node.outputs]
        else:
            produced = [] if node.output is None else [node.output, node.output + STREAM]
        for var in produced:
            result.update(self._consumers.get(var, ()))
        result.update(self._dependents.get(node.id, ()))
        return result

    def _root(self, successors: set[int]) -> int | None:
        """The successor from which all other successors are reachable (if there is one)."""
        if len(successors) == 1:
            return next(iter(successors))
        for seq in sorted(successors):
            if self._reaches_all(seq, successors - {seq}):
                return seq
        return None

    def _reaches_all(self, start: int, targets: set[int]) -> bool:
        missing = set(targets)
        seen = {start}
        todo = [start]
        while todo:
            for nxt in self._successors(self._actions[todo.pop()]):
                if nxt not in seen:
                    seen.add(nxt)
                    missing.discard(nxt)
                    if not missing:
                        return True
                    todo.append(nxt)
        return False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector: generating creates many long-lived objects but no
    reference cycles, so collections meanwhile only rescan a growing heap (which made a
    for-each over 100,000 items clearly slower than linear)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _copy_values(values: dict[str, Any]) -> dict[str, Any]:
    """A copy that shares no list the generator extends in place (the `$$` collections)."""
    return {k: list(v) if k.endswith(STREAM) else v for k, v in values.items()}


def _consumed_vars(node: Node) -> list[str]:
    if isinstance(node, ExecNode):
        return [i.var for i in node.inputs]
    return [node.input, node.input + STREAM]


def _discard(index: dict[str, set[int]], key: str, seq: int) -> None:
    entries = index.get(key)
    if entries is not None:
        entries.discard(seq)
        if not entries:
            del index[key]


def _unwrap(value: Any) -> Any:
    """A reported result: a one-element list stands for its element; other lists stay lists."""
    if isinstance(value, list):
        return value[0] if len(value) == 1 else list(value)
    return value


def _items(value: Any) -> list:
    return value if isinstance(value, list) else [value]
