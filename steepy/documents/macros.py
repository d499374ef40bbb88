"""Macro expansion: replace every include action by the actions of its macro (reference 1.5).

An include `inc1` of macro `my_macro` becomes the macro's actions. Inside the macro, action
ids and private variables are renamed to `$inc1$my_macro$<id>`; an include nested in a macro
extends that prefix (`$inc1$my_macro$inner$other_macro$<id>`). Macro parameters are bound
to the variables the include passes in and out; a missing input falls back to the parameter's
default (variable `<prefix><param>$default`).

Dependencies: a `dependsOn` naming an include means "all actions it expanded to" (for-each
bodies included, depth first), and the include's own `dependsOn` is appended to each action
it expanded to at the top level of the macro.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from steepy.errors import SteepyError
from steepy.model.macro import MACRO_INPUT, MACRO_OUTPUT, Macro
from steepy.model.workflow import (Action, ExecuteAction, Fallback, ForEachAction, IncludeAction,
                                   InputParameter, OutputParameter, Variable, Workflow)

__all__ = ["MacroError", "expand_includes", "has_includes"]


class MacroError(SteepyError):
    """An include action cannot be expanded (unknown macro, missing parameter, cycle)."""


def has_includes(actions: list[Action]) -> bool:
    for action in actions:
        if isinstance(action, IncludeAction):
            return True
        if isinstance(action, ForEachAction) and has_includes(action.actions):
            return True
    return False


def expand_includes(workflow: Workflow, macros: dict[str, Macro] | None) -> Workflow:
    """A copy of `workflow` without include actions; `workflow` itself is left untouched."""
    expander = _Expander(macros or {})
    for var in workflow.vars:
        expander.declare(Variable(var.id, var.value))
    top = _Scope(prefix="", params={}, macro_path=())
    actions = expander.expand(workflow.actions, top)
    # every other part (name, priority, default policies, ...) as it was
    return replace(workflow, vars=list(expander.declared.values()), actions=actions)


@dataclass
class _Scope:
    """Where actions are being copied to: the workflow itself or the inside of an include."""

    prefix: str  # "" for the workflow, "$inc1$my_macro$" inside include inc1
    params: dict[str, Variable]  # macro parameter id -> the variable the include bound to it
    macro_path: tuple[str, ...]  # macros being expanded, outermost first (cycle detection)
    anonymous: set[str] = field(default_factory=set)  # ids of value-only (anonymous) variables


@dataclass
class _Copied:
    """An action copied into a scope, plus dependencies still written in that scope's terms."""

    action: Action
    raw_depends_on: list[str]
    body: list["_Copied"] = field(default_factory=list)  # copied for-each body


