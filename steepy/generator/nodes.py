"""The generator's own compact form of actions.

Actions refer to variables by id only; every known value lives in one table of the generator.
That makes copying a for-each body for an iteration a matter of renaming strings, and the
whole generator state plain JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Union

from steepy.errors import SteepyError
from steepy.model import (ExecuteAction, Fallback, ForEachAction, IncludeAction, InputParameter,
                          OutputParameter, RetryPolicy, TimeoutPolicy, Variable)
from steepy.model.common import read_policies, write_policies
from steepy.model.workflow import Action


class GeneratorError(SteepyError):
    """The workflow cannot be turned into process chains (unknown service, cardinality...)."""


@dataclass(frozen=True)
class Policies:
    """An execute action's own retry and timeout policies, and whether its work is reused
    (`cache', extensions 15) (None = take the service's)."""

    retries: RetryPolicy | None = None
    max_inactivity: TimeoutPolicy | None = None
    max_runtime: TimeoutPolicy | None = None
    deadline: TimeoutPolicy | None = None
    cache: str | None = None

    def to_json(self) -> dict:
        out: dict = {}
        write_policies(out, self)
        if self.cache is not None:
            out["cache"] = self.cache
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Policies":
        return cls(**read_policies(data, ()), cache=data.get("cache"))


NO_POLICIES = Policies()


# Inputs and outputs are tuples of strings, which Python's cycle collector stops tracking:
# a for-each over many items creates a great many of them.
class Input(NamedTuple):
    param: str  # service parameter id
    var: str
    anonymous: bool = False


class Output(NamedTuple):
    param: str
    var: str
    prefix: str | None = None
    store: bool = False


@dataclass(slots=True)
class ExecNode:
    id: str
    service: str
    inputs: list[Input]
    outputs: list[Output]
    depends_on: list[str]
    policies: Policies = NO_POLICIES
    # extensions 10: what runs when this action's executable fails after all its attempts
    # (its id is unused: the executable's id comes from this node's)
    fallback: "ExecNode | None" = None
    stops: bool = False  # a fallback with `stop: true', or the workflow's catch

    def consumed(self) -> list[str]:
        """The variables it reads, its fallback's included (both need them to be ready)."""
        own = [i.var for i in self.inputs]
        return own if self.fallback is None else own + self.fallback.consumed()


@dataclass(slots=True)
class ForNode:
    id: str
    input: str
    enumerator: str
    output: str | None = None
    yield_to_output: str | None = None
    yield_to_input: str | None = None
    depends_on: list[str] = field(default_factory=list)
    body: list["Node"] = field(default_factory=list)


Node = Union[ExecNode, ForNode]


# -- from the workflow model ---------------------------------------------------------------------


def nodes_from_actions(actions: list[Action], values: dict[str, Any]) -> list[Node]:
    """Convert (include-free) actions; every variable that has a value goes into `values`."""
    return [_node(a, values) for a in actions]


def _var_id(var: Variable | None, values: dict[str, Any]) -> str | None:
    if var is None:
        return None
    if var.value is not None:
        values[var.id] = var.value
    return var.id


def _node(action: Action, values: dict[str, Any]) -> Node:
    if isinstance(action, ExecuteAction):
        return ExecNode(
            id=action.id, service=action.service,
            inputs=[Input(p.id, _var_id(p.var, values), p.anonymous) for p in action.inputs],
            outputs=[Output(p.id, _var_id(p.var, values), p.prefix, p.store)
                     for p in action.outputs],
            depends_on=list(action.depends_on),
            policies=Policies(action.retries, action.max_inactivity, action.max_runtime,
                              action.deadline, action.cache),
            fallback=None if action.fallback is None else fallback_node(action.fallback, values))
    if isinstance(action, ForEachAction):
        return ForNode(
            id=action.id, input=_var_id(action.input, values),
            enumerator=_var_id(action.enumerator, values),
            output=_var_id(action.output, values),
            yield_to_output=_var_id(action.yield_to_output, values),
            yield_to_input=_var_id(action.yield_to_input, values),
            depends_on=list(action.depends_on),
            body=[_node(a, values) for a in action.actions])
    assert isinstance(action, IncludeAction)
    raise GeneratorError(f"include action `{action.id}' was not expanded")


def fallback_node(fallback: Fallback, values: dict[str, Any]) -> ExecNode:
    """The node of an action's fallback or of the workflow's catch (a `Fallback' too)."""
    return ExecNode(
        id="", service=fallback.service,
        inputs=[Input(p.id, _var_id(p.var, values), p.anonymous) for p in fallback.inputs],
        outputs=[Output(p.id, _var_id(p.var, values)) for p in fallback.outputs],
        depends_on=[], policies=Policies(fallback.retries, fallback.max_inactivity,
                                         fallback.max_runtime, fallback.deadline),
        stops=fallback.stop)


def execute_action_model(node: ExecNode, values: dict[str, Any]) -> ExecuteAction:
    """The node as a workflow-model execute action (what consistency checkers receive)."""
    return ExecuteAction(
        id=node.id, service=node.service,
        inputs=[InputParameter(i.param, Variable(i.var, values.get(i.var)), i.anonymous)
                for i in node.inputs],
        outputs=[OutputParameter(o.param, Variable(o.var, values.get(o.var)), o.prefix, o.store)
                 for o in node.outputs],
        depends_on=list(node.depends_on), retries=node.policies.retries,
        max_inactivity=node.policies.max_inactivity, max_runtime=node.policies.max_runtime,
        deadline=node.policies.deadline)


# -- iterations ----------------------------------------------------------------------------------


@dataclass
class BodyNames:
    """The variable and action ids that are private to one iteration of a for-each body."""

    vars: set[str]
    actions: set[str]

    @classmethod
    def of(cls, loop: ForNode) -> "BodyNames":
        names = cls({loop.enumerator}, set())
        names._collect(loop.body)
        return names

    def _collect(self, body: list[Node]) -> None:
        for node in body:
            self.actions.add(node.id)
            if isinstance(node, ExecNode):
                self.vars.update(o.var for o in node.outputs)
            else:
                self.vars.add(node.enumerator)
                if node.output is not None:
                    self.vars.add(node.output)
                self._collect(node.body)


class Renamer:
    """Appends `$k` to the ids private to iteration k."""

    __slots__ = ("names", "suffix")

    def __init__(self, names: BodyNames, iteration: int):
        self.names = names
        self.suffix = f"${iteration}"

    def var(self, var_id: str | None) -> str | None:
        if var_id is not None and var_id in self.names.vars:
            return var_id + self.suffix
        return var_id

    def action(self, action_id: str) -> str:
        return action_id + self.suffix if action_id in self.names.actions else action_id

    def node(self, node: Node) -> Node:
        deps = [self.action(d) for d in node.depends_on]
        if isinstance(node, ExecNode):
            return ExecNode(
                self.action(node.id), node.service,
                [Input(i.param, self.var(i.var), i.anonymous) for i in node.inputs],
                [Output(o.param, self.var(o.var), o.prefix, o.store) for o in node.outputs],
                deps, node.policies,
                None if node.fallback is None else self.node(node.fallback),  # type: ignore[arg-type]
                node.stops)
        return ForNode(self.action(node.id), self.var(node.input), self.var(node.enumerator),
                       self.var(node.output), self.var(node.yield_to_output),
                       self.var(node.yield_to_input), deps, [self.node(n) for n in node.body])


# -- JSON (generator state) ----------------------------------------------------------------------


def node_to_json(node: Node) -> dict:
    if isinstance(node, ExecNode):
        out: dict = {"type": "execute", "id": node.id, "service": node.service,
                     "inputs": [[i.param, i.var, i.anonymous] for i in node.inputs],
                     "outputs": [[o.param, o.var, o.prefix, o.store] for o in node.outputs],
                     "dependsOn": list(node.depends_on)}
        policies = node.policies.to_json()
        if policies:
            out["policies"] = policies
        if node.fallback is not None:
            out["fallback"] = node_to_json(node.fallback)
        if node.stops:
            out["stops"] = True
        return out
    return {"type": "for", "id": node.id, "input": node.input, "enumerator": node.enumerator,
            "output": node.output, "yieldToOutput": node.yield_to_output,
            "yieldToInput": node.yield_to_input, "dependsOn": list(node.depends_on),
            "actions": [node_to_json(n) for n in node.body]}


def node_from_json(data: dict) -> Node:
    if data["type"] == "execute":
        policies = data.get("policies")
        return ExecNode(data["id"], data["service"],
                        [Input(p, v, bool(a)) for p, v, a in data["inputs"]],
                        [Output(p, v, prefix, bool(store))
                         for p, v, prefix, store in data["outputs"]],
                        list(data["dependsOn"]),
                        Policies.from_json(policies) if policies else NO_POLICIES,
                        (node_from_json(data["fallback"])  # type: ignore[arg-type]
                         if data.get("fallback") else None), bool(data.get("stops")))
    return ForNode(data["id"], data["input"], data["enumerator"], data.get("output"),
                   data.get("yieldToOutput"), data.get("yieldToInput"), list(data["dependsOn"]),
                   [node_from_json(n) for n in data["actions"]])
