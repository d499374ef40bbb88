"""`steepy worker --exit-when-idle` stops only when nothing is left: a submission the engine
takes while the worker looks (ACCEPTED, then RUNNING with a controller) is not missed."""

from __future__ import annotations

import asyncio

from steepy.cli.engine import nothing_left
from steepy.model.submission import SubmissionStatus as SS


class TakenWhileLooking:
    """One submission, ACCEPTED until the first read, then taken: RUNNING, the engine busy."""

    def __init__(self) -> None:
        self.status, self.busy, self.reads = SS.ACCEPTED, False, []

    def submission_ids(self, status: SS) -> list[str]:
        found = ["s"] if status == self.status else []
        self.reads.append(status)
        self.status, self.busy = SS.RUNNING, True  # the engine takes it right after a read
        return found


def test_a_submission_taken_between_the_reads_is_not_missed() -> None:
    views = TakenWhileLooking()
    assert asyncio.run(nothing_left(views, lambda: not views.busy)) is False
    assert views.reads == [SS.ACCEPTED]  # (RUNNING first would miss it: still ACCEPTED)
    views = TakenWhileLooking()
    views.status = SS.RUNNING  # taken already, its controller not started: asked last
    assert asyncio.run(nothing_left(views, lambda: not views.busy)) is False


def test_a_submission_taken_before_the_reads_is_not_missed() -> None:
    views = TakenWhileLooking()
    views.status = SS.SUCCESS  # it finished; the engine's controller winds down
    views.submission_ids = lambda status: []
    assert asyncio.run(nothing_left(views, lambda: False)) is False
    assert asyncio.run(nothing_left(views, lambda: True)) is True
