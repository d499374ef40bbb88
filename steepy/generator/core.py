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

This module holds the public API and the event loop; what the generator knows is
`steepy.generator.state`, the for-each actions `loops`, the grouping into chains `chains`.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

from steepy.generator.chains import ChainGrouping, ConsistencyChecker
from steepy.generator.executables import ExecutableBuilder
from steepy.generator.loops import ForEachUnrolling
from steepy.generator.nodes import (GeneratorError, fallback_node, node_from_json, node_to_json,
                                    nodes_from_actions)
from steepy.generator.skipping import Skipping, Stop
from steepy.generator.state import STREAM, Loop, Skipped
from steepy.generator.window import ChainWindow
from steepy.model.ids import unique_id
from steepy.documents.macros import expand_includes, has_includes
from steepy.model import Macro, ProcessChain, Service, Workflow
from steepy.model.policies import RetryPolicy

__all__ = ["ConsistencyChecker", "ProcessChainGenerator", "STATE_VERSION", "Stop"]

STATE_VERSION = 1


class ProcessChainGenerator(ForEachUnrolling, ChainGrouping, Skipping, ChainWindow):
    """Turns a workflow into process chains, step by step (see module docstring); its state
    is `steepy.generator.state`, its for-each part `loops`, its chain making `chains`, the
    limit on chains in flight `window`."""

    def __init__(self, workflow: Workflow, tmp_path: str, out_path: str,
                 services: dict[str, Service], macros: dict[str, Macro] | None = None, *,
                 consistency_checker: ConsistencyChecker | None = None,
                 output_adapters: Collection[str] = (),
                 id_generator: Callable[[], str] = unique_id,
                 engine_retries: RetryPolicy | None = None):
        if has_includes(workflow.actions):
            workflow = expand_includes(workflow, macros)
        self._workflow = workflow
        self.default_priority: int = workflow.priority
        self.retries = workflow.retries
        # Recursive for-each actions stop feeding items back after this many rounds
        # (None = never); only simulations set it, to keep a plan finite.
        self.loop_round_limit: int | None = None
        self._builder = ExecutableBuilder(tmp_path, out_path, services, id_generator,
                                          (workflow.executable_retries, engine_retries))
        self._next_id = id_generator
        self._checker = consistency_checker
        self._adapters = frozenset(output_adapters)
        values: dict[str, Any] = {v.id: v.value for v in workflow.vars if v.value is not None}
        nodes = nodes_from_actions(workflow.actions, values)
        # the workflow's catch (generator/catching.py); its own values survive a load_state
        self._catch_model = catch = workflow.catch
        self._catch_values: dict[str, Any] = {}
        self._catch = None if catch is None else fallback_node(catch, self._catch_values)
        # the workflow's own values: a stored state leaves them out (they can be large: the
        # items of a for-each) and loading it takes them from here
        self._initial_values = {**values, **self._catch_values}
        self.window: int | None = None  # chains in flight at most (window.py); None: no limit
        self._outstanding = 0
        self._restore(nodes, dict(self._initial_values), set(), set(), {}, [])

    # -- public API ------------------------------------------------------------------------------

    def generate(self, results: dict[str, list] | None = None,
                 executed_executable_ids: Collection[str] | None = None,
                 stopped: Collection[Stop] = (),
                 ended_chains: Collection[str] = ()) -> list[ProcessChain]:
        """Feed back results, executed executable ids, the chains that stopped without an
        error (their dependents are skipped) and the ids of every chain that ended, however
        (they make room in the window of chains in flight); return the chains that can run
        now."""
        with _collector_paused():
            for var_id, value in (results or {}).items():
                self._set(var_id, _unwrap(value), from_results=True)
            for action_id in executed_executable_ids or ():
                self._mark_executed(action_id)
            for stop in stopped:
                self._stop(stop)
            self._chains_gone(len(ended_chains))
            chains = self._make_within_window()
            self._forget_finished()
            return chains

    def take_skipped(self) -> dict[str, str]:
        """The actions skipped since the last call (action id -> why), to be recorded."""
        skipped, self._newly_skipped = self._newly_skipped, {}
        return skipped

    def skipped(self) -> dict[str, str]:
        """Every action skipped so far (action id -> why)."""
        return dict(self._skipped)

    def is_finished(self) -> bool:
        """True when no action is left (every one was turned into chains or unrolled)."""
        return not self._actions

    def persist_state(self) -> dict:
        """The whole progress as plain JSON data (the id generator is not part of it)."""
        return {"version": STATE_VERSION,
                "actions": [node_to_json(n) for n in self._actions.values()],
                "values": self._changed_values(),
                "fromResults": sorted(self._from_results),
                "executed": sorted(self._executed),
                "counters": dict(self._counters),
                "loops": [loop.to_json() for loop in self._loops.values()],
                "skipped": Skipped(self._skipped, self._dead_vars, self._dead_ids).to_json(),
                "outstanding": self._outstanding}

    def load_state(self, state: dict) -> None:
        """Continue from a state made by persist_state() (of a generator for this workflow)."""
        if state.get("version") != STATE_VERSION:
            raise GeneratorError(f"cannot load generator state version {state.get('version')!r}"
                                 f" (this steepy writes version {STATE_VERSION})")
        loops = [Loop.from_json(d) for d in state["loops"]]
        values = {**self._initial_values, **_copy_values(state["values"])}
        self._restore([node_from_json(d) for d in state["actions"]], values,
                      set(state["fromResults"]), set(state["executed"]),
                      dict(state["counters"]), loops,
                      Skipped.from_json(state.get("skipped")))
        self._values.update(self._catch_values)
        self._outstanding = int(state.get("outstanding", 0))

    def _changed_values(self) -> dict[str, Any]:
        """The values that are not the workflow's own, copied (see _copy_values)."""
        initial, missing = self._initial_values, object()
        return _copy_values({k: v for k, v in self._values.items()
                             if initial.get(k, missing) is not v})

    # -- events ----------------------------------------------------------------------------------

    def _propagate(self) -> None:
        """Handle every event until nothing changes any more."""
        while True:
            if self._new_dead:
                self._spread_skips()
            elif self._new_ids:
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
            self._release(self._loops[loop_id], action_id)


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


def _unwrap(value: Any) -> Any:
    """A reported result: a one-element list stands for its element; other lists stay lists."""
    if isinstance(value, list):
        return value[0] if len(value) == 1 else list(value)
    return value
