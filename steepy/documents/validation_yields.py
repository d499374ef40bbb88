"""A for-each's `yieldToOutput' that nothing ever gives a value: no action's output, no
enumerator, no value of its own. The for-each could only end in error, so validation says so
at the key. A variable some action produces anywhere (in the body, in a nested for-each, as an
include's output) is never reported: only what is certain to be wrong."""

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
