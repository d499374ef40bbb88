"""How often Python's cycle collector runs in a `steepy` process, above all in one that runs an
engine.

The collector's default (a collection after 700 new container objects, a full one after
every 100 of those) suits small scripts. An engine holds tens of thousands of live objects
(chains, their executables and arguments, rows read back) and makes many more; each full
collection walks all of them. A second `steepy run` of 10,000 chains that are all reused
spent about a fifth of its CPU time there (2.9 s CPU by default, 2.3 s with the
thresholds below; `bench/reuse.py`). The engine makes few reference cycles, so collecting
less often keeps about the same memory (160-170 MB in both runs).

Called by the command line: every command from its start (`collect_less_from_the_start`),
and those that run an engine (`run`, `worker`, `serve`) once it is imported (`collect_less`);
not by the engine itself: a program that embeds an engine through the Python API keeps its
own settings.
"""

from __future__ import annotations

import gc

# (new objects before a young collection, young ones before a middle one, middle before full)
THRESHOLDS = (20_000, 20, 50)


def collect_less_from_the_start() -> None:
    """The thresholds of an engine for a whole `steepy` process, from before its command's
    imports: they make some 170,000 objects the collector tracks, which live as long as the
    process (classes, functions, the configuration's models) and which the default collector
    walks again and again while they are made. The imports of an engine (`steepy run`'s and
    `serve`'s) took 1.15 s of CPU time by default, 1.05 s with these thresholds and 0.99 s
    with no collection (median of 12 starts each). Collection stays on: `steepy wait` and
    `steepy logs --follow` run for hours."""
    gc.set_threshold(*THRESHOLDS)


def collect_less() -> None:
    """Collect cycles less often in this process, and leave the objects made so far
    (modules, configuration, services) out of every later collection. With no collection
    first: the imports leave next to no cyclic garbage to keep (none, measured), and that
    collection walked every object for 30 ms of each `steepy run`."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
