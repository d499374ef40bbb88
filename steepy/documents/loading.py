"""Reading workflows, service metadata and macros from YAML or JSON files.

Every value is read together with its line and column, so that any later problem (schema,
model or validation) can name `file:line:column` and the JSON path. Duplicate keys are an
error, and so is a value no tool can take (NaN or infinity, a string with a NUL character or
a lone surrogate), where it is written, and JSON nested more deeply than YAML may be
(steepy.documents.values). Nothing here raises anything but `InputError` on bad input.

Each rule about a document lives in one layer (tests/documents/test_validation_layers.py checks it):
the JSON Schema (steepy/schemas) holds the structure (types, required keys, enums, patterns,
unknown keys); the model's `from_json` converts what the schema let through and raises only
for what it cannot convert (a variable defined twice, policy values such as durations); the
validation modules hold the meaning (references, wiring, cycles, parameters, API versions,
cardinality ranges). Here the first two run, each on the parts the one before let through
(`steepy.documents.layers`), so `from_json` never sees a part of the wrong shape and every
problem of both comes out at once.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from steepy.errors import InputError, Problem, json_path
from steepy.documents import templating
from steepy.documents.layers import Layered, build_layers, not_one
from steepy.documents.schemas import SCHEMA_DIR, schema_problems  # noqa: F401 (re-exported)
from steepy.documents.schemas import KeyProblem
from steepy.documents.yamlreader import parse_yaml_all as _parse_yaml
from steepy.documents.yamlreader import template_problem
from steepy.documents.values import SURROGATE_ESCAPE, check_unicode, unusable_values

DOC_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class Document:
    """A parsed file: its data, where each JSON path starts in the text, and where the key
    of each object entry is written (`inptus:' of `inptus: [...]')."""

    data: Any
    file: str
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    text: str | None = None  # the text it was read from, for parse_text/read_file documents
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)

    def locate(self, problem: Problem, base: tuple = ()) -> Problem:
        """Fill in file, line and column of a problem from its JSON path (or the nearest
        parent; a KeyProblem: the key itself); `base`: its path is inside the value at `base`
        (then it is made whole)."""
        problem.file = problem.file or self.file
        if problem.line is None:
            path = problem.path
            full = json_path(base) + ("." if base and path and not path.startswith("[") else "") + path
            problem.path = full
            key = self.keys.get(full) if isinstance(problem, KeyProblem) else None
            problem.line, problem.column = key or self._position(full)
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
    aliases stand for too many values: see steepy.documents.yamlreader); values unchecked."""
    check_unicode(text, name)
    return [Document(data, name, positions, keys=keys)
            for data, positions, keys in _parse_yaml(text, name)]


def _looks_like_json(text: str, name: str) -> bool:
    return name.endswith(".json") or text.lstrip()[:1] in ("{", "[")


def _yaml_positions_text(text: str) -> str:
    """JSON `text' for the YAML reader, which tells its positions: a surrogate's escape
    replaced by one of the same length that the reader takes."""
    return SURROGATE_ESCAPE.sub(r"\1\\u0058", text) if "\\u" in text else text


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key `{key}'; each key may appear only once in an object")
        out[key] = value
    return out


def parse_text(text: str, name: str = "<input>", context: Mapping[str, Any] | None = None,
               check: bool = True) -> Document:
    """One document from YAML or JSON text (JSON when it starts with `{' or `['').
    `context': the file is of a kind Steep renders as a template (steepy.yaml, service
    metadata, macros) when its front matter asks, with these values (`env', `config').
    InputError for values no tool can take and too deep (`unusable_values'); with `check'
    False, only too deep: the caller checks the values it uses (of a vars file: not those a
    `--var' replaces)."""
    check_unicode(text, name)
    document = _parse_text(text, name, context)
    problems = [Problem(message, path=json_path(parts))
                for parts, message in unusable_values(document.data, check)]
    if problems:
        raise document.fail(problems)
    return document


def _parse_text(text: str, name: str, context: Mapping[str, Any] | None) -> Document:
    if _looks_like_json(text, name):
        try:
            data = json.loads(text, object_pairs_hook=_reject_duplicates)
        except json.JSONDecodeError as e:
            raise InputError(Problem(f"not valid JSON: {e.msg}", file=name, line=e.lineno,
                                     column=e.colno)) from None
        except ValueError as e:  # duplicate key: find where with the YAML reader
            try:
                parse_yaml_all(_yaml_positions_text(text), name)
            except InputError as located:
                raise located from None
            raise InputError(Problem(str(e), file=name)) from None
        except RecursionError:
            raise InputError(Problem("the document is nested too deeply", file=name)) from None
        try:  # JSON is YAML: borrow its positions where the YAML reader agrees
            read = parse_yaml_all(_yaml_positions_text(text), name)[0]
            positions, keys = read.positions, read.keys
        except (InputError, IndexError):
            positions, keys = {}, {}
        return Document(data, name, positions, text, keys)
    if context is not None:
        return _parse_templated(text, name, context)
    template = template_problem(text, name)
    if template is not None:
        raise InputError(template)
    documents = parse_yaml_all(text, name)
    if not documents:
        raise InputError(Problem("the file is empty", file=name))
    if len(documents) > 1:
        raise InputError(Problem(f"expected one document but found {len(documents)} "
                                 "(separated by `---')", file=name))
    documents[0].text = text
    return documents[0]


