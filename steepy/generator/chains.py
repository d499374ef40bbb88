"""Grouping the execute actions that can run now into process chains: each chain is the
longest linear sequence from a ready action (a fork ends it, and so does an output that an
output adapter handles, or a refusal of the consistency checker)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from steepy.generator.catching import Catching
from steepy.generator.executables import ExecutableBuilder
from steepy.generator.nodes import ExecNode, Node, execute_action_model
from steepy.generator.state import STREAM
from steepy.model import ExecuteAction, Executable, ProcessChain, RetryPolicy

ConsistencyChecker = Callable[[list[Executable], ExecuteAction], bool]


class ChainGrouping(Catching):
    """The chain-making part of the generator."""

    default_priority: int
    retries: RetryPolicy | None
    _builder: ExecutableBuilder
    _checker: ConsistencyChecker | None
    _adapters: frozenset[str]
    _next_id: Callable[[], str]

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
        for var in node.consumed():
            if var not in self._values and var not in produced:
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
            catch = None if node.fallback is not None else self._catch_for(node)
            stand_in = node.fallback or catch
            if stand_in is not None:  # extensions 10: right after, writing the same paths
                fallback = self._builder.build_fallback(node, value_of, outputs, catch)
                capabilities.update(self._builder.service(stand_in).required_capabilities)
                executables.append(fallback)
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

