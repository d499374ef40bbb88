"""Values given at submit time for a workflow's variables (`--var name=value`, `--vars
FILE`, the API's `vars`, the query parameter `vars` of POST /workflows, the UI's form).

Only a variable that the workflow declares with a default `value` can be set: the others are
written by actions. Each value is remembered with where it was given (`--var`, a line of the
vars file, `<vars>`), so that a name the workflow does not have, or a value the workflow
cannot use, is reported there like every other problem (exit code 2, nothing stored); a
problem with an item of a list given (a file that does not exist) at the item itself
(`vars.yaml:3:19: files[1]: ...', `--var files:1:12: files[1]: ...').

A value no tool can take is refused the same way, at its item: an object (where the default
value is not one), a number that is not finite (NaN and infinity are not JSON), a string with
a NUL character (not in a command line) or a lone surrogate (not Unicode: the engine could
not pass it on), a `--var` value that is not UTF-8; a variable id with a NUL character or a
lone surrogate. The values of a vars file are checked here, not as it is read: a value that
a `--var` replaces is not told."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from steepy.documents.loading import Document, parse_yaml_all, read_file
from steepy.documents.values import shown, unusable as _unusable
from steepy.documents.pruning import path_parts
from steepy.model.suggestions import closest
from steepy.errors import InputError, Problem, json_path

OPTION = "--var"
GIVEN = "<vars>"  # where the values of a mapping (API, HTTP) are
TAKES = "a string, number, boolean or list"  # what a variable without an object default takes
_SCALAR = re.compile(r"[^\s,\]}#]+")  # a number or boolean as written in YAML


@dataclass
class GivenVars:
    """Values by variable id, each with the place it was given at (file, line, column)."""

    values: dict[str, Any] = field(default_factory=dict)
    places: dict[str, tuple[str, int | None, int | None]] = field(default_factory=dict)
    # the document each value was read from, and the JSON path (parts) of the value in it
    sources: dict[str, tuple[Document, tuple]] = field(default_factory=dict)
    # where each name itself was written (a vars file's key), when not at `places'
    names: dict[str, tuple[str, int | None, int | None]] = field(default_factory=dict)

    @classmethod
    def of(cls, values: Mapping[str, Any] | None, file: str = GIVEN) -> "GivenVars":
        values = dict(values or {})
        return cls(values, {name: (file, None, None) for name in values})

    def __bool__(self) -> bool:
        return bool(self.values)

    def update(self, other: "GivenVars") -> "GivenVars":
        """These values, with `other`'s put over them (a later option wins)."""
        self.values.update(other.values)
        self.places.update(other.places)
        for name in other.values:
            self.names.pop(name, None)
            self.sources.pop(name, None)
        self.sources.update(other.sources)
        self.names.update(other.names)
        return self

    def only(self, names: Iterable[str]) -> "GivenVars":
        """The values of `names`, with their places."""
        kept = [name for name in names if name in self.values]
        return GivenVars({n: self.values[n] for n in kept},
                         {n: self.places[n] for n in kept if n in self.places},
                         {n: self.sources[n] for n in kept if n in self.sources},
                         {n: self.names[n] for n in kept if n in self.names})

    def name_problem(self, name: str, message: str) -> Problem:
        """`message` about the name itself (one the workflow does not have), where the name
        was written (a vars file's key), else where its value was given."""
        if name in self.names:
            file, line, column = self.names[name]
            return Problem(message, file=file, line=line, column=column)
        return self.problem(name, message)

    def problem(self, name: str, message: str, item: tuple = ()) -> Problem:
        """`message` at the place `name` was given; `item`: at that part of its value (the
        JSON path `files[1]`, and its own line and column when it was read from a text)."""
        file, line, column = self.places.get(name, (GIVEN, None, None))
        if not item:
            return Problem(message, path=name if file == GIVEN else "", file=file, line=line,
                           column=column)
        source = self.sources.get(name)
        if source is not None:
            document, base = source
            located = document.locate(Problem(message, path=json_path(base + tuple(item))))
            line, column = located.line, located.column
        return Problem(message, path=json_path((name,) + tuple(item)), file=file, line=line,
                       column=column)

    def problem_at(self, path: str, message: str) -> Problem | None:
        """`message`, said of `path` in the values given (`files[1]`, as a server reports
        it), placed where that value was given; None for a path of no value given."""
        name = path if path in self.places else next(iter(path_parts(path)), None)
        if not isinstance(name, str) or name not in self.places:
            return None
        return self.problem(name, message, path_parts(path[len(name):]))

    def written(self, name: str, item: tuple = ()) -> str | None:
        """How the number or boolean at `item` of the value of `name` was written (`no' of
        `--var text=no', read as false), when it was read from a text; None otherwise."""
        document, base = self.sources.get(name, (None, ()))
        if document is None or document.text is None:
            return None
        line, column = document.positions.get(json_path(base + tuple(item)), (None, None))
        lines = document.text.splitlines()
        if line is None or column is None or line > len(lines):
            return None
        found = _SCALAR.match(lines[line - 1], column - 1)
        return found.group() if found else None


