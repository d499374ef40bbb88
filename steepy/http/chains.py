"""/processchains: list, show, cancel or reprioritise process chains, and their runs."""

from __future__ import annotations

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from steepy.http.errors import ApiError
from steepy.http.responses import INT_MAX, OFFSET, SIZE, context, json_response, page_response
from steepy.http.updates import apply_update, parse_update, require_json, update_body
from steepy.model.submission import ACTIVE_CHAIN, FINISHED_CHAIN, ProcessChainStatus
from steepy.registry import documents
from steepy.registry.offload import call

router = APIRouter(tags=["processchains"])
NOT_FOUND = {404: {"description": "No process chain with this id"}}


def _missing(chain_id: str) -> ApiError:
    return ApiError(404, f"There is no process chain with ID `{chain_id}'")


@router.get("/processchains", summary="Process chains, newest first",
            responses={400: {"description": "Invalid parameter"}})
def list_chains(request: Request, size: int = SIZE, offset: int = OFFSET,
                submissionId: str | None = Query(None, description="Only this submission's"),
                status: ProcessChainStatus | None = Query(None)) -> Response:
    """Without `executables` and `results`; with `submissionId`, `status` and the current
    run's `agentId`, `startTime`, `endTime` (and `errorMessage` after ERROR): none while the
    chain waits (REGISTERED, PAUSED) or after it was cancelled while waiting; paging
    headers."""
    items, total = context(request).views.chain_summaries(
        submissionId, None if status is None else str(status), size, offset)
    return page_response(items, total, size, offset)


@router.get("/processchains/{id}", summary="One process chain", responses=NOT_FOUND)
def get_chain(request: Request, id: str) -> Response:
    found = context(request).views.chain(id)
    if found is None:
        raise _missing(id)
    return json_response(found)


@router.put("/processchains/{id}", summary="Cancel a process chain or change its priority",
            openapi_extra=update_body(ProcessChainStatus),
            responses={**NOT_FOUND, 400: {"description": "Invalid body"},
                       406: {"description": "The client does not take JSON"},
                       422: {"description": "The priority of a finished process chain"}})
async def put_chain(request: Request, id: str) -> Response:
    require_json(request.headers.get("accept", ""))
    ctx = context(request)
    update = parse_update(await request.body(), set(ProcessChainStatus))
    found = await call(ctx.views.chain_status, id)
    if found is None:
        raise _missing(id)
    await apply_update(ctx, update, found[0], "process chain", ACTIVE_CHAIN, FINISHED_CHAIN,
                       lambda priority: ctx.requests.set_chain_priority(id, priority),
                       lambda: ctx.requests.cancel_chain(id),
                       lambda: (ctx.views.chain_status(id) or (None,))[0])
    return json_response(await call(ctx.views.chain, id, None, False))


@router.get("/processchains/{id}/runs", summary="The runs of a process chain, first to last",
            responses=NOT_FOUND)
def get_runs(request: Request, id: str) -> Response:
    ctx = context(request)
    if ctx.views.chain_status(id) is None:
        raise _missing(id)
    return json_response([documents.run(r) for r in ctx.views.runs(id)])


@router.get("/processchains/{id}/runs/{runNumber}", summary="A process chain as of one run",
            responses={**NOT_FOUND, 400: {"description": "Not a run number"}})
def get_run(request: Request, id: str,
            runNumber: int = Path(..., ge=-INT_MAX, le=INT_MAX)) -> Response:
    ctx = context(request)
    found = ctx.views.chain(id, runNumber)
    if found is None:  # Steep's words
        raise _missing(id) if ctx.views.chain_status(id) is None else \
            ApiError(404, f"There is no run {runNumber}")
    return json_response(found)


@router.get("/processchains/{id}/document", tags=["steepy"],
            summary="A process chain with its runs and attempts", responses=NOT_FOUND)
def get_document(request: Request, id: str) -> Response:
    """What `steepy show --json CHAIN_ID` prints."""
    ctx = context(request)
    record = ctx.views.get_chain(id)
    if record is None:
        raise _missing(id)
    return json_response(documents.chain_document(ctx.views, record))
