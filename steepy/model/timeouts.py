"""The kinds of timeout (reference section 5): one enum with every name a kind goes by.

A kind is its Steep name (`maxInactivity`: the YAML key, the name `retryOn`/`abortOn` list it
by, the name in events' and policies' JSON); `words` name it in messages, attempt records (the
registry's `timeout_kind` column), the web UI and the command line; `attribute` is the field
of a service, action or executable that holds its policy; `meaning` says when it fires;
`rank` orders kinds due in the same instant (from the outside in: the deadline bounds the
executable, the maximum runtime one attempt, the maximum inactivity the wait for a line);
`retryable` tells whether a retry condition may name it (a deadline timeout is never retried).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class TimeoutKind(StrEnum):
    """A kind of timeout; equal to its Steep name (a str), so it is written as that name."""

    words: str
    attribute: str
    meaning: str
    rank: int

    def __new__(cls, steep: str, words: str, attribute: str, meaning: str,
                rank: int) -> TimeoutKind:
        kind = str.__new__(cls, steep)
        kind._value_ = steep
        kind.words, kind.attribute, kind.meaning, kind.rank = words, attribute, meaning, rank
        return kind

    MAX_INACTIVITY = ("maxInactivity", "maximum inactivity", "max_inactivity",
                      "no output line for", 2)
    MAX_RUNTIME = ("maxRuntime", "maximum runtime", "max_runtime",
                   "one attempt runs longer than", 1)
    DEADLINE = ("deadline", "deadline", "deadline",
                "all attempts and pauses together take longer than", 0)

    @property
    def retryable(self) -> bool:
        """May `retryOn`/`abortOn` name it? A deadline timeout is never retried."""
        return self is not TimeoutKind.DEADLINE

    def policy(self, owner: Any) -> Any:
        """The `TimeoutPolicy` of this kind that `owner` (a service, an action, an executable)
        holds, or None."""
        return getattr(owner, self.attribute)

    @classmethod
    def from_words(cls, words: str | None) -> TimeoutKind | None:
        """The kind an attempt record names in `words`; None for none (or words of no kind)."""
        return _BY_WORDS.get(words or "")


_BY_WORDS = {kind.words: kind for kind in TimeoutKind}
# the kinds a retry condition may name, in the order they are listed
RETRYABLE = tuple(kind for kind in TimeoutKind if kind.retryable)
