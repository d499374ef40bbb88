"""Reading the configuration: the file (steepy.yaml, else Steep's steep.yaml), then the
variables, every value located so that a problem names its file:line:column or variable."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from pydantic import ValidationError

from steepy.config.located import Origin, environment, nest, problem_of
from steepy.config.model import (FILE_NAME, GROUPS, LEAVES, NOT_YET, STEEP_FILES, UNIMPLEMENTED,
                                 Config, Section, _attribute_names, _strip)
from steepy.errors import InputError, Problem
from steepy.model.common import type_name as _kind

if TYPE_CHECKING:
    from steepy.config.runtime_sections import RuntimeSections
    from steepy.documents.loading import Document


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
             problems: list[Problem]) -> None:
    """Flatten nested and dotted keys (leaves keep their value, even an object or a list);
    each origin keeps the keys as written, so that a runtime's section is nested again along
    its settings class (`capabilities: {cuda11.8: ...}' names the capability `cuda11.8')."""
    for name, value in data.items():
        written = (*keys, str(name))
        path = ".".join(written)
        key = _strip(path)
        origin = Origin(document, path, keys=written)
        if isinstance(value, dict) and value and key not in LEAVES:
            origins.setdefault(key, origin)  # a runtime's setting may be an object
            _collect(document, value, written, raw, origins, problems)
            continue
        if key in raw:
            first = origins[key].problem("", key)
            problems.append(origin.problem(f"set a second time (first at {first.location()})",
                                           key))
            continue
        raw[key] = value
        origins[key] = origin


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
            problems.append(_not_a_group(key, value, origin))
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


def _not_a_group(key: str, value: Any, origin: Origin) -> Problem:
    """A group of keys (`agent') given a plain value."""
    below = ", ".join(k for k in LEAVES if k.startswith(key + "."))
    return origin.problem(f"expected an object with the keys {below}, got {_kind(value)}", key)


def _override(directory: Path, environ: Mapping[str, str], raw: dict, origins: dict,
              problems: list[Problem]) -> None:
    """Steep's `overrideConfigFile': the keys of that file (relative to `directory'; read
    like the configuration, a template too, then its variables) replace the same keys."""
    name = raw.get("overrideConfigFile")
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
    _collect(document, document.data, (), override, places, problems)
    environment(environ, override, places)
    for key, value in override.items():
        for other in [k for k in raw if k.startswith(key + ".") or key.startswith(k + ".")]:
            del raw[other]
        raw[key], origins[key] = value, places[key]


def load_config(directory: str | os.PathLike = ".",
                environ: Mapping[str, str] | None = None) -> Config:
    """The checked configuration of `directory`; InputError with every problem located (its
    `partial' is a Config of the defaults, the plugin declarations and the runtime sections,
    with which the runtimes' problems can be found too)."""
    from steepy.config.plugin_files import read_plugin_files
    from steepy.config.runtime_sections import RuntimeSections

    environ = os.environ if environ is None else environ
    path, raw, origins, problems = _gather(Path(directory), environ, LEAVES)
    written = [(key, origins[key], value) for key, value in raw.items()]
    runtimes = RuntimeSections.taken_from(raw, origins, environ, str(path or FILE_NAME), problems)
    # Steep's `steep.plugins': files of descriptors, templates that see the keys written
    places, warnings = read_plugin_files(raw, origins, Path(directory), {
        "env": dict(environ), "config": _written(written)}, problems)
    warnings += _ignored(raw, origins, problems)
    config = None
    try:
        # relative paths in values (a webhook's `templateFile') are the file's
        directory = path.parent if path is not None else Path(directory)
        config = Config.model_validate(nest(raw), context={"directory": directory})
    except ValidationError as e:
        problems += [problem_of(error, origins, str(path or FILE_NAME)) for error in e.errors()]
    if problems:
        error = InputError(problems)
        error.warnings = warnings  # type: ignore[attr-defined]  # shown with the problems
        # what can still be checked, so that every problem comes out at once: the runtime
        # sections, against the runtimes steepy and the plugins declared here bring
        error.partial = _read_config(  # type: ignore[attr-defined]
            _declared_only(raw), path, warnings, runtimes, origins, places)
        raise error
    assert config is not None
    config = _read_config(config, path, warnings, runtimes, origins, places)
    config._written = _written(written)
    return config


def _gather(directory: Path, environ: Mapping[str, str], leaves: Mapping[str, bool]
            ) -> tuple[Path | None, dict[str, Any], dict[str, Origin], list[Problem]]:
    """The configuration file found, its values flattened (then the variables of `leaves',
    then `overrideConfigFile'), where each came from, and the problems found so far."""
    path = config_file(directory)
    document = _read(path, environ) if path is not None else None
    raw: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    problems: list[Problem] = []
    if document is not None and document.data:
        _collect(document, document.data, (), raw, origins, problems)
    environment(environ, raw, origins, leaves)
    _override(directory, environ, raw, origins, problems)
    return path, raw, origins, problems


def load_sections(names: tuple[str, ...], directory: str | os.PathLike = ".",
                  environ: Mapping[str, str] | None = None) -> dict[str, Section]:
    """Only the groups `names' of the configuration (`("db", "logs")'), read and checked as
    load_config reads and checks them, with the same model and defaults: for the commands
    that only read the database (issue 31). No other key is looked at, so a problem or an
    unknown key elsewhere neither stops them nor is shown. InputError with every problem of
    these groups, located."""
    environ = os.environ if environ is None else environ
    inside = tuple(f"{name}." for name in names)
    # with the key that names a file overriding them, which a variable may set
    leaves = {key: text for key, text in LEAVES.items()
              if key.startswith(inside) or key == "overrideConfigFile"}
    path, raw, origins, found = _gather(Path(directory), environ, leaves)
    mine = {key: value for key, value in raw.items() if key in names or key.startswith(inside)}
    problems = [p for p in found  # (a whole file's problem has no path: kept)
                if not p.path or p.path in names or p.path.startswith(inside)]
    problems += [_not_a_group(key, value, origins[key]) for key, value in mine.items()
                 if key in GROUPS and value not in (None, {}, [])]
    sections: dict[str, Section] = {}
    fields = _attribute_names(Config)
    for name in names:
        model = Config.model_fields[fields[name]].annotation
        assert isinstance(model, type) and issubclass(model, Section)
        values = {key[len(name) + 1:]: value for key, value in mine.items()
                  if key in leaves and key.startswith(name + ".")}
        try:
            sections[name] = model.model_validate(nest(values))
        except ValidationError as e:
            problems += [problem_of(error, origins, str(path or FILE_NAME), model, name + ".")
                         for error in e.errors()]
    if problems:
        raise InputError(problems)
    return sections


def _written(values: list[tuple[str, Origin, Any]]) -> dict[str, Any]:
    """The keys as written (`tmpPath', `steep.tmpPath') and each also as Steep names it
    (`steep.tmpPath'), which its templates use: `config["steep.tmpPath"]'."""
    out: dict[str, Any] = {}
    for key, origin, value in values:
        out[f"steep.{key}"] = value
        if origin.path:
            out.setdefault(origin.path, value)
    return out


def _declared_only(raw: dict) -> Config:
    """Of a configuration with problems, the defaults with its plugin declarations (none
    when they have a problem of their own)."""
    try:
        return Config.model_validate({"plugins": raw.get("plugins") or []})
    except ValidationError:
        return Config()


def _read_config(config: Config, path: Path | None, warnings: list[Problem],
                 runtimes: RuntimeSections, origins: dict[str, Origin],
                 plugin_places: list[Problem] | None) -> Config:
    """`config' with what reading it found besides its values; `plugin_places': where each
    plugin was declared when `plugins' named files (see plugin_files)."""
    config._source = None if path is None else str(path)
    config._warnings = warnings
    config._runtime_sections = runtimes
    if plugin_places is not None and len(plugin_places) == len(config.plugins):
        config._plugin_places = plugin_places
    elif "plugins" in origins:
        config._plugin_places = [origins["plugins"].problem("", f"plugins[{i}]")
                                 for i in range(len(config.plugins))]
    return config
