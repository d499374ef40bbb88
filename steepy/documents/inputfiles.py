"""Constant input files of a submitted workflow: made absolute and checked to exist.

A value that a workflow gives to an input of data type `file` or `directory` (in the action,
its fallback or the workflow's catch, through a variable with a value, as an item of a
constant list that a for-each hands such an input, or to an include whose macro hands it to
one) is a path. A relative one is resolved against a base directory: the directory
`steepy submit` or `steepy run` was started in (the submitter's), or, for a workflow POSTed
to the HTTP API, the server's working directory. The stored workflow holds the absolute path,
so the tool finds its file wherever the engine runs; its text is kept as written (a trailing
`/' too), the base put before a relative one. A path that does not exist is a problem
at the place of its value (`file:line:column`), and so is an empty one. A number or boolean
(`--var text=2024', YAML's `no') is taken as its text, as the tool would get it. URLs
(`scheme://...`), values that actions write, and absolute paths POSTed to the HTTP API
(Steep's agents may see files the server does not) are left alone."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steepy.documents.variables import OPTION, GivenVars
from steepy.errors import Problem, json_path
from steepy.model.common import scalar_text
from steepy.model.macro import MACRO_INPUT, Macro
from steepy.model.wiring import InputParameter
from steepy.model.workflow import (ExecuteAction, Fallback, ForEachAction, IncludeAction, Variable,
                                   Workflow)

PATH_TYPES = ("file", "directory")


@dataclass(frozen=True)
class InputBase:
    """What relative input paths are resolved against, and how a message names it."""

    directory: Path
    named: str  # e.g. "the directory it was submitted from"
    check_absolute: bool = True  # False: absolute paths are passed on as given, unchecked

    @classmethod
    def submitter(cls) -> "InputBase":
        return cls(Path.cwd(), "the directory it was submitted from")

    @classmethod
    def server(cls, submitted_from: str | None = None) -> "InputBase":
        """For a workflow POSTed to the HTTP API: relative paths against the directory the
        client says it submitted from (`?base=`, an absolute path: `steepy submit --server`
        sends its own), else the server's working directory. An absolute path is Steep's:
        passed on to the agents unchecked, as they may see files the server does not."""
        if submitted_from is not None:
            return cls(Path(submitted_from), "the directory it was submitted from",
                       check_absolute=False)
        return cls(Path.cwd(), "the server's working directory", check_absolute=False)


class _Resolver:
    def __init__(self, data: Any, services: Mapping, macros: Mapping, base: InputBase,
                 given: GivenVars | None):
        self.services, self.macros, self.base, self.given = services, macros, base, given
        declared = data.get("vars") if isinstance(data, dict) else None
        self.declared = {v.get("id"): i for i, v in enumerate(declared or [])
                         if isinstance(v, dict)}
        self.kinds: dict[int, str] = {}  # id(variable): the path type an input reads it as
        self.places: list[tuple[Variable, tuple]] = []  # where each is read, document order
        self.loops: list[ForEachAction] = []  # in document order: outer before inner
        self.problems: list[Problem] = []
        # what comes before a relative path: the base's text and a slash
        self.prefix = str(base.directory).rstrip("/") + "/"

    def actions(self, actions: list, data: list, path: tuple) -> None:
        for i, (action, raw) in enumerate(zip(actions, data)):
            if not isinstance(raw, dict):
                continue
            if isinstance(action, ExecuteAction):
                self.execute(action, raw, path + (i,))
            elif isinstance(action, IncludeAction):
                self.include(action, raw, path + (i,))
            elif isinstance(action, ForEachAction):
                self.loops.append(action)
                self.places.append((action.input, self.where(
                    action.input, raw.get("input"), path + (i, "input"))))
                self.actions(action.actions, raw.get("actions") or [], path + (i, "actions"))

    def execute(self, action: ExecuteAction, raw: dict, path: tuple) -> None:
        listed = [("inputs", j) for j in range(len(raw.get("inputs") or []))]
        listed += [("parameters", j) for j in range(len(raw.get("parameters") or []))]
        self.inputs(action.service, action.inputs, raw, listed, path)
        if action.fallback is not None and isinstance(raw.get("fallback"), dict):
            self.fallback(action.fallback, raw["fallback"], path + ("fallback",))

    def fallback(self, fallback: Fallback, raw: dict, path: tuple) -> None:
        """An action's fallback, or the workflow's catch: what it reads, as an action's."""
        listed = [("inputs", j) for j in range(len(raw.get("inputs") or []))]
        self.inputs(fallback.service, fallback.inputs, raw, listed, path)

    def inputs(self, service_id: str, inputs: list[InputParameter], raw: dict,
               listed: list[tuple[str, int]], path: tuple) -> None:
        for inp, place in zip(inputs, listed):
            kind = path_type(self.services, service_id, inp.id)
            if kind is not None:
                self.read_as(inp, kind, raw, place, path)

    def include(self, action: IncludeAction, raw: dict, path: tuple) -> None:
        """The inputs of an include that its macro hands to inputs of data type file or
        directory (also through a for-each or an include of its own)."""
        macro = self.macros.get(action.macro)
        if macro is None:
            return
        kinds = macro_input_kinds(macro, self.services, self.macros)
        listed = [("inputs", j) for j in range(len(raw.get("inputs") or []))]
        for inp, place in zip(action.inputs, listed):
            if inp.id in kinds:
                self.read_as(inp, kinds[inp.id], raw, place, path)

    def read_as(self, inp: InputParameter, kind: str, raw: dict, place: tuple[str, int],
                path: tuple) -> None:
        """`inp` (at `place` in the action `raw` at `path`) is read as a path of `kind`."""
        key, j = place
        self.kinds.setdefault(id(inp.var), kind)
        here = path + (key, j)
        self.places.append((inp.var, here + ("value",) if inp.anonymous else
                            self.where(inp.var, raw[key][j].get("var"), here + ("var",))))

    def where(self, var: Variable, ref: Any, path: tuple) -> tuple:
        """The JSON path of the value of the variable referred to by `ref` at `path`: inline
        (`{id, value}`), or declared in `vars`."""
        if isinstance(ref, dict):
            return path + ("value",)
        return ("vars", self.declared[var.id], "value") if var.id in self.declared else path

    def resolve(self) -> None:
        """Each constant value read as a path: directly by an input, or as the list a for-each
        hands such an input one item at a time (an inner loop first: its list may be an outer
        loop's item)."""
        for loop in reversed(self.loops):
            if id(loop.enumerator) in self.kinds:
                self.kinds.setdefault(id(loop.input), self.kinds[id(loop.enumerator)])
        done: set[int] = set()  # one object per variable id
        for var, where in self.places:
            kind = self.kinds.get(id(var))
            if kind is None or var.value is None or id(var) in done:
                continue
            done.add(id(var))
            var.value = self.value(var.value, where, var.id, kind)

    def value(self, value: Any, where: tuple, var_id: str, kind: str, item: tuple = ()) -> Any:
        """`value` (at `where` in the workflow; `item`: the part of the variable's value it
        is) resolved; a problem when it does not exist."""
        if isinstance(value, list):
            return [self.value(v, where + (k,), var_id, kind, item + (k,))
                    for k, v in enumerate(value)]
        if not isinstance(value, (str, int, float)):  # an object, a null: not a path
            return value
        text = scalar_text(value)
        if not text:
            self.problem(f"an input {kind} cannot be an empty path", where, var_id, item)
            return value
        if "://" in text:
            return value
        absolute = text.startswith("/")
        if absolute and not self.base.check_absolute:
            return value
        resolved = text if absolute else self.absolute(text)
        missing = _missing(resolved)
        if missing:
            said = "" if absolute else (
                f" (a relative path is resolved against {self.base.named}, "
                f"{self.base.directory})")
            message = f"input {kind} `{text}' {missing}{said}"
            self.problem(message + self.taken_as(value, var_id, item), where, var_id, item)
        return resolved

    def absolute(self, text: str) -> str:
        """`text`, relative, below the base directory, as written: a trailing `/' or `/.'
        means something to a tool (`rsync src/ dst', `cp -r src/. dst', a link to a folder
        that `find' enters), so nothing is taken out but a leading `./'."""
        while text.startswith("./"):
            text = text[2:].lstrip("/")
        return self.prefix + text

    def problem(self, message: str, where: tuple, var_id: str, item: tuple) -> None:
        """`message` where the value was given, else at `where` in the workflow."""
        if self.given and var_id in self.given.places:
            self.problems.append(self.given.problem(var_id, message, item))
        else:
            self.problems.append(Problem(message, path=json_path(where)))

    def taken_as(self, value: Any, var_id: str, item: tuple) -> str:
        """What to add to the message of a number or boolean read as a path that does not
        exist: how it was read, and how to write it as a name."""
        if isinstance(value, str):
            return ""
        text, what = scalar_text(value), "boolean" if isinstance(value, bool) else "number"
        given = self.given if self.given and var_id in self.given.places else None
        written = given.written(var_id, item) if given else None
        if written is None:
            return f"; the value is the {what} {text}, taken as its text"
        if written == text:
            return ""
        option = given is not None and given.places[var_id][0].startswith(OPTION + " ")
        example = f"--var '{var_id}=\"{written}\"'" if option and not item else f'"{written}"'
        return (f"; YAML read `{written}' as the {what} {text}: to mean the name `{written}', "
                f"quote it ({example})")


