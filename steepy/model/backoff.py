"""How long to wait before a retry: wait strategies and jitters as small strategy objects.

A retry policy (`steepy.model.policies`) holds one wait strategy and one jitter. The strategy
turns Steep's fields (`delay`, `exponentialBackoff`) and the attempt number n into a raw delay;
the policy caps it (`maxDelay`); the jitter randomises the capped delay d. Each form is one
small class with its maths, its words for attempt records (`describe`) and its JSON, so a new
form is one class added to `WAITS` or `JITTERS` (tenacity's `wait.py` is the model).

All delays are whole milliseconds, as Steep computes them; where a form's maths gives a
fraction (a fractional `exponentialBackoff', a `ratio' jitter) it is rounded down. At the end, `DATABASE_OUTAGE`: the
one policy (in seconds) by which every part of steepy waits out a database that cannot be used,
and `LIVE_OUTAGE`, the same capped at a second for what keeps pages live.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Any, ClassVar, Protocol

from steepy.model.durations import INT64_MAX, INT64_MIN, format_duration

Rng = random.Random  # or the `random' module itself


def _power_factor(base: int, exponent: int) -> int:
    """int(base ** exponent) as Steep computes it: truncated to an integer BEFORE multiplying.

    A negative exponent (n capped at maxAttempts = 0) gives 0 unless |base| is 1. Results that
    would not fit into 64 bits saturate instead of growing without bound.
    """
    if exponent < 0:
        if base == 1:
            return 1
        if base == -1:
            return -1 if exponent % 2 else 1
        return 0  # |1 / base^k| < 1 truncates to 0 (base 0: steepy chooses 0, not infinity)
    if abs(base) <= 1 or exponent * abs(base).bit_length() <= 128:
        return base**exponent
    return INT64_MAX if base > 0 or exponent % 2 == 0 else INT64_MIN


def clamp64(value: int) -> int:
    return max(INT64_MIN, min(INT64_MAX, value))


Backoff = int | float  # an integer as in Steep, or a fraction > 1 (Stevora's 1.5)


def scaled(delay: int, backoff: Backoff, exponent: int) -> int:
    """delay * backoff^exponent in whole milliseconds.

    An integer backoff is Steep's (`_power_factor'). A fractional one is exact in decimal
    (1.7 is 17/10, not the nearest binary fraction) and rounded down: 1000 ms * 1.5^3 = 3375,
    100 ms * 1.7^2 = 289, 1000 ms * 1.5^4 = 5062 (5062.5). Saturates at 64 bits.
    """
    if isinstance(backoff, int):
        return delay * _power_factor(backoff, exponent)
    if exponent < 0 or delay == 0:
        return 0  # as Steep's truncated factor: backoff^-k < 1 gives 0
    if exponent * math.log2(backoff) + math.log2(abs(delay)) > 64:
        return INT64_MAX if delay > 0 else INT64_MIN
    with localcontext() as ctx:
        ctx.prec = 60  # 19 digits before the point, ample after it
        value = Decimal(delay) * Decimal(repr(backoff)) ** exponent
        return clamp64(int(value.to_integral_value(rounding=ROUND_FLOOR)))


def backoff_words(backoff: Backoff) -> str:
    return str(backoff) if isinstance(backoff, int) else f"{backoff!r}"


# -- wait strategies (extensions 1: `strategy') ---------------------------------------------------


class Wait(Protocol):
    name: ClassVar[str]

    def raw(self, delay: int, backoff: Backoff, n: int) -> int:
        """The delay before attempt n+1 (n >= 1, already capped by maxAttempts), uncapped."""

    def describe(self, delay: int, backoff: Backoff) -> str: ...


@dataclass(frozen=True)
class Exponential:
    """Steep's formula: delay * exponentialBackoff^(n-1) (a fractional backoff: `scaled')."""

    name: ClassVar[str] = "exponential"

    def raw(self, delay: int, backoff: Backoff, n: int) -> int:
        return scaled(delay, backoff, n - 1)

    def describe(self, delay: int, backoff: Backoff) -> str:
        return f"exponential {format_duration(delay)}*{backoff_words(backoff)}^(n-1)"


@dataclass(frozen=True)
class Linear:
    name: ClassVar[str] = "linear"

    def raw(self, delay: int, backoff: Backoff, n: int) -> int:
        return delay * n

    def describe(self, delay: int, backoff: Backoff) -> str:
        return f"linear {format_duration(delay)}*n"


@dataclass(frozen=True)
class Fixed:
    name: ClassVar[str] = "fixed"

    def raw(self, delay: int, backoff: Backoff, n: int) -> int:
        return delay

    def describe(self, delay: int, backoff: Backoff) -> str:
        return f"fixed {format_duration(delay)}"


WAITS: dict[str, Wait] = {w.name: w for w in (Exponential(), Linear(), Fixed())}


@dataclass(frozen=True)
class Term:
    """One wait of a composed policy (`waits': [...]): its own strategy, delay and backoff;
    the policy sums its terms' raw delays (tenacity's `wait_fixed(1) + wait_exponential()')."""

    strategy: Wait
    delay: int = 0
    backoff: Backoff = 1

    def raw(self, n: int) -> int:
        return self.strategy.raw(self.delay, self.backoff, n)

    def describe(self) -> str:
        return self.strategy.describe(self.delay, self.backoff)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"strategy": self.strategy.name, "delay": self.delay}
        if self.backoff != 1:
            out["exponentialBackoff"] = self.backoff
        return out


