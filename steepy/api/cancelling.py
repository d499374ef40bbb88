"""Ctrl-C's cancel of a submission that an engine of this process drives (`steepy run` and
`steepy.run`), stored once the database can be used: a cancel asked in a database outage is
not lost, and its failure is no traceback. The waiting is `steepy.registry.outage.Outage`'s."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from steepy.engine.engine import Engine
    from steepy.registry import Registry

log = logging.getLogger(__name__)


async def cancel_when_stored(registry: "Registry", submission_id: str, engine: "Engine",
                             failures: list[BaseException] | None = None) -> None:
    """Cancel the submission, tried each second until the database takes it (a tool that
    ends meanwhile would make a slower try too late); the wait is said once (`cancelling
    submission ID: WHAT; trying again in 1 s`), the next tries at debug level only. Then
    the engine looks at its chains again. Anything but the database failing is raised; what
    failed is added to `failures`."""
    from steepy.model.backoff import LIVE_OUTAGE
    from steepy.registry.offload import call
    from steepy.registry.outage import Outage

    outage = Outage(f"cancelling submission {submission_id}", log, policy=LIVE_OUTAGE)
    while True:
        try:
            await call(registry.requests.cancel_submission, submission_id)
            break
        except Exception as e:
            wait_s = outage.wait_after(e)
            if failures is not None:
                failures.append(e)
        outage.level = logging.DEBUG
        await asyncio.sleep(wait_s)
    engine.changed("chains")
