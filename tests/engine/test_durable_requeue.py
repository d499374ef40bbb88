"""A re-queue the tool asked for (extensions 11) survives `kill -9` of its engine also without
a retry policy: the engine that takes the run over keeps the due time the tool asked for, and
the re-queues of the killed run count against the limit of 100.

The tool appends a line to a file each time it really runs, so what is counted is what ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from steepy.agent.signals import MAX_REQUEUES
from steepy.model.submission import SubmissionStatus as SS
from tests.engine.test_durable_attempts import Case, _epoch, _kill

pytestmark = [pytest.mark.process]

# ranlog LOG CODE FIRST SLEEP: the first run asks for a re-queue after FIRST, every later
# one after 1 ms: the runs after the crash spend what is left of the 100 re-queues
TOOL = """#!/bin/sh
echo "start $(date +%s.%N) $STEEPY_ATTEMPT $STEEPY_RUN_NUMBER" >> "$1"
if [ "$STEEPY_RUN_NUMBER" = 1 ]; then echo "requeue $3" > "$STEEPY_SIGNAL_FILE"
else echo "requeue 1ms" > "$STEEPY_SIGNAL_FILE"; fi
"""


def test_kill_9_during_a_tools_requeue_without_a_policy(tmp_path: Path) -> None:
    case = Case(tmp_path, code=0, retries=None, first="4s")  # type: ignore[arg-type]
    (tmp_path / "ranlog").write_text(TOOL)
    victim = case.start()
    case.wait_for(lambda: any(a.get("dueTime") for a in case.attempts()), "the re-queue")
    _kill(victim)
    (requeued,) = case.attempts(1)
    assert (requeued["outcome"], requeued["requeuedBy"]) == ("REQUEUED", "tool")
    assert case.recover() == SS.ERROR
    runs = case.lines("start")
    assert runs[1][0] >= _epoch(requeued["dueTime"]) - 0.05  # not before it was due
    # the killed run's re-queue counts: 100 in all, then the next request fails the attempt
    assert len(runs) == MAX_REQUEUES + 1 and {a for _, a, _ in runs} == {1}
    last = case.attempts(2)[-1]
    assert last["outcome"] == "FAILED" and "more than 100 times" in last["message"]
