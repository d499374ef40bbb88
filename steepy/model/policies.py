"""Retry and timeout policies: the model (JSON in and out) and the pure maths behind them.

Steep's retry policy (reference §6) is `{maxAttempts, delay, exponentialBackoff, maxDelay}`;
steepy adds `strategy`, `jitter`, `retryOn` and `abortOn` (extensions §1). A timeout policy
(reference §5) is a duration, or `{timeout, errorOnTimeout}`.

Nothing here sleeps or runs anything: the agent and the scheduler call these functions to decide
whether and when to retry.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from steepy.durations import INT64_MAX, INT64_MIN, DurationError, format_duration, model_duration
from steepy.errors import InputError, Problem, json_path

__all__ = ["RetryCondition", "RetryPolicy", "TimeoutPolicy", "STRATEGIES", "JITTERS", "TIMEOUT_KINDS"]

STRATEGIES = ("exponential", "linear", "fixed")
JITTERS = ("none", "full", "equal")
# Timeouts a condition may name; a `deadline` timeout is never retried (reference §5).
TIMEOUT_KINDS = ("maxRuntime", "maxInactivity")

_RANGE = re.compile(r"\s*(-?[0-9]{1,10})\s*\.\.\s*(-?[0-9]{1,10})\s*")
_DURATION_HINT = "a number of milliseconds or a duration such as `500ms', `5s' or `1h 30m'"

ExitCode = int | tuple[int, int]


class _Problems:
    """Collects every problem of one policy object, so the user sees them all at once."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, path: tuple, message: str) -> None:
        self.items.append(Problem(message, path=json_path(path)))

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_keys(data: Any, allowed: tuple[str, ...], what: str, path: tuple, problems: _Problems) -> bool:
    """True if `data` is an object; reports unknown keys (naming the allowed ones)."""
    names = ", ".join(allowed)
    if not isinstance(data, dict):
        problems.add(path, f"{what} must be an object with the keys {names}, not {_describe(data)}")
        return False
    for key in data:
        if key not in allowed:
            problems.add(path + (str(key),), f"unknown key `{key}' in {what}; allowed keys: {names}")
    return True


def _read_duration(value: Any, path: tuple, problems: _Problems) -> int | None:
    try:
        return model_duration(value)
    except DurationError as e:
        if isinstance(value, str):
            problems.add(path, f"{e} in {value!r}; expected {_DURATION_HINT}")
        elif _is_int(value):
            problems.add(path, f"{e}; expected {_DURATION_HINT}")
        else:
            problems.add(path, f"expected {_DURATION_HINT}, not {_describe(value)}")
        return None


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    # MULTILINE so that `^`/`$` anchor at each collected output line
    return re.compile(pattern, re.MULTILINE)


def _check_regex(pattern: str) -> str | None:
    """The reason `pattern` is not a valid regular expression, or None."""
    try:
        _compile(pattern)
    except (re.error, ValueError, OverflowError, RecursionError) as e:
        return str(e)
    return None


# ---------------------------------------------------------------------------------------------


