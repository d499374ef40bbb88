"""Retry and timeout policies: the model (JSON in and out) and the decisions behind them.

Steep's retry policy (reference §6) is `{maxAttempts, delay, exponentialBackoff, maxDelay}`;
steepy adds `strategy`, `jitter`, `retryOn` and `abortOn` (extensions §1) and `requeue`
(extensions §11). A timeout policy
(reference §5) is a duration, or `{timeout, errorOnTimeout}`.

Nothing here sleeps or runs anything: the agent and the scheduler call these functions to decide
whether and when to retry. The delays' forms are strategy objects (`steepy.model.backoff`), the
failure conditions are `steepy.model.conditions`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from steepy.model.durations import INT64_MAX, INT64_MIN, format_duration
from steepy.model.backoff import JITTERS as NAMED_JITTERS
from steepy.model.backoff import WAITS, AddJitter, Jitter, NoJitter, RatioJitter, Wait, clamp64
from steepy.model.checks import (DURATION_HINT, Problems, check_keys, describe, is_int,
                                 read_duration)
from steepy.model.conditions import TIMEOUT_KINDS, RetryCondition
from steepy.model.requeue import Requeue
from steepy.model.timeouts import TimeoutKind

__all__ = ["RetryCondition", "RetryPolicy", "TimeoutKind", "TimeoutPolicy", "STRATEGIES", "JITTERS",
           "TIMEOUT_KINDS"]

STRATEGIES = tuple(WAITS)
JITTERS = tuple(NAMED_JITTERS) + ("{ratio: [a, b]}", "{add: DURATION}")


@dataclass
class RetryPolicy:
    """How often and after which pause a failed executable or process chain is tried again."""

    max_attempts: int = 1  # counts the first attempt; < 0 = unlimited; 0 = never run
    delay: int = 0  # ms
    exponential_backoff: int = 1
    max_delay: int | None = None  # ms
    strategy: Wait = WAITS["exponential"]  # or its name
    jitter: Jitter = NoJitter()  # or the name of a plain one
    retry_on: RetryCondition | None = None
    abort_on: RetryCondition | None = None
    requeue: Requeue | None = None  # failures that are not counted as attempts (extensions 11)

    def __post_init__(self) -> None:
        if isinstance(self.strategy, str):
            self.strategy = WAITS[self.strategy]
        if isinstance(self.jitter, str):
            self.jitter = NAMED_JITTERS[self.jitter]

    KEYS = ("maxAttempts", "delay", "exponentialBackoff", "maxDelay", "strategy", "jitter",
            "retryOn", "abortOn", "requeue")

    # -- JSON ------------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Any) -> RetryPolicy:
        """Read a policy object; raises InputError listing every problem (paths relative to it)."""
        problems = Problems()
        policy = cls()
        if check_keys(data, cls.KEYS, "a retry policy", (), problems):
            policy._read(data, problems)
        problems.raise_if_any()
        return policy

    def _read(self, data: dict, problems: Problems) -> None:
        if (v := data.get("maxAttempts")) is not None:
            if is_int(v) and INT64_MIN <= v <= INT64_MAX:
                self.max_attempts = v
            else:
                problems.add(("maxAttempts",), "maxAttempts must be an integer (the number of attempts "
                             f"including the first; -1 = unlimited; 0 = do not run), not {describe(v)}")
        if (v := data.get("delay")) is not None:
            if (ms := read_duration(v, ("delay",), problems)) is not None:
                self.delay = ms
        if (v := data.get("exponentialBackoff")) is not None:
            if is_int(v) and 1 <= v <= INT64_MAX:
                self.exponential_backoff = v
            else:
                problems.add(("exponentialBackoff",), "exponentialBackoff must be an integer factor of "
                             f"at least 1 (1 = no backoff), not {describe(v)}")
        if (v := data.get("maxDelay")) is not None:
            self.max_delay = read_duration(v, ("maxDelay",), problems)
        if (v := data.get("strategy")) is not None:
            if isinstance(v, str) and v in WAITS:
                self.strategy = WAITS[v]
            else:
                problems.add(("strategy",), f"strategy must be one of {', '.join(STRATEGIES)}, "
                             f"not {describe(v)}")
        if (v := data.get("jitter")) is not None:
            self.jitter = _read_jitter(v, problems) or self.jitter
        for key, attr in (("retryOn", "retry_on"), ("abortOn", "abort_on")):
            if (v := data.get(key)) is not None:
                setattr(self, attr, RetryCondition._read(v, (key,), problems))
        if (v := data.get("requeue")) is not None:
            self.requeue = Requeue._read(v, ("requeue",), problems)

    def to_json(self) -> dict[str, Any]:
        """Only the fields that differ from their defaults; durations as integer milliseconds."""
        out: dict[str, Any] = {}
        defaults = RetryPolicy()
        for key, attr in (("maxAttempts", "max_attempts"), ("delay", "delay"),
                          ("exponentialBackoff", "exponential_backoff"), ("maxDelay", "max_delay")):
            value = getattr(self, attr)
            if value != getattr(defaults, attr):
                out[key] = value
        if self.strategy != defaults.strategy:
            out["strategy"] = self.strategy.name
        if self.jitter != defaults.jitter:
            out["jitter"] = self.jitter.to_json()
        if self.retry_on is not None:
            out["retryOn"] = self.retry_on.to_json()
        if self.abort_on is not None:
            out["abortOn"] = self.abort_on.to_json()
        if self.requeue is not None:
            out["requeue"] = self.requeue.to_json()
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
        d = clamp64(self.strategy.raw(self.delay, self.exponential_backoff, n))
        if self.max_delay is not None:
            d = min(d, self.max_delay)
        return d

    def retry_delay(self, performed: int, rng: random.Random | None = None) -> int:
        """`delay_after_attempts` with the policy's jitter applied (rng injectable for tests)."""
        d = self.delay_after_attempts(performed)
        if d <= 0:
            return d
        result = self.jitter.apply(d, rng if rng is not None else random)
        if self.max_delay is not None:
            result = min(result, self.max_delay)
        return result

    def describe_delay_rule(self) -> str:
        """The rule behind the delays, for attempt records, e.g.
        "exponential 100ms*2^(n-1), max 1s, jitter none"."""
        text = self.strategy.describe(self.delay, self.exponential_backoff)
        if self.max_delay is not None:
            text += f", max {format_duration(self.max_delay)}"
        return text + f", jitter {self.jitter.describe()}"

    # -- decisions -------------------------------------------------------------------------------

    def attempts_left(self, performed: int) -> bool:
        """May another attempt follow `performed` attempts?"""
        return self.max_attempts < 0 or performed < self.max_attempts

    def requeue_reason(self, exit_code: int | None, output_lines: list[str],
                       timeout_kind: str | None, cancelled: bool = False) -> str | None:
        """Why this failure is re-queued without spending an attempt, or None (extensions 11).

        Checked before retryOn/abortOn: a tool that asks to be run later has not failed."""
        if self.requeue is None:
            return None
        return self.requeue.match_reason(exit_code, output_lines, timeout_kind, cancelled)

    def should_retry(self, exit_code: int | None, output_lines: list[str], timeout_kind: str | None,
                     cancelled: bool = False) -> tuple[bool, str]:
        """Is this kind of failure retryable (ignoring the attempt count), and why.

        Order (extensions §1): cancellations and deadline timeouts never; abortOn wins over
        retryOn; with retryOn only matching failures; otherwise every failure (Steep's default).
        """
        if cancelled:
            return False, "cancellations are never retried"
        if timeout_kind == TimeoutKind.DEADLINE:
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


