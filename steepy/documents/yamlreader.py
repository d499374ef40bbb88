"""YAML text → plain data plus the line and column of every JSON path, within bounded memory.

Aliases are what can make a small text cost a lot: `*a' stands for a whole copy of the value
anchored as `&a', and nine levels of ten aliases ("billion laughs") stand for a billion values.
Before anything is composed or copied, one pass over the parser's events (cheap: no values are
built) adds up how many values the aliases stand for, and a document whose aliases add more
than MAX_ALIAS_NODES values is refused at the alias that crosses the limit.

The data and positions are built from the parser's events (steepy.documents.yamlbuilder),
merge keys (`<<: *a', `<<: [*a, *b]') read as YAML 1.1 defines them.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from steepy.documents.yamlbuilder import MAX_NODES, Places, build_all  # noqa: F401 (re-exported)
from steepy.errors import InputError, Problem

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing; the pure-Python loader works too
    _Loader = yaml.SafeLoader

MAX_ALIAS_NODES = 100_000  # values that aliases may add to one text


def alias_limit_message(limit: int = MAX_ALIAS_NODES) -> str:
    return (f"the document is too large: it expands to more than {limit} nodes through YAML "
            f"aliases (limit {limit}); write the values out instead of repeating aliases")


def check_aliases(text: str, name: str, limit: int = MAX_ALIAS_NODES) -> None:
    """Refuse `text` when its aliases stand for more than `limit` values in all (or an alias
    stands for a value that contains it). Syntax errors are left to the composer, which
    reports them with their place."""
    if "*" not in text:
        return  # no alias
    loader = _Loader(text)
    sizes: dict[str, int | None] = {}  # anchor -> values it stands for (None: still open)
    stack: list[list] = [[None, 0]]  # open collections: [anchor, values so far]
    added = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.DocumentStartEvent):
                sizes.clear()
                continue
            if isinstance(event, yaml.CollectionStartEvent):
                if event.anchor is not None:
                    sizes[event.anchor] = None
                stack.append([event.anchor, 1])
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                anchor, size = stack.pop()
                if anchor is not None:
                    sizes[anchor] = size
            elif isinstance(event, yaml.ScalarEvent):
                size = 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor not in sizes:
                    continue  # undefined: the composer says so
                size = sizes[event.anchor]
                if size is None:
                    raise _at(event, name, f"the alias `*{event.anchor}' stands for a value that "
                              "contains the alias itself (a recursive alias)")
                added += size
                if added > limit:
                    raise _at(event, name, alias_limit_message(limit))
            else:
                continue
            stack[-1][1] += size
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()


def _at(event: yaml.Event, name: str, message: str) -> InputError:
    mark = event.start_mark
    return InputError(Problem(message, file=name, line=mark.line + 1, column=mark.column + 1))


def _yaml_error(e: yaml.YAMLError, name: str, text: str | None = None) -> InputError:
    if isinstance(e, yaml.reader.ReaderError):  # a character YAML does not allow (NUL)
        return _reader_error(e, name, text)
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    what = getattr(e, "problem", None) or str(e)
    context = getattr(e, "context", None)
    message = f"not valid YAML: {what}" + (f" ({context})" if context else "")
    if mark is None:
        return InputError(Problem(message, file=name))
    line, column = _end_of_content(text, mark.index) or (mark.line + 1, mark.column + 1)
    return InputError(Problem(message, file=name, line=line, column=column))


def _reader_error(e: yaml.reader.ReaderError, name: str, text: str | None) -> InputError:
    """The reader's error has a position in the text, not a line and column: both, from it."""
    character = e.character if isinstance(e.character, int) else ord(str(e.character)[:1] or "?")
    message = f"not valid YAML: {str(e.reason).rstrip('.')}: U+{character:04X}"
    if text is None or not 0 <= e.position <= len(text):
        return InputError(Problem(message, file=name))
    before = text[:e.position]
    line, column = before.count("\n") + 1, e.position - before.rfind("\n")
    return InputError(Problem(message, file=name, line=line, column=column))


def _end_of_content(text: str | None, index: int) -> tuple[int, int] | None:
    """For a problem found past the last character that is not blank (the parser reached the
    end: `[1, 2' lacks its `]'): the line and column just after that character, not a line
    that is not there (`--var x=[1,2' is one line). None for a problem inside the text."""
    if text is None:
        return None
    content = text.rstrip()
    if index < len(content) or not content:
        return None
    line = content.count("\n") + 1
    return line, len(content) - content.rfind("\n")


# front matter: a first document of its own, between `---' lines, at the very start
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*$", re.S | re.M)
_TEMPLATE_KEY = re.compile(r"^([ \t]*)[\"']?template[\"']?[ \t]*:", re.M)


def template_problem(text: str, name: str) -> Problem | None:
    """The problem of a workflow that asks for Steep's templating: Steep renders its
    configuration, service metadata and macros when their front matter says `template: true'
    (steepy.documents.templating does that), never a workflow. Placed at `template'."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None
    check_aliases(match.group(1), name)
    try:
        header = yaml.load(match.group(1), Loader=_Loader)
    except yaml.YAMLError:
        return None
    if not isinstance(header, dict) or header.get("template") is not True:
        return None
    key = _TEMPLATE_KEY.search(match.group(1))
    line = 2 + (match.group(1)[:key.start()].count("\n") if key else 0)
    column = 1 + (len(key.group(1)) if key else 0)
    return Problem("this file uses Steep's templating (front matter `template: true'), which "
                   "only the configuration, service metadata and macros may use (in Steep too): "
                   "a workflow is read as plain YAML or JSON. Write the values out and remove "
                   "the front matter.", file=name, line=line, column=column)


def parse_yaml_all(text: str, name: str) -> list[tuple[Any, Places, Places]]:
    """(data, positions, keys) of every YAML document of `text' (see build_all). Raises
    InputError."""
    check_aliases(text, name)
    loader = _Loader(text)
    try:
        return build_all(loader, name)
    except yaml.YAMLError as e:
        raise _yaml_error(e, name, text) from None
    finally:
        loader.dispose()
