"""The configuration's groups `db' and `logs' for the commands that only read the database
(list, show, status, logs, events, wait), read without pydantic when their values are plain
(issue 31: importing pydantic and building the two groups' checks is about 0.05 s of a start
that should take 0.25 s).

Plain means: a key not set (its default, below), or a text key (`db.url',
`logs.processChains.path') set to text that its checks take as it is. Anything else (a
number, a `null', an unknown key below `db', a problem of the file) is not plain: then the
caller reads the groups with steepy.config.storage.load_sections, which checks them with
pydantic as ever (a problem comes out at its file:line:column, exit code 2). Both ways give
the same values; only pydantic's reports problems."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Mapping

from steepy.config.gathering import OVERRIDE_KEY, gather
from steepy.config.urls import database_url

GROUPS = ("db", "logs")
# every key of the two groups -> its default and whether its value is text (what
# steepy.config.storage's models say: they take their defaults from here, a test checks the
# rest)
KEYS: dict[str, tuple[Any, bool]] = {
    "db.url": (None, True),  # None: .steepy/steepy.db
    "logs.processChains.path": ("logs/processchains", True),
    "logs.processChains.groupByPrefix": (0, False),
    "logs.processChains.database": (None, False),
    "logs.processChains.format": ("plain", False),
}


def _url_as_is(text: str) -> bool:
    try:
        return database_url(text) == text
    except ValueError:
        return False


# a text key -> whether the models take this text as it is (not: a problem, or changed)
_TAKEN: dict[str, Callable[[str], bool]] = {"db.url": _url_as_is,
                                            "logs.processChains.path": bool}


def plain_storage(directory: str | os.PathLike = ".",
                  environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The groups `db' and `logs' by name, with the models' attribute names
    (`["logs"].process_chains.group_by_prefix'), when every value set is plain; else None
    (load_sections reads them). A file that cannot be read raises load_sections' InputError."""
    environ = os.environ if environ is None else environ
    leaves = {OVERRIDE_KEY: True, **{key: text for key, (_, text) in KEYS.items()}}
    _, raw, _, problems = gather(Path(directory), environ, leaves)
    mine = {key: value for key, value in raw.items() if key.split(".")[0] in GROUPS}
    if problems or not all(_plain(key, value) for key, value in mine.items()):
        return None
    values = {key: default for key, (default, _) in KEYS.items()} | mine
    return {group: _namespace({key[len(group) + 1:]: value for key, value in values.items()
                               if key.startswith(group + ".")}) for group in GROUPS}


def _plain(key: str, value: Any) -> bool:
    taken = _TAKEN.get(key)
    return taken is not None and isinstance(value, str) and taken(value)


def attribute(key: str) -> str:
    """A key's attribute name in the models: `groupByPrefix' -> `group_by_prefix'."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def _namespace(flat: Mapping[str, Any]) -> SimpleNamespace:
    """Objects of objects from the dotted keys below a group, by attribute name."""
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, last = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(attribute(part), {})
        node[attribute(last)] = value

    def build(node: dict[str, Any]) -> SimpleNamespace:
        return SimpleNamespace(**{name: build(value) if isinstance(value, dict) else value
                                  for name, value in node.items()})
    return build(tree)
