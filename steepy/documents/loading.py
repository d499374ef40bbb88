"""Reading workflows, service metadata and macros from YAML or JSON files.

Every value is read together with its line and column, so that any later problem (schema,
model or validation) can name `file:line:column` and the JSON path. Duplicate keys are an
error. Nothing here raises anything but `InputError` on bad input.

Each rule about a document lives in one layer (tests/documents/test_validation_layers.py checks it):
the JSON Schema (steepy/schemas) holds the structure (types, required keys, enums, patterns,
unknown keys); the model's `from_json` converts what the schema let through and raises only
for what it cannot convert (a variable defined twice, policy values such as durations); the
validation modules hold the meaning (references, wiring, cycles, parameters, API versions,
cardinality ranges). Here the first two run in that order, so `from_json` never sees a document
of the wrong shape.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from steepy.errors import InputError, Problem, json_path
from steepy.documents.yamlreader import parse_yaml_all as _parse_yaml

# package data (the top-level schemas/ links here), so that an installed wheel validates
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
DOC_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class Document:
    """A parsed file: its data and where each JSON path starts in the text."""

    data: Any
    file: str
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    text: str | None = None  # the text it was read from, for parse_text/read_file documents

    def locate(self, problem: Problem, base: tuple = ()) -> Problem:
        """Fill in file, line and column of a problem from its JSON path (or the nearest parent)."""
        problem.file = problem.file or self.file
        if problem.line is None:
            path = problem.path
            full = json_path(base) + ("." if base and path and not path.startswith("[") else "") + path
            problem.line, problem.column = self._position(full)
        return problem

    def _position(self, path: str) -> tuple[int | None, int | None]:
        while True:
            if path in self.positions:
                return self.positions[path]
            if not path:
                return None, None
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""

    def fail(self, problems: list[Problem], base: tuple = ()) -> InputError:
        return InputError([self.locate(p, base) for p in problems])


# ---------------------------------------------------------------- parsing


def parse_yaml_all(text: str, name: str) -> list[Document]:
    """Every YAML document of `text`, with positions. Raises InputError (also for a text whose
    aliases stand for too many values: see steepy.documents.yamlreader)."""
    return [Document(data, name, positions) for data, positions in _parse_yaml(text, name)]


def _looks_like_json(text: str, name: str) -> bool:
    return name.endswith(".json") or text.lstrip()[:1] in ("{", "[")


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key `{key}'; each key may appear only once in an object")
        out[key] = value
    return out


def parse_text(text: str, name: str = "<input>") -> Document:
    """One document from YAML or JSON text (JSON when it starts with `{' or `['')."""
    if _looks_like_json(text, name):
        try:
            data = json.loads(text, object_pairs_hook=_reject_duplicates)
        except json.JSONDecodeError as e:
            raise InputError(Problem(f"not valid JSON: {e.msg}", file=name, line=e.lineno,
                                     column=e.colno)) from None
        except ValueError as e:  # duplicate key: find where with the YAML reader
            try:
                parse_yaml_all(text, name)
            except InputError as located:
                raise located from None
            raise InputError(Problem(str(e), file=name)) from None
        except RecursionError:
            raise InputError(Problem("the document is nested too deeply", file=name)) from None
        try:  # JSON is YAML: borrow its positions where the YAML reader agrees
            positions = parse_yaml_all(text, name)[0].positions
        except (InputError, IndexError):
            positions = {}
        return Document(data, name, positions, text)
    documents = parse_yaml_all(text, name)
    if not documents:
        raise InputError(Problem("the file is empty", file=name))
    if len(documents) > 1:
        raise InputError(Problem(f"expected one document but found {len(documents)} "
                                 "(separated by `---')", file=name))
    documents[0].text = text
    return documents[0]


def read_file(path: str | os.PathLike) -> Document:
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(Problem(f"cannot read file: {e.strerror or e}", file=name)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(Problem(f"not UTF-8 text (byte {e.start})", file=name)) from None
    return parse_text(text, name)


# ---------------------------------------------------------------- JSON Schemas


@lru_cache(maxsize=None)
def _validators() -> dict[str, Any]:
    """The three schemas, compiled once, sharing one registry for cross-file $refs."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = {}
    for kind in ("workflow", "service", "macro"):
        with open(SCHEMA_DIR / f"{kind}.schema.json", encoding="utf-8") as f:
            schemas[kind] = json.load(f)
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas.values() if "$id" in s)
    return {kind: Draft202012Validator(schema, registry=registry)
            for kind, schema in schemas.items()}


def _schema_message(error: Any) -> str:
    """Plain words for a jsonschema error."""
    validator, value = error.validator, error.instance
    if validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(value) - set(allowed)) if isinstance(value, dict) else []
        names = ", ".join(f"`{k}'" for k in extra) or "a property"
        return f"unknown property {names}; allowed here: {', '.join(allowed)}"
    if validator == "required":
        missing = [k for k in error.validator_value if isinstance(value, dict) and k not in value]
        return f"`{missing[0] if missing else error.validator_value[0]}' is required"
    if validator == "enum":
        return f"`{value}' is not allowed here; allowed: {', '.join(map(str, error.validator_value))}"
    if validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {expected}, got {_kind(value)} `{_short(value)}'"
    if validator in ("oneOf", "anyOf"):
        best = _best_sub_error(error)
        if best is not None:
            return _schema_message(best)
    if validator == "minimum":
        return f"{value} is too small; the minimum is {error.validator_value}"
    if validator == "pattern":
        description = error.schema.get("description")
        hint = f" ({description})" if description else ""
        return f"`{value}' does not have the expected form{hint}"
    description = error.schema.get("description")
    return error.message + (f" ({description})" if description else "")