def read_given(files: Iterable[str], options: Iterable[str]) -> GivenVars:
    """The values of `--vars` files, then of `--var` options (a later one wins); InputError
    with the problems of all of them."""
    given, problems = GivenVars(), []
    for read, source in [(from_file, path) for path in files] + [(from_options, options)]:
        try:
            given.update(read(source))
        except InputError as e:
            problems += e.problems
    problems += given_problems(given)  # told before the values are sent to a server
    if problems:
        raise InputError(problems)
    return given


def given_problems(given: GivenVars) -> list[Problem]:
    """The problems of the ids and values given that no workflow can use (`unusable`, an
    object taken as allowed), where they were given."""
    problems = []
    for name, value in given.values.items():
        wrong = _wrong_name(given, name)
        problems += [wrong] if wrong else [given.problem(name, message, item) for item, message
                                           in unusable(name, value, objects=True)]
    return problems


def _wrong_name(given: GivenVars, name: str) -> Problem | None:
    """The problem of a variable id with a NUL character or a lone surrogate, at its place
    (the id written escaped: a problem must be printable, also as UTF-8)."""
    why = _unusable(name)
    if why is None:
        return None
    file, line, column = given.places.get(name, (GIVEN, None, None))
    return Problem(f"variable id `{shown(name)}': {why}", file=file, line=line, column=column)


def from_options(options: Iterable[str]) -> GivenVars:
    """`--var name=value` options; each value is read as YAML (`[1, 2]` is a list, `3` a
    number, `'3'` a string). InputError with every malformed one."""
    given, problems = GivenVars(), []
    for option in options:
        name, equals, text = option.partition("=")
        name = name.strip()
        if not equals or not name:
            problems.append(Problem(f"`{option}' is not name=value", file=OPTION))
            continue
        try:  # YAML only: `[a, b]' is a list of two strings, not bad JSON
            _utf8(text, f"{OPTION} {name}")
            found = parse_yaml_all(text, f"{OPTION} {name}") if text.strip() else []
            value = found[0].data if found else ""
        except InputError as e:
            problems += e.problems
            continue
        if len(found) > 1:  # (`a\n---\nb': the first alone was kept, without a word)
            problems.append(Problem(
                f"holds {len(found)} YAML documents (a line `---' starts one); a value is one "
                '(text with such a line: in double quotes, "a\\n---\\nb")',
                file=f"{OPTION} {name}"))
            continue
        given.values[name] = value
        given.places[name] = (f"{OPTION} {name}", None, None)
        if found:
            found[0].text = text  # to tell how a value was written (GivenVars.written)
            given.sources[name] = (found[0], ())
    if problems:
        raise InputError(problems)
    return given