def _missing(path: str) -> str:
    """Why `path` cannot be read, as a tool would name it: "" when something is there."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "does not exist"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "does not exist (a loop of links)"
        return f"cannot be checked: {e.strerror or e}"  # (a name too long)
    except ValueError as e:  # (a NUL character)
        return f"cannot be checked: {e}"
    return ""


def path_type(services: Mapping, service_id: str, param_id: str) -> str | None:
    """`file' or `directory' when the service's parameter reads a path, else None."""
    service = services.get(service_id)
    param = None if service is None else service.parameter(param_id)
    return param.data_type if param is not None and param.data_type in PATH_TYPES else None


def macro_input_kinds(macro: Macro, services: Mapping, macros: Mapping,
                      within: tuple[str, ...] = ()) -> dict[str, str]:
    """The input parameters of `macro` that its actions read as paths, and as which type."""
    if macro.id in within:  # (an include cycle: refused when the workflow is checked)
        return {}
    kinds = _read_as_paths(macro.actions, services, macros, within + (macro.id,))
    return {p.id: kinds[p.id] for p in macro.parameters
            if p.type == MACRO_INPUT and p.id in kinds}


def _read_as_paths(actions: list, services: Mapping, macros: Mapping,
                   within: tuple[str, ...]) -> dict[str, str]:
    """The ids of the variables `actions` read as paths (of a file or directory)."""
    kinds: dict[str, str] = {}

    def read(service_id: str, inputs: list[InputParameter]) -> None:
        for inp in inputs:
            kind = path_type(services, service_id, inp.id)
            if kind is not None:
                kinds.setdefault(inp.var.id, kind)

    for action in actions:
        if isinstance(action, ExecuteAction):
            read(action.service, action.inputs)
            if action.fallback is not None:
                read(action.fallback.service, action.fallback.inputs)
        elif isinstance(action, ForEachAction):
            for var_id, kind in _read_as_paths(action.actions, services, macros,
                                               within).items():
                kinds.setdefault(var_id, kind)
            if action.enumerator.id in kinds:
                kinds.setdefault(action.input.id, kinds[action.enumerator.id])
        elif isinstance(action, IncludeAction) and action.macro in macros:
            inner = macro_input_kinds(macros[action.macro], services, macros, within)
            for inp in action.inputs:
                if inp.id in inner:
                    kinds.setdefault(inp.var.id, inner[inp.id])
    return kinds


def resolve_input_files(workflow: Workflow, data: Any, services: Mapping, base: InputBase,
                        given: GivenVars | None = None,
                        macros: Mapping | None = None) -> list[Problem]:
    """Make the workflow's relative constant input paths absolute against `base` (in place);
    the problems of those that do not exist, by JSON path in `data` (the document the
    workflow was read from) or where a value was `given`. The inputs of its actions, their
    fallbacks, its catch, and those its includes hand to inputs in their `macros`."""
    resolver = _Resolver(data, services, macros or {}, base, given)
    raw = data if isinstance(data, dict) else {}
    resolver.actions(workflow.actions, raw.get("actions") or [], ("actions",))
    if workflow.catch is not None and isinstance(raw.get("catch"), dict):
        resolver.fallback(workflow.catch, raw["catch"], ("catch",))
    resolver.resolve()
    return resolver.problems

