"""How a process chain that ended early without an error says so (extensions 10 and 11).

A tool's `prune', a fallback with `stop: true' and the workflow's catch end their chain at
one executable, and the chain ends SUCCESS. Its results then hold, besides the outputs of
the executables before that one, the key `STOPPED_AT` with the executable's id, why, and the
executable that ended it (itself, or its fallback or catch). It
is stored with the chain's end, in the same transaction, so the engine that feeds the chain
to the generator (even one that took over after a crash) knows what to skip. It is never
shown as a result: a chain's document has the outputs in `results` and the stop in `stopped`
(steepy/registry/documents.py).
"""

from __future__ import annotations

from typing import Any

STOPPED_AT = "$stoppedAt"  # (variable ids never start with `$')
CATCH_SUFFIX = ".catch"  # the id of the workflow's catch run for an action: the action's plus this


def stop_marker(executable_id: str, reason: str, ended_by: str) -> dict[str, list[str]]:
    """The entry of a stopped chain's results."""
    return {STOPPED_AT: [executable_id, reason, ended_by]}


def stopped_at(results: dict[str, Any] | None) -> tuple[str, str, str] | None:
    """(executable id, why, the executable that ended it) when the chain with these results
    was stopped, else None."""
    entry = (results or {}).get(STOPPED_AT)
    if not isinstance(entry, list) or len(entry) != 3:
        return None
    return str(entry[0]), str(entry[1]), str(entry[2])


def without_marker(results: dict[str, Any] | None) -> dict[str, Any]:
    """The results, outputs only."""
    return {k: v for k, v in (results or {}).items() if k != STOPPED_AT}
