"""Reuse of unchanged work (extensions 15): the controller's side.

In each round, after the generator made new chains and before they are stored, `Reuse.round`
takes the key of each new chain (steepy.model.cachekeys) and, when the submission resumes,
looks for an earlier chain with the same key whose output files are still as they were.
Such a chain is stored SUCCESS with the earlier results: its consumers read the earlier
files. The others get their keys recorded, and their outputs once they succeed. Whole
chains only: the paths inside a chain are fixed when it is made. What the submission stores
of reused work is placed in its own folder at its end (steepy.engine.storedresults).
"""

from __future__ import annotations

import time
from copy import copy
from dataclasses import dataclass, replace
from typing import Any, Sequence

from steepy.engine.fingerprints import Fingerprints, taken_deep
from steepy.generator.executables import absolute_folder
from steepy.model.cachekeys import (CACHE_DEEP, CACHE_STANDARD, UNCOMPARABLE, ChainKeys,
                                    KeyMemo, chain_keys, executable_mode, tool_file)
from steepy.model.processchain import ArgumentVariable, Executable, ProcessChain
from steepy.model.service import Service
from steepy.model.stopping import stopped_at
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry.cache import CacheWrite, Entry, Pending, Reused
from steepy.registry.interfaces import Cache
from steepy.registry.writes import RoundView, RoundWrite
from steepy.registry.records import ChainRecord


@dataclass(frozen=True)
class CacheSettings:
    """`cache.*' of steepy.yaml: reuse by default (`enabled', else only with `--resume'),
    how files are compared (`mode'), and whether chains leave records at all (`record')."""

    enabled: bool = False
    mode: str = CACHE_STANDARD
    record: bool = True


