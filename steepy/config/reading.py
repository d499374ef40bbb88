"""Reading the configuration: the file (steepy.yaml, else Steep's steep.yaml), then the
variables, every value located so that a problem names its file:line:column or variable."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

import yaml
from pydantic import ValidationError

from steepy.config.model import (ENV_PREFIXES, FILE_NAME, GROUPS, LEAVES, NOT_YET, STEEP_FILES,
                                 UNIMPLEMENTED, Config, Section, _attribute_names, _strip)
from steepy.errors import InputError, Problem, json_path
from steepy.documents.loading import Document, read_file
from steepy.model.common import type_name as _kind


@dataclass
class _Origin:
    """Where a value came from: a path in a document, or an environment variable."""

    document: Document | None = None
    path: str = ""
    variable: str | None = None

    def problem(self, message: str, key: str) -> Problem:
        """A problem about `key` (maybe with a tail such as `[1]') located here."""
        if self.document is None:
            return Problem(message, path=key, file=f"${self.variable}")
        tail = key[len(_base(key)):]
        return replace(self.document.locate(Problem(message, path=self.path + tail)), path=key)


def _base(key: str) -> str:
    return key.split("[", 1)[0]  # `agent.capabilities[1]' -> `agent.capabilities'


def config_file(directory: str | os.PathLike = ".") -> Path | None:
    """steepy.yaml, else Steep's steep.yaml (or conf/steep.yaml), else None."""
    return next((p for p in (Path(directory) / n for n in (FILE_NAME, *STEEP_FILES))
                 if p.is_file()), None)


def _read(path: Path) -> Document | None:
    try:
        lines = path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except OSError:
        lines = ["?"]  # read_file says why
    if all(not line.strip() or line.lstrip().startswith("#") for line in lines):
        return None  # nothing but comments: all defaults
    document = read_file(path)
    if document.data is not None and not isinstance(document.data, dict):
        raise InputError(Problem("the configuration must be an object of keys and values",
                                 file=str(path), line=1, column=1))
    return document


def _collect(document: Document, data: dict, prefix: str, raw: dict, origins: dict,
             problems: list[Problem]) -> None:
    """Flatten nested and dotted keys (leaves keep their value, even an object or a list)."""
    for name, value in data.items():
        path = f"{prefix}{name}"
        key = _strip(path)
        if isinstance(value, dict) and value and key not in LEAVES:
            _collect(document, value, path + ".", raw, origins, problems)
            continue
        if key in raw:
            first = origins[key].problem("", key)
            problems.append(_Origin(document, path).problem(
                f"set a second time (first at {first.location()})", key))
            continue
        raw[key] = value
        origins[key] = _Origin(document, path)


def _environment(environ: Mapping[str, str], raw: dict, origins: dict) -> None:
    """STEEPY_<KEY> / STEEP_<KEY> values, read as YAML, override the file's."""
    for key, is_text in LEAVES.items():
        for prefix in ENV_PREFIXES:
            variable = prefix + key.upper().replace(".", "_")
            text = environ.get(variable)
            if text is None or not text.strip():
                continue
            try:
                value = yaml.safe_load(text)
            except yaml.YAMLError:
                value = text
            if is_text and not isinstance(value, str):
                value = text  # a token `00123' stays a string, not the number 123
            raw[key] = value
            origins[key] = _Origin(variable=variable)
            break


def _ignored(raw: dict, origins: dict, problems: list[Problem]) -> list[Problem]:
    """Warnings for the keys no field takes: unknown ones, and Steep's that steepy lacks
    (a group such as `agent' given a plain value is a problem)."""
    warnings: list[Problem] = []
    grouped: dict[str, list[str]] = {}
    for key in list(raw):
        if key in LEAVES:
            continue
        value = raw.pop(key)
        if (key in GROUPS or key in ("steep", "steepy")) and value in (None, {}, []):
            continue  # `agent:' with nothing below it
        unimplemented = next((p for p in UNIMPLEMENTED + NOT_YET
                              if key == p or key.startswith(p + ".")), None)
        if unimplemented:
            grouped.setdefault(unimplemented, []).append(key)
            continue
        origin = origins[key]
        if key in GROUPS:
            below = ", ".join(k for k in LEAVES if k.startswith(key + "."))
            problems.append(origin.problem(f"expected an object with the keys {below}, "
                                           f"got {_kind(value)}", key))
            continue
        close = difflib.get_close_matches(key, list(LEAVES) + list(UNIMPLEMENTED), n=1)
        close = close or [k for k in LEAVES if k.lower() == key.lower()]
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.append(origin.problem(f"unknown key (ignored){hint}", key))
    for prefix, keys in grouped.items():
        what = ("steepy does not implement it yet" if prefix in NOT_YET
                else "a setting of Steep that steepy does not implement")
        others = f" (also {', '.join(keys[1:])})" if len(keys) > 1 else ""
        warnings.append(origins[keys[0]].problem(f"{what}; ignored{others}", keys[0]))
    return warnings


def _plugin_keys(raw: dict, origins: dict) -> tuple[dict[str, dict], dict[str, Problem],
                                                  list[Problem]]:
    """Settings of runtime plugins (`runtimes.<name>.*' for a name steepy has no section for)
    and a warning for Steep's form of `plugins' (files of Kotlin plugin descriptors)."""
    settings: dict[str, dict] = {}
    places: dict[str, Problem] = {}
    for key in [k for k in raw if k.startswith("runtimes.") and k not in LEAVES]:
        name, _, rest = key[len("runtimes."):].partition(".")
        if name in ("docker", "kubernetes") or not rest:
            continue
        settings.setdefault(name, {})[rest] = raw.pop(key)
        places.setdefault(name, origins[key].problem("", key))
    warnings: list[Problem] = []
    value = raw.get("plugins")
    if isinstance(value, str) or (isinstance(value, list) and value
                                  and all(isinstance(v, str) for v in value)):
        del raw["plugins"]
        warnings.append(origins["plugins"].problem(
            "Steep's plugin files (Kotlin scripts) cannot run in steepy; ignored. Declare Python "
            "plugins as a list of {name, type, object: module:attribute}", "plugins"))
    return settings, places, warnings


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out


_MESSAGES = {
    "int_parsing": "expected a whole number, got {kind} `{input}'",
    "int_type": "expected a whole number, got {kind}",
    "int_from_float": "expected a whole number, got `{input}'",
    "string_type": "expected a string, got {kind}",
    "list_type": "expected a list, got {kind}",
    "greater_than_equal": "must be at least {ge}, got {input}",
    "greater_than": "must be more than {gt}, got {input}",
    "less_than_equal": "must be at most {le}, got {input}",
    "string_too_short": "must not be empty",
    "literal_error": "`{input}' is not allowed here; expected {allowed}",
}


def _problem(error: Any, origins: dict[str, _Origin], fallback: str) -> Problem:
    """A pydantic error as a Problem at the place its value came from."""
    loc, model = list(error["loc"]), Config
    for i, part in enumerate(loc):  # field names (a default's errors) -> Steep's names
        name = _attribute_names(model).get(part) if isinstance(part, str) else None
        if name is None:
            break
        info = model.model_fields[name]
        loc[i], model = info.alias or name, info.annotation
        if not (isinstance(model, type) and issubclass(model, Section)):
            break
    cut = next((i for i in range(len(loc), 0, -1)
                if ".".join(map(str, loc[:i])) in LEAVES), len(loc))
    tail = json_path(loc[cut:])
    key = ".".join(map(str, loc[:cut])) + ("." if tail and tail[0] != "[" else "") + tail
    template = _MESSAGES.get(error["type"])
    if template:
        context = error.get("ctx", {})
        allowed = context.get("expected", "").replace("'", "")
        message = template.format(kind=_kind(error.get("input")), input=error.get("input"),
                                  allowed=allowed, **context)
    else:
        message = re.sub(r"^Value error, ", "", error["msg"])
    origin = origins.get(_base(key))
    if origin is None:  # a default that clashes with a value given next to it
        section = key.rsplit(".", 1)[0] + "."
        origin = next((o for k, o in origins.items() if k in LEAVES and k.startswith(section)),
                      None)
    if origin is None:
        return Problem(message, path=key, file=fallback)
    return origin.problem(message, key)


def load_config(directory: str | os.PathLike = ".",
                environ: Mapping[str, str] | None = None) -> Config:
    """The checked configuration of `directory`; InputError with every problem located."""
    environ = os.environ if environ is None else environ
    path = config_file(directory)
    document = _read(path) if path is not None else None
    raw: dict[str, Any] = {}
    origins: dict[str, _Origin] = {}
    problems: list[Problem] = []
    if document is not None and document.data:
        _collect(document, document.data, "", raw, origins, problems)
    _environment(environ, raw, origins)
    runtime_settings, runtime_places, warnings = _plugin_keys(raw, origins)
    warnings += _ignored(raw, origins, problems)
    config = None
    try:
        config = Config.model_validate(_nest(raw))
    except ValidationError as e:
        problems += [_problem(error, origins, str(path or FILE_NAME)) for error in e.errors()]
    if problems:
        error = InputError(problems)
        error.warnings = warnings  # type: ignore[attr-defined]  # shown with the problems
        raise error
    assert config is not None
    config._source = None if path is None else str(path)
    config._warnings = warnings
    config._runtime_settings, config._runtime_places = runtime_settings, runtime_places
    if "plugins" in origins:
        config._plugin_places = [origins["plugins"].problem("", f"plugins[{i}]")
                                 for i in range(len(config.plugins))]
    return config
