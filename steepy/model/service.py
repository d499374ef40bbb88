"""Service metadata: the command-line tools a workflow can execute (reference section 2)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from steepy.model.common import problem, put, read_retries, read_timeout, require, write_policies
from steepy.model.policies import RetryPolicy, TimeoutPolicy

INPUT = "input"
OUTPUT = "output"
_CARDINALITY = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+|n)\s*$")


@dataclass(frozen=True)
class Cardinality:
    """`min..max`; max None means `n` (unbounded)."""

    min: int
    max: int | None

    @classmethod
    def parse(cls, text: Any, path: tuple = ()) -> "Cardinality":
        match = _CARDINALITY.match(str(text))
        if not match:
            raise problem(path, f"cardinality `{text}' is not of the form `min..max' "
                          "(e.g. `1..1', `0..n')")
        low = int(match.group(1))
        high = None if match.group(2) == "n" else int(match.group(2))
        if high is not None and low > high:
            raise problem(path, f"cardinality `{text}': minimum is greater than maximum")
        return cls(low, high)

    def allows(self, count: int) -> bool:
        return count >= self.min and (self.max is None or count <= self.max)

    def __str__(self) -> str:
        return f"{self.min}..{'n' if self.max is None else self.max}"


@dataclass
class ServiceParameter:
    id: str
    name: str
    description: str
    type: str
    cardinality: Cardinality
    data_type: str = "string"
    default: Any = None
    file_suffix: str | None = None
    label: str | None = None

    @classmethod
    def from_json(cls, data: dict, path: tuple) -> "ServiceParameter":
        kind = require(data, "type", path)
        if kind not in (INPUT, OUTPUT):
            raise problem(path + ("type",), f"parameter type `{kind}' is unknown; "
                          "allowed: input, output")
        return cls(
            id=str(require(data, "id", path)),
            name=str(data.get("name") or ""),
            description=str(data.get("description") or ""),
            type=kind,
            cardinality=Cardinality.parse(require(data, "cardinality", path),
                                          path + ("cardinality",)),
            data_type=str(data.get("dataType") or "string"),
            default=data.get("default"),
            file_suffix=data.get("fileSuffix"),
            label=data.get("label"),
        )

    def to_json(self) -> dict:
        out = {"id": self.id, "name": self.name, "description": self.description,
               "type": self.type, "cardinality": str(self.cardinality), "dataType": self.data_type}
        put(out, "default", self.default)
        put(out, "fileSuffix", self.file_suffix)
        put(out, "label", self.label)
        return out


@dataclass
class RuntimeArgument:
    id: str
    name: str
    description: str
    data_type: str = "string"
    label: str | None = None
    value: str | None = None

    @classmethod
    def from_json(cls, data: dict, path: tuple) -> "RuntimeArgument":
        value = data.get("value")
        if isinstance(value, (dict, list)):
            value = json.dumps(value)  # objects are kept as JSON text, as Steep does
        elif value is not None:
            from steepy.model.common import scalar_text

            value = scalar_text(value)
        return cls(id=str(require(data, "id", path)), name=str(data.get("name") or ""),
                   description=str(data.get("description") or ""),
                   data_type=str(data.get("dataType") or "string"),
                   label=data.get("label"), value=value)

    def to_json(self) -> dict:
        out = {"id": self.id, "name": self.name, "description": self.description,
               "dataType": self.data_type}
        put(out, "label", self.label)
        put(out, "value", self.value)
        return out


@dataclass
class Service:
    id: str
    name: str
    description: str
    path: str
    runtime: str
    parameters: list[ServiceParameter] = field(default_factory=list)
    runtime_args: list[RuntimeArgument] = field(default_factory=list)
    required_capabilities: list[str] = field(default_factory=list)
    retries: RetryPolicy | None = None
    max_inactivity: TimeoutPolicy | None = None
    max_runtime: TimeoutPolicy | None = None
    deadline: TimeoutPolicy | None = None

    @classmethod
    def from_json(cls, data: dict, path: tuple = ()) -> "Service":
        return cls(
            id=str(require(data, "id", path)),
            name=str(data.get("name") or ""),
            description=str(data.get("description") or ""),
            path=str(require(data, "path", path)),
            runtime=str(data.get("runtime") or "other"),
            parameters=[ServiceParameter.from_json(p, path + ("parameters", i))
                        for i, p in enumerate(data.get("parameters") or [])],
            runtime_args=[RuntimeArgument.from_json(a, path + ("runtimeArgs", i))
                          for i, a in enumerate(data.get("runtimeArgs") or [])],
            required_capabilities=[str(c) for c in data.get("requiredCapabilities") or []],
            retries=read_retries(data, path),
            max_inactivity=read_timeout(data, "maxInactivity", path),
            max_runtime=read_timeout(data, "maxRuntime", path),
            deadline=read_timeout(data, "deadline", path),
        )

    def to_json(self) -> dict:
        out: dict = {"id": self.id, "name": self.name, "description": self.description,
                     "path": self.path, "runtime": self.runtime,
                     "parameters": [p.to_json() for p in self.parameters]}
        if self.runtime_args:
            out["runtimeArgs"] = [a.to_json() for a in self.runtime_args]
        if self.required_capabilities:
            out["requiredCapabilities"] = list(self.required_capabilities)
        write_policies(out, self)
        return out

    def parameter(self, param_id: str) -> ServiceParameter | None:
        for p in self.parameters:
            if p.id == param_id:
                return p
        return None
