"""Constant input files of a submitted workflow: made absolute and checked to exist.

A value that a workflow gives to an input of data type `file` or `directory` (in the action,
through a variable with a value, or as an item of a constant list that a for-each hands such
an input) is a path. A relative one is resolved against a base directory: the directory
`steepy submit` or `steepy run` was started in (the submitter's), or, for a workflow POSTed
to the HTTP API, the server's working directory. The stored workflow holds the absolute path,
so the tool finds its file wherever the engine runs. A path that does not exist is a problem
at the place of its value (`file:line:column`), and so is an empty one. A number or boolean
(`--var text=2024', YAML's `no') is taken as its text, as the tool would get it. URLs
(`scheme://...`), values that actions write, and absolute paths POSTed to the HTTP API
(Steep's agents may see files the server does not) are left alone."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steepy.documents.variables import OPTION, GivenVars
from steepy.errors import Problem, json_path
from steepy.model.common import scalar_text
from steepy.model.workflow import ExecuteAction, ForEachAction, Variable, Workflow

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
    def __init__(self, data: Any, services: Mapping, base: InputBase, given: GivenVars | None):
        self.services, self.base, self.given = services, base, given
        declared = data.get("vars") if isinstance(data, dict) else None
        self.declared = {v.get("id"): i for i, v in enumerate(declared or [])
                         if isinstance(v, dict)}
        self.kinds: dict[int, str] = {}  # id(variable): the path type an input reads it as
        self.places: list[tuple[Variable, tuple]] = []  # where each is read, document order
        self.loops: list[ForEachAction] = []  # in document order: outer before inner
        self.problems: list[Problem] = []
        # what pathlib puts before a plain relative path (`quick`): the base's text and a
        # slash, none for `.' (as it makes it: so the text is the same either way)
        self.prefix = str(base.directory / "x")[:-1]

    def actions(self, actions: list, data: list, path: tuple) -> None:
        for i, (action, raw) in enumerate(zip(actions, data)):
            if isinstance(action, ExecuteAction) and isinstance(raw, dict):
                self.execute(action, raw, path + (i,))
            elif isinstance(action, ForEachAction) and isinstance(raw, dict):
                self.loops.append(action)
                self.places.append((action.input, self.where(
                    action.input, raw.get("input"), path + (i, "input"))))
                self.actions(action.actions, raw.get("actions") or [], path + (i, "actions"))

    def execute(self, action: ExecuteAction, raw: dict, path: tuple) -> None:
        service = self.services.get(action.service)
        if service is None:
            return
        listed = [("inputs", j) for j in range(len(raw.get("inputs") or []))]
        listed += [("parameters", j) for j in range(len(raw.get("parameters") or []))]
        for inp, (key, j) in zip(action.inputs, listed):
            param = service.parameter(inp.id)
            if param is None or param.data_type not in PATH_TYPES:
                continue
            self.kinds.setdefault(id(inp.var), param.data_type)
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
        quick = self.quick(text)
        if quick is not None:
            return quick
        path = Path(text)
        if path.is_absolute() and not self.base.check_absolute:
            return value
        resolved = path if path.is_absolute() else self.base.directory / path
        try:
            missing = "does not exist" if not resolved.exists() else ""
        except OSError as e:  # a name too long
            missing = f"cannot be checked: {e.strerror or e}"
        if missing:
            said = "" if path.is_absolute() else (
                f" (a relative path is resolved against {self.base.named}, "
                f"{self.base.directory})")
            message = f"input {kind} `{text}' {missing}{said}"
            self.problem(message + self.taken_as(value, var_id, item), where, var_id, item)
        return str(resolved)

    def quick(self, text: str) -> str | None:
        """The resolved path of `text` when it is plain (no `.', `//' or trailing slash
        for pathlib to take out, so its text is pathlib's) and exists, without pathlib: a
        for-each over 10,000 files spent a tenth of a second there. None otherwise: `value`
        then resolves it as before, and says why it is not there."""
        if ("//" in text or "/./" in text or text.startswith("./") or text == "."
                or text.endswith(("/", "/."))):
            return None
        if text.startswith("/"):
            if not self.base.check_absolute:
                return None
            resolved = text
        else:
            resolved = self.prefix + text
        try:
            os.stat(resolved)  # (what Path.exists asks)
        except (OSError, ValueError):
            return None
        return resolved

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


def resolve_input_files(workflow: Workflow, data: Any, services: Mapping, base: InputBase,
                        given: GivenVars | None = None) -> list[Problem]:
    """Make the workflow's relative constant input paths absolute against `base` (in place);
    the problems of those that do not exist, by JSON path in `data` (the document the
    workflow was read from) or where a value was `given`."""
    resolver = _Resolver(data, services, base, given)
    raw = data.get("actions") if isinstance(data, dict) else None
    resolver.actions(workflow.actions, raw or [], ("actions",))
    resolver.resolve()
    return resolver.problems

