"""Macros: reusable groups of actions a workflow pulls in with `include` (reference 1.5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steepy.model.common import put
from steepy.model.workflow import Action, Variable, VariableResolver, VariableWriter, read_actions, var_to_json

MACRO_INPUT = "input"
MACRO_OUTPUT = "output"


@dataclass
class MacroParameter:
    id: str
    name: str
    description: str
    type: str
    default: Any = None

    @classmethod
    def from_json(cls, data: dict) -> "MacroParameter":
        return cls(id=data["id"], name=str(data.get("name") or ""),
                   description=str(data.get("description") or ""), type=data["type"],
                   default=data.get("default"))

    def to_json(self) -> dict:
        out = {"id": self.id, "name": self.name, "description": self.description, "type": self.type}
        put(out, "default", self.default)
        return out


@dataclass
class Macro:
    id: str
    name: str
    description: str
    parameters: list[MacroParameter] = field(default_factory=list)
    vars: list[Variable] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict, path: tuple = ()) -> "Macro":
        resolver = VariableResolver()
        variables = [resolver.declare(v, path + ("vars", i))
                     for i, v in enumerate(data.get("vars") or [])]
        return cls(
            id=data["id"],
            name=str(data.get("name") or ""),
            description=str(data.get("description") or ""),
            parameters=[MacroParameter.from_json(p) for p in data.get("parameters") or []],
            vars=variables,
            actions=read_actions(data.get("actions") or [], resolver, path + ("actions",)),
        )

    def to_json(self) -> dict:
        writer = VariableWriter(self.vars)
        return {"id": self.id, "name": self.name, "description": self.description,
                "parameters": [p.to_json() for p in self.parameters],
                "vars": [var_to_json(v) for v in self.vars],
                "actions": [a.to_json(writer) for a in self.actions]}
