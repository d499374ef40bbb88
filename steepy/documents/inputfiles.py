"""Constant input files of a submitted workflow: made absolute and checked to exist.

A value that a workflow gives to an input of data type `file` or `directory` (in the action,
or through a variable with a value) is a path. A relative one is resolved against a base
directory: the directory `steepy submit` or `steepy run` was started in (the submitter's),
or, for a workflow POSTed to the HTTP API, the server's working directory. The stored workflow
holds the absolute path, so the tool finds its file wherever the engine runs. A path that
does not exist is a problem at the place of its value (`file:line:column`); URLs
(`scheme://...`) and values that actions write are left alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steepy.documents.variables import GivenVars
from steepy.errors import Problem, json_path
from steepy.model.workflow import ExecuteAction, ForEachAction, Variable, Workflow

PATH_TYPES = ("file", "directory")


@dataclass(frozen=True)
class InputBase:
    """What relative input paths are resolved against, and how a message names it."""

    directory: Path
    named: str  # e.g. "the directory it was submitted from"

    @classmethod
    def submitter(cls) -> "InputBase":
        return cls(Path.cwd(), "the directory it was submitted from")

    @classmethod
    def server(cls) -> "InputBase":
        return cls(Path.cwd(), "the server's working directory")


class _Resolver:
    def __init__(self, data: Any, services: Mapping, base: InputBase, given: GivenVars | None):
        self.services, self.base, self.given = services, base, given
        declared = data.get("vars") if isinstance(data, dict) else None
        self.declared = {v.get("id"): i for i, v in enumerate(declared or [])
                         if isinstance(v, dict)}
        self.done: set[int] = set()  # variables already resolved (one object per id)
        self.problems: list[Problem] = []

    def actions(self, actions: list, data: list, path: tuple) -> None:
        for i, (action, raw) in enumerate(zip(actions, data)):
            if isinstance(action, ExecuteAction) and isinstance(raw, dict):
                self.execute(action, raw, path + (i,))
            elif isinstance(action, ForEachAction) and isinstance(raw, dict):
                self.actions(action.actions, raw.get("actions") or [], path + (i, "actions"))

    def execute(self, action: ExecuteAction, raw: dict, path: tuple) -> None:
        service = self.services.get(action.service)
        if service is None:
            return
        listed = [("inputs", j) for j in range(len(raw.get("inputs") or []))]
        listed += [("parameters", j) for j in range(len(raw.get("parameters") or []))]
        for inp, (key, j) in zip(action.inputs, listed):
            param = service.parameter(inp.id)
            if param is None or param.data_type not in PATH_TYPES or inp.var.value is None:
                continue
            if id(inp.var) in self.done:
                continue
            self.done.add(id(inp.var))
            where = self.where(inp.var, inp.anonymous, raw[key][j], path + (key, j))
            inp.var.value = self.value(inp.var.value, where, inp.var.id, param.data_type)

    def where(self, var: Variable, anonymous: bool, raw: Any, path: tuple) -> tuple:
        """The JSON path of the variable's value: in the input, inline, or declared."""
        if anonymous:
            return path + ("value",)
        if isinstance(raw.get("var"), dict):
            return path + ("var", "value")
        return ("vars", self.declared[var.id], "value") if var.id in self.declared else path

    def value(self, value: Any, where: tuple, var_id: str, kind: str) -> Any:
        if isinstance(value, list):
            return [self.value(v, where + (k,), var_id, kind) for k, v in enumerate(value)]
        if not isinstance(value, str) or not value or "://" in value:
            return value
        path = Path(value)
        resolved = path if path.is_absolute() else self.base.directory / path
        if not resolved.exists():
            said = "" if path.is_absolute() else (
                f" (a relative path is resolved against {self.base.named}, "
                f"{self.base.directory})")
            message = f"input {kind} `{value}' does not exist{said}"
            if self.given and var_id in self.given.places:
                self.problems.append(self.given.problem(var_id, message))
            else:
                self.problems.append(Problem(message, path=json_path(where)))
        return str(resolved)


def resolve_input_files(workflow: Workflow, data: Any, services: Mapping, base: InputBase,
                        given: GivenVars | None = None) -> list[Problem]:
    """Make the workflow's relative constant input paths absolute against `base` (in place);
    the problems of those that do not exist, by JSON path in `data` (the document the
    workflow was read from) or where a value was `given`."""
    resolver = _Resolver(data, services, base, given)
    raw = data.get("actions") if isinstance(data, dict) else None
    resolver.actions(workflow.actions, raw or [], ("actions",))
    return resolver.problems