def _parse_templated(text: str, name: str, context: Mapping[str, Any]) -> Document:
    """A file Steep reads through its template engine: rendered when its front matter says
    `template: true', its front matter left out either way; problems placed in the file."""
    rendered = templating.render(text, name, context)
    if rendered is None:
        source = templating.split(text)
        document = _parse_text("\n" * (source.first - 1) + source.body, name, None)
        document.text = text
        return document
    try:
        document = parse_text(rendered.text, name, check=False)  # checked once relocated
    except InputError as e:
        raise templating.relocated(e, rendered) from None
    document.positions = templating.relocated_positions(document.positions, rendered)
    document.keys = templating.relocated_positions(document.keys, rendered)
    document.text = text
    return document


def read_file(path: str | os.PathLike, context: Mapping[str, Any] | None = None,
              check: bool = True) -> Document:
    """One document from a file; `context', `check': see parse_text."""
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(Problem(f"cannot read file: {e.strerror or e}", file=name)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(Problem(f"not UTF-8 text (byte {e.start})", file=name)) from None
    return parse_text(text, name, context, check)


# ---------------------------------------------------------------- model objects


def check_schema(document: Document, kind: str) -> None:
    """Raise every problem of `document.data` against the schema of `kind`, located."""
    problems = schema_problems(document.data, kind)
    if problems:
        raise document.fail(problems)


def build(document: Document, kind: str, make: Callable[[Any], Any]) -> Any:
    """The model object of `document.data`, built by `make` (a from_json) from what the schema
    of `kind` lets through; InputError with the problems of both layers otherwise."""
    layered = build_layers(document.data, kind, make)
    if layered.problems:
        raise document.fail(layered.problems)
    return layered.value


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
        # id -> (document, JSON path of the definition in it, what it was built from)
        self.sources: dict[str, tuple[Document, tuple, Layered | None]] = {}

    def define(self, obj: Any, document: Document, base: tuple = (),
               layered: Layered | None = None) -> None:
        """`obj`, read at `base` in `document`; `layered`: it was built from what was left of
        its definition after the parts with problems were taken out."""
        self[obj.id] = obj
        self.sources[obj.id] = (document, base, layered)

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
        document, base, layered = source
        if layered is not None:
            parts = layered.pruned.original_parts(tuple(parts))
        problem.path = json_path(base + tuple(parts))
        return document.locate(problem)


def layered_items(document: Document, kind: str,
                  make: Callable[[Any], Any]) -> Iterator[tuple[tuple, Layered]]:
    """(JSON path, what the layers made of it) of each service or macro of a document: a
    list of them or a single one. A document of another shape raises InputError."""
    if not isinstance(document.data, (list, dict)):
        check_schema(document, kind)
    is_list = isinstance(document.data, list)
    for i, item in enumerate(document.data if is_list else [document.data]):
        if is_list and isinstance(item, list):  # (the schema takes a list: a file of them)
            yield (i,), not_one(item, kind)
            continue
        yield ((i,) if is_list else ()), build_layers(item, kind, make)


def template_context(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What Steep gives a service or macro file's template: `env' (the environment
    variables) and `config' (the configuration's keys, dotted as written: `steep.tmpPath')."""
    return {"env": dict(os.environ), "config": dict(config or {})}


def read_definitions(spec, kind: str,
                     context: Mapping[str, Any] | None = None) -> tuple[Definitions, list[Problem]]:
    """Services or macros (`kind`) from files, and every problem of them: the schema's, the
    model's, those of a service definition on its own, ids defined twice. A definition with
    problems is kept when the model could be built from the rest of it (so that, say, the
    runtime of a service with a bad duration is checked too). `context': the values of
    templates (see template_context)."""
    from steepy.documents.validation_definitions import definition_problems
    from steepy.model.macro import Macro
    from steepy.model.service import Service

    make = Service.from_json if kind == "service" else Macro.from_json
    by_id = Definitions()
    where: dict[str, str] = {}
    problems: list[Problem] = []
    for path in expand_paths(spec):
        try:
            document = read_file(path, context or template_context())
            if document.data is None:
                continue  # an empty file declares nothing
            for base, layered in layered_items(document, kind, make):
                problems += [document.locate(p, base) for p in layered.problems]
                obj = layered.value
                if obj is None:
                    continue
                own = definition_problems(obj) if kind == "service" else []
                problems += [document.locate(layered.original(p), base) for p in own]
                if obj.id in by_id:
                    problems.append(document.locate(Problem(
                        f"{kind} id `{obj.id}' is already defined in {where[obj.id]}",
                        path=json_path(base + ("id",)))))
                    continue
                by_id.define(obj, document, base, layered)
                where[obj.id] = str(path)
        except InputError as e:
            problems += e.problems
    return by_id, problems


def _read_all(spec, kind: str, context: Mapping[str, Any] | None = None) -> Definitions:
    by_id, problems = read_definitions(spec, kind, context)
    if problems:
        raise InputError(problems)
    return by_id


def read_services(spec, context: Mapping[str, Any] | None = None) -> Definitions:
    """Service metadata from a file, directory, glob or list → {id: Service}."""
    return _read_all(spec, "service", context)


def read_macros(spec, context: Mapping[str, Any] | None = None) -> Definitions:
    """Macros from a file, directory, glob or list → {id: Macro}."""
    return _read_all(spec, "macro", context)
