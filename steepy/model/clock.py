"""Time as the engine sees it.

Waiting for an event with a time limit, without ever losing a cancellation: Python 3.11's
`asyncio.wait_for` can swallow an outside cancellation when the awaited event fires at the same
moment (fixed in 3.12), and a task cancelled at shutdown then runs on forever. `asyncio.timeout`
tells its own deadline from an outside cancellation, so this is built on it.
"""

from __future__ import annotations

import asyncio


async def wait_event(event: asyncio.Event, timeout_s: float) -> bool:
    """Wait until `event` is set or `timeout_s` has passed; True if it was set."""
    try:
        async with asyncio.timeout(max(timeout_s, 0)):
            await event.wait()
    except TimeoutError:
        return event.is_set()
    return True
