"""Re-queue rules (extensions 11: `requeue' in a retry policy): a failure that says "later"
(an exit code or an output pattern) is not counted as an attempt; the executable runs again after
the rule's `delay'. A cancel or any timeout is never re-queued (a `deadline' still bounds it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steepy.model.durations import format_duration
from steepy.model.checks import Problems, check_keys, read_duration, read_whole
from steepy.model.conditions import RetryCondition


@dataclass
class Requeue:
    """`{exitCodes: [...], output: REGEX, delay: DURATION}`: matches like a retry condition."""

    condition: RetryCondition = field(default_factory=RetryCondition)
    delay: int = 0  # ms before the executable runs again

    KEYS = ("exitCodes", "output", "delay")

    @classmethod
    def from_json(cls, data: Any) -> Requeue:
        return read_whole(cls._read, data)

    @classmethod
    def _read(cls, data: Any, path: tuple, problems: Problems) -> Requeue | None:
        if not check_keys(data, cls.KEYS, "a requeue rule", path, problems):
            return None
        rule = cls()
        matching = {k: v for k, v in data.items() if k in ("exitCodes", "output")}
        if not matching:
            problems.add(path, "a requeue rule needs exitCodes or output (which failures say "
                         "\"try again later\")")
        condition = RetryCondition._read(matching, path, problems)
        if condition is not None:
            rule.condition = condition
        if (v := data.get("delay")) is not None:
            if (ms := read_duration(v, path + ("delay",), problems)) is not None:
                rule.delay = ms
        return rule

    def to_json(self) -> dict[str, Any]:
        out = self.condition.to_json()
        if self.delay:
            out["delay"] = self.delay
        return out

    def match_reason(self, exit_code: int | None, output_lines: list[str],
                     timeout_kind: str | None, cancelled: bool = False) -> str | None:
        """Why this failure is re-queued (e.g. "requeue matched exit code 75"), or None."""
        if cancelled or timeout_kind is not None:
            return None
        reason = self.condition.match_reason(exit_code, output_lines, None)
        return None if reason is None else f"requeue matched {reason}"

    def describe(self) -> str:
        return f"requeue after {format_duration(self.delay)}"
