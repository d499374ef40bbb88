"""Where an executable goes on when its run goes on from runs that were cut (their engine was
killed, or stopped and gave the chain back).

The attempts those runs recorded count, as in Temporal: an executable that succeeded is not
run again; one with a retry policy goes on at attempt N + 1 (an attempt cut while it ran
counts as spent: it may have done its work, or half of it), not before the pause its policy
asked for is over (a recorded due time, or for a cut attempt the policy's delay from now),
and within the deadline counted from its first attempt. An executable with no retry policy
has one attempt per run, as in Steep: a cut run runs it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Sequence

from steepy.agent.signals import SIGNAL_REASON
from steepy.model.attempt import (FAILED, PRUNED, REQUEUED, SKIPPED, SUCCESS, TIMEOUT,
                                  AttemptRecord)
from steepy.model.processchain import Executable


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


def resume_point(exe: Executable, history: Sequence[AttemptRecord], now: datetime) -> Resume:
    """Where `exe` goes on, given the attempts of the cut runs before this one."""
    mine = [a for a in history if a.executable_id == exe.id]
    if not mine:
        return FRESH
    done = next((a for a in mine if a.outcome in (SUCCESS, SKIPPED, PRUNED)), None)
    if done is not None:
        return Resume(ended=(done, None))
    policy = exe.retries
    if policy is None:
        return FRESH  # one attempt per run (Steep): the cut run's attempt is not carried
    performed = sum(1 for a in mine if a.spent)
    last = mine[-1]
    exits = [a.exit_code for a in mine if a.exit_code is not None]
    failed = [a for a in mine if a.outcome in (FAILED, TIMEOUT)
              or (a.outcome == REQUEUED and not _by_signal(a))]
    common = dict(performed=performed, last_exit=exits[-1] if exits else None,
                  last_failure=failed[-1] if failed else None,
                  signal_requeues=sum(1 for a in mine if _by_signal(a)),
                  first_start=mine[0].start_time)
    if last.outcome in (FAILED, TIMEOUT) and last.due_time is None:
        return Resume(ended=_ended_by(exe, last), **common)  # no retry was due: it had ended
    # a cut attempt: the pause begins now; maxElapsed counts from attempt 1's recorded start
    delay = policy.retry_delay(performed) if last.due_time is None else 0
    begins = last.due_time or now + timedelta(milliseconds=delay)
    stop = policy.gives_up(performed, round((begins - mine[0].start_time).total_seconds() * 1000))
    if last.outcome != REQUEUED and stop is not None:
        return Resume(ended=_ended_by(exe, last, stop), **common)
    if last.due_time is not None:
        return Resume(due=last.due_time, reason=f"attempt {last.attempt} "
                      f"{'was re-queued' if last.outcome == REQUEUED else 'failed'} before "
                      "its engine stopped; the pause it was given goes on", **common)
    return Resume(due=begins, reason=(
        f"attempt {last.attempt} was cut ({last.outcome}): it counts as spent"), **common)


def _by_signal(record: AttemptRecord) -> bool:
    """Was the attempt re-queued by its tool's signal (extensions 11)?"""
    return record.outcome == REQUEUED and SIGNAL_REASON in (record.delay_rule or "")


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
