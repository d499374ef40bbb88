"""YAML text → plain data plus the line and column of every JSON path, within bounded memory.

Aliases are what can make a small text cost a lot: `*a' stands for a whole copy of the value
anchored as `&a', and nine levels of ten aliases ("billion laughs") stand for a billion values.
Before anything is composed or copied, one pass over the parser's events (cheap: no values are
built) adds up how many values the aliases stand for, and a document whose aliases add more
than MAX_ALIAS_NODES values is refused at the alias that crosses the limit.

Merge keys (`<<: *a', `<<: [*a, *b]') are read as YAML 1.1 defines them (`_Builder._mapping').
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

import yaml

from steepy.errors import InputError, Problem

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing; the pure-Python loader works too
    _Loader = yaml.SafeLoader

MAX_NODES = 2_000_000  # values in one document, aliases expanded (a last line of defence)
MAX_ALIAS_NODES = 100_000  # values that aliases may add to one text
_MERGE_TAG = "tag:yaml.org,2002:merge"  # the key `<<' (YAML 1.1 merge keys)


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


class _Builder:
    """Turns a composed YAML node tree into plain data, recording positions."""

    def __init__(self, name: str):
        self.name = name
        self.positions: dict[str, tuple[int, int]] = {}
        self.problems: list[Problem] = []
        self._said: set[tuple[int, int, str]] = set()
        self.constructor = _Loader("")
        self.count = 0

    def build(self, node: yaml.Node, path: str) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise InputError(Problem(f"the document is too large (more than {MAX_NODES} values)",
                                     file=self.name))
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, f"{path}[{i}]") for i, child in enumerate(node.value)]
        return self._scalar(node)

    def _mapping(self, node: yaml.MappingNode, path: str) -> dict:
        """The object of `node`. Merge keys (`<<: *a`, `<<: [*a, *b]`) are resolved as YAML
        1.1 defines them: a key written in the mapping wins over a merged one, and of the
        merged mappings the first that has a key gives it. Only a key written twice in the
        mapping itself is a duplicate. A merged value keeps the place where it was written."""
        own: dict[str, Any] = {}
        merges: list[yaml.Node] = []
        order: list[str | None] = []  # keys as written; None where the merge key stands
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                if merges:
                    self._problem(key_node, path, "a second merge key `<<'; merge several "
                                  "objects with one list: `<<: [*a, *b]'")
                else:
                    merges.append(value_node)
                    order.append(None)
                continue
            key = self._key(key_node, path)
            if key is None:
                continue
            child = f"{path}.{key}" if path else key
            if key in own:
                self._problem(key_node, child, f"duplicate key `{key}'; each key may appear "
                              "only once in an object")
                continue
            own[key] = self.build(value_node, child)
            order.append(key)
        merged = self._merged(merges[0], path, set(own)) if merges else {}
        out: dict = {}
        for key in order:
            if key is None:
                out.update(merged)
            else:
                out[key] = own[key]
        return out

    def _merged(self, value: yaml.Node, path: str, given: set[str]) -> dict:
        """The keys a merge key's value (an object, or a list of objects) gives, without
        those in `given`, built at `path`."""
        sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
        pairs: list[tuple[str, yaml.Node]] = []
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                self._problem(source, path, "a merge key `<<' takes an object (`<<: *a') or a "
                              "list of objects (`<<: [*a, *b]'), not "
                              + ("a list" if isinstance(source, yaml.SequenceNode)
                                 else "a plain value"))
                continue
            pairs += self._pairs(source, path)
        out: dict = {}
        for key, value_node in pairs:
            if key not in given and key not in out:
                out[key] = self.build(value_node, f"{path}.{key}" if path else key)
        return out

    def _pairs(self, node: yaml.MappingNode, path: str) -> list[tuple[str, yaml.Node]]:
        """The keys and value nodes a mapping stands for, its own keys before those it
        merges in itself (a merge source may merge others)."""
        own: list[tuple[str, yaml.Node]] = []
        inner: list[tuple[str, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = (value_node.value if isinstance(value_node, yaml.SequenceNode)
                           else [value_node])
                for source in sources:
                    if isinstance(source, yaml.MappingNode):
                        inner += self._pairs(source, path)
                continue
            key = self._key(key_node, path)
            if key is not None and any(key == k for k, _ in own):
                self._problem(key_node, f"{path}.{key}" if path else key, f"duplicate key "
                              f"`{key}'; each key may appear only once in an object")
            elif key is not None:
                own.append((key, value_node))
        return own + inner

    def _key(self, key_node: yaml.Node, path: str) -> str | None:
        if not isinstance(key_node, yaml.ScalarNode):
            self._problem(key_node, path, "a key must be a plain value, not a list or object")
            return None
        key = self._scalar(key_node)
        if isinstance(key, str):
            return key
        return json.dumps(key) if isinstance(key, bool) else str(key)

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        try:
            value = self.constructor.construct_object(node)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError):
            return node.value
        if isinstance(value, (date, bytes, set)):  # keep timestamps etc. as the text written
            return node.value
        return value

    def _problem(self, node: yaml.Node, path: str, message: str) -> None:
        place = (node.start_mark.line, node.start_mark.column, message)
        if place in self._said:  # a merge source's problem, found again through the merge
            return
        self._said.add(place)
        self.problems.append(Problem(message, path=path, file=self.name,
                                     line=node.start_mark.line + 1,
                                     column=node.start_mark.column + 1))


def _yaml_error(e: yaml.YAMLError, name: str) -> InputError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    what = getattr(e, "problem", None) or str(e)
    context = getattr(e, "context", None)
    message = f"not valid YAML: {what}" + (f" ({context})" if context else "")
    if mark is None:
        return InputError(Problem(message, file=name))
    return InputError(Problem(message, file=name, line=mark.line + 1, column=mark.column + 1))


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


def parse_yaml_all(text: str, name: str) -> list[tuple[Any, dict[str, tuple[int, int]]]]:
    """(data, positions) of every YAML document of `text`. Raises InputError."""
    check_aliases(text, name)
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.YAMLError as e:
        raise _yaml_error(e, name) from None
    except RecursionError:
        raise InputError(Problem("the document is nested too deeply", file=name)) from None
    documents = []
    for node in nodes:
        builder = _Builder(name)
        try:
            data = None if node is None else builder.build(node, "")
        except RecursionError:
            raise InputError(Problem("the document is nested too deeply", file=name)) from None
        if builder.problems:
            raise InputError(builder.problems)
        documents.append((data, builder.positions))
    return documents
