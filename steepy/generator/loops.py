"""For-each actions while the generator runs: unrolling the items of an input that are known
(also while another for-each still fills it), collecting what iterations yield into the
output or back into the input, and marking the for-each executed when all is done.

Within a window (window.py) a for-each unrolls only as many items as the window has room
for and waits in the backlog with the rest. An iteration that has nothing left is forgotten
(GeneratorState._forget_finished), so memory follows the iterations in flight, not the
items."""

from __future__ import annotations

import sys
from typing import Any

from steepy.generator.nodes import BodyNames, ForNode, Renamer
from steepy.generator.state import STREAM, GeneratorState, Loop, iteration_of


class ForEachUnrolling(GeneratorState):
    """The for-each part of the generator."""

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
                                               output_done=node.output is None,
                                               names=BodyNames.of(node))
        names = loop.names if loop.names is not None else BodyNames.of(node)
        room = self._room(len(node.body))
        new = [(item, 0) for item in items[loop.consumed:loop.consumed + room]]
        loop.consumed += len(new)
        if loop.extra and len(new) < room:
            taken = room - len(new)
            new.extend((item, round_) for item, round_ in loop.extra[:taken])
            loop.extra = loop.extra[taken:]
        for item, round_ in new:
            self._iteration(node, loop, names, item, round_)
        if self._budget is not None:
            self._budget -= len(new) * max(1, len(node.body))
        if loop.consumed < len(items) or loop.extra:
            self._backlog.add(seq)  # the window is full: the rest when it has room
            return
        if final and not loop.pending_in:
            self._remove(seq)
            loop.open = False
            self._settle(loop)

    def _room(self, per_iteration: int) -> int:
        """How many iterations may be unrolled now (at least one while the window has room)."""
        if self._budget is None:
            return sys.maxsize
        return 0 if self._budget <= 0 else max(1, self._budget // max(1, per_iteration))

    def _iteration(self, node: ForNode, loop: Loop, names: BodyNames, item: Any,
                   round_: int) -> None:
        k = self._counters.get(node.enumerator, 0)
        self._counters[node.enumerator] = k + 1
        rename = Renamer(names, k)
        self._values[rename.var(node.enumerator)] = item
        live = len(node.body)
        for child in node.body:
            copy = rename.node(child)
            self._add(copy)
            loop.waiting.add(copy.id)
            self._parent[copy.id] = loop.id
        if node.yield_to_output is not None and node.output is not None:
            # (without an `output', what the iterations yield is collected nowhere: a loop
            # waiting for it would end before the last yield came, which found it gone)
            var = rename.var(node.yield_to_output)
            loop.pending_out[var] = k
            live += loop.private(var, k)
            self._await_yield(var, loop.id, "out")
        if node.yield_to_input is not None:
            var = rename.var(node.yield_to_input)
            loop.pending_in[var] = [k, round_]
            live += loop.private(var, k)
            self._await_yield(var, loop.id, "in")
        if live and loop.names is not None:
            loop.live[k] = live
        elif loop.names is not None:
            self._finished.append((loop.names, rename.suffix))

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
            for k, kind, var in sorted(entries):  # in iteration order
                items = _items(self._values[var])
                if loop.private(var, k):
                    self._iteration_step(loop, k)
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

    def _release(self, loop: Loop, action_id: str) -> None:
        """An action of one of the loop's iterations was executed or skipped."""
        loop.waiting.discard(action_id)
        self._iteration_step(loop, iteration_of(action_id))
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


def _items(value: Any) -> list:
    return value if isinstance(value, list) else [value]