class _Expander:
    def __init__(self, macros: dict[str, Macro]):
        self.macros = macros
        self.variables: dict[str, Variable] = {}  # one object per id in the new workflow
        self.declared: dict[str, Variable] = {}  # the new workflow's `vars`, in order

    def declare(self, var: Variable) -> None:
        self.variables[var.id] = var
        self.declared.setdefault(var.id, var)

    # -- variables ---------------------------------------------------------------------------

    def var(self, scope: _Scope, var: Variable | None) -> Variable | None:
        if var is None:
            return None
        bound = scope.params.get(var.id)
        if bound is not None:
            return bound
        return self._named(scope.prefix + var.id, var.value)

    def _named(self, var_id: str, value) -> Variable:
        existing = self.variables.get(var_id)
        if existing is None:
            existing = self.variables[var_id] = Variable(var_id, value)
        elif existing.value is None and value is not None:
            existing.value = value
        return existing

    def input(self, scope: _Scope, param: InputParameter) -> InputParameter:
        if param.anonymous:
            return InputParameter(param.id, Variable(scope.prefix + param.var.id, param.var.value),
                                  anonymous=True)
        var = self.var(scope, param.var)
        return InputParameter(param.id, var, anonymous=var.id in scope.anonymous)

    # -- actions -----------------------------------------------------------------------------

    def expand(self, actions: list[Action], scope: _Scope) -> list[Action]:
        """Copy `actions` into `scope`, expanding includes, with final `dependsOn` lists."""
        expansions: dict[str, list[str]] = {}  # id in scope terms -> final ids
        copied = self._copy_list(actions, scope, expansions)
        for item in _walk(copied):
            for dep in item.raw_depends_on:
                item.action.depends_on.extend(expansions.get(dep, [dep]))
        return [item.action for item in copied]

    def _copy_list(self, actions: list[Action], scope: _Scope,
                   expansions: dict[str, list[str]]) -> list[_Copied]:
        out: list[_Copied] = []
        for action in actions:
            if isinstance(action, IncludeAction):
                inner = self._include(action, scope)
                expansions[action.id] = [a.id for a in _walk_actions(inner)]
                out.extend(_Copied(a, list(action.depends_on)) for a in inner)
            else:
                item = self._copy(action, scope, expansions)
                expansions[action.id] = [item.action.id]
                out.append(item)
        return out

    def _copy(self, action: Action, scope: _Scope, expansions: dict[str, list[str]]) -> _Copied:
        new_id = scope.prefix + action.id
        if isinstance(action, ExecuteAction):
            copy = ExecuteAction(
                id=new_id, service=action.service,
                inputs=[self.input(scope, p) for p in action.inputs],
                outputs=[OutputParameter(p.id, self.var(scope, p.var), p.prefix, p.store)
                         for p in action.outputs],
                retries=action.retries, max_inactivity=action.max_inactivity,
                max_runtime=action.max_runtime, deadline=action.deadline,
                fallback=None if action.fallback is None else self._fallback(scope, action.fallback))
            return _Copied(copy, list(action.depends_on))
        body = self._copy_list(action.actions, scope, expansions)
        copy = ForEachAction(
            id=new_id, input=self.var(scope, action.input),
            # an enumerator is always private, even if a macro parameter has its name
            enumerator=self._named(scope.prefix + action.enumerator.id, action.enumerator.value),
            output=self.var(scope, action.output),
            actions=[item.action for item in body],
            yield_to_output=self.var(scope, action.yield_to_output),
            yield_to_input=self.var(scope, action.yield_to_input))
        return _Copied(copy, list(action.depends_on), body)

    def _fallback(self, scope: _Scope, fallback: Fallback) -> Fallback:
        return replace(
            fallback, inputs=[self.input(scope, p) for p in fallback.inputs],
            outputs=[OutputParameter(p.id, self.var(scope, p.var), p.prefix, p.store)
                     for p in fallback.outputs])

    def _include(self, include: IncludeAction, outer: _Scope) -> list[Action]:
        macro = self.macros.get(include.macro)
        if macro is None:
            known = ", ".join(sorted(self.macros)) or "none"
            raise MacroError(f"Unable to find macro `{include.macro}' (include action "
                             f"`{include.id}'); known macros: {known}")
        if macro.id in outer.macro_path:
            chain = " -> ".join(outer.macro_path + (macro.id,))
            raise MacroError(f"Detected include cycle: {chain} (include action `{include.id}')")
        prefix = (outer.prefix or "$") + f"{include.id}${macro.id}$"
        scope = _Scope(prefix, {}, outer.macro_path + (macro.id,))
        self._bind_parameters(include, macro, outer, scope)
        for var in macro.vars:
            self.declare(self._named(prefix + var.id, var.value))
        return self.expand(macro.actions, scope)

    def _bind_parameters(self, include: IncludeAction, macro: Macro, outer: _Scope,
                         scope: _Scope) -> None:
        for param in macro.parameters:
            if param.type == MACRO_INPUT:
                given = next((p for p in include.inputs if p.id == param.id), None)
                if given is not None:
                    bound = self.input(outer, given)
                    if bound.anonymous:
                        scope.anonymous.add(bound.var.id)
                    scope.params[param.id] = bound.var
                elif param.default is not None:
                    scope.params[param.id] = self._named(f"{scope.prefix}{param.id}$default",
                                                         param.default)
                else:
                    raise MacroError(f"Missing macro input parameter `{param.id}' in include "
                                     f"action `{include.id}' (macro `{macro.id}')")
            elif param.type == MACRO_OUTPUT:
                given_out = next((p for p in include.outputs if p.id == param.id), None)
                if given_out is None:
                    raise MacroError(f"Missing macro output parameter `{param.id}' in include "
                                     f"action `{include.id}' (macro `{macro.id}')")
                scope.params[param.id] = self.var(outer, given_out.var)


def _walk(items: list[_Copied]):
    """Every item copied into one scope, depth first (for-each bodies belong to the scope)."""
    for item in items:
        yield item
        yield from _walk(item.body)


def _walk_actions(actions: list[Action]):
    for action in actions:
        yield action
        if isinstance(action, ForEachAction):
            yield from _walk_actions(action.actions)
