"""GET|HEAD /logs/processchains/{id}: a run's output as plain text, whole or a byte range.

A byte range comes in the standard `Range` header (206 with `Content-Range`) or, as Steep's
web UI sends it, in `x-range`: the same ranges, answered with 200 and `x-content-range`, so
that a browser may still ask for a compressed body (Steep's reason for the header)."""

from __future__ import annotations

import re

from fastapi import APIRouter, Query, Request
from starlette.responses import Response, StreamingResponse

from steepy.agent.logsource import find_log
from steepy.http.errors import ApiError
from steepy.http.responses import INT_MAX, context
from steepy.model.submission import WAITING_CHAIN

router = APIRouter(tags=["logs"])
_RANGE = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*")


def parse_range(header: str, size: int) -> tuple[int, int]:
    """The inclusive byte range [start, end] that `header` asks for in a file of `size`
    bytes; ApiError 416 when it is malformed or cannot be satisfied (one range only). The
    last n bytes of an empty file are (0, -1), nothing: satisfiable (RFC 9110, 14.1.1)."""
    match = _RANGE.fullmatch(header)
    start = end = None
    if match and (match[1] or match[2]) and len(match[1]) < 19 and len(match[2]) < 19:
        if match[1]:  # bytes=a- or bytes=a-b
            start = int(match[1])
            end = min(int(match[2]), size - 1) if match[2] else size - 1
            if (match[2] and int(match[2]) < start) or start >= size:
                start = None
        elif int(match[2]) > 0:  # bytes=-n: the last n bytes
            start, end = max(0, size - int(match[2])), size - 1
    if start is None:
        raise ApiError(416, f"Range not satisfiable: `{header}' (the log has {size} bytes)",
                       headers={"Content-Range": f"bytes */{size}"})
    return start, end


NO_LOG_FILE = ("Log file of process chain `{id}' could not be found. Possible reasons: (1) "
               "the process chain has not produced any output (yet), (2) the agent that has "
               "executed the process chain is not available anymore, (3) process chain "
               "logging is disabled in Steep's configuration")
"""Steep's words, which steepy keeps although it reads logs from the database too."""


def _runs_text(total: int) -> str:
    if total == 0:
        return "This process chain does not have any run yet"
    if total == 1:
        return "There is only one run for this process chain"
    return f"There are only {total} runs for this process chain"


LOG_RESPONSES = {200: {"description": "The log, or the byte range asked for by `x-range` "
                                        "(with `x-content-range`)",
                        "content": {"text/plain": {}}},
                 206: {"description": "The byte range asked for by `Range`"},
                 400: {"description": "Not a run number"},
                 404: {"description": "No such chain or run, not run yet, or no log"},
                 416: {"description": "Range not satisfiable"}}


@router.get("/logs/processchains/{id}", summary="The output of a process chain's run",
            responses=LOG_RESPONSES)
@router.head("/logs/processchains/{id}", summary="The size of a process chain's log",
             operation_id="head_log", responses=LOG_RESPONSES)
def get_log(request: Request, id: str,
            runNumber: int | None = Query(None, ge=-INT_MAX, le=INT_MAX,
                                          description="Run (default: the latest)"),
            forceDownload: bool = Query(False, description="Answer as an attachment")
            ) -> Response:
    """Supports `Range: bytes=a-b`, `bytes=a-` and `bytes=-n` (206 with `Content-Range`),
    and the same in `x-range`, which Steep's web UI sends (200 with `x-content-range`; it wins
    over `Range`). The last n bytes of an empty log are an empty 200 (`x-content-range:
    bytes 0--1/0`, as Steep says)."""
    ctx = context(request)
    found = ctx.views.chain_status(id)
    if found is None:
        raise ApiError(404, f"There is no process chain with ID `{id}'")
    if runNumber is not None and runNumber < 1:
        raise ApiError(400, "Run number must be greater than 0")
    if runNumber is None and found[0] in WAITING_CHAIN:
        raise ApiError(404, f"Process chain `{id}' is {found[0]} and does not have a log file")
    numbers = ctx.views.run_numbers(id)
    if runNumber is not None and runNumber not in numbers:
        raise ApiError(404, f"Run number out of range. {_runs_text(len(numbers))}.")
    log = None
    if runNumber is not None or numbers:
        runNumber = runNumber or numbers[-1]
        log = find_log(ctx.log_dir, ctx.log_group_by_prefix, ctx.registry.logs, id, runNumber)
    if log is None:  # neither here nor (run on another machine) in the database
        raise ApiError(404, NO_LOG_FILE.format(id=id))
    size = log.size
    headers = {"Accept-Ranges": "bytes"}
    if forceDownload:
        headers["Content-Disposition"] = f'attachment; filename="{id}.log"'  # any run's
    extended = request.headers.get("x-range")
    wanted = extended if extended is not None else request.headers.get("range")
    status, start, length = 200, 0, size
    if wanted is not None:
        start, end = parse_range(wanted, size)
        length = end - start + 1
        if extended is not None:  # Steep's own: 200, so that the body may be compressed
            headers["x-content-range"] = f"bytes {start}-{end}/{size}"
        elif length > 0:
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    headers["Content-Length"] = str(length)
    media = "text/plain; charset=utf-8"
    if request.method == "HEAD":
        return Response(status_code=status, headers=headers, media_type=media)
    return StreamingResponse(log.chunks(start, length), status, headers=headers,
                             media_type=media)
