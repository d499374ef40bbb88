"""Variables and the parameters that wire them to actions, in Steep's JSON shape: a workflow's
`vars`, an action's `inputs` and `outputs` (steepy.model.workflow holds the actions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from steepy.model.ids import unique_id
from steepy.model.common import problem, put


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
