"""A site's retry settings (steepy.yaml `retries', extensions 1): the engine's default policy
of every executable, and the bounds a policy's values must keep (`retries.limits').

A bound is a range written `LOW..HIGH`, either end left out for none: `maxAttempts: 1..20`,
`delay: 100ms..`, `maxDelay: ..1h`, `exponentialBackoff: 1..10`. A limit looks at a value some
level gave (steepy.model.inheritance): a key no level gives keeps steepy's default and is not
checked. `maxAttempts: -1` (unlimited) is above every upper bound, so a maxAttempts range
cannot start below 0 (`-1..20' is refused: it would allow -1 and refuse it at once).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable

from steepy.model.durations import format_duration, parse_duration
from steepy.model.policies import RetryPolicy

SOURCE = "steepy.yaml retries.limits"


def _count(text: str) -> int:
    return int(text)


def _factor(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _show_factor(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# key -> (read a bound, show a value, the policy's value (None: not set), what a bound is)
KINDS: dict[str, tuple[Callable[[str], Any], Callable[[Any], str],
                       Callable[[RetryPolicy], Any], str]] = {
    "maxAttempts": (_count, str, lambda p: p.max_attempts, "whole numbers"),
    "delay": (parse_duration, format_duration, lambda p: p.delay, "durations"),
    "maxDelay": (parse_duration, format_duration, lambda p: p.max_delay, "durations"),
    "maxElapsed": (parse_duration, format_duration, lambda p: p.max_elapsed, "durations"),
    "exponentialBackoff": (_factor, _show_factor, lambda p: p.exponential_backoff, "numbers"),
}


@dataclass(frozen=True)
class Bound:
    """`LOW..HIGH` of one key (None: open on that side)."""

    key: str
    low: Any = None
    high: Any = None

    @classmethod
    def parse(cls, key: str, text: Any) -> "Bound":
        """ValueError saying what is wrong."""
        read, _, _, what = KINDS[key]
        example = {"whole numbers": "1..20", "durations": "100ms..1h", "numbers": "1..10"}[what]
        if not isinstance(text, str) or text.count("..") != 1:
            raise ValueError(f"expected a range of {what} such as `{example}' (either end may "
                             f"be left out: `{example.split('..')[0]}..'), got `{text}'")
        low_text, high_text = (part.strip() for part in text.split(".."))
        try:
            low = read(low_text) if low_text else None
            high = read(high_text) if high_text else None
        except ValueError:
            raise ValueError(f"`{text}' is not a range of {what} such as `{example}'") from None
        if low is None and high is None:
            raise ValueError(f"`{text}' bounds nothing; give a low end, a high end or both")
        if low is not None and high is not None and low > high:
            raise ValueError(f"`{text}': the low end is above the high end")
        if key == "maxAttempts" and min(v for v in (low, high) if v is not None) < 0:
            raise ValueError(f"`{text}': the ends of maxAttempts are 0 or more; -1 "
                             "(unlimited) is above every high end: leave the high end out to "
                             "allow it (`1..')")
        return cls(key, low, high)

    def problem(self, policy: RetryPolicy, source: str = SOURCE) -> str | None:
        """What is wrong with `policy`'s value of this key, or None."""
        _, show, value_of, _ = KINDS[self.key]
        value = value_of(policy)
        if value is None:
            return None
        if self.key == "maxAttempts" and value < 0:
            if self.high is None:
                return None
            return (f"maxAttempts {value} (unlimited) is above this site's limit "
                    f"{show(self.high)} ({source})")
        if self.high is not None and value > self.high:
            side, bound = "above", self.high
        elif self.low is not None and value < self.low:
            side, bound = "below", self.low
        else:
            return None
        return f"{self.key} {show(value)} is {side} this site's limit {show(bound)} ({source})"


@dataclass(frozen=True)
class SiteRetries:
    """steepy.yaml's `retries': the engine's default policy of every executable, and limits."""

    default: RetryPolicy | None = None  # retries.executables
    limits: tuple[Bound, ...] = ()  # retries.limits
    source: str = SOURCE  # named in messages

    def problems(self, policy: RetryPolicy, keys: Iterable[str]) -> list[tuple[str, str]]:
        """(key, message) for each of `keys` whose value in `policy` a limit refuses."""
        wanted = set(keys)
        return [(bound.key, message) for bound in self.limits if bound.key in wanted
                and (message := bound.problem(policy, self.source)) is not None]


NO_SITE = SiteRetries()