@dataclass
class RetryCondition:
    """A set of failure kinds (`retryOn` / `abortOn`): matches if ANY listed item matches."""

    exit_codes: list[ExitCode] = field(default_factory=list)
    output: str | None = None  # regular expression searched in the last output lines
    timeouts: list[str] = field(default_factory=list)  # maxRuntime, maxInactivity
    # How each range was written ("3 .. 5"), so to_json gives back the user's spelling.
    range_spellings: dict[tuple[int, int], str] = field(default_factory=dict, repr=False, compare=False)

    KEYS = ("exitCodes", "output", "timeouts")

    @classmethod
    def from_json(cls, data: Any) -> RetryCondition:
        problems = _Problems()
        result = cls._read(data, (), problems)
        problems.raise_if_any()
        assert result is not None
        return result

    @classmethod
    def _read(cls, data: Any, path: tuple, problems: _Problems) -> RetryCondition | None:
        if not _check_keys(data, cls.KEYS, "a retry condition", path, problems):
            return None
        cond = cls()
        codes = data.get("exitCodes")
        if codes is not None:
            if not isinstance(codes, list):
                problems.add(path + ("exitCodes",), "exitCodes must be a list of exit codes "
                             f"(integers or inclusive ranges such as \"3..5\"), not {_describe(codes)}")
            else:
                for i, item in enumerate(codes):
                    code = cls._read_exit_code(item, path + ("exitCodes", i), problems)
                    if isinstance(code, tuple):
                        cond.range_spellings[code] = item
                    if code is not None:
                        cond.exit_codes.append(code)
        output = data.get("output")
        if output is not None:
            if not isinstance(output, str):
                problems.add(path + ("output",), f"output must be a regular expression (a string), not {_describe(output)}")
            elif (reason := _check_regex(output)) is not None:
                problems.add(path + ("output",), f"output is not a valid regular expression: {reason}")
            else:
                cond.output = output
        timeouts = data.get("timeouts")
        if timeouts is not None:
            allowed = " or ".join(f"`{k}'" for k in TIMEOUT_KINDS)
            if not isinstance(timeouts, list):
                problems.add(path + ("timeouts",), f"timeouts must be a list of {allowed}, not {_describe(timeouts)}")
            else:
                for i, kind in enumerate(timeouts):
                    if kind in TIMEOUT_KINDS:
                        cond.timeouts.append(kind)
                    elif kind == "deadline":
                        problems.add(path + ("timeouts", i), "a `deadline' timeout is never retried and "
                                     f"cannot be listed; allowed: {allowed}")
                    else:
                        problems.add(path + ("timeouts", i), f"unknown timeout {_describe(kind)}; allowed: {allowed}")
        return cond

    @staticmethod
    def _read_exit_code(item: Any, path: tuple, problems: _Problems) -> ExitCode | None:
        if _is_int(item):
            if INT64_MIN <= item <= INT64_MAX:
                return item
        elif isinstance(item, str) and (m := _RANGE.fullmatch(item)):
            low, high = int(m.group(1)), int(m.group(2))
            if low <= high:
                return (low, high)
            problems.add(path, f"exit code range {item!r} is empty: the first number must not be "
                         "greater than the second")
            return None
        problems.add(path, f"an exit code must be an integer or an inclusive range such as \"3..5\", "
                     f"not {_describe(item)}")
        return None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.exit_codes:
            out["exitCodes"] = [
                self.range_spellings.get(c, f"{c[0]}..{c[1]}") if isinstance(c, tuple) else c
                for c in self.exit_codes
            ]
        if self.output is not None:
            out["output"] = self.output
        if self.timeouts:
            out["timeouts"] = list(self.timeouts)
        return out

    def match_reason(self, exit_code: int | None, output_lines: list[str],
                     timeout_kind: str | None) -> str | None:
        """What matched, in words (e.g. "exit code 4 (range 3..5)"), or None if nothing did."""
        if exit_code is not None:
            for code in self.exit_codes:
                if isinstance(code, tuple):
                    if code[0] <= exit_code <= code[1]:
                        return f"exit code {exit_code} (range {code[0]}..{code[1]})"
                elif code == exit_code:
                    return f"exit code {exit_code}"
        if self.output is not None and output_lines:
            if _compile(self.output).search("\n".join(output_lines)):
                return f"output /{self.output}/"
        if timeout_kind is not None and timeout_kind in self.timeouts:
            return f"timeout {timeout_kind}"
        return None

    def matches(self, exit_code: int | None, output_lines: list[str], timeout_kind: str | None) -> bool:
        return self.match_reason(exit_code, output_lines, timeout_kind) is not None


# ---------------------------------------------------------------------------------------------


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


def _clamp64(value: int) -> int:
    return max(INT64_MIN, min(INT64_MAX, value))


