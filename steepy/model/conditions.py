"""Retry conditions (extensions 1: `retryOn', `abortOn'): which failures of an attempt match,
by exit code or range, output pattern or timeout kind."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from steepy.model.durations import INT64_MAX, INT64_MIN
from steepy.model.checks import Problems, check_keys, describe, is_int, read_whole
from steepy.model.timeouts import RETRYABLE, TimeoutKind

# Timeouts a condition may name; a `deadline` timeout is never retried (reference §5).
TIMEOUT_KINDS = RETRYABLE

_RANGE = re.compile(r"\s*(-?[0-9]{1,10})\s*\.\.\s*(-?[0-9]{1,10})\s*")
_DURATION_HINT = "a number of milliseconds or a duration such as `500ms', `5s' or `1h 30m'"

ExitCode = int | tuple[int, int]


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


@dataclass
class RetryCondition:
    """A set of failure kinds (`retryOn` / `abortOn`): matches if ANY listed item matches."""

    exit_codes: list[ExitCode] = field(default_factory=list)
    output: str | None = None  # regular expression searched in the last output lines
    timeouts: list[TimeoutKind] = field(default_factory=list)  # of TIMEOUT_KINDS
    # How each range was written ("3 .. 5"), so to_json gives back the user's spelling.
    range_spellings: dict[tuple[int, int], str] = field(default_factory=dict, repr=False, compare=False)

    KEYS = ("exitCodes", "output", "timeouts")

    @classmethod
    def from_json(cls, data: Any) -> RetryCondition:
        return read_whole(cls._read, data)

    @classmethod
    def _read(cls, data: Any, path: tuple, problems: Problems) -> RetryCondition | None:
        if not check_keys(data, cls.KEYS, "a retry condition", path, problems):
            return None
        cond = cls()
        codes = data.get("exitCodes")
        if codes is not None:
            if not isinstance(codes, list):
                problems.add(path + ("exitCodes",), "exitCodes must be a list of exit codes "
                             f"(integers or inclusive ranges such as \"3..5\"), not {describe(codes)}")
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
                problems.add(path + ("output",), f"output must be a regular expression (a string), not {describe(output)}")
            elif (reason := _check_regex(output)) is not None:
                problems.add(path + ("output",), f"output is not a valid regular expression: {reason}")
            else:
                cond.output = output
        timeouts = data.get("timeouts")
        if timeouts is not None:
            allowed = " or ".join(f"`{k}'" for k in TIMEOUT_KINDS)
            if not isinstance(timeouts, list):
                problems.add(path + ("timeouts",), f"timeouts must be a list of {allowed}, not {describe(timeouts)}")
            else:
                for i, kind in enumerate(timeouts):
                    if kind in TIMEOUT_KINDS:
                        cond.timeouts.append(TimeoutKind(kind))
                    elif kind == TimeoutKind.DEADLINE:
                        problems.add(path + ("timeouts", i), "a `deadline' timeout is never retried and "
                                     f"cannot be listed; allowed: {allowed}")
                    else:
                        problems.add(path + ("timeouts", i), f"unknown timeout {describe(kind)}; allowed: {allowed}")
        return cond

    @staticmethod
    def _read_exit_code(item: Any, path: tuple, problems: Problems) -> ExitCode | None:
        if is_int(item):
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
                     f"not {describe(item)}")
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
            out["timeouts"] = [TimeoutKind(kind).value for kind in self.timeouts]
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