def _read_jitter(value: Any, problems: Problems) -> Jitter | None:
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


def _failure_words(exit_code: int | None, timeout_kind: str | None) -> str:
    if timeout_kind is not None:
        return f"timeout {timeout_kind}"
    if exit_code is not None:
        return f"exit code {exit_code}"
    return "failure without exit code"


# ---------------------------------------------------------------------------------------------


@dataclass
class TimeoutPolicy:
    """A timeout of an executable (reference §5); which one, a `TimeoutKind` says."""

    timeout: int  # ms
    error_on_timeout: bool = False  # True: chain ends in ERROR; False: CANCELLED

    KEYS = ("timeout", "errorOnTimeout")

    @classmethod
    def from_json(cls, data: Any) -> TimeoutPolicy:
        """A duration string, an integer (ms), or `{timeout, errorOnTimeout}`."""
        problems = Problems()
        if isinstance(data, (str, int)) and not isinstance(data, bool):
            ms = read_duration(data, (), problems)
            problems.raise_if_any()
            assert ms is not None
            return cls(ms)
        if not isinstance(data, dict):
            problems.add((), "a timeout policy must be a duration (a number of milliseconds or a "
                         "string such as `5m') or an object with the keys timeout, errorOnTimeout; "
                         f"not {describe(data)}")
            problems.raise_if_any()
        check_keys(data, cls.KEYS, "a timeout policy", (), problems)
        ms = None
        if data.get("timeout") is None:
            problems.add(("timeout",), f"timeout is required: {DURATION_HINT}")
        else:
            ms = read_duration(data["timeout"], ("timeout",), problems)
        flag = data.get("errorOnTimeout", False)
        if flag is None:
            flag = False
        if not isinstance(flag, bool):
            problems.add(("errorOnTimeout",), f"errorOnTimeout must be true or false, not {describe(flag)}")
        problems.raise_if_any()
        assert ms is not None
        return cls(ms, flag)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"timeout": self.timeout}
        if self.error_on_timeout:
            out["errorOnTimeout"] = True
        return out