@dataclass
class RetryPolicy:
    """How often and after which pause a failed executable or process chain is tried again."""

    max_attempts: int = 1  # counts the first attempt; < 0 = unlimited; 0 = never run
    delay: int = 0  # ms
    exponential_backoff: int = 1
    max_delay: int | None = None  # ms
    strategy: str = "exponential"
    jitter: str = "none"
    retry_on: RetryCondition | None = None
    abort_on: RetryCondition | None = None

    KEYS = ("maxAttempts", "delay", "exponentialBackoff", "maxDelay", "strategy", "jitter",
            "retryOn", "abortOn")

    # -- JSON ------------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Any) -> RetryPolicy:
        """Read a policy object; raises InputError listing every problem (paths relative to it)."""
        problems = _Problems()
        policy = cls()
        if _check_keys(data, cls.KEYS, "a retry policy", (), problems):
            policy._read(data, problems)
        problems.raise_if_any()
        return policy

    def _read(self, data: dict, problems: _Problems) -> None:
        if (v := data.get("maxAttempts")) is not None:
            if _is_int(v) and INT64_MIN <= v <= INT64_MAX:
                self.max_attempts = v
            else:
                problems.add(("maxAttempts",), "maxAttempts must be an integer (the number of attempts "
                             f"including the first; -1 = unlimited; 0 = do not run), not {_describe(v)}")
        if (v := data.get("delay")) is not None:
            if (ms := _read_duration(v, ("delay",), problems)) is not None:
                self.delay = ms
        if (v := data.get("exponentialBackoff")) is not None:
            if _is_int(v) and 1 <= v <= INT64_MAX:
                self.exponential_backoff = v
            else:
                problems.add(("exponentialBackoff",), "exponentialBackoff must be an integer factor of "
                             f"at least 1 (1 = no backoff), not {_describe(v)}")
        if (v := data.get("maxDelay")) is not None:
            self.max_delay = _read_duration(v, ("maxDelay",), problems)
        for key, allowed in (("strategy", STRATEGIES), ("jitter", JITTERS)):
            if (v := data.get(key)) is not None:
                if v in allowed:
                    setattr(self, key, v)
                else:
                    names = ", ".join(allowed)
                    problems.add((key,), f"{key} must be one of {names}, not {_describe(v)}")
        for key, attr in (("retryOn", "retry_on"), ("abortOn", "abort_on")):
            if (v := data.get(key)) is not None:
                setattr(self, attr, RetryCondition._read(v, (key,), problems))

    def to_json(self) -> dict[str, Any]:
        """Only the fields that differ from their defaults; durations as integer milliseconds."""
        out: dict[str, Any] = {}
        defaults = RetryPolicy()
        for key, attr in (("maxAttempts", "max_attempts"), ("delay", "delay"),
                          ("exponentialBackoff", "exponential_backoff"), ("maxDelay", "max_delay"),
                          ("strategy", "strategy"), ("jitter", "jitter")):
            value = getattr(self, attr)
            if value != getattr(defaults, attr):
                out[key] = value
        if self.retry_on is not None:
            out["retryOn"] = self.retry_on.to_json()
        if self.abort_on is not None:
            out["abortOn"] = self.abort_on.to_json()
        return out

    # -- delays ----------------------------------------------------------------------------------

    def delay_after_attempts(self, performed: int) -> int:
        """The pause (ms, before jitter) after `performed` attempts, before the next one.

        n = performed, capped at maxAttempts when maxAttempts >= 0 (Steep's rule; so beyond the
        last attempt the delay stays put); then the strategy's formula; then the maxDelay cap.
        """
        if performed <= 0:
            return 0
        n = min(performed, self.max_attempts) if self.max_attempts >= 0 else performed
        if self.strategy == "linear":
            raw = self.delay * n
        elif self.strategy == "fixed":
            raw = self.delay
        else:
            raw = self.delay * _power_factor(self.exponential_backoff, n - 1)
        d = _clamp64(raw)
        if self.max_delay is not None:
            d = min(d, self.max_delay)
        return d

    def retry_delay(self, performed: int, rng: random.Random | None = None) -> int:
        """`delay_after_attempts` with the policy's jitter applied (rng injectable for tests)."""
        d = self.delay_after_attempts(performed)
        if self.jitter == "none" or d <= 0:
            return d
        r = rng if rng is not None else random
        if self.jitter == "full":
            result = r.randint(0, d)  # uniform in [0, d]
        else:  # equal: d/2 + uniform in [0, d/2], i.e. [ceil(d/2), d] in whole ms
            half = d // 2
            result = (d - half) + r.randint(0, half)
        if self.max_delay is not None:
            result = min(result, self.max_delay)
        return result

    def describe_delay_rule(self) -> str:
        """The rule behind the delays, for attempt records, e.g.
        "exponential 100ms*2^(n-1), max 1s, jitter none"."""
        delay = format_duration(self.delay)
        if self.strategy == "linear":
            text = f"linear {delay}*n"
        elif self.strategy == "fixed":
            text = f"fixed {delay}"
        else:
            text = f"exponential {delay}*{self.exponential_backoff}^(n-1)"
        if self.max_delay is not None:
            text += f", max {format_duration(self.max_delay)}"
        return text + f", jitter {self.jitter}"

    # -- decisions -------------------------------------------------------------------------------

    def attempts_left(self, performed: int) -> bool:
        """May another attempt follow `performed` attempts?"""
        return self.max_attempts < 0 or performed < self.max_attempts

    def should_retry(self, exit_code: int | None, output_lines: list[str], timeout_kind: str | None,
                     cancelled: bool = False) -> tuple[bool, str]:
        """Is this kind of failure retryable (ignoring the attempt count), and why.

        Order (extensions §1): cancellations and deadline timeouts never; abortOn wins over
        retryOn; with retryOn only matching failures; otherwise every failure (Steep's default).
        """
        if cancelled:
            return False, "cancellations are never retried"
        if timeout_kind == "deadline":
            return False, "a deadline timeout is never retried"
        if self.abort_on is not None:
            reason = self.abort_on.match_reason(exit_code, output_lines, timeout_kind)
            if reason is not None:
                return False, f"abortOn matched {reason}"
        if self.retry_on is not None:
            reason = self.retry_on.match_reason(exit_code, output_lines, timeout_kind)
            if reason is None:
                return False, f"retryOn did not match ({_failure_words(exit_code, timeout_kind)})"
            return True, f"retryOn matched {reason}"
        return True, "every failure is retried (no retryOn)"


