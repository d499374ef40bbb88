"""A group of configuration keys (`Section`): pydantic models whose field aliases are
Steep's key names, read by dotted key. Every part of the configuration's model is one."""

from __future__ import annotations

from types import NoneType, UnionType
from typing import Any, Mapping, Self, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict

from steepy.config.located import _strip


_MISSING = object()

class Section(BaseModel):
    """A group of keys; field aliases are Steep's key names. A group's checks are built when
    it is first validated (`defer_build'): building all of them costs ~0.1 s at each start,
    and the commands that only read the database check two groups (issue 31)."""
    model_config = ConfigDict(populate_by_name=True, validate_default=True, frozen=True,
                              coerce_numbers_to_str=True, extra="forbid", defer_build=True)

    def __getitem__(self, key: str) -> Any:
        """A value by its dotted key, e.g. `agent.instances' (with or without `steep.')."""
        node: Any = self
        for part in _strip(key).split("."):
            names = _attribute_names(type(node)) if isinstance(node, Section) else {}
            if part not in names:
                raise KeyError(key)
            node = getattr(node, names[part])
        return node

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING

    def replaced(self, values: Mapping[str, Any]) -> Self:
        """A copy with these keys (Steep's names, this group's own) set as given and checked
        as if read (`timeLimit: 1h` becomes milliseconds; a bad value raises pydantic's
        ValidationError): for settings made in code rather than read (KeyError for a key it
        does not have)."""
        names = _attribute_names(type(self))
        fields = {names[key]: key for key in values}
        checked = type(self).model_validate(dict(values))
        return self.model_copy(update={name: getattr(checked, name) for name in fields})


S = TypeVar("S", bound=Section)


def _attribute_names(model: type[Section]) -> dict[str, str]:
    return {**{name: name for name in model.model_fields},
            **{f.alias: name for name, f in model.model_fields.items() if f.alias}}


def _leaves(model: type[Section], prefix: str = "") -> dict[str, bool]:
    """Every dotted key below `model` -> whether its value is a plain string."""
    out: dict[str, bool] = {}
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        if isinstance(info.annotation, type) and issubclass(info.annotation, Section):
            out.update(_leaves(info.annotation, key + "."))
        else:
            kinds = (get_args(info.annotation) if get_origin(info.annotation) in (Union, UnionType)
                     else (info.annotation,))
            out[key] = set(kinds) <= {str, NoneType}
    return out


def groups_of(leaves: Mapping[str, bool]) -> set[str]:
    """The keys that hold other keys (`logs', `logs.processChains') above `leaves'."""
    return {key.rsplit(".", i)[0] for key in leaves for i in range(1, key.count(".") + 1)}
