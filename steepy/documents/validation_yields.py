"""A for-each's `yieldToOutput' that nothing ever gives a value: no action's output, no
enumerator, no value of its own. The for-each could only end in error, so validation says so
at the key. A variable some action produces anywhere (in the body, in a nested for-each, as an
include's output) is never reported: only what is certain to be wrong.

A for-each's `yieldToInput' that no action of its own body writes: each iteration would feed
the same values back into the loop, which would never end (and the generator, which waits for
what each iteration yields, took one variable for all of them: a KeyError that stopped the
engine)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from steepy.model.suggestions import suggest
from steepy.model.workflow import ForEachAction


def unproduced_yields(sites: Iterable[Any], refs: Iterable[Any],
                      given: set[str]) -> Iterator[tuple[Any, str]]:
    """(site, message) of each for-each whose yieldToOutput is never produced; `sites' and
    `refs' as steepy.documents.validation makes them, `given': ids that have values anyway
    (a value of their own, a macro input, a part of the document already rejected)."""
    refs = list(refs)
    produced = {r.var.id for r in refs if r.role in ("output", "enumerator")}
    for site in sites:
        a = site.action
        if not isinstance(a, ForEachAction) or a.yield_to_output is None:
            continue
        var = a.yield_to_output
        if var.id in produced or var.id in given or var.value is not None:
            continue
        inside = {r.var.id for r in refs if r.role == "output" and r.site is not site
                  and r.site.path[:len(site.path)] == site.path}
        yield site, (f"yieldToOutput `{var.id}' is not an output of any action in this "
                     "for-each's actions, so the for-each has nothing to collect."
                     + suggest(var.id, inside | {a.enumerator.id}))


def unfed_inputs(sites: Iterable[Any], refs: Iterable[Any]) -> Iterator[tuple[Any, str]]:
    """(site, message) of each for-each whose yieldToInput no action of its body writes."""
    refs = list(refs)
    for site in sites:
        a = site.action
        if not isinstance(a, ForEachAction) or a.yield_to_input is None:
            continue
        inside = {r.var.id for r in refs if r.role in ("output", "enumerator")
                  and r.site is not site and r.site.path[:len(site.path)] == site.path}
        if a.yield_to_input.id in inside:
            continue
        yield site, (f"yieldToInput `{a.yield_to_input.id}' is not an output of any action in "
                     "this for-each's actions: every iteration would feed the same values back "
                     "into the loop, which would never end."
                     + suggest(a.yield_to_input.id, inside))
