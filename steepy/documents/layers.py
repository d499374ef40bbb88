"""The first two layers of reading a workflow, service or macro, each on what the one before
let through: the JSON Schema, then the model's `from_json`.

The schema looks at the whole document. The parts it rejects are taken out
(`steepy.documents.pruning`) and the model is built from the rest; a part the model cannot
convert (a bad duration, a variable defined twice) is taken out in turn and the model built
again, until it is built or nothing is left. So a document with a bad key in one action and
a bad duration in another hears of both, and of nothing that follows from them; validation
(the third layer) then checks the model that was built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from steepy.documents.nulls import without_nulls
from steepy.documents.pruning import Pruned, path_parts
from steepy.documents.schemas import schema_errors, schema_problems
from steepy.errors import InputError, Problem, json_path

MAX_ROUNDS = 10_000  # each round takes out at least one part; a bound all the same


@dataclass
class Layered:
    """What the two layers made of a document: the model object built from the parts both let
    through (None when nothing is left), and the problems, with JSON paths of the document."""

    value: Any
    problems: list[Problem]
    pruned: Pruned

    def original(self, problem: Problem) -> Problem:
        """`problem`, found in the model that was built, with its path in the document (a
        problem located elsewhere already, such as one in a macro file, is left alone)."""
        if problem.file is None and problem.line is None:
            problem.path = json_path(self.pruned.original_parts(path_parts(problem.path)))
        return problem


def build_layers(data: Any, kind: str, make: Callable[[Any], Any]) -> Layered:
    """`data` checked against the schema of `kind`, then built by `make` (from_json) from
    what the schema let through; an explicit null of a field Steep's model may leave out
    is taken as left out (steepy.documents.nulls)."""
    data = without_nulls(data, kind)
    pruned = Pruned(data)
    errors = schema_errors(data, kind)
    problems = [e.problem for e in errors]
    for error in errors:
        pruned.reject(error.parts, error.unknown_key, error.missing_key)
    said = {(p.path, p.message) for p in problems}
    for _ in range(MAX_ROUNDS):
        view = pruned.view()
        if view is None or (errors and _new_schema_problems(view, kind, pruned, said)):
            break  # nothing left, or what is left is no document of its kind
        try:
            return Layered(make(view), problems, pruned)
        except InputError as e:
            found = [(p, pruned.original_parts(path_parts(p.path))) for p in e.problems]
        except Exception:  # noqa: BLE001 - what the schema let through misses a required key
            if not errors:
                raise
            break
        moved = False
        for problem, parts in found:
            problem.path = json_path(parts)
            problems.append(problem)
        for problem, parts in found:
            moved = pruned.reject(parts) or moved
        if not moved:
            break
    return Layered(None, problems, pruned)


def not_one(item: list, kind: str) -> Layered:
    """A list where a file's list of services or macros (`kind`) holds one of them."""
    return Layered(None, [Problem(f"expected a {kind} (an object), got a list")], Pruned(item))


def _new_schema_problems(view: Any, kind: str, pruned: Pruned, said: set) -> bool:
    """Does the pruned copy fail the schema in a way not reported yet? (Taking parts out
    must not leave a document the model cannot read.)"""
    for problem in schema_problems(view, kind):
        path = json_path(pruned.original_parts(path_parts(problem.path)))
        if (path, problem.message) not in said:
            return True
    return False
