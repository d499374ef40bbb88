"""GET /notifications: the deliveries of notifications (extensions 12), newest first, for
`steepy notifications --server URL`."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from steepy.http.responses import OFFSET, SIZE, context, page_response

router = APIRouter(tags=["steepy"])


@router.get("/notifications", summary="Deliveries of notifications to webhooks")
def notifications(request: Request,
                  failed: bool = Query(False, description="Only those that gave up (FAILED)"),
                  size: int = SIZE, offset: int = OFFSET) -> Response:
    """Answers `[{id, key, eventId, event, submissionId?, url, status, attempts, createdTime,
    lastTry?, lastError?, nextTry?, deliveredTime?}]` with paging headers; `status` is
    `PENDING`, `DELIVERED` or `FAILED`, `key` the Idempotency-Key sent; `url` without its
    password and tokens (`http://hook:***@host/x?token=***`)."""
    outbox = context(request).registry.outbox
    limit = size if size >= 0 else 2**31 - 1
    found, total = outbox.deliveries(failed, limit, max(0, offset))
    return page_response(found, total, size, offset)