class Reuse:
    def __init__(self, cache: Cache, services: dict[str, Service],
                 settings: CacheSettings = CacheSettings(), out_path: str | None = None):
        self.cache = cache
        self.services = services
        self.settings = settings
        # where stored outputs go now (`stored_elsewhere`), as the controller names it
        self.out_path = None if out_path is None else absolute_folder(out_path)
        self.fingerprint = Fingerprints()  # (outside a submission's rounds: `steepy plan')
        self._memo = KeyMemo()  # what the keys of its executables share
        self._looks: dict[str, Fingerprints] = {}  # each submission's own, by its id

    def resumes(self, resume: bool | None) -> bool:
        """Whether a submission reuses earlier work: its own `--resume', else `enabled'."""
        return self.settings.enabled if resume is None else resume

    def scoped(self, submission_id: str) -> "Reuse":
        """This reuse with the looks of one submission: a look made in its rounds serves no
        other submission (a file edited and then submitted at once is seen edited by the new
        submission, however recently another looked at it). Content hashes are shared. The
        looks of submissions with no round for `fresh_s' are let go: they serve nothing."""
        now = time.monotonic()
        for sid, looks in list(self._looks.items()):
            if now - looks.used > looks.fresh_s and sid != submission_id:
                self._looks.pop(sid, None)
        looks = self._looks.get(submission_id)
        if looks is None:
            looks = self._looks[submission_id] = self.fingerprint.alike()
        scoped = copy(self)
        scoped.fingerprint = looks
        return scoped

    def round(self, write: RoundWrite, finished: Sequence[ChainRecord],
              resume: bool) -> RoundWrite:
        """`write` with what to store about reusable work (blocking: call it offloaded; for a
        submission's rounds, on its `scoped` reuse)."""
        if not (resume or self.settings.record):
            return write
        self.fingerprint.anew()
        out = CacheWrite(completed=self._completed(finished))
        chains = list(write.chains)
        keys = {c.id: self.keys(c) for c in chains}
        found = self.find(keys, chains=chains) if resume else {}
        for chain in chains:
            key = keys[chain.id]
            if key is None or key.uncomparable:
                continue
            earlier = found.get(chain.id)
            if earlier is not None:
                out.reused.append(reuse(chain, earlier))
            elif self.settings.record:
                out.pending.extend(
                    Pending(key.chain, k, chain.id, e.id, i, shape, self._read(e, files))
                    for i, (k, e, shape, files) in enumerate(zip(
                        key.executables, chain.executables, key.shapes, key.files)))
        out.feed_round = write.round_number + 1  # with the chains, `carried'
        return replace(write, cache=out) if out else write

    def _completed(self, finished: Sequence[ChainRecord]) -> list[tuple[str, list[list[dict]]]]:
        """The outputs of the chains among `finished` that succeeded and wait for them, if
        their input files are still those their keys were taken from: a chain run long after
        it was stored (a queue, `steepy retry') may have read other ones, and its outputs
        under its old key would be reused for the old files. Those whose inputs changed,
        that a fallback rescued, or that left an output unwritten are forgotten (their next
        submission runs them again)."""
        done = [r for r in finished if r.status == CS.SUCCESS and r.reused is None
                and stopped_at(r.results) is None]
        fallbacks = [r.chain.id for r in done
                     if any(e.fallback_for is not None for e in r.chain.executables)]
        waiting = self.cache.pending([r.chain.id for r in done], fallbacks) if done else {}
        out, stale = [], []
        looked: dict[tuple[str, bool], Any] = {}  # (a tool or file read by many: once)
        for r in done:
            if r.chain.id not in waiting:
                continue
            recorded = waiting[r.chain.id]
            if recorded is None or not self._inputs_kept(recorded, looked):
                stale.append(r.chain.id)
                continue
            outputs = [[{
                "path": a.variable.value, "results": (r.results or {}).get(a.variable.id),
                "fingerprint": self.fingerprint.anew_for(a.variable.value, self._deep(e))}
                for a in e.arguments if a.type == "output"] for e in r.chain.executables]
            if any(o["fingerprint"] in (UNCOMPARABLE, None) for each in outputs for o in each):
                stale.append(r.chain.id)  # (an output folder too large to compare, or one
                continue  # not written: `checkOutputs: false'; reuse needs it there)
            out.append((r.chain.id, outputs))
        if stale:
            self.cache.forget(stale)
        return out

    def _deep(self, exe: Executable) -> bool:
        """Whether the files of `exe` are compared by content (`cache: deep'): its outputs
        too, recorded by their content hash, so that an output edited later with its size
        and modification time kept is seen changed."""
        return executable_mode(exe, self.services.get(exe.service_id),
                               self.settings.mode) == CACHE_DEEP

    def _read(self, exe: Executable, files: dict[str, Any]) -> dict[str, Any] | None:
        """What a record keeps of what its executable reads, to be looked at again when its
        chain has run (`_inputs_kept`): its input files and its tool (when its path names
        one: a tool fixed before `steepy retry' is not the tool of the key)."""
        tool = self.fingerprint(exe.path, True) if tool_file(exe.path) else None
        read = {**files, exe.path: tool} if tool is not None else files
        return read or None

    def _inputs_kept(self, recorded: list[dict | None],
                     looked: dict[tuple[str, bool], Any] | None = None) -> bool:
        """Whether each input file (and tool) is as the key saw it, looked at now (in the
        key's mode: a content hash was taken in `deep' mode); `looked` keeps the looks of
        one round."""
        looked = {} if looked is None else looked
        for files in recorded:
            for path, seen in (files or {}).items():
                deep = taken_deep(seen)
                if (path, deep) not in looked:
                    looked[path, deep] = self.fingerprint.anew_for(path, deep)
                if looked[path, deep] != seen:
                    return False
        return True

    def stored_elsewhere(self, chain: ProcessChain, earlier: list[Entry]) -> list[str]:
        """The results `chain` would store below the output folder whose earlier run
        stored them where placing cannot take them from (steepy.engine.storedresults): not
        in the folder of its own submission below today's output folder (`outPath` changed
        since). Reused, they would be no result of the submission, or stay in a folder the
        collector deletes with the earlier submission; so that earlier run is passed over.
        An output stored outside the output folder (an absolute or a `../` prefix) is where
        it was."""
        if self.out_path is None:
            return []
        root = self.out_path.rstrip("/") + "/"
        elsewhere = []
        for exe, entry in zip(chain.executables, earlier):
            outputs = [a for a in exe.arguments if a.type == "output"]
            own = f"{root}{entry.submission_id}/"
            for arg, recorded in zip(outputs, entry.outputs):
                place = arg.place or ""  # (`out:PREFIX' for one it stores)
                if (place.startswith("out:") and not place.startswith("out:/")
                        and arg.variable.value.startswith(root)
                        and not recorded["path"].startswith(own)):
                    elsewhere.append(recorded["path"])
        return elsewhere

    def keys(self, chain: ProcessChain) -> ChainKeys | None:
        """The keys of `chain` (None: `cache: false')."""
        return chain_keys(chain, self.services, self.fingerprint, self.settings.mode,
                          self._memo)

    def find(self, keys: dict[str, ChainKeys | None], forget: bool = True,
             stale_out: dict[str, list[Entry]] | None = None,
             chains: Sequence[ProcessChain] = (),
             elsewhere_out: dict[str, list[str]] | None = None) -> dict[str, list[Entry]]:
        """For each new chain (by id), an earlier chain with its key whose outputs are still
        there, unchanged: the newest, and for new chains of one key (a for-each over the same
        file twice) the next newest in turn, while there are (a join then gets as many
        files as before, not one twice). The entries of those whose outputs are not are
        dropped (`forget`) and put in `stale_out` by chain key (the newest of each). With
        the new `chains`, an earlier chain whose stored results are elsewhere is passed over
        (`stored_elsewhere`; kept, and its paths put in `elsewhere_out` by chain key)."""
        wanted: dict[str, int] = {}
        for k in keys.values():
            if k is not None and not k.uncomparable:
                wanted[k.chain] = wanted.get(k.chain, 0) + 1
        if not wanted:
            return {}
        candidates = self.cache.lookup(sorted(wanted))
        valid: dict[str, list[list[Entry]]] = {}
        stale: list[str] = []
        shown = {k.chain: c for c in chains if (k := keys.get(c.id)) is not None}
        for chain_key, earlier in candidates.items():
            for entries in earlier:
                if len(valid.get(chain_key, ())) >= wanted[chain_key]:
                    break
                elsewhere = (self.stored_elsewhere(shown[chain_key], entries)
                             if chain_key in shown else [])
                if elsewhere:
                    if elsewhere_out is not None:
                        elsewhere_out.setdefault(chain_key, elsewhere)
                    continue
                if self.unchanged(entries):
                    valid.setdefault(chain_key, []).append(entries)
                    continue
                stale.append(entries[0].chain_id)
                if stale_out is not None:
                    stale_out.setdefault(chain_key, entries)
        if stale and forget:
            self.cache.forget(stale)
        found: dict[str, list[Entry]] = {}
        given: dict[str, int] = {}
        for chain_id, k in keys.items():
            if k is not None and not k.uncomparable and k.chain in valid:
                turn = given.get(k.chain, 0)
                given[k.chain] = turn + 1
                if turn < len(valid[k.chain]):  # one each; the ones more run
                    found[chain_id] = valid[k.chain][turn]
        return found

    def unchanged(self, entries: list[Entry]) -> bool:
        """Whether the outputs these entries recorded are still as they were."""
        return not self.changed_outputs(entries, first=True)

    def changed_outputs(self, entries: list[Entry], first: bool = False) -> list[str]:
        """The recorded output paths that are gone or changed (only the first: `first`)."""
        changed: list[str] = []
        for e in entries:
            for o in e.outputs:
                now = self.fingerprint(o["path"], taken_deep(o["fingerprint"]))
                if now == UNCOMPARABLE or now != o["fingerprint"]:
                    changed.append(o["path"])
                    if first:
                        return changed
        return changed


