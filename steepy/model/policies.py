"""Retry and timeout policies: the model (JSON in and out) and the decisions behind them.

Steep's retry policy (reference §6) is `{maxAttempts, delay, exponentialBackoff, maxDelay}`;
steepy adds `strategy`, `jitter`, `retryOn` and `abortOn`, `capAfterJitter`, `maxElapsed`,
`stop` and `waits` (extensions §1) and `requeue` (extensions §11). A timeout policy
(reference §5) is a duration, or `{timeout, errorOnTimeout}`.

Nothing here sleeps or runs anything: the agent and the scheduler call these functions to decide
whether and when to retry. The delays' forms are strategy objects (`steepy.model.backoff`), the
failure conditions are `steepy.model.conditions`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from steepy.model.durations import INT64_MAX, INT64_MIN, format_duration
from steepy.model.backoff import JITTERS as NAMED_JITTERS
from steepy.model.backoff import WAITS, Backoff, Jitter, NoJitter, Term, Wait, clamp64
from steepy.model.checks import (DURATION_HINT, Problems, check_keys, describe, is_int,
                                 read_duration)
from steepy.model.conditions import TIMEOUT_KINDS, RetryCondition
from steepy.model.delayforms import JITTERS, STRATEGIES, read_backoff, read_jitter, read_waits
from steepy.model.requeue import Requeue
from steepy.model.timeouts import TimeoutKind

__all__ = ["RetryCondition", "RetryPolicy", "TimeoutKind", "TimeoutPolicy", "STRATEGIES", "JITTERS",
           "TIMEOUT_KINDS"]

STOPS = ("any", "all")


def _unlimited_implied(data: dict) -> bool:
    """Whether a policy with maxElapsed or a plugin but no maxAttempts means unlimited
    attempts. Not for one with `inherit: true': its maxAttempts comes from the levels below,
    and only when none gives it does the merged policy (read without `inherit') mean -1."""
    return data.get("maxAttempts") is None and data.get("inherit") is not True


