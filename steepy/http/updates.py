"""The body of `PUT /workflows/{id}` and `PUT /processchains/{id}`: `{"status": S}` and/or
`{"priority": N}`, read as Steep's HttpEndpoint reads it. S must name a status of the route's
kind (a submission's for /workflows, a chain's for /processchains): an unknown name is 400,
CANCELLED cancels, and every other name is accepted and ignored."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Collection, Iterable

from steepy.http.errors import ApiError
from steepy.http.responses import INT_MAX, json_body
from steepy.model.submission import priority_refused
from steepy.registry.offload import call
from steepy.ui.negotiation import accepts_json

if TYPE_CHECKING:
    from steepy.http.context import ApiContext

CANCELLED = "CANCELLED"


def update_body(statuses: Iterable[str]) -> dict:
    """The OpenAPI request body of the PUT route whose kind has these status names."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": list(statuses),
                       "description": "CANCELLED cancels; any other status is ignored"},
            "priority": {"type": "integer", "minimum": -INT_MAX, "maximum": INT_MAX},
        },
        "minProperties": 1,
    }}}}}


@dataclass
class Update:
    cancel: bool
    priority: int | None


def require_json(accept: str) -> None:
    """Steep's PUT routes produce only JSON: a client that does not take it (`Accept:
    text/html`) gets 406, and nothing changes."""
    if not accepts_json(accept):
        raise ApiError(406, "Not Acceptable")


def parse_update(raw: bytes, statuses: Collection[str]) -> Update:
    """Steep's checks in Steep's order; a property that is null counts as missing (Vert.x's
    `getString` and `getInteger` answer null for it)."""
    data = json_body(raw)
    if not isinstance(data, dict):
        raise ApiError(400, "Invalid request body: expected a JSON object")
    status, priority = data.get("status"), data.get("priority")
    if status is not None and not isinstance(status, str):
        raise ApiError(400, "`status' property must be a string")
    if priority is not None and (not isinstance(priority, int) or isinstance(priority, bool)
                                 or not -INT_MAX <= priority <= INT_MAX):
        raise ApiError(400, "`priority' property must be an integer")
    if status is None and priority is None:
        raise ApiError(400, "Missing properties. At least one of `status' and `priority' "
                            "required")
    if status is not None and status not in statuses:
        raise ApiError(400, "Invalid `status' property")
    return Update(status == CANCELLED, priority)


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
    finished, and then nothing is cancelled either), then cancel it, and wait a little for
    the cancel to take effect."""
    if update.priority is not None:
        status = await call(set_priority, update.priority)
        if status not in active:
            raise ApiError(422, priority_refused(noun, status))
        ctx.wake_scheduler()
    if update.cancel and status in active:
        await call(cancel)
        ctx.wake_scheduler()

        async def cancelled() -> bool:
            now = await call(current)
            return now is None or now in finished

        await wait_until(cancelled, ctx.cancel_wait_s)
