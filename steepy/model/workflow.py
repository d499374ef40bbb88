"""Workflows, variables, actions and parameters in Steep's JSON shape (API 4.x)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from steepy.errors import InputError
from steepy.model.ids import unique_id
from steepy.model.common import as_list, nested, put, read_policies, write_policies
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.wiring import (  # noqa: F401 - the variables and parameters, read from here too
    IncludeOutputParameter, InputParameter, OutputParameter, Variable, VariableResolver,
    VariableWriter, var_to_json)

API_VERSION = "4.7.0"


def _write_wiring(out: dict, action: Any, writer: VariableWriter) -> None:
    """Inputs, outputs and dependsOn of an execute or include action (empty ones left out)."""
    if action.inputs:
        out["inputs"] = [p.to_json(writer) for p in action.inputs]
    if action.outputs:
        out["outputs"] = [p.to_json(writer) for p in action.outputs]
    if action.depends_on:
        out["dependsOn"] = list(action.depends_on)


@dataclass
class ExecuteAction:
    id: str
    service: str
    inputs: list[InputParameter] = field(default_factory=list)
    outputs: list[OutputParameter] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)
    retries: RetryPolicy | None = None
    max_inactivity: TimeoutPolicy | None = None
    max_runtime: TimeoutPolicy | None = None
    deadline: TimeoutPolicy | None = None
    fallback: "Fallback | None" = None  # steepy (extensions 10)
    # steepy (extensions 15): `false' or `deep', over the service's `cache'; None: the service's
    cache: str | None = None
    type = "execute"

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple) -> "ExecuteAction":
        inputs_json = list(data.get("inputs") or [])
        # pre-5.0 workflows had `parameters`; Steep merges them into the inputs
        inputs_json += list(data.get("parameters") or [])
        return cls(
            id=data.get("id") or unique_id(),
            service=data["service"],
            inputs=[InputParameter.from_json(p, resolver, path + ("inputs", i))
                    for i, p in enumerate(inputs_json)],
            outputs=[OutputParameter.from_json(p, resolver, path + ("outputs", i))
                     for i, p in enumerate(data.get("outputs") or [])],
            depends_on=as_list(data.get("dependsOn")),
            **read_policies(data, path),
            fallback=(None if data.get("fallback") is None else
                      Fallback.from_json(data["fallback"], resolver, path + ("fallback",))),
            cache=None if data.get("cache") is None else str(data["cache"]).lower(),
        )

    def services(self) -> list[str]:
        """The services it may run: its own and its fallback's."""
        return [self.service] + ([] if self.fallback is None else [self.fallback.service])

    def to_json(self, writer: VariableWriter) -> dict:
        out: dict = {"id": self.id, "type": "execute", "service": self.service}
        _write_wiring(out, self, writer)
        write_policies(out, self)
        if self.fallback is not None:
            out["fallback"] = self.fallback.to_json(writer)
        if self.cache is not None:
            out["cache"] = False if self.cache == "false" else self.cache
        return out


@dataclass
class Fallback:
    """What runs in the same process chain when an execute action's executable has failed
    after all its attempts (extensions 10). Its outputs bind the action's own output
    variables (the validator checks that), so it writes the same files."""

    service: str
    inputs: list[InputParameter] = field(default_factory=list)
    outputs: list[OutputParameter] = field(default_factory=list)
    retries: RetryPolicy | None = None
    max_inactivity: TimeoutPolicy | None = None
    max_runtime: TimeoutPolicy | None = None
    deadline: TimeoutPolicy | None = None
    # `stop: true': once it succeeds, what needs the action's outputs is skipped (its
    # outputs need not bind the action's then)
    stop: bool = False

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple, **extra: Any) -> Any:
        return cls(
            service=data["service"],
            inputs=[InputParameter.from_json(p, resolver, path + ("inputs", i))
                    for i, p in enumerate(data.get("inputs") or [])],
            outputs=[OutputParameter.from_json(p, resolver, path + ("outputs", i))
                     for i, p in enumerate(data.get("outputs") or [])],
            **read_policies(data, path), stop=bool(data.get("stop", False)), **extra)

    def to_json(self, writer: VariableWriter) -> dict:
        out: dict = {"service": self.service}
        if self.inputs:
            out["inputs"] = [p.to_json(writer) for p in self.inputs]
        if self.outputs:
            out["outputs"] = [p.to_json(writer) for p in self.outputs]
        write_policies(out, self)
        if self.stop:
            out["stop"] = True
        return out


@dataclass
class Catch(Fallback):
    """The workflow's `catch' (extensions 10): a fallback with `stop: true' for every action
    (or those in `for_actions') that has none of its own, at most `max_recoveries' times in
    the submission. It gets STEEPY_FAILED_ACTION besides what a fallback gets."""

    stop: bool = True
    for_actions: list[str] | None = None
    max_recoveries: int | None = None

    @classmethod
    def read(cls, data: dict, resolver: VariableResolver) -> "Catch":
        return cls.from_json({**data, "stop": True}, resolver, ("catch",),
                             for_actions=None if data.get("forActions") is None else [
                                 str(a) for a in data["forActions"]],
                             max_recoveries=data.get("maxRecoveries"))

    def to_json(self, writer: VariableWriter) -> dict:
        out = super().to_json(writer)
        del out["stop"]
        if self.for_actions is not None:
            out["forActions"] = list(self.for_actions)
        put(out, "maxRecoveries", self.max_recoveries)
        return out

    def covers(self, action_id: str) -> bool:
        return self.for_actions is None or action_id in self.for_actions


