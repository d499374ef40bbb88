"""An idle engine's look at everything its parts would read, in one round trip (issue 31).

Each commit and each heartbeat makes an engine look for work (engine/looks.py): whether a
claim would get a chain and when the first paused chain is due (`ChainQueue.outlook`), when
the next schedule fires (`Schedules.next_due`), and whether there is a submission to take
(`Leases.fetch_next_submission`, `Leases.adopt_submissions`). That was four transactions,
nine round trips on PostgreSQL. `glance` reads the same in one read-only transaction, one
round trip (together.py); whether there is anything to take it answers with a superset (any
ACCEPTED submission, any RUNNING one whose lease is over or missing): the caller takes only
when it says yes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Sequence

from steepy.model.clock import SYSTEM
from steepy.model.common import as_utc
from steepy.registry.leases import ACCEPTED, MAY_BE_ORPHANED
from steepy.registry.queue import FIRST_WAKE_UP, WAITING, can_run
from steepy.registry.schedules import NEXT_DUE
from steepy.registry.together import read_together

if TYPE_CHECKING:
    from steepy.registry import Registry
    from steepy.registry.writes import ClaimFor


@dataclass(frozen=True)
class Glance:
    outlook: tuple[bool, datetime | None]  # as `ChainQueue.outlook` says
    next_due: datetime | None  # as `Schedules.next_due` says (None: not asked)
    may_take: bool  # False: `take_submissions` would take nothing


def glance(registry: Registry, claims: Sequence[ClaimFor], schedules: bool) -> Glance | None:
    """What the parts would read (`schedules`: the next fire time too), or None where one
    read cannot say it (claims for some submissions only, `steepy run`: each part reads)."""
    if any(claim.only is not None for claim in claims):
        return None
    if schedules:
        registry.schedules.settle()  # (once per registry, before its first look)
    now = getattr(registry.leases, "clock", SYSTEM).now()  # (the leases' clock)
    wake_up, waiting, accepted, orphaned, *due = read_together(registry.db, [
        (FIRST_WAKE_UP, {}), (WAITING, {}), (ACCEPTED, {}), (MAY_BE_ORPHANED, {"b_now": now}),
        *([(NEXT_DUE, {})] if schedules else [])])
    kinds = [row[0] for row in waiting]
    return Glance(
        (any(can_run(k, claim.capabilities) for claim in claims for k in kinds),
         as_utc(wake_up[0][0])),
        as_utc(due[0][0][0]) if due else None, bool(accepted or orphaned))
