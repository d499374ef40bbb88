"""Reading the configuration's file (steepy.yaml, else Steep's steep.yaml), its variables
and Steep's `overrideConfigFile' into flat dotted keys, each with the place it came from:
what the whole configuration (steepy.config.reading) and its `db' and `logs' groups read
alone (steepy.config.storage) share. Nothing here knows the whole model."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from steepy.config.located import Origin, _strip, environment
from steepy.errors import InputError, Problem
from steepy.model.common import type_name as _kind

if TYPE_CHECKING:
    from steepy.documents.loading import Document

FILE_NAME = "steepy.yaml"
STEEP_FILES = ("steep.yaml", "conf/steep.yaml")  # read only when there is no steepy.yaml
OVERRIDE_KEY = "overrideConfigFile"  # the key that names a file whose keys override these


def config_file(directory: str | os.PathLike = ".") -> Path | None:
    """steepy.yaml, else Steep's steep.yaml (or conf/steep.yaml), else None."""
    return next((p for p in (Path(directory) / n for n in (FILE_NAME, *STEEP_FILES))
                 if p.is_file()), None)


def _read(path: Path, environ: Mapping[str, str]) -> Document | None:
    """The file's document (a template when its front matter says so, with `env': Steep's
    context for its configuration); None when it has nothing but comments."""
    from steepy.documents.loading import read_file

    try:
        lines = path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except OSError:
        lines = ["?"]  # read_file says why
    if all(not line.strip() or line.lstrip().startswith("#") for line in lines):
        return None  # nothing but comments: all defaults
    document = read_file(path, {"env": dict(environ)})
    if document.data is not None and not isinstance(document.data, dict):
        raise InputError(Problem("the configuration must be an object of keys and values",
                                 file=str(path), line=1, column=1))
    return document


def _collect(document: Document, data: dict, keys: tuple[str, ...], raw: dict, origins: dict,
              problems: list[Problem], leaves: Mapping[str, bool]) -> None:
    """Flatten nested and dotted keys (the keys of `leaves' keep their value, even an object
    or a list); each origin keeps the keys as written, so that a runtime's section is nested
    again along its settings class (`capabilities: {cuda11.8: ...}' names the capability
    `cuda11.8')."""
    for name, value in data.items():
        written = (*keys, str(name))
        path = ".".join(written)
        key = _strip(path)
        origin = Origin(document, path, keys=written)
        if isinstance(value, dict) and value and key not in leaves:
            origins.setdefault(key, origin)  # a runtime's setting may be an object
            _collect(document, value, written, raw, origins, problems, leaves)
            continue
        if key in raw:
            problems.append(_second_time(origin, origins[key], key))
            continue
        raw[key] = value
        origins[key] = origin


def _second_time(second: Origin, first: Origin, key: str) -> Problem:
    """A key written twice (`db.url: ...' then `db: {url: ...}'), at its second place. Both
    have the same JSON path, whose position is the first's: the second is then placed at the
    nearest key it is written below (`db', on its own line)."""
    where = first.problem("", key)
    message = f"set a second time (first at {where.location()})"
    found = second.problem(message, key)
    keys = second.keys
    for depth in range(len(keys) - 1, 0, -1):
        if (found.line, found.column) != (where.line, where.column):
            break
        parent = Origin(second.document, ".".join(keys[:depth]), keys=keys[:depth])
        found = replace(parent.problem(message, key), path=key)
    return found


def empty_group(value: Any) -> bool:
    """`agent:' with nothing below it (None or {}): the defaults. A list, even an empty one,
    is not a group (`notifications: []' is a mistake)."""
    return value is None or value == {}


def not_a_group(key: str, value: Any, origin: Origin, leaves: Mapping[str, bool]) -> Problem:
    """A group of keys (`agent') given a plain value (`leaves': every key there is); the
    message names the keys one level below it (`notifications.email', not its keys)."""
    below = ", ".join(dict.fromkeys(key + "." + k[len(key) + 1:].split(".")[0]
                                    for k in leaves if k.startswith(key + ".")))
    return origin.problem(f"expected an object with the keys {below}, got {_kind(value)}", key)


def _override(directory: Path, environ: Mapping[str, str], raw: dict, origins: dict,
              problems: list[Problem], leaves: Mapping[str, bool]) -> None:
    """Steep's `overrideConfigFile': the keys of that file (relative to `directory'; read
    like the configuration, a template too, then the variables of `leaves') replace the
    same keys."""
    name = raw.get(OVERRIDE_KEY)
    if not isinstance(name, str) or not name:
        return  # none, or a value of the wrong kind (the model says so)
    path = directory / name
    try:
        document = _read(path, environ)
    except InputError as e:
        problems += e.problems
        return
    if document is None or not document.data:
        return
    override: dict[str, Any] = {}
    places: dict[str, Origin] = {}
    _collect(document, document.data, (), override, places, problems, leaves)
    environment(environ, override, places, leaves, problems)
    for key, value in override.items():
        for other in [k for k in raw if k.startswith(key + ".") or key.startswith(k + ".")]:
            del raw[other]
        raw[key], origins[key] = value, places[key]


def gather(directory: Path, environ: Mapping[str, str], leaves: Mapping[str, bool]
           ) -> tuple[Path | None, dict[str, Any], dict[str, Origin], list[Problem]]:
    """The configuration file found, its values flattened (then the variables of `leaves',
    then `overrideConfigFile'), where each came from, and the problems found so far.
    `leaves': the keys looked for (every key of the model, or those of a few groups)."""
    path = config_file(directory)
    document = _read(path, environ) if path is not None else None
    raw: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    problems: list[Problem] = []
    if document is not None and document.data:
        _collect(document, document.data, (), raw, origins, problems, leaves)
    environment(environ, raw, origins, leaves, problems)
    _override(directory, environ, raw, origins, problems, leaves)
    return path, raw, origins, problems
