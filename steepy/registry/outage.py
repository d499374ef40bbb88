"""Living through a database outage, written once. A failure of the database (what
`is_database_failure` says is one: SQLAlchemy's errors and the drivers' own, raised raw by the
hot path) is said in one line, `NAME: WHAT; trying again in N s`, once per try, and waited out
by one policy (`steepy.model.backoff.DATABASE_OUTAGE`: 1 s, doubling, at most 30 s);
anything else is a bug and raised.

`Outage` is that policy's state in one loop; `in_rounds` runs the engine's background tasks
(scheduler, timekeeper, notifier) in rounds through it, `outlasting` repeats one call until it
succeeds, and `database_failure_said` is for a place that gives up after one failure: it says
so and goes on without.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from steepy.model.backoff import DATABASE_OUTAGE, Doubling
from steepy.model.clock import SYSTEM, Clock
from steepy.registry.failures import describe, is_database_failure

T = TypeVar("T")


class Outage:
    """One loop's way through an outage: the failures in a row, and how to say them."""

    def __init__(self, name: str, log: logging.Logger, *, then: str = "trying again",
                 level: int = logging.ERROR, policy: Doubling = DATABASE_OUTAGE) -> None:
        self.name, self.log, self.then, self.level, self.policy = name, log, then, level, policy
        self.failures = 0
        self._quiet = 0  # tries left unsaid (sooner than the policy's: said as it would)

    def wait_after(self, error: BaseException, at_most_s: float = math.inf) -> float:
        """The seconds to wait before the next try, said with what failed (`NAME: WHAT; THEN
        in N s`); raises `error` itself when the database is not what failed (call it in the
        `except` block of the try). With `at_most_s`, tries come that often at least (an
        engine's heartbeat must hold its leases), but are said only as often as the
        policy's would be: a long outage is not a line every 2 s."""
        if not is_database_failure(error):
            raise error
        if self._quiet:  # a try within the policy's wait: not said
            self._quiet -= 1
            return at_most_s
        self.failures += 1
        wait_s = policy_s = self.policy.wait_s(self.failures)
        if at_most_s < policy_s:
            wait_s, self._quiet = at_most_s, math.ceil(policy_s / at_most_s) - 1
        self.log.log(self.level, "%s: %s; %s in %s s", self.name, describe(error), self.then,
                     _shown(wait_s))
        return wait_s

    def over(self) -> None:
        """A try succeeded: the next failure waits the policy's first wait again."""
        self.failures = self._quiet = 0


def _shown(seconds: float) -> str:
    """Whole seconds, or a wait under one as it is (`0.5`, not `0')."""
    return f"{seconds:.0f}" if seconds >= 1 or seconds <= 0 else f"{seconds:.2g}"


async def outlasting(name: str, call: Callable[[], Awaitable[T]], log: logging.Logger, *,
                     clock: Clock = SYSTEM, give_up: Callable[[], bool] = lambda: False,
                     then: str = "trying again") -> T:
    """`await call()` until it returns, waiting out failures of the database (`Outage`); one
    that happens when `give_up()` is true is raised, as is anything else."""
    outage = Outage(name, log, then=then)
    while True:
        try:
            return await call()
        except Exception as e:
            if is_database_failure(e) and give_up():
                raise
            wait_s = outage.wait_after(e)
        await clock.sleep(wait_s)


@dataclass
class Dropped:
    """What `database_failure_said` caught: the failure of the database, or None."""

    error: BaseException | None = None


@contextmanager
def database_failure_said(log: logging.Logger, message: str, *args: object,
                          level: int = logging.ERROR) -> Iterator[Dropped]:
    """For a place that gives up after one failure of the database: the block's failure is
    said (`message % (*args, WHAT)`) and not raised, and the `Dropped` yielded holds it;
    anything else is raised."""
    dropped = Dropped()
    try:
        yield dropped
    except Exception as e:
        if not is_database_failure(e):
            raise
        log.log(level, message, *args, describe(e))
        dropped.error = e


async def in_rounds(name: str, one_round: Callable[[], Awaitable[float]], wake: asyncio.Event,
                    stop: asyncio.Event, log: logging.Logger, clock: Clock = SYSTEM) -> None:
    """Run `one_round` until `stop` is set; each returns how many seconds to sleep, and
    `wake` ends a sleep early. A database failure is logged (`name: what; trying again in
    N s`) and the round repeated after the policy's wait (`Outage`); anything else ends the
    loop with that exception. The sleeps are on `clock`."""
    outage = Outage(name, log)
    while not stop.is_set():
        wake.clear()
        try:
            wait_s = await one_round()
            outage.over()
        except Exception as e:
            wait_s = outage.wait_after(e)
        if stop.is_set():
            break
        await clock.wait(wake, wait_s)
