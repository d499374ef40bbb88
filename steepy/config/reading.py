"""Reading the whole configuration: the file (steepy.yaml, else Steep's steep.yaml), then the
variables (steepy.config.gathering), every value located so that a problem names its
file:line:column or variable, checked against the model (steepy.config.model)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from pydantic import ValidationError

from steepy.config.gathering import FILE_NAME, empty_group, gather, not_a_group
from steepy.config.located import Origin, misspelt_variables, nest
from steepy.config.problems import problem_of
from steepy.config.model import GROUPS, LEAVES, NOT_YET, UNIMPLEMENTED, Config
from steepy.errors import InputError, Problem
from steepy.model.suggestions import closest

if TYPE_CHECKING:
    from steepy.config.runtime_sections import RuntimeSections


def _ignored(raw: dict, origins: dict, problems: list[Problem]) -> list[Problem]:
    """Warnings for the keys no field takes: unknown ones, and Steep's that steepy lacks
    (a group such as `agent' given a plain value is a problem)."""
    warnings: list[Problem] = []
    grouped: dict[str, list[str]] = {}
    for key in list(raw):
        if key in LEAVES:
            continue
        value = raw.pop(key)
        if (key in GROUPS or key in ("steep", "steepy")) and empty_group(value):
            continue  # `agent:' with nothing below it
        unimplemented = next((p for p in UNIMPLEMENTED + NOT_YET
                              if key == p or key.startswith(p + ".")), None)
        if unimplemented:
            grouped.setdefault(unimplemented, []).append(key)
            continue
        origin = origins[key]
        if key in GROUPS:
            problems.append(not_a_group(key, value, origin, LEAVES))
            continue
        close = closest(key, list(LEAVES) + list(UNIMPLEMENTED)) or next(
            (k for k in LEAVES if k.lower() == key.lower()), None)
        hint = f"; did you mean {close}?" if close else ""
        warnings.append(origin.problem(f"unknown key (ignored){hint}", key))
    for prefix, keys in grouped.items():
        what = ("steepy does not implement it yet" if prefix in NOT_YET
                else "a setting of Steep that steepy does not implement")
        others = f" (also {', '.join(keys[1:])})" if len(keys) > 1 else ""
        warnings.append(origins[keys[0]].problem(f"{what}; ignored{others}", keys[0]))
    return warnings


def load_config(directory: str | os.PathLike = ".",
                environ: Mapping[str, str] | None = None) -> Config:
    """The checked configuration of `directory`; InputError with every problem located (its
    `partial' is a Config of the defaults, the plugin declarations and the runtime sections,
    with which the runtimes' problems can be found too)."""
    from steepy.config.plugin_files import read_plugin_files
    from steepy.config.runtime_sections import RuntimeSections

    environ = os.environ if environ is None else environ
    path, raw, origins, problems = gather(Path(directory), environ, LEAVES)
    written = [(key, origins[key], value) for key, value in raw.items()]
    runtimes = RuntimeSections.taken_from(raw, origins, environ, str(path or FILE_NAME), problems)
    # Steep's `steep.plugins': files of descriptors, templates that see the keys written
    places, warnings = read_plugin_files(raw, origins, Path(directory), {
        "env": dict(environ), "config": _written(written)}, problems)
    warnings += _ignored(raw, origins, problems)
    warnings += misspelt_variables(environ, LEAVES, UNIMPLEMENTED + NOT_YET)
    config = None
    try:
        # relative paths in values (a webhook's `templateFile') are the file's
        directory = path.parent if path is not None else Path(directory)
        config = Config.model_validate(nest(raw), context={"directory": directory})
    except ValidationError as e:
        problems += [problem_of(error, origins, str(path or FILE_NAME), Config)
                     for error in e.errors()]
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
    config._origins = origins
    if plugin_places is not None and len(plugin_places) == len(config.plugins):
        config._plugin_places = plugin_places
    elif "plugins" in origins:
        config._plugin_places = [origins["plugins"].problem("", f"plugins[{i}]")
                                 for i in range(len(config.plugins))]
    return config
