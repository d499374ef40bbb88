"""Semantic checks of workflows and macros (Steep's WorkflowValidator rules, plus steepy's own).

Each check is a pass over the actions in document order; passes run in a fixed order so
errors come out in the order Steep reports them. A problem carries the JSON path
(`actions[3].actions[0]`) and Steep's location list (`workflow`, `actions[3](for-each)`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from steepy.documents.cycles import find_cycles
from steepy.documents.policy_checks import chain_policy_problems
from steepy.errors import Problem, json_path
from steepy.model.macro import MACRO_INPUT, MACRO_OUTPUT, Macro
from steepy.model.service import Service
from steepy.model.workflow import (Action, ExecuteAction, ForEachAction, IncludeAction, Variable,
                                   Workflow)
from steepy.model.suggestions import suggest
from steepy.documents.validation_catch import catch_problems
from steepy.documents.validation_api import MAX_API, MIN_API, api_problem  # noqa: F401 (re-exported)
from steepy.documents.validation_macros import (include_cycle_problems,
                                                include_parameter_problems, services_reached)
from steepy.documents.validation_services import Runtimes, check_services, known
from steepy.documents.validation_yields import unfed_inputs, unproduced_yields


@dataclass
class Site:
    """An action and where it stands."""

    action: Action
    path: tuple  # JSON path, e.g. ("actions", 3, "actions", 0)
    steep: list[str]  # Steep's location list
    scopes: tuple[int, ...]  # identities of the enclosing for-each actions, outermost first


@dataclass
class Ref:
    """One mention of a variable: as input, output or enumerator, at a site."""

    var: Variable
    role: str  # "input" | "output" | "enumerator"
    site: Site
    path: tuple
    scopes: tuple[int, ...]  # the scopes from which the variable is looked at or produced into


def _label(action: Action) -> str:
    if isinstance(action, ExecuteAction):
        return f"execute {action.service}"
    if isinstance(action, IncludeAction):
        return f"include {action.macro}"
    return "for-each"


def _sites(actions: list[Action], path: tuple, steep: list[str], scopes: tuple) -> Iterator[Site]:
    for i, action in enumerate(actions):
        site = Site(action, path + ("actions", i), steep + [f"actions[{i}]({_label(action)})"], scopes)
        yield site
        if isinstance(action, ForEachAction):
            yield from _sites(action.actions, site.path, site.steep, scopes + (id(action),))


def _refs(sites: list[Site]) -> list[Ref]:
    refs: list[Ref] = []
    for site in sites:
        a, inner = site.action, site.scopes
        if isinstance(a, (ExecuteAction, IncludeAction)):
            refs += [Ref(p.var, "input", site, site.path + ("inputs", i, "var"), inner)
                     for i, p in enumerate(a.inputs) if not p.anonymous]
            refs += [Ref(p.var, "output", site, site.path + ("outputs", i, "var"), inner)
                     for i, p in enumerate(a.outputs)]
            fallback = getattr(a, "fallback", None)
            if fallback is not None:  # its outputs are the action's: only its inputs count
                refs += [Ref(p.var, "input", site, site.path + ("fallback", "inputs", i, "var"),
                             inner) for i, p in enumerate(fallback.inputs) if not p.anonymous]
        else:
            body = inner + (id(a),)
            refs.append(Ref(a.input, "input", site, site.path + ("input",), inner))
            refs.append(Ref(a.enumerator, "enumerator", site, site.path + ("enumerator",), body))
            if a.output is not None:
                refs.append(Ref(a.output, "output", site, site.path + ("output",), inner))
    return refs


class _Checker:
    def __init__(self, root: str, actions: list[Action], declared: list[Variable],
                 macros: dict[str, Macro] | None, services: dict[str, Service] | None,
                 macro_id: str | None = None, runtimes: Runtimes | None = None,
                 opaque: Iterable[str] = ()):
        self.root = root
        self.actions = actions
        self.macro_id = macro_id  # the macro being validated; None for a workflow
        self.macros = macros
        self.services = services
        self.runtimes = runtimes  # None: the services' runtimes are not checked
        self.sites = list(_sites(actions, (), [root], ()))
        self.refs = _refs(self.sites)
        self.declared = declared
        self.problems: list[Problem] = []
        self.given_inputs: set[str] = set()  # macro input parameters: they come with values
        # ids of actions and variables in parts of the document already rejected (by the schema
        # or the model): what only their absence causes is not reported
        self.opaque = set(opaque)
        # variables that a for-each enumerates over themselves (one problem says so)
        self.looped = {a.input.id for a in (s.action for s in self.sites)
                       if isinstance(a, ForEachAction) and a.input.id == a.enumerator.id}

    def add(self, message: str, site: Site | None = None, path: tuple | None = None) -> None:
        where = path if path is not None else (site.path if site else ())
        self.problems.append(Problem(message, path=json_path(where),
                                     steep_path=site.steep if site else [self.root]))

    # -- Steep's checks -------------------------------------------------------------

    def reserved_ids(self) -> None:
        seen: set[str] = set()
        mentions = [(v, None, ("vars", i)) for i, v in enumerate(self.declared)]
        mentions += [(r.var, r.site, r.path) for r in self.refs]
        for var, site, path in mentions:
            if var.id not in seen:
                seen.add(var.id)
                if var.id.startswith("$"):
                    self.add(f"Illegal variable ID `{var.id}'. Variable IDs must not start "
                             "with `$' (reserved for generated IDs).", site, path)

    def duplicate_ids(self, extra: list[str] = ()) -> None:
        seen = {v.id for v in self.declared} | {r.var.id for r in self.refs} | set(extra)
        for site in self.sites:
            if site.action.id in seen:
                self.add(f"Duplicate identifier `{site.action.id}'. Every action and variable "
                         "needs its own ID.", site, site.path + ("id",))
            seen.add(site.action.id)

    def outputs(self) -> None:
        for r in self.refs:
            if r.role == "output" and r.var.value is not None:
                self.add(f"Output variable `{r.var.id}' has a value. Outputs get their values "
                         "when the action runs; remove the value or use another variable.",
                         r.site, r.path)
        used: set[str] = set()
        for r in self.refs:
            if r.role == "output":
                if r.var.id in used:
                    self.add(f"Output variable `{r.var.id}' is used more than once. Each output "
                             "needs its own variable.", r.site, r.path)
                used.add(r.var.id)

    def fallbacks(self) -> None:
        """A fallback writes what its action would have (extensions 10): its outputs bind
        exactly the action's output variables (one with `stop: true' need not bind them)."""
        for site in self.sites:
            a = site.action
            if not isinstance(a, ExecuteAction) or a.fallback is None:
                continue
            own = [p.var.id for p in a.outputs]
            given = [p.var.id for p in a.fallback.outputs]
            where = site.path + ("fallback", "outputs")
            for var in dict.fromkeys(v for v in own if v not in given and not a.fallback.stop):
                self.add(f"The fallback does not bind output variable `{var}' of its action. A "
                         "fallback's outputs must bind exactly the action's output variables, so "
                         "that it writes what the action would have.", site, where)
            for i, var in enumerate(given):
                if var not in own:
                    self.add(f"Output variable `{var}' of the fallback is not an output of its "
                             f"action (its outputs: {', '.join(own) or 'none'}). A fallback's "
                             "outputs must bind exactly the action's output variables.", site,
                             where + (i, "var"))
                elif given.index(var) != i:
                    self.add(f"The fallback binds output variable `{var}' more than once.", site,
                             where + (i, "var"))

    def enumerators(self) -> None:
        seen: set[str] = set()
        outputs = {r.var.id for r in self.refs if r.role == "output"}
        for r in self.refs:
            if r.role != "enumerator":
                continue
            if r.var.id in seen:
                self.add(f"Enumerator `{r.var.id}' is used more than once. Every for-each action "
                         "needs its own enumerator variable.", r.site, r.path)
            seen.add(r.var.id)
            if r.var.id in outputs:
                self.add(f"Enumerator `{r.var.id}' is used as an output. An enumerator gets its "
                         "values from the for-each action only.", r.site, r.path)

    def own_enumerators(self) -> None:
        for site in self.sites:
            a = site.action
            if isinstance(a, ForEachAction) and a.input.id == a.enumerator.id:
                self.add(f"For-each action `{a.id}' uses variable `{a.input.id}' as both its "
                         "input and its enumerator. The enumerator holds one item of the input "
                         "at a time, so it needs a variable of its own (e.g. `enumerator: "
                         f"{a.input.id}_item', used inside the loop).", site,
                         site.path + ("enumerator",))

    def input_values(self) -> None:
        produced = {r.var.id for r in self.refs if r.role in ("output", "enumerator")}

        def usable() -> set[str]:  # (for the message only)
            valued = [*self.declared, *(r.var for r in self.refs)]
            return produced | self.given_inputs | {v.id for v in valued if v.value is not None}

        for r in self.refs:
            if (r.role == "input" and r.var.value is None and r.var.id not in produced
                    and r.var.id not in self.given_inputs and r.var.id not in self.opaque):
                self.add(f"Input variable `{r.var.id}' has no value. Give it a value in `vars' "
                         "or make it the output of an action." + suggest(r.var.id, usable()),
                         r.site, r.path)

    def yields(self) -> None:
        valued = {v.id for v in [*self.declared, *(r.var for r in self.refs)]
                  if v.value is not None}
        for site, message in unproduced_yields(self.sites, self.refs,
                                               valued | self.given_inputs | self.opaque):
            self.add(message, site, site.path + ("yieldToOutput",))
        for site, message in unfed_inputs(self.sites, self.refs):
            self.add(message, site, site.path + ("yieldToInput",))

    def scoping(self) -> None:
        # where a variable is produced: inside the innermost for-each around the producer
        home: dict[str, tuple] = {}
        for r in self.refs:
            if r.role in ("output", "enumerator"):
                home.setdefault(r.var.id, r.scopes)
        for r in self.refs:
            if r.role != "input" or r.var.id not in home or r.var.id in self.opaque | self.looped:
                continue
            scope = home[r.var.id]
            if r.scopes[:len(scope)] != scope:
                self.add(f"Variable `{r.var.id}' is not visible here: it is produced inside a "
                         "for-each action and can only be used there (collect it with `output' "
                         "and `yieldToOutput' to use it outside).", r.site, r.path)

    def dependencies(self) -> None:
        ids = {s.action.id for s in self.sites}
        for site in self.sites:
            for i, target in enumerate(site.action.depends_on):
                if target not in ids and target not in self.opaque:
                    self.add(f"Unable to resolve action dependency `{site.action.id}' -> "
                             f"`{target}'. There is no action with the ID `{target}'.",
                             site, site.path + ("dependsOn", i))

    def dependency_cycles(self) -> None:
        # nodes are sites (ids may repeat in a broken workflow); X -> Y means X waits for Y
        by_id: dict[str, list[str]] = {}
        for n, site in enumerate(self.sites):
            by_id.setdefault(site.action.id, []).append(str(n))
        node_of = {id(s.action): str(n) for n, s in enumerate(self.sites)}
        edges: dict[str, list[str]] = {}
        inherited: dict[int, list[str]] = {}  # for-each -> dependsOn of it and its parents
        for n, site in enumerate(self.sites):
            a = site.action
            targets = list(a.depends_on) + [x for s in site.scopes for x in inherited.get(s, [])]
            edges[str(n)] = [m for t in targets for m in by_id.get(t, [])]
            if isinstance(a, ForEachAction):
                inherited[id(a)] = targets
                edges[str(n)] += [node_of[id(child)] for child in a.actions]  # done with its body
        for cycle in find_cycles(list(edges), edges):
            names = ", ".join(f"`{self.sites[int(n)].action.id}'" for n in cycle)
            self.add(f"Detected circular dependency between actions {names}.",
                     self.sites[int(cycle[0])])

    def _resolved(self, kind: type, key: str, registry: dict, missing: str) -> Iterator[tuple]:
        """(site, action, entry) for actions of `kind` whose `key` names an entry of
        `registry`; a name that is not there is a problem."""
        for site in self.sites:
            a = site.action
            if not isinstance(a, kind):
                continue
            name = getattr(a, key)
            entry = registry.get(name)
            if entry is None:
                self.add(missing.format(name) + known(registry, key + "s", name), site,
                         site.path + (key,))
                continue
            yield site, a, entry

    def includes(self) -> None:
        if self.macros is None:
            return
        for site, a, macro in self._resolved(IncludeAction, "macro", self.macros,
                                             "Macro `{}' not found."):
            for message, where in include_parameter_problems(a, macro):
                self.add(message, site, None if where is None else site.path + where)

    def include_cycles(self) -> None:
        # a macro hears of every cycle among the macros (as in Steep); a workflow only of the
        # cycles its includes lead into. Either way the cycle is placed in the macro files.
        reached = None if self.macro_id is not None else self.actions
        self.problems += include_cycle_problems(self.macros, self._in_macro, reached)

    def _in_macro(self, macro_id: str, parts: tuple, problem: Problem) -> Problem:
        """`problem` placed at `parts` inside macro `macro_id`: its file:line:column when
        the macros were read from files, else its JSON path if it is the macro validated."""
        locate = getattr(self.macros, "locate", None)
        located = locate(macro_id, problem, parts) if locate else None
        if located is not None:
            return located
        problem.steep_path = [self.root]
        if macro_id == self.macro_id:
            problem.path = json_path(parts)
        return problem

    # -- steepy's own checks ------------------------------------------------------

    def services_used(self) -> None:
        check_services(self, services_reached(self.actions, self.macros))


def _run(checker: _Checker) -> list[Problem]:
    checker.reserved_ids()
    checker.duplicate_ids(list(checker.given_inputs))
    checker.outputs()
    checker.fallbacks()
    checker.enumerators()
    checker.own_enumerators()
    checker.input_values()
    checker.yields()
    checker.scoping()
    checker.dependencies()
    checker.dependency_cycles()
    checker.include_cycles()
    checker.includes()
    checker.services_used()
    return checker.problems


def validate_workflow(workflow: Workflow, macros: dict[str, Macro] | None = None,
                      services: dict[str, Service] | None = None,
                      runtimes: Runtimes | Iterable[str] | None = None,
                      opaque: Iterable[str] = ()) -> list[Problem]:
    """All problems of a workflow; an empty list means it is valid. A pure function of its
    arguments: nothing else (no configuration, no plugin loaded elsewhere) counts.

    Macros and services are checked only when given (Steep itself checks neither), the
    services' runtimes only when `runtimes' (those steepy can run) are given too. `opaque`:
    ids of actions and variables in parts of its document already rejected
    (`steepy.documents.layers`), whose absence is not reported again.
    """
    checker = _Checker("workflow", workflow.actions, workflow.vars, macros, services,
                       runtimes=Runtimes.of(runtimes), opaque=opaque)
    api = api_problem(workflow.api)
    return ([api] if api else []) + _run(checker) + catch_problems(workflow, services, opaque) + chain_policy_problems(workflow)


def validate_macro(macro: Macro, macros: dict[str, Macro] | None = None,
                   services: dict[str, Service] | None = None,
                   runtimes: Runtimes | Iterable[str] | None = None,
                   opaque: Iterable[str] = ()) -> list[Problem]:
    """All problems of a macro (Steep's macro rules first, then the workflow rules)."""
    checker = _Checker("macro", macro.actions, macro.vars, macros, services, macro.id,
                       Runtimes.of(runtimes), opaque)
    inputs = {p.id for p in macro.parameters if p.type == MACRO_INPUT}
    outputs = {p.id for p in macro.parameters if p.type == MACRO_OUTPUT}
    seen: set[str] = set()
    for i, p in enumerate(macro.parameters):
        if p.id in seen:
            checker.add(f"Duplicate parameter identifier `{p.id}'.", path=("parameters", i, "id"))
        seen.add(p.id)
    for i, p in enumerate(macro.parameters):
        if p.type == MACRO_OUTPUT and p.default is not None:
            checker.add(f"Output parameter `{p.id}' has a default value. Only input parameters "
                        "may have one.", path=("parameters", i, "default"))
    for i, v in enumerate(macro.vars):
        if v.id in seen:
            checker.add(f"Variable `{v.id}' already declared as macro parameter.", path=("vars", i))
    for pid in [p.id for p in macro.parameters if p.type == MACRO_INPUT]:
        var = next((r.var for r in checker.refs if r.var.id == pid), None)
        if var is not None and var.value is not None:
            checker.add(f"Variable `{pid}' has a value. It is a macro input parameter and "
                        "gets its value from the include action.")
    for r in checker.refs:
        if r.role == "output" and r.var.id in inputs:
            checker.add(f"Input parameter `{r.var.id}' used as an output.", r.site, r.path)
    for r in checker.refs:
        if r.role == "input" and r.var.id in outputs:
            checker.add(f"Output parameter `{r.var.id}' used as an input.", r.site, r.path)
    for r in checker.refs:
        if r.role == "enumerator" and r.var.id in inputs | outputs:
            checker.add(f"Macro parameter `{r.var.id}' used as an enumerator.", r.site, r.path)
    checker.given_inputs = inputs
    return _run(checker)
