"""/workflows: list, show, submit, cancel or reprioritise submissions (Steep), and steepy's
retry, event timeline and live stream of a submission (extensions 5 and 6)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from steepy.errors import InputError
from steepy.http.errors import ApiError
from steepy.http.responses import OFFSET, SIZE, context, json_response, page_response
from steepy.http.stream import event_stream, resume_after
from steepy.http.submit import (BASE_PARAMETER, build_submission, given_base, given_resume,
                                query_value)
from steepy.http.updates import apply_update, parse_update, require_json, update_body
from steepy.model.submission import (ACTIVE_SUBMISSION, FINISHED_SUBMISSION, RETRYABLE_SUBMISSION,
                                     SubmissionStatus)
from steepy.registry import documents
from steepy.registry.offload import call

router = APIRouter(tags=["workflows"])

NOT_FOUND = {404: {"description": "No submission with this id"}}
WORKFLOW_BODY = {
    "requestBody": {
        "required": True,
        "description": "A workflow (Steep's format, API 4.x) as YAML or JSON.",
        "content": {"application/json": {"schema": {"type": "object"}},
                    "application/x-yaml": {"schema": {"type": "object"}}},
    },
    "parameters": [{  # steepy's; Steep's body stays the workflow alone
        "name": "vars", "in": "query", "required": False,
        "description": "Values for the workflow's variables that have a default value, as "
                       "a JSON object of ids and values, e.g. {\"size\": 3}",
        "schema": {"type": "string"}}, {
        "name": "resume", "in": "query", "required": False,
        "description": "true: reuse the work of earlier submissions (extensions 15); false: "
                       "do not; default: `cache.enabled`",
        "schema": {"type": "boolean"}}, BASE_PARAMETER],
}


def _missing(submission_id: str) -> ApiError:
    return ApiError(404, f"There is no workflow with ID `{submission_id}'")


@router.get("/workflows", summary="Submissions, newest first",
            responses={400: {"description": "Invalid parameter"}})
def list_workflows(request: Request, size: int = SIZE, offset: int = OFFSET,
                   status: SubmissionStatus | None = Query(None)) -> Response:
    """Without `workflow`, `source`, `results` and `errorMessage`, with process-chain
    counters; paging headers `x-page-size`, `x-page-offset`, `x-page-total`."""
    items, total = context(request).views.submission_summaries(
        None if status is None else str(status), size, offset)
    return page_response(items, total, size, offset)


@router.get("/workflows/{id}", summary="One submission", responses=NOT_FOUND)
def get_workflow(request: Request, id: str) -> Response:
    found = context(request).views.submission(id)
    if found is None:
        raise _missing(id)
    return json_response(found)


@router.post("/workflows", status_code=202, summary="Submit a workflow",
             openapi_extra=WORKFLOW_BODY,
             responses={202: {"description": "Accepted: the new submission"},
                        400: {"description": "Invalid workflow: every problem, with line, "
                                             "column and JSON path"},
                        413: {"description": "Body larger than http.postMaxSize"}})
async def post_workflow(request: Request) -> Response:
    """The body is YAML, or JSON when it starts with `{`. It is validated like
    `steepy submit` does and stored as ACCEPTED. steepy's query parameter `vars`, a JSON
    object, sets variables that have a default value: `?vars={"size":3}` (URL-encoded).
    `?resume=true` reuses the work of earlier submissions (extensions 15). `?base=/dir`
    resolves relative input paths against that directory (the client's), not the
    server's working directory."""
    ctx = context(request)
    raw = await request.body()
    try:
        resume = given_resume(request.query_params.get("resume"))
        base = given_base(query_value(request.query_params, "base"))
        submission = await asyncio.to_thread(
            build_submission, raw, ctx.services, ctx.macros, ctx.runtimes(),
            query_value(request.query_params, "vars"), None, base)
    except InputError as e:
        raise ApiError(400, "Invalid workflow:", e.problems) from None
    submission.resume = resume
    await call(ctx.requests.add_submission, submission)
    ctx.submitted()
    return json_response(submission.to_json(), 202,
                         headers={"Location": f"/workflows/{submission.id}"})


@router.put("/workflows/{id}", summary="Cancel a submission or change its priority",
            openapi_extra=update_body(SubmissionStatus),
            responses={**NOT_FOUND, 400: {"description": "Invalid body"},
                       406: {"description": "The client does not take JSON"},
                       422: {"description": "The priority of a finished submission"}})
async def put_workflow(request: Request, id: str) -> Response:
    """`{"status": "CANCELLED"}` cancels its waiting process chains and stops the running
    ones; any other status name is accepted and ignored (Steep's). `{"priority": N}` changes
    its priority and that of its unfinished chains. The answer is the submission without its
    workflow, results and error message (Steep's)."""
    require_json(request.headers.get("accept", ""))
    ctx = context(request)
    update = parse_update(await request.body(), set(SubmissionStatus))
    status = await call(ctx.views.submission_status, id)
    if status is None:
        raise _missing(id)
    await apply_update(ctx, update, status, "submission", ACTIVE_SUBMISSION, FINISHED_SUBMISSION,
                       lambda priority: ctx.requests.set_submission_priority(id, priority),
                       lambda: ctx.requests.cancel_submission(id),
                       lambda: ctx.views.submission_status(id))
    found = await call(ctx.views.submission, id)
    return json_response(documents.updated_submission(found))


@router.post("/workflows/{id}/retry", tags=["steepy"], summary="Retry a finished submission",
             responses={**NOT_FOUND, 409: {"description": "Not ERROR, PARTIAL_SUCCESS or "
                                                          "CANCELLED"}})
def retry_workflow(request: Request, id: str) -> Response:
    """steepy extension 5: its ERROR and CANCELLED process chains run again, SUCCESS ones
    keep their results."""
    ctx = context(request)
    before = ctx.requests.retry_submission(id)
    if before is None:
        raise _missing(id)
    if before not in RETRYABLE_SUBMISSION:
        raise ApiError(409, f"Submission `{id}' is {before}; only ERROR, PARTIAL_SUCCESS and "
                            "CANCELLED submissions can be retried.")
    ctx.retried()
    return json_response(ctx.views.submission(id, with_workflow=False))


@router.get("/workflows/{id}/events", tags=["steepy"], summary="A submission's timeline",
            responses=NOT_FOUND)
def get_events(request: Request, id: str,
               after: int = Query(0, ge=0, le=2**62, description="Only events after this id")
               ) -> Response:
    """steepy extension 6: every state change of the submission and its chains, oldest
    first; each event has an `id`, `time` and `kind`."""
    ctx = context(request)
    if ctx.views.submission_status(id) is None:
        raise _missing(id)
    return json_response(ctx.views.events(id, after))


@router.get("/workflows/{id}/stream", tags=["steepy"],
            summary="The timeline as server-sent events, live",
            responses={**NOT_FOUND, 200: {"description": "text/event-stream: one `message` "
                                                         "per event, then `end`",
                                          "content": {"text/event-stream": {}}}})
async def stream_events(request: Request, id: str,
                        after: int = Query(0, ge=0, le=2**62,
                                           description="Only events after this id")) -> Response:
    """Each event is sent as `id: <event id>` and `data: <event JSON>`; once the submission
    has finished, a last `event: end` (data: its status) closes the stream. A reconnecting
    client's `Last-Event-ID` is honoured."""
    ctx = context(request)
    if await call(ctx.views.submission_status, id) is None:
        raise _missing(id)
    return await event_stream(ctx, resume_after(request, after), id, until_finished=True)


@router.get("/workflows/{id}/document", tags=["steepy"],
            summary="A submission with its chains, runs and attempts", responses=NOT_FOUND)
def get_document(request: Request, id: str) -> Response:
    """What `steepy show --json ID` prints."""
    from steepy.registry.documents import submission_document

    ctx = context(request)
    if ctx.views.submission_status(id) is None:
        raise _missing(id)
    return json_response(submission_document(ctx.views, id))
