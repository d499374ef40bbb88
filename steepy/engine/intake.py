"""Which submissions an engine drives: the new ones it starts and the RUNNING ones without a
controller it takes over (their engine died, or a retry made them RUNNING again).

An engine of `steepy run` starts only its own submission (`until`) and takes over its own and,
with `resume_abandoned`, those that dead engines of kind "run" left; each of those is said as
it is taken (`on_resumed`) and its chains may run here too. A worker takes them all.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

from steepy.engine.controller import Controller
from steepy.engine.liveness import Liveness
from steepy.engine.looks import Taken, take_submissions
from steepy.engine.scheduler import Scheduler
from steepy.model.submission import Submission
from steepy.registry.interfaces import Leases
from steepy.registry.offload import call

log = logging.getLogger("steepy.engine.engine")  # (said as the engine's, as before)


class Intake:
    def __init__(self, leases: Leases, owner: str, lease_s: float, controller: Controller,
                 scheduler: Scheduler, liveness: Liveness,
                 on_resumed: Callable[[str], None]):
        self.leases, self.owner, self.lease_s = leases, owner, lease_s
        self.controller, self.scheduler, self.liveness = controller, scheduler, liveness
        self.on_resumed = on_resumed  # told each submission a dead engine left, taken over
        self.until: str | None = None  # `steepy run`: its submission
        self.resume_abandoned = False  # `steepy run`: also those that dead engines left
        self.resumed: list[str] = []
        self.taken: list[Taken] = []  # by a look (looks.py), not started yet

    def take(self) -> Taken:
        """(In a thread.) The next new submission this engine starts, and those it takes
        over (`looks.take_submissions`)."""
        return take_submissions(self.leases, self.owner, self.lease_s, self.until,
                                self.resume_abandoned,
                                self.liveness.judging(time.monotonic()))

    async def accept(self) -> None:
        """Start what a look took (else take now), and then every other new submission that
        is there. Every submission taken (leased to this engine now) starts before anything
        else is asked of the database: a failure there must not leave one without a
        controller, its lease renewed by this engine's heartbeats for ever."""
        taken, self.taken = self.taken, []
        taken = taken or [await call(self.take)]
        for submission, adopted in taken:
            self._start(submission, adopted)
        if any(submission is not None for submission, _ in taken):  # there may be more
            while (submission := await call(self.leases.fetch_next_submission, self.owner,
                                            self.lease_s, self.until)) is not None:
                self.controller.start(submission)

    def _start(self, submission: Submission | None, adopted: list[Submission]) -> None:
        until = self.until
        if submission is not None:
            self.controller.start(submission)
        for submission in adopted:
            log.warning("resuming submission %s", submission.id)
            if until is not None and submission.id not in (until, *self.resumed):
                self.resumed.append(submission.id)
                self.scheduler.only_submissions = frozenset({until, *self.resumed})
                self.scheduler.wake()  # its chains may wait already: a look may not know
                self.on_resumed(submission.id)
            self.controller.start(submission)