def _utf8(text: str, name: str) -> None:
    """InputError for a command-line value with bytes that are not UTF-8 (Python holds each
    as a lone surrogate, which the YAML reader cannot take)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        byte = ord(text[e.start]) - 0xDC00 if "\udc80" <= text[e.start] <= "\udcff" else None
        said = f" (byte 0x{byte:02x})" if byte is not None else ""
        raise InputError(Problem(f"not valid UTF-8{said}", file=name, line=1,
                                 column=e.start + 1)) from None


def from_file(path: str) -> GivenVars:
    """A YAML or JSON file of `name: value` pairs (`--vars FILE`)."""
    document = read_file(path, check=False)  # read_given checks the values it keeps
    if not isinstance(document.data, dict):
        raise InputError(Problem("a vars file holds `name: value' pairs (an object)",
                                 file=path, line=1, column=1))
    places, sources, names = {}, {}, {}
    for name in document.data:
        line, column = document.positions.get(str(name), (None, None))
        places[str(name)] = (path, line, column)
        sources[str(name)] = (document, (str(name),))
        if str(name) in document.keys:
            names[str(name)] = (path, *document.keys[str(name)])
    return GivenVars({str(k): v for k, v in document.data.items()}, places, sources, names)


def with_vars(document: Document, given: GivenVars) -> Document:
    """`document` with the default values of the given variables replaced (its positions and
    text stay: the source shown is the file as written, the values given are kept beside).
    InputError at the given places: a name the workflow does not declare, a variable
    without a default value, a value it cannot use (`unusable`)."""
    changed, _, problems = apply_vars(document, given)
    if problems:
        raise InputError(problems)
    return changed


def apply_vars(document: Document, given: GivenVars) -> tuple[Document, GivenVars, list[Problem]]:
    """`document` with the values given that it can take (see with_vars), those values, and
    the problems of the others (so that the rest is checked too and every problem is told)."""
    data = copy.deepcopy(document.data)
    declared = data.get("vars") if isinstance(data, dict) else None
    entries = {entry.get("id"): entry for entry in declared or [] if isinstance(entry, dict)}
    settable = [name for name, entry in entries.items() if "value" in entry]
    problems, taken = [], []
    for name, value in given.values.items():
        entry = entries.get(name)
        wrong = _wrong_name(given, name)
        if wrong is not None:
            problems.append(wrong)
        elif entry is None:
            problems.append(given.name_problem(name, _unknown(name, settable)))
        elif "value" not in entry:
            problems.append(given.name_problem(
                name, f"variable `{name}' has no default value in the workflow, so it cannot "
                "be set (a variable without a `value' is one for an action to write)"))
        else:
            found = [given.problem(name, message, item) for item, message in
                     unusable(name, value, isinstance(entry["value"], Mapping))]
            if found:
                problems += found
                continue
            entry["value"] = value
            taken.append(name)
    changed = Document(data, document.file, document.positions, document.text, document.keys)
    return changed, given.only(taken), problems


def unusable(name: str, value: Any, objects: bool, item: tuple = ()) -> Iterator[tuple]:
    """(item, message) for each part of the value given for `name` that no workflow can use:
    an object (unless `objects`: where the default value is one), what no document may hold
    (steepy.documents.loading.unusable: a number that is not finite, a string or key with a
    NUL character or a lone surrogate)."""
    if isinstance(value, (str, float)):
        why = _unusable(value)
        if why is not None:
            yield item, why
    elif isinstance(value, list):
        for k, part in enumerate(value):
            yield from unusable(name, part, objects, item + (k,))
    elif isinstance(value, Mapping) and not objects:
        yield item, f"variable `{name}' takes {TAKES}, not an object"
    elif isinstance(value, Mapping):
        for key, part in value.items():
            why = _unusable(key)
            if why is not None:
                yield item, f"key `{shown(str(key))}': {why}"
            else:
                yield from unusable(name, part, objects, item + (str(key),))


def _unknown(name: str, settable: list[str]) -> str:
    close = closest(name, settable)
    hint = (f"; did you mean `{close}'?" if close else
            " (it has: " + ", ".join(f"`{n}'" for n in settable) + ")" if settable else
            " (it has none with a default value)")
    return f"the workflow has no variable `{name}' that can be set{hint}"


def blame(document: Document, given: GivenVars, check: Callable[[Document], Any]) -> None:
    """After the workflow with every value given failed `check` (while the workflow as written
    passed it): each value that makes it fail on its own, reported at the place it was given,
    with where the workflow cannot use it. Nothing when no single value is to blame."""
    problems = []
    for name, value in given.values.items():
        try:
            check(with_vars(document, GivenVars({name: value}, given.places)))
        except InputError as e:
            for p in e.problems:
                where = f"{p.location()}: {p.path + ': ' if p.path else ''}"
                problems.append(given.problem(name, f"the workflow cannot use `{name}' = "
                                                    f"{json.dumps(value, default=str)}: "
                                                    f"{where}{p.message}"))
    if problems:
        raise InputError(problems)
