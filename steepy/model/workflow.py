"""Workflows, variables, actions and parameters in Steep's JSON shape (API 4.x)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from steepy.errors import InputError
from steepy.model.ids import unique_id
from steepy.model.common import as_list, nested, problem, put, read_policies, write_policies
from steepy.model.policies import RetryPolicy, TimeoutPolicy

API_VERSION = "4.7.0"


@dataclass(eq=False)
class Variable:
    """A named value. Undefined (value None) means an output whose value steepy generates.

    All references to one id share one Variable object, as in Steep.
    """

    id: str
    value: Any = None

    def __repr__(self) -> str:
        return f"Variable({self.id!r}, {self.value!r})"

    def same(self, other: "Variable") -> bool:
        return other is not None and self.id == other.id and self.value == other.value


class VariableResolver:
    """Hands out one Variable per id while a workflow or macro is read.

    A variable given as an object twice is the one rule of reading a workflow that the model
    cannot leave to validation: one Variable per id cannot hold two definitions.
    """

    def __init__(self) -> None:
        self.by_id: dict[str, Variable] = {}
        self._defined: set[str] = set()  # ids already given as an object (declared or inline)

    def declare(self, data: dict, path: tuple) -> Variable:
        """An entry of `vars`: an object {id, value}."""
        var_id = data["id"]
        if var_id in self._defined:
            raise problem(path + ("id",), f"Variable `{var_id}' is declared more than once "
                          f"(key={var_id}); declare it once and refer to it by its id")
        return self._define(var_id, data.get("value"))

    def ref(self, data: Any, path: tuple) -> Variable:
        """A reference: a bare id string, or an inline definition {id, value}."""
        if isinstance(data, str):
            if data not in self.by_id:
                self.by_id[data] = Variable(data)
            return self.by_id[data]
        var_id = data["id"]
        if var_id in self._defined:
            raise problem(path, f"Variable `{var_id}' is defined more than once (key={var_id}); "
                          "define it once and refer to it elsewhere by its id only")
        return self._define(var_id, data.get("value"))

    def _define(self, var_id: str, value: Any) -> Variable:
        self._defined.add(var_id)
        var = self.by_id.get(var_id)
        if var is None:
            var = self.by_id[var_id] = Variable(var_id, value)
        else:
            var.value = value
        return var


class VariableWriter:
    """Writes variable references as Steep does: an id string, or the object on first sight
    of an undeclared variable that has a value (so reading it back restores the value)."""

    def __init__(self, declared: list[Variable]):
        self._written = {v.id for v in declared}

    def ref(self, var: Variable | None) -> Any:
        if var is None:
            return None
        if var.id in self._written or var.value is None:
            self._written.add(var.id)
            return var.id
        self._written.add(var.id)
        return {"id": var.id, "value": var.value}


def var_to_json(var: Variable) -> dict:
    out: dict = {"id": var.id}
    put(out, "value", var.value)
    return out


@dataclass
class InputParameter:
    """`{id, var}`, or `{id, value}` (anonymous: a private variable holds the value)."""

    id: str
    var: Variable
    anonymous: bool = False

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple) -> "InputParameter":
        param_id = data["id"]
        if "var" in data:
            return cls(param_id, resolver.ref(data["var"], path + ("var",)))
        return cls(param_id, Variable(f"{param_id}_{unique_id()}", data["value"]), anonymous=True)

    def to_json(self, writer: VariableWriter) -> dict:
        if self.anonymous:
            return {"id": self.id, "value": self.var.value}
        return {"id": self.id, "var": writer.ref(self.var)}


@dataclass
class OutputParameter:
    id: str
    var: Variable
    prefix: str | None = None
    store: bool = False

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple) -> "OutputParameter":
        var = resolver.ref(data["var"], path + ("var",))
        return cls(data["id"], var, data.get("prefix"), bool(data.get("store", False)))

    def to_json(self, writer: VariableWriter) -> dict:
        out: dict = {"id": self.id, "var": writer.ref(self.var)}
        put(out, "prefix", self.prefix)
        if self.store:
            out["store"] = True
        return out


@dataclass
class IncludeOutputParameter:
    """Binds a macro output parameter to a workflow variable."""

    id: str
    var: Variable

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple) -> "IncludeOutputParameter":
        return cls(data["id"], resolver.ref(data["var"], path + ("var",)))

    def to_json(self, writer: VariableWriter) -> dict:
        return {"id": self.id, "var": writer.ref(self.var)}


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

    @classmethod
    def from_json(cls, data: dict, resolver: VariableResolver, path: tuple) -> "Fallback":
        return cls(
            service=data["service"],
            inputs=[InputParameter.from_json(p, resolver, path + ("inputs", i))
                    for i, p in enumerate(data.get("inputs") or [])],
            outputs=[OutputParameter.from_json(p, resolver, path + ("outputs", i))
                     for i, p in enumerate(data.get("outputs") or [])],
            **read_policies(data, path))

    def to_json(self, writer: VariableWriter) -> dict:
        out: dict = {"service": self.service}
        if self.inputs:
            out["inputs"] = [p.to_json(writer) for p in self.inputs]
        if self.outputs:
            out["outputs"] = [p.to_json(writer) for p in self.outputs]
        write_policies(out, self)
        return out


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

    @classmethod
    def from_json(cls, data: dict) -> "Workflow":
        resolver = VariableResolver()
        variables = [resolver.declare(v, ("vars", i)) for i, v in enumerate(data.get("vars") or [])]
        actions = read_actions(data.get("actions") or [], resolver, ("actions",))
        retries_json = data.get("retries")
        retries = None
        if isinstance(retries_json, dict) and retries_json.get("processChains") is not None:
            retries = nested(RetryPolicy.from_json, retries_json["processChains"],
                              ("retries", "processChains"))
        return cls(api=data.get("api") or API_VERSION, name=data.get("name"),
                   priority=int(data.get("priority") or 0), retries=retries,
                   vars=variables, actions=actions, has_retries=retries_json is not None)

    def to_json(self) -> dict:
        writer = VariableWriter(self.vars)
        out: dict = {"api": self.api}
        put(out, "name", self.name)
        if self.priority:
            out["priority"] = self.priority
        if self.retries is not None:
            out["retries"] = {"processChains": self.retries.to_json()}
        elif self.has_retries:
            out["retries"] = {}
        out["vars"] = [var_to_json(v) for v in self.vars]
        out["actions"] = [a.to_json(writer) for a in self.actions]
        return out

    def all_actions(self):
        return walk_actions(self.actions)