@dataclass
class RetryPolicy:
    """How often and after which pause a failed executable or process chain is tried again."""

    max_attempts: int = 1  # counts the first attempt; < 0 = unlimited; 0 = never run
    delay: int = 0  # ms
    exponential_backoff: Backoff = 1  # an integer, or a fraction > 1
    max_delay: int | None = None  # ms
    strategy: Wait = WAITS["exponential"]  # or its name
    jitter: Jitter = NoJitter()  # or the name of a plain one
    retry_on: RetryCondition | None = None
    abort_on: RetryCondition | None = None
    requeue: Requeue | None = None  # failures that are not counted as attempts (extensions 11)
    cap_after_jitter: bool = False  # True: jitter the raw delay, then cap (Exosphere)
    max_elapsed: int | None = None  # ms from the start of attempt 1 to the start of a retry
    stop: str = "any"  # give up when any limit is reached, or only when all are
    waits: tuple[Term, ...] | None = None  # summed instead of strategy/delay/exponentialBackoff
    inherit: bool = False  # True: keys not given come from the next level (model.inheritance)
    plugin: str | None = None  # a `retryPolicy' plugin picks each pause (extensions 1)
    given: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # as read

    def __post_init__(self) -> None:
        if isinstance(self.strategy, str):
            self.strategy = WAITS[self.strategy]
        if isinstance(self.jitter, str):
            self.jitter = NAMED_JITTERS[self.jitter]

    KEYS = ("maxAttempts", "delay", "exponentialBackoff", "maxDelay", "strategy", "jitter",
            "retryOn", "abortOn", "requeue", "capAfterJitter", "maxElapsed", "stop", "waits",
            "inherit", "plugin")

    # -- JSON ------------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Any) -> RetryPolicy:
        """Read a policy object; raises InputError listing every problem (paths relative to it)."""
        problems = Problems()
        policy = cls()
        if check_keys(data, cls.KEYS, "a retry policy", (), problems):
            policy._read(data, problems)
            policy._read_inherit(data, problems)
        problems.raise_if_any()
        return policy

    def _read_inherit(self, data: dict, problems: Problems) -> None:
        """`inherit', and the keys given (their values as written), which an inheriting
        policy takes from no other level (steepy.model.inheritance)."""
        self.given = {k: v for k, v in data.items() if k != "inherit" and v is not None}
        if (v := data.get("inherit")) is not None:
            if isinstance(v, bool):
                self.inherit = v
            else:
                problems.add(("inherit",), f"inherit must be true or false, not {describe(v)}")

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
            self.exponential_backoff = read_backoff(v, ("exponentialBackoff",), problems)
        if (v := data.get("maxDelay")) is not None:
            self.max_delay = read_duration(v, ("maxDelay",), problems)
        if (v := data.get("strategy")) is not None:
            if isinstance(v, str) and v in WAITS:
                self.strategy = WAITS[v]
            else:
                problems.add(("strategy",), f"strategy must be one of {', '.join(STRATEGIES)}, "
                             f"not {describe(v)}")
        if (v := data.get("jitter")) is not None:
            self.jitter = read_jitter(v, problems) or self.jitter
        for key, attr in (("retryOn", "retry_on"), ("abortOn", "abort_on")):
            if (v := data.get(key)) is not None:
                setattr(self, attr, RetryCondition._read(v, (key,), problems))
        if (v := data.get("requeue")) is not None:
            self.requeue = Requeue._read(v, ("requeue",), problems)
        if (v := data.get("plugin")) is not None:
            if isinstance(v, str) and v:
                self.plugin = v
                if _unlimited_implied(data):
                    self.max_attempts = -1  # the plugin decides when to give up
            else:
                problems.add(("plugin",), f"plugin must be the name of a retryPolicy plugin, "
                             f"not {describe(v)}")
        self._read_more(data, problems)

    def _read_more(self, data: dict, problems: Problems) -> None:
        """capAfterJitter, maxElapsed, stop and waits (extensions 1)."""
        if (v := data.get("capAfterJitter")) is not None:
            if isinstance(v, bool):
                self.cap_after_jitter = v
            else:
                problems.add(("capAfterJitter",), f"capAfterJitter must be true or false, not {describe(v)}")
        if (v := data.get("maxElapsed")) is not None:
            self.max_elapsed = read_duration(v, ("maxElapsed",), problems)
            if _unlimited_implied(data):
                self.max_attempts = -1  # the only limit given is maxElapsed
        if (v := data.get("stop")) is not None:
            if v in STOPS:
                self.stop = v
            else:
                problems.add(("stop",), "stop must be any (give up when one limit is reached) or "
                             f"all (only when every limit given is reached), not {describe(v)}")
        if (v := data.get("waits")) is not None:
            for key in ("delay", "exponentialBackoff", "strategy"):
                if data.get(key) is not None:
                    problems.add((key,), f"{key} cannot be given beside waits: each wait in the "
                                 "list has its own strategy, delay and exponentialBackoff")
            self.waits = read_waits(v, problems)

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
        if self.cap_after_jitter:
            out["capAfterJitter"] = True
        if self.max_elapsed is not None:
            out["maxElapsed"] = self.max_elapsed
        if self.stop != "any":
            out["stop"] = self.stop
        if self.waits is not None:
            out["waits"] = [term.to_json() for term in self.waits]
        if self.plugin is not None:
            out["plugin"] = self.plugin
        if self.inherit:  # a key given stays given, even with its default value
            out = {**self.given, **out, "inherit": True}
        return out

    # -- delays ----------------------------------------------------------------------------------

    def raw_delay(self, performed: int) -> int:
        """The pause (ms) after `performed` attempts, before the cap and the jitter.

        n = performed, capped at maxAttempts when maxAttempts >= 0 (Steep's rule; so beyond the
        last attempt the delay stays put); then the strategy's formula, or the sum of `waits'.
        """
        if performed <= 0:
            return 0
        n = min(performed, self.max_attempts) if self.max_attempts >= 0 else performed
        if self.waits is not None:
            return clamp64(sum(term.raw(n) for term in self.waits))
        return clamp64(self.strategy.raw(self.delay, self.exponential_backoff, n))

    def delay_after_attempts(self, performed: int) -> int:
        """The pause (ms, before jitter) after `performed` attempts: `raw_delay' capped at
        maxDelay (also without backoff, as Steep's code does)."""
        d = self.raw_delay(performed)
        return d if self.max_delay is None else min(d, self.max_delay)

    def retry_delay(self, performed: int, rng: random.Random | None = None) -> int:
        """The pause with the policy's jitter (rng injectable for tests): the capped delay
        jittered, capped again; with capAfterJitter the raw delay jittered, then capped."""
        d = self.raw_delay(performed) if self.cap_after_jitter else self.delay_after_attempts(performed)
        if d <= 0:
            return max(d, 0) if self.cap_after_jitter else d
        result = self.jitter.apply(d, rng if rng is not None else random)
        if self.max_delay is not None:
            result = min(result, self.max_delay)
        return result

    def describe_delay_rule(self) -> str:
        """The rule behind the delays, for attempt records, e.g.
        "exponential 100ms*2^(n-1), max 1s, jitter none"."""
        if self.waits is not None:
            text = " + ".join(term.describe() for term in self.waits)
        else:
            text = self.strategy.describe(self.delay, self.exponential_backoff)
        if self.max_delay is not None:
            text += f", max {format_duration(self.max_delay)}"
        text += f", jitter {self.jitter.describe()}"
        return text + (", capped after jitter" if self.cap_after_jitter else "")

    def cap_warning(self) -> str | None:
        """What `steepy validate` says of a maxDelay below a delay that does not grow."""
        grows = self.waits is not None or self.strategy.name == "linear" or (
            self.strategy.name == "exponential" and self.exponential_backoff != 1)
        if grows or self.max_delay is None or self.max_delay >= self.delay:
            return None
        return (f"maxDelay ({format_duration(self.max_delay)}) is below delay "
                f"({format_duration(self.delay)}) and there is no backoff: every pause is "
                f"{format_duration(self.max_delay)}. steepy caps the delay as Steep's code does; "
                "Steep's documentation says maxDelay only applies with an exponentialBackoff "
                "larger than 1")

    def describe_stop_rule(self) -> str:
        """The limits, e.g. "5 attempts", "unlimited attempts, max elapsed 30s",
        "3 attempts, max elapsed 10s, stop all"."""
        text = "unlimited attempts" if self.max_attempts < 0 else f"{self.max_attempts} attempts"
        if self.max_elapsed is not None:
            text += f", max elapsed {format_duration(self.max_elapsed)}"
        return text + (", stop all" if self.stop == "all" else "")

    # -- decisions -------------------------------------------------------------------------------

    def attempts_left(self, performed: int) -> bool:
        """Is maxAttempts not yet reached after `performed` attempts?"""
        return self.max_attempts < 0 or performed < self.max_attempts

    def attempts_used(self) -> str:
        """Why no attempt follows when maxAttempts is reached, in words."""
        if self.max_attempts == 1:
            return "maxAttempts is 1: its only attempt was used"
        return f"all {self.max_attempts} attempts used"

    def gives_up(self, performed: int, elapsed_ms: int) -> str | None:
        """Why no attempt follows `performed` attempts when the next one would begin
        `elapsed_ms` after the first began; None when it may follow.

        The limits given are maxAttempts (>= 0) and maxElapsed; `stop: any` gives up when one
        is reached, `stop: all` only when every one is. A retry due exactly at maxElapsed runs.
        """
        limits = []
        if self.max_attempts >= 0:
            limits.append((performed >= self.max_attempts, self.attempts_used()))
        if self.max_elapsed is not None:
            limits.append((elapsed_ms > self.max_elapsed, (
                f"attempt {performed + 1} would begin {format_duration(max(elapsed_ms, 0))} after "
                f"the first began, past maxElapsed {format_duration(self.max_elapsed)}")))
        reached = [words for hit, words in limits if hit]
        if not reached or (self.stop == "all" and len(reached) < len(limits)):
            return None
        return "; ".join(reached)

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
