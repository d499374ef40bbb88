"""Plain data and the line and column of every JSON path, built straight from a YAML
parser's events: no node tree is composed, so a list of a million file names costs the list
and its positions, not a million nodes with two marks each.

The events are read once, in order. The events of every anchored value are kept (a "tape"),
so that an alias is built again from them, with the places where the anchored value was
written. A merge key's value is kept the same way and built when its mapping ends: a key
written in the mapping wins, of the merged mappings the first that has a key gives it.
A document's problems (too many values, nested too deeply, duplicate keys) are told only
once the whole text is read, so a syntax error further on is still the one told, as when the
whole text was composed first.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Iterator

import yaml
from yaml import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                  ScalarEvent, SequenceEndEvent, SequenceStartEvent)

from steepy.documents.yamlevents import Live, Ref, children, span
from steepy.errors import InputError, Problem
from steepy.model.common import scalar_text

MAX_NODES = 2_000_000  # values in one document, aliases expanded (a last line of defence)
MAX_DEPTH = 400  # open lists and objects (Python's recursion limit stopped about 480 before)
MERGE_TAG = "tag:yaml.org,2002:merge"  # the key `<<' (YAML 1.1 merge keys)
_STR_TAG = "tag:yaml.org,2002:str"
_OPEN = object()  # a list or object was opened: its items follow


class Sequence:
    """An open list: its items are built one after the other."""

    __slots__ = ("path", "items")

    def __init__(self, path: str):
        self.path = path
        self.items: list = []

    def put(self, value: Any) -> None:
        self.items.append(value)

    def step(self, builder: Any) -> tuple[yaml.Event | None, Any]:
        """(the first event of the next item, its path), or (None, the list) at its end."""
        event = builder.pull()
        if type(event) is SequenceEndEvent:
            return None, self.items
        return event, f"{self.path}[{len(self.items)}]"


class Mapping:
    """An open object: its own keys first; the keys its merge key gives when it ends."""

    __slots__ = ("path", "own", "key", "key_path", "merge", "merge_at", "pending", "merged")

    def __init__(self, path: str):
        self.path = path
        self.own: dict[str, Any] = {}  # the keys written here, in order
        self.key = ""
        self.key_path = ""  # the path of the value of `key' (one string for both records)
        self.merge: Ref | None = None  # the value of the merge key `<<'
        self.merge_at = 0  # how many keys were written before `<<'
        self.pending: Iterator[tuple[str, Ref]] | None = None  # merged keys still to build
        self.merged: dict[str, Any] = {}

    def child(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def put(self, value: Any) -> None:
        (self.own if self.pending is None else self.merged)[self.key] = value

    def step(self, builder: Any) -> tuple[yaml.Event | None, Any]:
        """(the first event of the next value, its path), or (None, the object) at its end."""
        while self.pending is None:
            event = builder.pull()
            if type(event) is MappingEndEvent:
                self.pending = iter(builder.merged_pairs(self) if self.merge else ())
                break
            key = builder.mapping_key(self, event)
            if key is not None:
                self.key = key
                return builder.pull(), self.key_path
        for key, ref in self.pending:
            self.key = key
            builder.replay(ref)
            return builder.pull(), self.child(key)
        return None, self.result()

    def result(self) -> dict:
        if self.merge is None:
            return self.own
        own = list(self.own.items())
        out = dict(own[:self.merge_at])
        out.update(self.merged)
        out.update(own[self.merge_at:])
        return out


class Builder:
    """Builds one document's value from `live' (and from kept events, for aliases and merged
    values), recording the place of every JSON path the first time it is built."""

    def __init__(self, live: Live, name: str, constructor: Any):
        self.live = live
        self.name = name
        self.constructor = constructor  # a loader: its resolver and constructor
        self.positions: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, tuple[int, int]] = {}  # where the key of each object entry is
        self.problems: list[Problem] = []
        self._said: set[tuple[int, int, str]] = set()
        self.count = 0
        self.replays: list[list] = []  # kept events being read again: [events, next, end]

    def pull(self) -> yaml.Event:
        replays = self.replays
        while replays:
            replay = replays[-1]
            index = replay[1]
            if index < replay[2]:
                replay[1] = index + 1
                return replay[0][index]
            replays.pop()
        return self.live.next()

    def replay(self, ref: Ref) -> None:
        """Reads the value kept at `ref' next."""
        while self.replays and self.replays[-1][1] >= self.replays[-1][2]:
            self.replays.pop()
        events, index = ref
        self.replays.append([events, index, span(events, index)])

    def build(self, path: str) -> Any:
        """The next value, built at `path'."""
        frames: list[Sequence | Mapping] = []
        value = self._open(self.pull(), path, frames)
        while frames:
            frame = frames[-1]
            if value is not _OPEN:
                frame.put(value)
            event, value = frame.step(self)
            if event is None:
                frames.pop()
            else:
                value = self._open(event, value, frames)
        return value

    def _open(self, event: yaml.Event, path: str, frames: list) -> Any:
        """The value of a scalar, or _OPEN after opening a list or object on `frames'."""
        if type(event) is AliasEvent:
            self.replay(self.live.anchors[event.anchor])
            event = self.pull()
        self.count += 1
        if self.count > MAX_NODES:
            raise InputError(Problem(f"the document is too large (more than {MAX_NODES} "
                                     "values)", file=self.name))
        mark = event.start_mark
        self.positions.setdefault(path, (mark.line + 1, mark.column + 1))
        kind = type(event)
        if kind is ScalarEvent:
            return self._scalar(event, path)
        if len(frames) >= MAX_DEPTH:
            raise InputError(Problem("the document is nested too deeply", file=self.name))
        frames.append(Sequence(path) if kind is SequenceStartEvent else Mapping(path))
        return _OPEN

    def mapping_key(self, frame: Mapping, event: yaml.Event) -> str | None:
        """The key that `event' starts in `frame', or None when its value is not built here
        (a merge key's value is kept for the mapping's end; after a problem it is skipped)."""
        if type(event) is AliasEvent:
            events, index = self.live.anchors[event.anchor]
            key = events[index]
        else:
            self._skip_rest(event)
            key = event
        if self._tag(key) == MERGE_TAG:
            if frame.merge is None:
                frame.merge, frame.merge_at = self._take(), len(frame.own)
                return None
            self._problem(key, frame.path, "a second merge key `<<'; merge several objects "
                          "with one list: `<<: [*a, *b]'")
        else:
            text = self._key(key, frame.path)
            if text is not None and text not in frame.own:
                mark = event.start_mark
                frame.key_path = path = frame.child(text)
                self.keys.setdefault(path, (mark.line + 1, mark.column + 1))
                return text
            if text is not None:
                self._problem(key, frame.child(text), f"duplicate key `{text}'; each key may "
                              "appear only once in an object")
        self._skip_rest(self.pull())
        return None

    def _take(self) -> Ref:
        """The next value, read without building it: where its events are kept."""
        while self.replays:
            events, index, end = self.replays[-1]
            if index < end:
                self.replays[-1][1] = span(events, index)
                return events, index
            self.replays.pop()
        self.live.record = True
        event = self.live.next()
        ref = self.live.at
        self._skip_rest(event)
        return ref

    def _skip_rest(self, event: yaml.Event) -> None:
        """Reads past the rest of the value that `event' starts (its anchors are kept)."""
        if not isinstance(event, yaml.CollectionStartEvent):
            return
        depth = 1
        while depth:
            event = self.pull()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1

    def _anchored(self, ref: Ref) -> Ref:
        """`ref', or the value an alias there stands for."""
        events, index = ref
        event = events[index]
        return self.live.anchors[event.anchor] if type(event) is AliasEvent else ref

    def merged_pairs(self, frame: Mapping) -> list[tuple[str, Ref]]:
        """The keys (not written in `frame') and values that its merge key gives."""
        assert frame.merge is not None
        value = self._anchored(frame.merge)
        sources = (list(children(value)) if type(value[0][value[1]]) is SequenceStartEvent
                   else [value])
        pairs: list[tuple[str, Ref]] = []
        for source in sources:
            source = self._anchored(source)
            kind = type(source[0][source[1]])
            if kind is not MappingStartEvent:
                self._problem(source[0][source[1]], frame.path, "a merge key `<<' takes an "
                              "object (`<<: *a') or a list of objects (`<<: [*a, *b]'), not "
                              + ("a list" if kind is SequenceStartEvent else "a plain value"))
                continue
            pairs += self._pairs(source, frame.path)
        seen = set(frame.own)
        out = []
        for key, ref in pairs:
            if key not in seen:
                seen.add(key)
                out.append((key, ref))
        return out

    def _pairs(self, ref: Ref, path: str) -> list[tuple[str, Ref]]:
        """The keys and values the mapping at `ref' stands for, its own keys before those
        it merges in itself (a merge source may merge others)."""
        own: list[tuple[str, Ref]] = []
        keys: set[str] = set()
        inner: list[tuple[str, Ref]] = []
        items = children(ref)
        for key_ref in items:
            value_ref = next(items)
            key_ref = self._anchored(key_ref)
            event = key_ref[0][key_ref[1]]
            if self._tag(event) == MERGE_TAG:
                value = self._anchored(value_ref)
                sources = (children(value) if type(value[0][value[1]]) is SequenceStartEvent
                           else [value])
                for source in sources:
                    source = self._anchored(source)
                    if type(source[0][source[1]]) is MappingStartEvent:
                        inner += self._pairs(source, path)
                continue
            key = self._key(event, path)
            if key is not None and key in keys:
                self._problem(event, f"{path}.{key}" if path else key, f"duplicate key "
                              f"`{key}'; each key may appear only once in an object")
            elif key is not None:
                keys.add(key)
                own.append((key, value_ref))
        return own + inner

    def _key(self, event: yaml.Event, path: str) -> str | None:
        if type(event) is not ScalarEvent:
            self._problem(event, path, "a key must be a plain value, not a list or object")
            return None
        key = self._scalar(event)
        return key if isinstance(key, str) else scalar_text(key)  # (`null: x' is `null', JSON's)

    def _tag(self, event: yaml.Event) -> str:
        """The tag of the value `event' starts, resolved as a composer resolves it."""
        tag = event.tag
        if tag is not None and tag != "!":
            return tag
        if type(event) is ScalarEvent:
            return self.constructor.resolve(yaml.ScalarNode, event.value, event.implicit)
        if type(event) is SequenceStartEvent:
            return self.constructor.resolve(yaml.SequenceNode, None, event.implicit)
        return self.constructor.resolve(yaml.MappingNode, None, event.implicit)

    def _scalar(self, event: ScalarEvent, path: str | None = None) -> Any:
        tag = self._tag(event)
        if tag == _STR_TAG:
            return event.value  # what the constructor gives for a string
        constructor = self.constructor
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            value = constructor.construct_object(node)
        except Exception:  # (PyYAML's constructors raise KeyError for `!!bool maybe',
            # AttributeError for `!!timestamp nope', besides its own errors)
            if path is not None and event.tag not in (None, "!"):  # (a tag written: refused,
                # as Steep's reader refuses it, not taken for the text after it)
                written = event.tag.replace("tag:yaml.org,2002:", "!!", 1)
                self._problem(event, path, f"the tag `{written}' cannot make a value of "
                                           f"`{event.value}'")
            return event.value
        finally:  # the constructor remembers every node: forget this one
            constructor.constructed_objects.clear()
            constructor.recursive_objects.clear()
            constructor.state_generators.clear()
        if isinstance(value, (date, bytes, set)):  # keep timestamps etc. as the text written
            return event.value
        return value

    def _problem(self, event: yaml.Event, path: str, message: str) -> None:
        mark = event.start_mark
        place = (mark.line, mark.column, message)
        if place in self._said:  # a merge source's problem, found again through the merge
            return
        self._said.add(place)
        self.problems.append(Problem(message, path=path, file=self.name, line=mark.line + 1,
                                     column=mark.column + 1))


Places = dict[str, tuple[int, int]]  # JSON path -> line, column (1-based)


def build_all(loader: Any, name: str) -> list[tuple[Any, Places, Places]]:
    """(data, positions, keys) of every document `loader' parses: where the value at each JSON
    path starts, and where the key of each object entry is written. Raises yaml.YAMLError for a
    text that is not YAML, else InputError for the first document that has problems."""
    live = Live(loader)
    documents = []
    failed: InputError | None = None
    live.next()  # the stream's start
    while type(live.next()) is DocumentStartEvent:
        if failed is None:
            try:
                documents.append(_document(Builder(live, name, loader)))
                continue
            except InputError as e:
                failed = e
        live.skip_document()  # still read: a syntax error further on is told first
    if failed is not None:
        raise failed
    return documents


def _document(builder: Builder) -> tuple[Any, Places, Places]:
    try:
        data = builder.build("")
    except RecursionError:  # merge keys that merge others, very many levels deep
        raise InputError(Problem("the document is nested too deeply", file=builder.name)) from None
    if builder.problems:
        raise InputError(builder.problems)
    builder.live.next()  # the document's end
    return data, builder.positions, builder.keys
