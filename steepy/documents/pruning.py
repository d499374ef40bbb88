"""A workflow or macro with the parts already found wrong taken out, so that the next layer
checks the rest without tripping over them or saying the same thing again.

A part is the smallest piece that stands on its own:

- a key the schema does not know (`prio: 3`): only that key;
- a retry or timeout policy of an action or its fallback (`retries: {delay: 5 parsecs}`);
- a variable given as an object a second time: the later mention keeps only its id;
- an entry of `vars` or `parameters`, or an action (a for-each keeps the rest of its body);
- else the top-level key that holds the problem; a problem of the whole document leaves
  nothing to check, except a missing key (`description' of a macro).

Taking an entry out of a list moves the entries after it, so the paths of what is found in
the pruned copy are translated back (`original`). What the parts taken out define (action
ids, variable ids) is `opaque`: a check that would only miss them (a dependency on such an
action, the value of such a variable) says nothing about them.
"""

from __future__ import annotations

import re
from typing import Any

from steepy.model.common import POLICY_FIELDS

POLICY_KEYS = tuple(key for key, _ in POLICY_FIELDS)  # retries and the timeouts
LISTS = ("actions", "vars", "parameters")  # lists whose entries are taken out one by one
VAR_KEYS = ("var", "input", "enumerator", "output", "yieldToOutput", "yieldToInput")
REMOVE, BARE = "remove", "bare"
_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def path_parts(path: str) -> tuple:
    """`actions[1].inputs[0].var' -> ("actions", 1, "inputs", 0, "var")."""
    return tuple(int(index) if index else key for index, key in _PART.findall(path or ""))


def _value(data: Any, parts: tuple) -> Any:
    for part in parts:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _unit(data: Any, parts: tuple, unknown_key: bool) -> tuple[tuple, str] | None:
    """The part to take out for a problem at `parts`, and how; None: the whole document."""
    if not parts:
        return None
    if unknown_key:
        return parts, REMOVE
    value = _value(data, parts)
    if parts[-1] in VAR_KEYS and isinstance(value, dict) and isinstance(value.get("id"), str):
        return parts, BARE
    action = max((k for k in range(1, len(parts)) if parts[k - 1] == "actions"
                  and isinstance(parts[k], int)), default=None)
    if action is not None:
        rest = parts[action + 1:]
        if rest[:1] == ("fallback",) and rest[1:2] and rest[1] in POLICY_KEYS:
            return parts[:action + 3], REMOVE
        if rest[:1] and rest[0] in POLICY_KEYS:
            return parts[:action + 2], REMOVE
        return parts[:action + 1], REMOVE
    if parts[0] in LISTS and len(parts) > 1 and isinstance(parts[1], int):
        return parts[:2], REMOVE
    return parts[:1], REMOVE


def _defined(value: Any, into: set[str]) -> None:
    """Ids of actions, variables and parameters that `value` (a part taken out) defines or uses."""
    if isinstance(value, str):  # e.g. a variable declared by its id alone
        into.add(value)
    elif isinstance(value, dict):
        if isinstance(value.get("id"), str):
            into.add(value["id"])
        for key, item in value.items():
            if key in VAR_KEYS and isinstance(item, str):
                into.add(item)
            _defined(item, into)
    elif isinstance(value, list):
        for item in value:
            _defined(item, into)


class Pruned:
    """`data` (a workflow or one macro) and the parts taken out of it so far."""

    def __init__(self, data: Any):
        self.original = data
        self.cuts: dict[tuple, str] = {}
        self.opaque: set[str] = set()
        self.whole = False  # the whole document is wrong: nothing is left to check
        self._view: Any = data
        self._maps: dict[tuple, list[int]] = {}  # list in the copy -> original index of each entry

    def reject(self, parts: tuple, unknown_key: bool = False, missing_key: bool = False) -> bool:
        """Take out the part that holds the problem at `parts` (a path of the original);
        False when it is out already. A key missing at the top takes nothing out: the rest
        is still worth checking (the model fills in a default, or cannot be built)."""
        unit = _unit(self.original, tuple(parts), unknown_key)
        if unit is None and missing_key:
            return False
        if unit is None:
            changed, self.whole = not self.whole, True
            return changed
        where, how = unit
        if any(self.cuts.get(where[:k]) == REMOVE for k in range(len(where) + 1)):
            return False
        if self.cuts.get(where) == how:
            return False
        self.cuts[where] = how
        if how == REMOVE:
            _defined(_value(self.original, where), self.opaque)
        self._view = None
        return True

    def view(self) -> Any:
        """The pruned copy (None when the whole document is wrong)."""
        if self.whole:
            return None
        if self._view is None:
            self._maps = {}
            self._view = self._copy(self.original, (), ())
        return self._view

    def _copy(self, value: Any, at: tuple, copied: tuple) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                how = self.cuts.get(at + (key,))
                if how == REMOVE:
                    continue
                out[key] = (item["id"] if how == BARE else
                            self._copy(item, at + (key,), copied + (key,)))
            return out
        if isinstance(value, list):
            items, kept = [], []
            for i, item in enumerate(value):
                how = self.cuts.get(at + (i,))
                if how == REMOVE:
                    continue
                items.append(item["id"] if how == BARE else
                             self._copy(item, at + (i,), copied + (len(items),)))
                kept.append(i)
            self._maps[copied] = kept
            return items
        return value

    def original_parts(self, parts: tuple) -> tuple:
        """The path in the original of `parts`, a path in the pruned copy."""
        self.view()
        out: list = []
        for k, part in enumerate(parts):
            kept = self._maps.get(tuple(parts[:k]))
            if isinstance(part, int) and kept is not None and part < len(kept):
                part = kept[part]
            out.append(part)
        return tuple(out)
