"""What a submission that resumes would reuse, and why each other chain would run
(`steepy plan --resume`, extensions 15). It reads the cache entries and the files; it stores
and forgets nothing.

A chain runs because its action or service says `cache: false`; because the outputs of
its earlier run are gone or changed; or, per executable, because it reads what a chain that
runs writes, because one of its input files changed since the newest earlier run of the same
shape (steepy.model.cachekeys), or because nothing like it ran before.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass

from steepy.engine.fingerprints import TREE_FILES
from steepy.engine.reuse import Reuse, reuse
from steepy.generator.simulate import simulated_results
from steepy.model.cachekeys import ChainKeys, tool_file
from steepy.model.processchain import Executable, ProcessChain
from steepy.registry.cache import Entry, Reused


@dataclass(frozen=True)
class Verdict:
    """A chain of the plan: reused (from which earlier chain), or why it runs."""

    chain: ProcessChain
    reused: Reused | None = None
    reasons: tuple[str, ...] = ()


class ReusePlan:
    """Verdicts step by step; `feedback` is what steepy.generator.simulate feeds back: the
    earlier results of the chains reused and simulated ones of the others."""

    def __init__(self, reuse: Reuse):
        self.reuse = reuse
        self.steps: list[list[Verdict]] = []
        self._written: set[str] = set()  # output paths of the chains that run

    def step(self, chains: list[ProcessChain]) -> list[Verdict]:
        keys = {c.id: self.reuse.keys(c) for c in chains}
        stale: dict[str, list[Entry]] = {}
        elsewhere: dict[str, list[str]] = {}
        found = self.reuse.find(keys, forget=False, stale_out=stale, chains=chains,
                                elsewhere_out=elsewhere)
        shapes = [s for c in chains if c.id not in found and keys[c.id] is not None
                  for s in keys[c.id].shapes]  # type: ignore[union-attr]
        similar = self.reuse.cache.similar(shapes) if shapes else {}
        # chain key -> earlier chains reused by chains of this step
        taken = Counter(keys[chain_id].chain for chain_id in found)  # type: ignore[union-attr]
        verdicts: list[Verdict] = []
        for chain in chains:
            earlier = found.get(chain.id)
            if earlier is not None:
                verdicts.append(Verdict(chain, reuse(chain, earlier)))
                continue
            reasons = self._reasons(chain, keys[chain.id], stale, elsewhere, similar, taken)
            self._written.update(a.variable.value for e in chain.executables
                                 for a in e.arguments if a.type == "output")
            verdicts.append(Verdict(chain, None, tuple(reasons)))
        self.steps.append(verdicts)
        return verdicts

    def feedback(self, chains: list[ProcessChain]) -> tuple[dict[str, list], set[str]]:
        verdicts = self.step(chains)
        results, executed = simulated_results([v.chain for v in verdicts if v.reused is None])
        for v in verdicts:
            if v.reused is not None:
                executed.update(e.id for e in v.chain.executables)
                for var, values in v.reused.results.items():
                    results.setdefault(var, []).extend(values or [])
        return results, executed

    def _reasons(self, chain: ProcessChain, key: ChainKeys | None,
                 stale: dict[str, list[Entry]], elsewhere: dict[str, list[str]],
                 similar: dict[str, Entry], taken: Counter[str]) -> list[str]:
        if key is None:
            return ["its action or service says `cache: false'"]
        if key.uncomparable:
            return [f"`{key.uncomparable}' cannot be compared (a folder of more than "
                    f"{TREE_FILES:,} files, or a file it cannot read): it always runs"]
        if key.chain in taken:  # one earlier chain each: these are more than there were
            n = taken[key.chain]
            return [f"the same work ran {n} time{'s' if n != 1 else ''} before, and "
                    f"{'each is' if n != 1 else 'that is'} reused by another chain of it"]
        if key.chain in elsewhere:
            return [f"its earlier run stored its results in another output folder (outPath "
                    f"changed since): {', '.join(elsewhere[key.chain])}"]
        if key.chain in stale:
            gone = self.reuse.changed_outputs(stale[key.chain])
            return [f"the outputs of its earlier run are gone or changed: {', '.join(gone)}"]
        reasons: list[str] = []
        for exe, shape, files in zip(chain.executables, key.shapes, key.files):
            reason = self._why(exe, shape, files, similar)
            if reason is not None:
                reasons.append(f"{exe.service_id}: {reason}")
        return reasons or ["its executables did not run together before"]

    def _why(self, exe: Executable, shape: str, files: dict,
             similar: dict[str, Entry]) -> str | None:
        inputs = [a for a in exe.arguments if a.type != "output"]
        upstream = [a for a in inputs if self._runs(a.variable.value)]
        if upstream:
            return f"input `{upstream[0].id}' is written by a chain that runs"
        earlier = similar.get(shape)
        if earlier is None:
            if tool_file(exe.path):  # (a tool edited in place is new work too: name it)
                return (f"no earlier run with this service, these arguments, this environment "
                        f"and this content of its tool {exe.path}")
            return "no earlier run with this service, these arguments and this environment"
        before = earlier.inputs or {}
        changed = [a for a in inputs if a.variable.value in files
                   and before.get(a.variable.value) != files[a.variable.value]]
        if changed:
            return "; ".join(f"input `{a.id}' changed: {a.variable.value}" for a in changed)
        return None

    def _runs(self, path: str) -> bool:
        """Whether a chain that runs writes `path` (or a directory above it)."""
        while path and path != "/":
            if path in self._written or path.rstrip("/") in self._written:
                return True
            path = posixpath.dirname(path.rstrip("/"))
        return False
