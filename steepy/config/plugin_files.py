"""Steep's plugin descriptor files: `plugins` (Steep's `steep.plugins`) may name files,
globs or a list of these instead of listing the plugins. Each file holds a YAML (or JSON) list
of descriptors, read like service metadata: a template when its front matter says
`template: true` (with `config` and `env`), every problem at its file:line:column.

Globs are relative to the directory the configuration is read from, as Steep's are to its
working directory (`conf/plugins/*.yaml` beside `conf/steep.yaml`). A descriptor of a Kotlin
script (`scriptFile` and no `object`) cannot run in steepy: it is left out with a warning,
as before this module read the files at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from steepy.config.located import Origin
from steepy.config.problems import problem_of
from steepy.config.model import Config
from steepy.documents.loading import Document, expand_paths, read_file
from steepy.errors import InputError, Problem


def is_file_form(value: Any) -> bool:
    """`plugins` names files (Steep's form) rather than listing the plugins (steepy.yaml's)."""
    return isinstance(value, str) or (isinstance(value, list)
                                      and any(isinstance(v, str) for v in value))


def read_plugin_files(raw: dict, origins: dict[str, Origin], directory: Path,
                      context: Mapping[str, Any], problems: list[Problem]
                      ) -> tuple[list[Problem] | None, list[Problem]]:
    """Replace `raw["plugins"]` in Steep's form by the descriptors its files hold (a list
    may mix names and descriptors written in place). Returns where each descriptor was
    written (None: `plugins` was not in that form) and the warnings; problems are added to
    `problems`."""
    value = raw.get("plugins")
    if not is_file_form(value):
        return None, []
    origin = origins["plugins"]
    declared: list[Any] = []
    places: list[Problem] = []
    warnings: list[Problem] = []
    for index, item in enumerate(value if isinstance(value, list) else [value]):
        if not isinstance(item, str):  # a descriptor in steepy.yaml itself
            declared.append(item)
            places.append(origin.problem("", f"plugins[{index}]"))
            continue
        pattern = item if Path(item).is_absolute() else str(directory / item)
        for path in expand_paths(pattern):
            try:
                document = read_file(path, context)
            except InputError as e:
                problems += e.problems
                continue
            found = _descriptors(document, problems, warnings)
            declared += [descriptor for descriptor, _ in found]
            places += [place for _, place in found]
    raw["plugins"] = declared
    return places, warnings


def _descriptors(document: Document, problems: list[Problem],
                 warnings: list[Problem]) -> list[tuple[Any, Problem]]:
    """The checked descriptors of one file and where each is."""
    data = document.data
    if data is None:
        return []  # an empty file declares nothing
    if not isinstance(data, list):
        problems.append(document.locate(Problem(
            "a plugin file holds a list of plugin descriptors", path="")))
        return []
    found: list[tuple[Any, Problem]] = []
    for index, item in enumerate(data):
        place = document.locate(Problem("", path=f"[{index}]"))
        if isinstance(item, dict) and "scriptFile" in item and "object" not in item:
            place.message = (f"plugin `{item.get('name')}' is a Kotlin script (scriptFile), "
                             "which steepy cannot run; ignored. Give it `object: "
                             "module:attribute', the Python object that implements it")
            warnings.append(place)
            continue
        try:
            (checked,) = Config.model_validate({"plugins": [item]}).plugins
        except ValidationError as e:
            problems += [_in_file(error, index, document) for error in e.errors()]
            continue
        found.append((checked, place))
    return found


def _in_file(error: Any, index: int, document: Document) -> Problem:
    """A problem of descriptor `index` of `document` at its place in the file."""
    said = problem_of(error, {"plugins": Origin(document)}, document.file, Config)
    path = f"[{index}]" + said.path.removeprefix("plugins[0]")
    return document.locate(Problem(said.message, path=path))
