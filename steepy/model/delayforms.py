"""Reading the delay forms of a retry policy (`steepy.model.policies`): `exponentialBackoff'
(an integer or a fraction), composed `waits' and `jitter', each problem with its JSON path."""

from __future__ import annotations

import math
from typing import Any

from steepy.model.backoff import JITTERS as NAMED_JITTERS
from steepy.model.backoff import WAITS, AddJitter, Backoff, Jitter, RatioJitter, Term
from steepy.model.checks import (DURATION_HINT, Problems, check_keys, describe, is_int,
                                 read_duration)
from steepy.model.durations import INT64_MAX

STRATEGIES = tuple(WAITS)
JITTERS = tuple(NAMED_JITTERS) + ("{ratio: [a, b]}", "{add: DURATION}")


def read_backoff(value: Any, path: tuple, problems: Problems) -> Backoff:
    """An integer as in Steep, or a finite number >= 1 (2.0 is the integer 2)."""
    if is_int(value) and 1 <= value <= INT64_MAX:
        return value
    if isinstance(value, float) and math.isfinite(value) and value >= 1:
        return int(value) if value.is_integer() and value <= INT64_MAX else value
    problems.add(path, f"{path[-1]} must be a number of at least 1 (1 = no backoff; 1.5 "
                 f"multiplies each delay by 1.5), not {describe(value)}")
    return 1


def read_waits(value: Any, problems: Problems) -> tuple[Term, ...] | None:
    """`waits': a non-empty list of {strategy, delay, exponentialBackoff}, delay required."""
    if not isinstance(value, list) or not value:
        problems.add(("waits",), "waits must be a non-empty list of waits such as {strategy: fixed, "
                     f"delay: 1s}}, whose delays are summed; not {describe(value)}")
        return None
    terms = []
    for i, item in enumerate(value):
        path = ("waits", i)
        if not check_keys(item, ("strategy", "delay", "exponentialBackoff"), "a wait", path, problems):
            continue
        strategy, backoff, delay = item.get("strategy", "exponential"), 1, None
        if strategy not in WAITS:
            problems.add(path + ("strategy",), f"strategy must be one of {', '.join(STRATEGIES)}, "
                         f"not {describe(strategy)}")
        if item.get("exponentialBackoff") is not None:
            backoff = read_backoff(item["exponentialBackoff"], path + ("exponentialBackoff",), problems)
        if item.get("delay") is None:
            problems.add(path + ("delay",), f"delay is required in a wait: {DURATION_HINT}")
        else:
            delay = read_duration(item["delay"], path + ("delay",), problems)
        if strategy in WAITS and delay is not None:
            terms.append(Term(WAITS[strategy], delay, backoff))
    return tuple(terms) if len(terms) == len(value) else None


def read_jitter(value: Any, problems: Problems) -> Jitter | None:
    """`none', `full', `equal', `{ratio: [a, b]}' (0 <= a <= b <= 1) or `{add: DURATION}'."""
    if isinstance(value, str) and value in NAMED_JITTERS:
        return NAMED_JITTERS[value]
    if isinstance(value, dict) and len(value) == 1 and "ratio" in value:
        pair = value["ratio"]
        if (isinstance(pair, list) and len(pair) == 2
                and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pair)
                and 0 <= pair[0] <= pair[1] <= 1):
            return RatioJitter(float(pair[0]), float(pair[1]))
        shown = repr(pair) if isinstance(pair, list) else describe(pair)
        problems.add(("jitter", "ratio"), "ratio must be a list of two numbers [a, b] with "
                     "0 <= a <= b <= 1 (the delay is multiplied by a uniform number between "
                     f"them), not {shown}")
        return None
    if isinstance(value, dict) and len(value) == 1 and "add" in value:
        ms = read_duration(value["add"], ("jitter", "add"), problems)
        return None if ms is None else AddJitter(ms)
    problems.add(("jitter",), f"jitter must be one of {', '.join(JITTERS)}, not {describe(value)}")
    return None