def carried(submission_id: str, write: RoundWrite | None, view: RoundView) -> RoundView:
    """`view` (of the round that stored `write`) with the chains of `write` that reused
    earlier work among the finished ones: the controller feeds them as they were stored,
    without reading 10,000 chains back. They are stored fed in the next round, which a
    controller that takes over after a crash feeds again."""
    cache = None if write is None else write.cache
    if write is None or cache is None or not cache.reused:
        return view
    chains = {c.id: c for c in write.chains}
    records = [ChainRecord(chains[r.chain_id], submission_id, CS.SUCCESS, r.results, None, 0,
                           reused=r.marker(), fed_round=cache.feed_round)
               for r in cache.reused]
    return replace(view, finished=records + list(view.finished))


def reuse(chain: ProcessChain, earlier: list[Entry]) -> Reused:
    """`chain` as the reuse of the earlier chain of `earlier`: its output paths (and the
    inputs that read them) become the earlier ones; its results are the earlier results,
    by output position."""
    moved: dict[str, str] = {}
    results: dict[str, list] = {}
    for exe, entry in zip(chain.executables, earlier):
        outputs = [a for a in exe.arguments if a.type == "output"]
        for arg, recorded in zip(outputs, entry.outputs):
            moved[arg.variable.value] = recorded["path"]
            results[arg.variable.id] = recorded["results"]
    for exe in chain.executables:
        for arg in exe.arguments:
            new = _moved(arg.variable.value, moved)
            if new is not None:
                arg.variable = ArgumentVariable(arg.variable.id, new)
    first = earlier[0]
    return Reused(chain.id, results, first.submission_id, first.chain_id)


def _moved(value: str, moved: dict[str, str]) -> str | None:
    if value in moved:
        return moved[value]
    for old, new in moved.items():
        if old and value.startswith(old.rstrip("/") + "/"):
            return new.rstrip("/") + value[len(old.rstrip("/")):]
    return None
