"""Service metadata: the command-line tools a workflow can execute (reference section 2)."""

from __future__ import annotations


from dataclasses import dataclass, field
from typing import Any

from steepy.model.common import DIRECT_RUNTIME, put, read_policies, scalar_text, write_policies
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.software import PythonEnvironment, write_tool_settings

INPUT = "input"
OUTPUT = "output"


@dataclass(frozen=True)
class Cardinality:
    """`min..max`; max None means `n` (unbounded)."""

    min: int
    max: int | None

    @classmethod
    def parse(cls, text: str) -> "Cardinality":
        """`min..max' as the schema allows it (max may be greater or smaller: the validation
        of service definitions reports a minimum above the maximum)."""
        low, high = str(text).split("..")
        return cls(int(low), None if high.strip() == "n" else int(high))

    @property
    def empty(self) -> bool:
        """No count allows it (minimum above maximum)."""
        return self.max is not None and self.min > self.max

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
    def from_json(cls, data: dict) -> "ServiceParameter":
        return cls(
            id=data["id"],
            name=str(data.get("name") or ""),
            description=str(data.get("description") or ""),
            type=data["type"],
            cardinality=Cardinality.parse(data["cardinality"]),
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
    def from_json(cls, data: dict) -> "RuntimeArgument":
        value = data.get("value")
        if value is not None:  # (an object or a list as compact JSON text, as Steep keeps it)
            value = scalar_text(value)
        return cls(id=data["id"], name=str(data.get("name") or ""),
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
    # steepy (issue 24): variables set for the tool, and names of variables it gets from the
    # engine's environment (which otherwise keeps steepy's own STEEPY_*/STEEP_* settings)
    environment: dict[str, str] = field(default_factory=dict)
    pass_environment: list[str] = field(default_factory=list)
    # steepy (issue 27): a Python environment the tool runs in, and environment modules loaded
    # before it (steepy.model.software)
    python: PythonEnvironment | None = None
    modules: list[str] = field(default_factory=list)
    # steepy (extensions 14): each declared output must exist after the tool exited 0
    check_outputs: bool = True
    # steepy (extensions 15): `false' (never reuse its work) or `deep' (compare files by
    # content); None: the configuration's `cache.mode'
    cache: str | None = None

    @classmethod
    def from_json(cls, data: dict, path: tuple = ()) -> "Service":
        return cls(
            id=data["id"],
            name=str(data.get("name") or ""),
            description=str(data.get("description") or ""),
            path=data["path"],
            runtime=str(data.get("runtime") or DIRECT_RUNTIME),
            parameters=[ServiceParameter.from_json(p) for p in data.get("parameters") or []],
            runtime_args=[RuntimeArgument.from_json(a) for a in data.get("runtimeArgs") or []],
            required_capabilities=[str(c) for c in data.get("requiredCapabilities") or []],
            **read_policies(data, path),
            environment={str(k): scalar_text(v)
                         for k, v in (data.get("environment") or {}).items()},
            pass_environment=[str(n) for n in data.get("passEnvironment") or []],
            python=PythonEnvironment.from_json(data.get("python")),
            modules=[str(m) for m in data.get("modules") or []],
            check_outputs=bool(data.get("checkOutputs", True)),
            cache=None if data.get("cache") is None else str(data["cache"]).lower(),
        )

    def to_json(self, all_lists: bool = False) -> dict:
        """The service's document; `all_lists`: with `runtimeArgs' and `requiredCapabilities'
        also when empty, as Steep's API answers (the reuse keys digest the short form, so
        the records of earlier runs stay valid)."""
        out: dict = {"id": self.id, "name": self.name, "description": self.description,
                     "path": self.path, "runtime": self.runtime,
                     "parameters": [p.to_json() for p in self.parameters]}
        if self.runtime_args or all_lists:
            out["runtimeArgs"] = [a.to_json() for a in self.runtime_args]
        if self.required_capabilities or all_lists:
            out["requiredCapabilities"] = list(self.required_capabilities)
        write_policies(out, self)
        write_tool_settings(out, self)
        return out

    def parameter(self, param_id: str) -> ServiceParameter | None:
        for p in self.parameters:
            if p.id == param_id:
                return p
        return None
