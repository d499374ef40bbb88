"""Process chains, executables and arguments (reference 3.1).

Read back from what steepy itself wrote (the registry), so `from_json` only converts.
Serialised exactly as Steep writes them: null fields dropped, `priority` dropped when 0,
retry-policy defaults and `errorOnTimeout: false` dropped, everything else (including
`runtime: other`, `dataType: string` and empty lists) written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steepy.model.common import (DIRECT_RUNTIME, put, read_policies, read_retries, scalar_text,
                                 write_policies)
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.software import PythonEnvironment, write_tool_settings

# Built-in data types (reference 3.1)
DATA_TYPE_STRING = "string"
DATA_TYPE_BOOLEAN = "boolean"
DATA_TYPE_DIRECTORY = "directory"


# (with slots, as the classes below: a for-each of 10,000 items makes 10,000 chains in one
# round, and they are made, keyed and stored quicker, `steepy plan --resume' 4% in all)
@dataclass(slots=True)
class ArgumentVariable:
    id: str
    value: str

    @classmethod
    def from_json(cls, data: dict) -> "ArgumentVariable":
        return cls(scalar_text(data["id"]), scalar_text(data.get("value", "")))

    def to_json(self) -> dict:
        return {"id": self.id, "value": self.value}


@dataclass(slots=True)
class Argument:
    id: str
    variable: ArgumentVariable
    type: str  # "input" | "output"
    label: str | None = None
    data_type: str = DATA_TYPE_STRING
    # its value was reported by earlier chains (a for-each's output, which lists its items in
    # the order their iterations ended): a reuse key takes such values of one parameter in
    # any order (steepy.model.cachekeys). Known where the generator makes it, not stored.
    reported: bool = field(default=False, compare=False, repr=False)
    # an output's place, where its action does not leave it to the default (tmpPath):
    # `out:' or `tmp:' (its `store') and its `prefix'. A reuse key counts it (an output
    # stored, or written below another prefix, is not the same work). Known where the
    # generator makes it, not stored.
    place: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_json(cls, data: dict) -> "Argument":
        return cls(
            id=scalar_text(data["id"]),
            variable=ArgumentVariable.from_json(data["variable"]),
            type=data["type"],
            label=None if data.get("label") is None else scalar_text(data["label"]),
            data_type=str(data.get("dataType") or DATA_TYPE_STRING),
        )

    def to_json(self) -> dict:
        out: dict = {"id": self.id}
        put(out, "label", self.label)
        out.update(variable=self.variable.to_json(), type=self.type, dataType=self.data_type)
        return out


@dataclass(slots=True)
class Executable:
    id: str
    path: str
    service_id: str
    arguments: list[Argument] = field(default_factory=list)
    runtime: str = DIRECT_RUNTIME
    runtime_args: list[Argument] = field(default_factory=list)
    retries: RetryPolicy | None = None
    max_inactivity: TimeoutPolicy | None = None
    max_runtime: TimeoutPolicy | None = None
    deadline: TimeoutPolicy | None = None
    # steepy (extensions 10): this executable runs only if the one with this id, right
    # before it in the chain, has failed after all its attempts
    fallback_for: str | None = None
    # steepy (extensions 10): a fallback with `stop: true' or the workflow's catch: once it
    # succeeds, the chain ends here and what needs the failed executable's outputs is skipped
    stops: bool = False
    # steepy (issue 24), from its service: variables set for the tool, and names of variables
    # taken from the engine's environment (their values are read when an attempt starts)
    environment: dict[str, str] = field(default_factory=dict)
    pass_environment: list[str] = field(default_factory=list)
    # steepy (issue 27), from its service: its Python environment and environment modules
    python: PythonEnvironment | None = None
    modules: list[str] = field(default_factory=list)
    # steepy (extensions 14), from its service: declared outputs must exist after exit 0
    check_outputs: bool = True
    # steepy (extensions 15), from its action: `false' or `deep' over its service's `cache'
    cache: str | None = None

    @classmethod
    def from_json(cls, data: dict, path: tuple = ()) -> "Executable":
        return cls(
            id=scalar_text(data["id"]),
            path=scalar_text(data["path"]),
            service_id=scalar_text(data["serviceId"]),
            arguments=[Argument.from_json(a) for a in data.get("arguments") or []],
            runtime=str(data.get("runtime") or DIRECT_RUNTIME),
            runtime_args=[Argument.from_json(a) for a in data.get("runtimeArgs") or []],
            **read_policies(data, path),
            fallback_for=None if data.get("fallbackFor") is None else scalar_text(data["fallbackFor"]),
            stops=bool(data.get("stops", False)),
            environment={str(k): scalar_text(v)
                         for k, v in (data.get("environment") or {}).items()},
            pass_environment=[scalar_text(n) for n in data.get("passEnvironment") or []],
            python=PythonEnvironment.from_json(data.get("python")),
            modules=[scalar_text(m) for m in data.get("modules") or []],
            check_outputs=data.get("checkOutputs") is not False,
            cache=None if data.get("cache") is None else str(data["cache"]).lower(),
        )

    def to_json(self) -> dict:
        out: dict = {"id": self.id, "path": self.path, "serviceId": self.service_id,
                     "arguments": [a.to_json() for a in self.arguments],
                     "runtime": self.runtime,
                     "runtimeArgs": [a.to_json() for a in self.runtime_args]}
        write_policies(out, self)
        put(out, "fallbackFor", self.fallback_for)
        if self.stops:
            out["stops"] = True
        write_tool_settings(out, self)  # (none: written as Steep writes an executable)
        return out


@dataclass(slots=True)
class ProcessChain:
    id: str
    executables: list[Executable] = field(default_factory=list)
    required_capabilities: list[str] = field(default_factory=list)
    priority: int = 0
    retries: RetryPolicy | None = None

    def __post_init__(self) -> None:
        # a set in Steep: keep one spelling so that equal chains compare equal
        self.required_capabilities = sorted(set(self.required_capabilities))

    @classmethod
    def from_json(cls, data: dict, path: tuple = ()) -> "ProcessChain":
        return cls(
            id=scalar_text(data["id"]),
            executables=[Executable.from_json(e, path + ("executables", i))
                         for i, e in enumerate(data.get("executables") or [])],
            required_capabilities=[scalar_text(c) for c in data.get("requiredCapabilities") or []],
            priority=int(data.get("priority") or 0),
            retries=read_retries(data, path),
        )

    def to_json(self) -> dict:
        out: dict = {"id": self.id, "executables": [e.to_json() for e in self.executables],
                     "requiredCapabilities": list(self.required_capabilities)}
        if self.priority:
            out["priority"] = self.priority
        if self.retries is not None:
            out["retries"] = self.retries.to_json()
        return out


def output_values(chain: ProcessChain) -> dict[str, Any]:
    """The variable ids and generated values of every output argument of a chain."""
    return {a.variable.id: a.variable.value
            for e in chain.executables for a in e.arguments if a.type == "output"}
