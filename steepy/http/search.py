"""GET /search: Steep's query language over submissions and process chains (reference
section 12; Steep's `HttpEndpoint.onGetSearch`): results ranked by relevance with where each
matched, and counts per type. A browser asking for HTML gets the search page there instead
(steepy/ui/pages/search.py)."""

from __future__ import annotations

import re
from datetime import timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from steepy.http.errors import ApiError
from steepy.http.responses import context, int_or, json_response
from steepy.search import Type, matches, parse_query

router = APIRouter(tags=["search"])

COUNTS = ("none", "estimate", "exact")
_OFFSET = re.compile(r"(?:UTC|GMT|UT)?([+-])([0-9]{1,2})(?::?([0-9]{2}))?(?::?([0-9]{2}))?")
_REGION = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")


def time_zone(name: str | None) -> tzinfo | None:
    """A zone as Java's ZoneId.of reads it: `Z`, an offset (`+02:00`, `UTC+2`) or a region
    (`Europe/Berlin`); None without a name (the system's zone)."""
    if name is None:
        return None
    if name in ("Z", "UTC", "GMT", "UT"):
        return timezone.utc
    offset = _OFFSET.fullmatch(name)
    if offset is not None:
        sign, hours, minutes, seconds = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0))
        if delta > timedelta(hours=18) or int(minutes or 0) > 59 or int(seconds or 0) > 59:
            raise ApiError(400, "Invalid timezone")
        return timezone(-delta if sign == "-" else delta)
    if not _REGION.fullmatch(name):
        raise ApiError(400, "Invalid timezone")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ApiError(400, "Unknown timezone") from None


@router.get("/search", summary="Search submissions and process chains",
            responses={400: {"description": "Invalid `count' or `timeZone'"}})
def search(request: Request,
           q: str = Query("", description="The query (Steep's query language)"),
           size: str | None = Query(None, description="Results per page (10; negative: all; "
                                                      "not a number: 10)"),
           offset: str | None = Query(None, description="Results to skip (0)"),
           count: str = Query("estimate", description="`estimate`, `exact` or `none`: whether "
                                                      "to count results per type (steepy's "
                                                      "estimate is exact)"),
           timeZone: str | None = Query(None, description="Zone of the query's dates: IANA "
                                                          "name or offset (the server's)"),
           ) -> Response:
    """Answers `{counts?: {workflow, processChain, total}, results: [{id, type,
    requiredCapabilities, status, name?, startTime?, endTime?, matches}]}`, best first, with
    paging headers (`x-page-total` unless `count=none`)."""
    page_offset = max(0, int_or(offset, 0))
    page_size = int_or(size, 10)
    count = count.lower()
    if count not in COUNTS:
        raise ApiError(400, "Parameter `count' must be one of `none', `estimate', or `exact'")
    query = parse_query(q, time_zone(timeZone))
    registry = context(request).registry.search
    found = registry.search(query, size=page_size, offset=page_offset)
    results = [r.to_json(matches(r, query)) for r in found]
    headers = {"x-page-size": str(page_size), "x-page-offset": str(page_offset)}
    body: dict = {}
    if count != "none":
        # exact for `estimate' too; Steep corrects its estimates by the page shown, which an
        # exact count needs not
        counts: dict = {kind.value: registry.count(query, kind) for kind in Type}
        counts["total"] = sum(counts.values())
        body["counts"] = counts
        headers["x-page-total"] = str(counts["total"])
    body["results"] = results
    return json_response(body, headers=headers)