def _failure_words(exit_code: int | None, timeout_kind: str | None) -> str:
    if timeout_kind is not None:
        return f"timeout {timeout_kind}"
    if exit_code is not None:
        return f"exit code {exit_code}"
    return "failure without exit code"


# ---------------------------------------------------------------------------------------------


@dataclass
class TimeoutPolicy:
    """maxInactivity / maxRuntime / deadline of an executable (reference §5)."""

    timeout: int  # ms
    error_on_timeout: bool = False  # True: chain ends in ERROR; False: CANCELLED

    KEYS = ("timeout", "errorOnTimeout")

    @classmethod
    def from_json(cls, data: Any) -> TimeoutPolicy:
        """A duration string, an integer (ms), or `{timeout, errorOnTimeout}`."""
        problems = _Problems()
        if isinstance(data, (str, int)) and not isinstance(data, bool):
            ms = _read_duration(data, (), problems)
            problems.raise_if_any()
            assert ms is not None
            return cls(ms)
        if not isinstance(data, dict):
            problems.add((), "a timeout policy must be a duration (a number of milliseconds or a "
                         "string such as `5m') or an object with the keys timeout, errorOnTimeout; "
                         f"not {_describe(data)}")
            problems.raise_if_any()
        _check_keys(data, cls.KEYS, "a timeout policy", (), problems)
        ms = None
        if data.get("timeout") is None:
            problems.add(("timeout",), f"timeout is required: {_DURATION_HINT}")
        else:
            ms = _read_duration(data["timeout"], ("timeout",), problems)
        flag = data.get("errorOnTimeout", False)
        if flag is None:
            flag = False
        if not isinstance(flag, bool):
            problems.add(("errorOnTimeout",), f"errorOnTimeout must be true or false, not {_describe(flag)}")
        problems.raise_if_any()
        assert ms is not None
        return cls(ms, flag)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"timeout": self.timeout}
        if self.error_on_timeout:
            out["errorOnTimeout"] = True
        return out
