"""A page of a list (workflows, process chains, notifications): its size and offset read
from the query, and the links to other pages and to the same list with other filters. Links
are paths below the base path (templates put `{{ base }}` in front); `_pager.html` draws the
previous/next links and the range."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

DEFAULT_SIZE, MAX_SIZE = 20, 200
MAX_OFFSET = 2**31 - 1  # the registry's integer columns


def query_int(text: str | None, default: int, low: int, high: int) -> int:
    """A whole number from the query, kept within [low, high]; `default` if absent or not
    a number."""
    try:
        value = int(text) if text is not None and text.strip() else default
    except ValueError:
        return default
    return min(max(value, low), high)


@dataclass
class Listing:
    path: str  # the list's path, e.g. `/processchains`
    params: dict[str, Any] = field(default_factory=dict)  # its filters, kept in every link
    size: int = DEFAULT_SIZE
    offset: int = 0
    total: int = 0  # items in the whole list
    shown: int = 0  # items on this page

    @classmethod
    def read(cls, request: Request, path: str, max_size: int = MAX_SIZE,
             **params: Any) -> Listing:
        query = request.query_params
        return cls(path, params, query_int(query.get("size"), DEFAULT_SIZE, 1, max_size),
                   query_int(query.get("offset"), 0, 0, MAX_OFFSET))

    def showing(self, shown: int, total: int) -> Listing:
        self.shown, self.total = shown, total
        return self

    def link(self, **changes: Any) -> str:
        """This list with some parameters changed (None: removed)."""
        values = {**self.params, "size": None if self.size == DEFAULT_SIZE else self.size,
                  "offset": self.offset or None, **changes}
        query = urlencode({k: v for k, v in values.items() if v not in (None, "", 0)})
        return self.path + ("?" + query if query else "")

    @property
    def first(self) -> int:
        return self.offset + 1 if self.shown else 0

    @property
    def last(self) -> int:
        return self.offset + self.shown

    @property
    def previous(self) -> str | None:
        return self.link(offset=max(0, self.offset - self.size)) if self.offset > 0 else None

    @property
    def next(self) -> str | None:
        return (self.link(offset=self.offset + self.size)
                if self.offset + self.shown < self.total else None)
