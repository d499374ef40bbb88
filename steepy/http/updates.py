"""The body of `PUT /workflows/{id}` and `PUT /processchains/{id}`:
`{"status": "CANCELLED"}` and/or `{"priority": N}`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Collection

from steepy.http.errors import ApiError
from steepy.http.responses import INT_MAX, json_body
from steepy.model.submission import priority_refused
from steepy.registry.offload import call
from steepy.ui.negotiation import accepts_json

if TYPE_CHECKING:
    from steepy.http.context import ApiContext

UPDATE_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["CANCELLED"]},
                "priority": {"type": "integer", "minimum": -INT_MAX, "maximum": INT_MAX},
            },
            "minProperties": 1,
        }}},
    },
}


@dataclass
class Update:
    cancel: bool
    priority: int | None


def require_json(accept: str) -> None:
    """Steep's PUT routes produce only JSON: a client that does not take it (`Accept:
    text/html`) gets 406, and nothing changes."""
    if not accepts_json(accept):
        raise ApiError(406, "Not Acceptable")


def parse_update(raw: bytes) -> Update:
    data = json_body(raw)
    if not isinstance(data, dict):
        raise ApiError(400, "Invalid request body: expected a JSON object")
    if "status" in data and not isinstance(data["status"], str):
        raise ApiError(400, "`status' property must be a string")
    priority = data.get("priority")
    if "priority" in data and (not isinstance(priority, int) or isinstance(priority, bool)
                               or not -INT_MAX <= priority <= INT_MAX):
        raise ApiError(400, "`priority' property must be an integer")
    if "status" not in data and "priority" not in data:
        raise ApiError(400, "Missing properties. At least one of `status' and `priority' "
                            "required")
    cancel = False
    if "status" in data:
        if data["status"] != "CANCELLED":
            raise ApiError(400, "Invalid `status' property")
        cancel = True
    return Update(cancel, priority)


async def wait_until(check: Callable[[], Awaitable[bool]], timeout_s: float,
                     interval_s: float = 0.05) -> None:
    """Poll `check' until it is true or `timeout_s' has passed (Steep waits up to 2 s for a
    cancel to take effect before it answers)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while not await check() and loop.time() < end:
        await asyncio.sleep(interval_s)


async def apply_update(ctx: "ApiContext", update: Update, status: str, noun: str,
                       active: Collection[str], finished: Collection[str],
                       set_priority: Callable[[int], str | None], cancel: Callable[[], Any],
                       current: Callable[[], str | None]) -> None:
    """Change the priority of a submission or chain in status `status` (422 once it has
    finished), then cancel it, and wait a little for the cancel to take effect."""
    if update.priority is not None:
        status = await call(set_priority, update.priority)
        if status not in active:
            raise ApiError(422, priority_refused(noun, str(status)))
        ctx.wake_scheduler()
    if update.cancel and status in active:
        await call(cancel)
        ctx.wake_scheduler()

        async def cancelled() -> bool:
            now = await call(current)
            return now is None or now in finished

        await wait_until(cancelled, ctx.cancel_wait_s)
