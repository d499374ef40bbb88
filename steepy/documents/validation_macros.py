"""What validation needs to know about macros as a whole: which macros (and services) a list
of actions reaches through its includes, and include cycles.

An include cycle is a problem of the macro files, not of a workflow: it is reported at the
include actions inside the macros (file:line:column when the macros were read from files), and
a workflow only hears of it when it includes one of the macros that lead into the cycle. (A
macro being validated hears of every cycle among the macros, as in Steep.)
"""

from __future__ import annotations

from typing import Callable, Iterator

from steepy.documents.cycles import find_cycles
from steepy.errors import Problem
from steepy.model.macro import MACRO_INPUT, MACRO_OUTPUT, Macro
from steepy.model.workflow import Action, ExecuteAction, ForEachAction, IncludeAction

# (macro id, JSON path inside that macro's definition, problem) -> the problem, placed
Place = Callable[[str, tuple, Problem], Problem]


def include_sites(actions: list[Action], path: tuple = ()) -> Iterator[tuple[IncludeAction, tuple]]:
    """Every include action, for-each bodies included, with its JSON path."""
    for i, action in enumerate(actions):
        here = path + ("actions", i)
        if isinstance(action, IncludeAction):
            yield action, here
        elif isinstance(action, ForEachAction):
            yield from include_sites(action.actions, here)


def reachable_macros(actions: list[Action], macros: dict[str, Macro] | None) -> list[str]:
    """Ids of the macros `actions` include, directly or through other macros, first seen
    first. Unknown macros are left out (they are reported elsewhere)."""
    macros = macros or {}
    found: dict[str, None] = {}
    todo = [a.macro for a, _ in include_sites(actions)]
    while todo:
        name = todo.pop(0)
        if name in found or name not in macros:
            continue
        found[name] = None
        todo += [a.macro for a, _ in include_sites(macros[name].actions)]
    return list(found)


def services_reached(actions: list[Action], macros: dict[str, Macro] | None) -> list[str]:
    """Ids of the services executed by `actions` or by the macros they include, sorted."""
    lists = [actions] + [macros[m].actions for m in reachable_macros(actions, macros)]
    return sorted({name for group in lists for a in _all(group) if isinstance(a, ExecuteAction)
                   for name in a.services()})


def _all(actions: list[Action]) -> Iterator[Action]:
    for a in actions:
        yield a
        if isinstance(a, ForEachAction):
            yield from _all(a.actions)


def include_cycle_problems(macros: dict[str, Macro] | None, place: Place,
                           reached_from: list[Action] | None = None) -> list[Problem]:
    """One problem per include cycle among `macros`, placed at the first include of the
    cycle. With `reached_from`, only cycles those actions lead into."""
    if not macros:
        return []
    edges: dict[str, list[tuple[IncludeAction, tuple]]] = {
        m.id: list(include_sites(m.actions)) for m in macros.values()}
    cycles = find_cycles(list(macros), {m: [a.macro for a, _ in sites] for m, sites in edges.items()})
    if reached_from is not None:
        reached = set(reachable_macros(reached_from, macros))
        cycles = [c for c in cycles if reached & set(c)]
    problems = []
    for cycle in cycles:
        members = set(cycle)
        steps = [(source, action, path) for source in cycle
                 for action, path in edges[source] if action.macro in members]
        names = ", ".join(f"`{n}'" for n in cycle)
        where = []
        for source, action, path in steps:
            probe = place(source, path + ("macro",), Problem(""))
            at = probe.location() if probe.line is not None else f"action `{action.id}'"
            where.append(f"`{source}' includes `{action.macro}' ({at})")
        message = (f"Detected include cycle between macros {names}. Includes that form it: "
                   + "; ".join(where) + ".")
        source, _, path = steps[0]
        problems.append(place(source, path + ("macro",), Problem(message)))
    return problems


def include_parameter_problems(a: IncludeAction,
                               macro: Macro) -> Iterator[tuple[str, tuple | None]]:
    """(message, path below the include action or None for the action) of each way the
    include's inputs and outputs do not fit the macro's parameters (Steep's words)."""
    kinds = {p.id: p for p in macro.parameters}
    seen: set[str] = set()
    for p in list(a.inputs) + list(a.outputs):
        if p.id in seen:
            yield f"Macro parameter `{p.id}' specified more than once.", None
        seen.add(p.id)
    for role, kind, given in (("input", MACRO_INPUT, a.inputs),
                              ("output", MACRO_OUTPUT, a.outputs)):
        for i, p in enumerate(given):
            if p.id not in kinds or kinds[p.id].type != kind:
                yield (f"Unknown {role} parameter `{p.id}'. Macro `{macro.id}' has the {role} "
                       f"parameters: {_ids(macro, kind)}.", (role + "s", i))
    given_in, given_out = {p.id for p in a.inputs}, {p.id for p in a.outputs}
    for p in macro.parameters:
        if p.type == MACRO_INPUT and p.default is None and p.id not in given_in:
            yield f"Missing input parameter `{p.id}'. Macro `{macro.id}' needs it.", None
    for p in macro.parameters:
        if p.type == MACRO_OUTPUT and p.id not in given_out:
            yield f"Missing output parameter `{p.id}'. Macro `{macro.id}' needs it.", None


def _ids(macro: Macro, kind: str) -> str:
    return ", ".join(p.id for p in macro.parameters if p.type == kind) or "none"