def _best_sub_error(error: Any) -> Any:
    from jsonschema.exceptions import best_match

    context = list(error.context or [])
    return best_match(context) if context else None


def _kind(value: Any) -> str:
    from steepy.model.common import type_name

    return type_name(value)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


# what a whole document must be, for a document of the wrong type
_DOCUMENT_SHAPES = {"workflow": "a workflow must be an object with `api' and `actions'",
                    "service": "service metadata must be a service (an object) or a list of them",
                    "macro": "a macro file must hold a macro (an object) or a list of them"}


def schema_problems(data: Any, kind: str) -> list[Problem]:
    """Problems of `data` against schemas/<kind>.schema.json, one per failing place."""
    validator = _validators()[kind]
    problems = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        leaf = error
        if error.validator in ("oneOf", "anyOf") and error.context:
            leaf = _best_sub_error(error) or error
        parts = list(leaf.absolute_path)
        if leaf.validator == "additionalProperties" and isinstance(leaf.instance, dict):
            extra = sorted(set(leaf.instance) - set(leaf.schema.get("properties", {})))
            parts += extra[:1]  # point at the unknown key itself
        path = json_path(parts)
        if not parts and leaf.validator == "type":
            message = f"{_DOCUMENT_SHAPES[kind]}, not {_kind(data)}"
        else:
            message = _schema_message(error)
        problems.append(Problem(message, path=path))
    return _dedupe(problems)


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen, out = set(), []
    for p in problems:
        if (p.path, p.message) not in seen:
            seen.add((p.path, p.message))
            out.append(p)
    return out


# ---------------------------------------------------------------- model objects


def check_schema(document: Document, kind: str) -> None:
    """Raise every problem of `document.data` against the schema of `kind`, located."""
    problems = schema_problems(document.data, kind)
    if problems:
        raise document.fail(problems)


def build(document: Document, kind: str, make: Callable[[Any], Any]) -> Any:
    """Check `document.data` against the schema of `kind`, then build the model object."""
    check_schema(document, kind)
    try:
        return make(document.data)
    except InputError as e:
        raise document.fail(e.problems) from None


def read_workflow(path: str | os.PathLike):
    """A workflow file → (Workflow, Document)."""
    return workflow_from_document(read_file(path))


def parse_workflow(text: str, name: str = "<request>"):
    """Workflow text (YAML or JSON, as POSTed) → (Workflow, Document)."""
    return workflow_from_document(parse_text(text, name))


def workflow_from_document(document: Document):
    from steepy.model.workflow import Workflow

    return build(document, "workflow", Workflow.from_json), document


def expand_paths(spec: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """Files named by a file, a directory (its YAML/JSON files), a glob, or a list of these."""
    items = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
    found: list[Path] = []
    for item in items:
        text = str(item)
        if any(ch in text for ch in "*?["):
            matches = sorted(Path(p) for p in glob.glob(text, recursive=True))
        elif Path(text).is_dir():
            matches = sorted(p for p in Path(text).rglob("*") if p.suffix in DOC_SUFFIXES)
        else:
            matches = [Path(text)]
        found += [p for p in matches if p not in found]
    return found


class Definitions(dict):
    """Services or macros by id, as read from files: each remembers the document and JSON
    path it was read from, so a problem found in it later names its file:line:column."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.sources: dict[str, tuple[Document, tuple]] = {}

    def define(self, obj: Any, document: Document, base: tuple = ()) -> None:
        self[obj.id] = obj
        self.sources[obj.id] = (document, base)

    def copy(self) -> "Definitions":
        out = Definitions(self)
        out.sources = dict(self.sources)
        return out

    def locate(self, key: str, problem: Problem, parts: tuple = ()) -> Problem | None:
        """`problem` placed at `parts` inside definition `key`; None when it was not read
        from a file."""
        source = self.sources.get(key)
        if source is None:
            return None
        document, base = source
        problem.path = json_path(base + tuple(parts))
        return document.locate(problem)


def _read_many(spec, kind: str, make: Callable[[dict, tuple], Any], what: str,
               check: Callable[[Any, tuple], list[Problem]] = lambda obj, base: []) -> Definitions:
    """Definitions of `kind` from files: schema, then the model, then `check` (the problems of
    one definition on its own, placed at its position in the document)."""
    by_id = Definitions()
    where: dict[str, str] = {}
    problems: list[Problem] = []
    for path in expand_paths(spec):
        try:
            document = read_file(path)
            if document.data is None:
                continue  # an empty file declares nothing
            check_schema(document, kind)
            is_list = isinstance(document.data, list)
            for i, item in enumerate(document.data if is_list else [document.data]):
                position = (i,) if is_list else ()
                try:
                    obj = make(item, position)
                except InputError as e:
                    raise document.fail(e.problems) from None
                problems += [document.locate(p) for p in check(obj, position)]
                if obj.id in by_id:
                    problems.append(document.locate(Problem(
                        f"{what} id `{obj.id}' is already defined in {where[obj.id]}",
                        path=json_path(position + ("id",)))))
                    continue
                by_id.define(obj, document, position)
                where[obj.id] = str(path)
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    return by_id


def read_services(spec) -> Definitions:
    """Service metadata from a file, directory, glob or list → {id: Service}."""
    from steepy.model.service import Service
    from steepy.documents.validation_definitions import definition_problems

    return _read_many(spec, "service", Service.from_json, "service", definition_problems)


def read_macros(spec) -> Definitions:
    """Macros from a file, directory, glob or list → {id: Macro}."""
    from steepy.model.macro import Macro

    return _read_many(spec, "macro", Macro.from_json, "macro")