@dataclass
class ForEachAction:
    id: str
    input: Variable
    enumerator: Variable
    output: Variable | None = None
    actions: list["Action"] = field(default_factory=list)
    yield_to_output: Variable | None = None
    yield_to_input: Variable | None = None
    depends_on: list[str] = field(default_factory=list)
    type = "for"

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple) -> "ForEachAction":
        def ref(key: str) -> Variable | None:
            value = data.get(key)
            return None if value is None else resolver.ref(value, path + (key,))

        return cls(
            id=data.get("id") or unique_id(),
            input=resolver.ref(data["input"], path + ("input",)),
            enumerator=resolver.ref(data["enumerator"], path + ("enumerator",)),
            output=ref("output"),
            actions=read_actions(data.get("actions") or [], resolver, path + ("actions",)),
            yield_to_output=ref("yieldToOutput"),
            yield_to_input=ref("yieldToInput"),
            depends_on=as_list(data.get("dependsOn")),
        )

    def to_json(self, writer: VariableWriter) -> dict:
        out: dict = {"id": self.id, "type": "for", "input": writer.ref(self.input),
                     "enumerator": writer.ref(self.enumerator)}
        put(out, "output", writer.ref(self.output))
        out["actions"] = [a.to_json(writer) for a in self.actions]
        put(out, "yieldToOutput", writer.ref(self.yield_to_output))
        put(out, "yieldToInput", writer.ref(self.yield_to_input))
        if self.depends_on:
            out["dependsOn"] = list(self.depends_on)
        return out


@dataclass
class IncludeAction:
    id: str
    macro: str
    inputs: list[InputParameter] = field(default_factory=list)
    outputs: list[IncludeOutputParameter] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)
    type = "include"

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple) -> "IncludeAction":
        return cls(
            id=data.get("id") or unique_id(),
            macro=data["macro"],
            inputs=[InputParameter.from_json(p, resolver, path + ("inputs", i))
                    for i, p in enumerate(data.get("inputs") or [])],
            outputs=[IncludeOutputParameter.from_json(p, resolver, path + ("outputs", i))
                     for i, p in enumerate(data.get("outputs") or [])],
            depends_on=as_list(data.get("dependsOn")),
        )

    def to_json(self, writer: VariableWriter) -> dict:
        out: dict = {"id": self.id, "type": "include", "macro": self.macro}
        _write_wiring(out, self, writer)
        return out


Action = Union[ExecuteAction, ForEachAction, IncludeAction]
ACTION_TYPES = {"execute": ExecuteAction, "for": ForEachAction, "include": IncludeAction}


def read_actions(items: list, resolver: VariableResolver, path: tuple) -> list[Action]:
    """The actions; the problems of every action that cannot be read, in one InputError (a
    caller that takes bad parts out and tries again needs one more round, not one per bad
    action: 200 bad durations in 2,000 actions took 1m48s that way)."""
    actions: list[Action] = []
    problems = []
    for i, data in enumerate(items):
        try:
            actions.append(ACTION_TYPES[data["type"]].from_json(data, resolver, path + (i,)))
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    return actions


def walk_actions(actions: list[Action]):
    """Every action, depth first, including those inside for-each bodies."""
    for action in actions:
        yield action
        if isinstance(action, ForEachAction):
            yield from walk_actions(action.actions)


@dataclass
class Workflow:
    api: str = API_VERSION
    name: str | None = None
    priority: int = 0
    retries: RetryPolicy | None = None  # retries.processChains
    vars: list[Variable] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    has_retries: bool = False  # `retries: {}` without processChains is kept for round trips
    executable_retries: RetryPolicy | None = None  # retries.executables (model.inheritance)
    catch: Catch | None = None  # steepy (extensions 10)

    @classmethod
    def from_json(cls, data: dict) -> "Workflow":
        resolver = VariableResolver()
        variables = [resolver.declare(v, ("vars", i)) for i, v in enumerate(data.get("vars") or [])]
        actions = read_actions(data.get("actions") or [], resolver, ("actions",))
        catch = None if data.get("catch") is None else Catch.read(data["catch"], resolver)
        retries_json = data.get("retries")
        retries, executables = (_default_policy(retries_json, key)
                                for key in ("processChains", "executables"))
        return cls(api=data.get("api") or API_VERSION, name=data.get("name"),
                   priority=int(data.get("priority") or 0), retries=retries,
                   vars=variables, actions=actions, has_retries=retries_json is not None,
                   executable_retries=executables, catch=catch)

    def to_json(self) -> dict:
        writer = VariableWriter(self.vars)
        out: dict = {"api": self.api}
        put(out, "name", self.name)
        if self.priority:
            out["priority"] = self.priority
        defaults = {key: policy.to_json() for key, policy in (
            ("processChains", self.retries), ("executables", self.executable_retries))
            if policy is not None}
        if defaults or self.has_retries:
            out["retries"] = defaults
        out["vars"] = [var_to_json(v) for v in self.vars]
        out["actions"] = [a.to_json(writer) for a in self.actions]
        if self.catch is not None:
            out["catch"] = self.catch.to_json(writer)
        return out

    def all_actions(self):
        return walk_actions(self.actions)


def _default_policy(retries: Any, key: str) -> RetryPolicy | None:
    """`retries.processChains' or `retries.executables' of a workflow, if given."""
    if not isinstance(retries, dict) or retries.get(key) is None:
        return None
    return nested(RetryPolicy.from_json, retries[key], ("retries", key))
