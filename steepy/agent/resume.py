"""Where an executable goes on when its run goes on from runs that were cut (their engine was
killed, or stopped and gave the chain back).

The attempts those runs recorded count, as in Temporal: an executable that succeeded is not
run again; one with a retry policy goes on at attempt N + 1 (an attempt cut while it ran
counts as spent: it may have done its work, or half of it), not before the pause its policy
asked for is over (a recorded due time; for a cut attempt the pause from now that the policy,
or its `retryPolicy' plugin, chooses), and within the deadline counted from its first attempt.
An executable with no retry policy has one attempt per run, as in Steep: a cut run runs it
again. A re-queue its tool asked for (extensions 11) goes on with or without a policy: its due
time is kept, and the re-queues of cut runs count against `MAX_REQUEUES'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable, Sequence

from steepy.model.attempt import (BY_TOOL, FAILED, PRUNED, REQUEUED, SKIPPED, SUCCESS, TIMEOUT,
                                  AttemptRecord)
from steepy.model.durations import later
from steepy.model.processchain import Executable
from steepy.model.timeouts import TimeoutKind

__all__ = ["FRESH", "Choose", "Resume", "resume_point"]

# (the cut attempt, attempts spent, ms since attempt 1 began) -> the pause in ms before the
# next attempt, or why none follows (a `retryPolicy' plugin's answer)
Choose = Callable[[AttemptRecord, int, int], "int | str"]


@dataclass(frozen=True)
class Resume:
    """How the executable goes on: `ended` (the attempt it ended with, and the message) when
    it must not run again; otherwise the attempts `performed` so far, when the next is `due` (None: now) and
    why, the exit code of the last one, the last failed attempt, how many `requeue' signals
    its tool gave, and when its first attempt started."""

    ended: tuple[AttemptRecord, str | None] | None = None
    performed: int = 0
    due: datetime | None = None
    reason: str = ""
    last_exit: int | None = None
    last_failure: AttemptRecord | None = None
    signal_requeues: int = 0
    first_start: datetime | None = None

    @property
    def fresh(self) -> bool:
        return self.ended is None and self.performed == 0 and self.due is None


FRESH = Resume()


def resume_point(exe: Executable, history: Sequence[AttemptRecord], now: datetime,
                 choose: Choose | None = None) -> Resume:
    """Where `exe` goes on, given the attempts of the cut runs before this one; `choose`
    picks the pause after a cut attempt instead of the policy (its `retryPolicy' plugin)."""
    mine = [a for a in history if a.executable_id == exe.id]
    if not mine:
        return FRESH
    done = next((a for a in mine if a.outcome in (SUCCESS, SKIPPED, PRUNED)), None)
    if done is not None:
        return Resume(ended=(done, None))
    last, requeues = mine[-1], sum(1 for a in mine if _by_tool(a))
    policy = exe.retries
    if policy is None:  # one attempt per run (Steep): the cut run's attempt is not carried,
        if _by_tool(last) and last.due_time is not None:  # but its tool's re-queue is
            return Resume(due=last.due_time, reason=_paused(last), signal_requeues=requeues,
                          first_start=mine[0].start_time)
        return Resume(signal_requeues=requeues)
    performed = sum(1 for a in mine if a.spent)
    exits = [a.exit_code for a in mine if a.exit_code is not None]
    failed = [a for a in mine if a.outcome in (FAILED, TIMEOUT)
              or (a.outcome == REQUEUED and not _by_tool(a))]
    common = dict(performed=performed, last_exit=exits[-1] if exits else None,
                  last_failure=failed[-1] if failed else None, signal_requeues=requeues,
                  first_start=mine[0].start_time)
    if last.due_time is not None:
        return Resume(due=last.due_time, reason=_paused(last), **common)
    since, reason = now, f"attempt {last.attempt} was cut ({last.outcome}): it counts as spent"
    if last.outcome in (FAILED, TIMEOUT):
        if last.delay_rule is not None:  # ("no retry: ...", stored with the failure)
            return Resume(ended=_ended_by(exe, last), **common)  # no retry was due: it ended
        # stored failed, and its engine stopped before it stored what followed (the pause, or
        # why none): decided again, the pause counted from the failure's end
        allowed, why = policy.should_retry(last.exit_code, list(last.last_lines or ()),
                                           TimeoutKind.from_words(last.timeout_kind))
        if not allowed:
            return Resume(ended=_ended_by(exe, last, f"no retry: {why}"), **common)
        since = last.end_time or now
        reason = (f"attempt {last.attempt} failed as its engine stopped, before its pause "
                  f"was stored: {why}")
    # the pause begins `since' (a cut attempt's: now); maxElapsed counts from attempt 1's
    # recorded start to when the next would begin
    spent_ms = _ms(now - mine[0].start_time)
    if choose is None or last.outcome == REQUEUED:
        delay: int | str = policy.retry_delay(performed)
    else:
        delay = choose(last, performed, spent_ms)
    if isinstance(delay, str):
        return Resume(ended=_ended_by(exe, last, delay), **common)
    begins = max(now, later(since, delay))  # (a delay of any length: never an OverflowError)
    stop = policy.gives_up(performed, _ms(begins - mine[0].start_time))
    if last.outcome != REQUEUED and stop is not None:
        return Resume(ended=_ended_by(exe, last, stop), **common)
    return Resume(due=begins, reason=reason, **common)


def _by_tool(record: AttemptRecord) -> bool:
    """Was the attempt re-queued by its tool's signal (extensions 11)?"""
    return record.outcome == REQUEUED and record.requeued_by == BY_TOOL


def _paused(last: AttemptRecord) -> str:
    return (f"attempt {last.attempt} {'was re-queued' if last.outcome == REQUEUED else 'failed'} "
            "before its engine stopped; the pause it was given goes on")


def _ms(delta: timedelta) -> int:
    return round(delta.total_seconds() * 1000)


def _ended_by(exe: Executable, last: AttemptRecord,
              stop: str | None = None) -> tuple[AttemptRecord, str]:
    """The attempt the executable ended with, and the message it ends with now (`stop`: the
    policy's limit that ended it)."""
    message = last.message
    if last.outcome not in (FAILED, TIMEOUT) or not message:
        message = (f"Execution of service `{exe.service_id}' failed: attempt {last.attempt} "
                   f"was cut ({last.outcome})")
    if stop is not None:
        message += f" ({stop}, counting those of cut runs)"
    return last, message
