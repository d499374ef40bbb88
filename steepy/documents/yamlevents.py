"""A YAML parser's events, read once, with the events of anchored values kept.

An alias stands for a copy of the value anchored: its events are kept (on a "tape") as they
pass, and read again wherever an alias names it. A value is at a `Ref': the list its events
are kept in and the index of its first event. Undefined and duplicate anchors are refused
as a composer refuses them (same messages, same places).
"""

from __future__ import annotations

from typing import Any, Iterator

import yaml
from yaml import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                  ScalarEvent, SequenceEndEvent, SequenceStartEvent)
from yaml.composer import ComposerError

Ref = tuple[list, int]  # kept events and the index where a value starts


class Live:
    """The parser's events, one at a time. Anchored values (and any value asked for with
    `record') are kept on a tape as they pass; an alias must name an anchor seen before."""

    def __init__(self, loader: Any):
        self.loader = loader
        self.anchors: dict[str, Ref] = {}
        self.tape: list | None = None
        self.floor = 0  # nesting depth where the value being kept began
        self.depth = 0
        self.record = False  # keep the next value
        self.at: Ref = ([], 0)  # where the last kept event is

    def next(self) -> yaml.Event:
        event = self.loader.get_event()
        kind = type(event)
        if kind is ScalarEvent or kind is MappingStartEvent or kind is SequenceStartEvent:
            anchor = event.anchor
        elif kind is AliasEvent:
            if event.anchor not in self.anchors:
                raise ComposerError(None, None, "found undefined alias", event.start_mark)
            anchor = None
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            self.depth -= 1
            if self.tape is not None:
                self.tape.append(event)
                if self.depth == self.floor:
                    self.tape = None
            return event
        else:
            if kind is DocumentStartEvent:
                self.anchors = {}
            return event
        tape = self.tape
        if tape is None and (anchor is not None or self.record):
            tape = self.tape = []
            self.floor = self.depth
        self.record = False
        if tape is not None:
            self.at = (tape, len(tape))
            if anchor is not None:
                self._anchor(anchor, event)
            tape.append(event)
        if kind is MappingStartEvent or kind is SequenceStartEvent:
            self.depth += 1
        elif tape is not None and self.depth == self.floor:
            self.tape = None
        return event

    def _anchor(self, anchor: str, event: yaml.Event) -> None:
        if anchor in self.anchors:
            events, index = self.anchors[anchor]
            raise ComposerError("found duplicate anchor; first occurrence",
                                events[index].start_mark, "second occurrence", event.start_mark)
        self.anchors[anchor] = self.at

    def skip_document(self) -> None:
        """Reads on to the end of the document (its anchors and aliases still checked)."""
        while type(self.next()) is not yaml.DocumentEndEvent:
            pass


def span(events: list, index: int) -> int:
    """The index after the value that starts at `index'."""
    if not isinstance(events[index], yaml.CollectionStartEvent):
        return index + 1
    depth = 0
    while True:
        event = events[index]
        index += 1
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            if depth == 0:
                return index


def children(ref: Ref) -> Iterator[Ref]:
    """The items of the list (or keys and values of the object) kept at `ref'."""
    events, index = ref
    index += 1
    while not isinstance(events[index], yaml.CollectionEndEvent):
        yield events, index
        index = span(events, index)