# -- jitters (extensions 1: `jitter') -------------------------------------------------------------


class Jitter(Protocol):
    def apply(self, d: int, rng: Rng) -> int:
        """The randomised delay for the delay d > 0 (the policy caps the result)."""

    def describe(self) -> str: ...

    def to_json(self) -> Any: ...


@dataclass(frozen=True)
class NoJitter:
    def apply(self, d: int, rng: Rng) -> int:
        return d

    def describe(self) -> str:
        return "none"

    def to_json(self) -> Any:
        return "none"


@dataclass(frozen=True)
class FullJitter:
    """Uniform in [0, d]: every whole millisecond equally likely, both ends included."""

    def apply(self, d: int, rng: Rng) -> int:
        return rng.randint(0, d)

    def describe(self) -> str:
        return "full"

    def to_json(self) -> Any:
        return "full"


@dataclass(frozen=True)
class EqualJitter:
    """d/2 + uniform in [0, d/2], i.e. [ceil(d/2), d] in whole milliseconds (each equally
    likely): for d = 5, 3..5."""

    def apply(self, d: int, rng: Rng) -> int:
        half = d // 2
        return (d - half) + rng.randint(0, half)

    def describe(self) -> str:
        return "equal"

    def to_json(self) -> Any:
        return "equal"


@dataclass(frozen=True)
class RatioJitter:
    """floor(d * uniform in [low, high]), 0 <= low <= high <= 1: Stevora's
    floor(capped * U(0.75, 1)), 750..1000 for d = 1000 (a draw just below 1 gives 999)."""

    low: float
    high: float

    def apply(self, d: int, rng: Rng) -> int:
        return math.floor(d * rng.uniform(self.low, self.high))

    def describe(self) -> str:
        return f"ratio {self.low:g}..{self.high:g}"

    def to_json(self) -> Any:
        return {"ratio": [self.low, self.high]}


@dataclass(frozen=True)
class AddJitter:
    """d + uniform in [0, extra] whole milliseconds, both ends included (LlamaIndex's
    wait_random)."""

    extra: int

    def apply(self, d: int, rng: Rng) -> int:
        return d + rng.randint(0, self.extra)

    def describe(self) -> str:
        return f"add up to {format_duration(self.extra)}"

    def to_json(self) -> Any:
        return {"add": self.extra}


# the jitters written as a plain word; `ratio' and `add' are objects with a parameter
JITTERS: dict[str, Jitter] = {j.describe(): j for j in (NoJitter(), FullJitter(), EqualJitter())}


# -- waiting out something outside that fails (the database) --------------------------------------


@dataclass(frozen=True)
class Doubling:
    """Seconds to wait before trying again after the n-th failure in a row: `first_s`, doubling
    with each failure, never more than `cap_s`."""

    first_s: float
    cap_s: float

    def wait_s(self, failures: int) -> float:
        doublings = min(max(failures - 1, 0), 64)  # beyond the cap more doublings change nothing
        return min(self.first_s * 2.0 ** doublings, self.cap_s)


# while the database cannot be used: 1 s, 2 s, 4 s, ... at most 30 s between tries
DATABASE_OUTAGE = Doubling(first_s=1.0, cap_s=30.0)
# for what keeps pages live (the change watcher that wakes the live feed, and the feed): a
# try every second, so a page is never more than a second behind once the database is back,
# however long it was away (a try is one cheap query; the cap stops any doubling)
LIVE_OUTAGE = Doubling(first_s=1.0, cap_s=1.0)
