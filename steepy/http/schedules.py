"""/schedules: recurring submissions (steepy extension 13). A schedule holds a workflow,
checked like `POST /workflows` when it is added, and a trigger (a cron expression or an
interval, in a time zone); every fire time becomes a normal submission named after it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from steepy.errors import InputError, Problem
from steepy.http.errors import ApiError
from steepy.http.responses import context, json_body, json_response
from steepy.documents.validation_services import Runtimes
from steepy.documents.values import unusable
from steepy.documents.variables import GivenVars
from steepy.http.submit import (BASE_PARAMETER, NAME, build_submission, given_base,
                                query_value)
from steepy.model.ids import unique_id
from steepy.model.common import utcnow
from steepy.model.schedule import Schedule, name_problem
from steepy.registry.offload import call
from steepy.model.triggers import parse_trigger

router = APIRouter(tags=["steepy"])

NOT_FOUND = {404: {"description": "No schedule with this id"}}
FIELDS = ("workflow", "cron", "every", "name", "timezone", "paused", "vars")
SCHEDULE_BODY = {
    "requestBody": {
        "required": True,
        "description": "`workflow` (the workflow as YAML or JSON text, or as an object), "
                       "`cron` (a crontab line: minute hour day-of-month month day-of-week, 0 and "
                       "7 = Sunday, or a macro such as `@daily`) or `every` "
                       "(a duration such as `1h`), and optionally `name` (at most 200 "
                       "characters), `timezone` (default UTC), `paused` (true: added paused, "
                       "fires once resumed) and `vars` (values for the workflow's variables, an "
                       "object of variable ids and values: every submission of the schedule "
                       "has them).",
        "content": {"application/json": {"schema": {"type": "object"}}},
    },
    "parameters": [BASE_PARAMETER],
}


def _missing(schedule_id: str) -> ApiError:
    return ApiError(404, f"There is no schedule with ID `{schedule_id}'")


def _text(body: dict, key: str, problems: list[Problem]) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        problems.append(Problem("must be a string", path=key, file=NAME))
        return None
    why = None if value is None else unusable(value)
    if why is not None:  # (a lone surrogate: stored, it broke the row's write; quoted, the answer)
        problems.append(Problem(why, path=key, file=NAME))
        return None
    return value


def _workflow(body: dict, problems: list[Problem]) -> str | None:
    """The workflow's text, or a problem: missing, empty, or not text nor an object."""
    workflow = body.get("workflow")
    if isinstance(workflow, dict):
        return json.dumps(workflow)
    if workflow is None:
        message = "is missing: the workflow as YAML or JSON text, or as an object"
    elif not isinstance(workflow, str):
        message = "must be the workflow as YAML or JSON text, or as an object"
    elif not workflow.strip():
        message = "is empty"
    else:
        return workflow
    problems.append(Problem(message, path="workflow", file=NAME))
    return None


def _new_schedule(body: Any, services: dict, macros: dict, runtimes: Runtimes,
                  base: str | None = None) -> Schedule:
    """The schedule of a request body (its relative input paths against `base`, else the
    server's working directory); InputError with every problem otherwise."""
    if not isinstance(body, dict):
        raise InputError(Problem("the body must be a JSON object", file=NAME))
    problems = [Problem(f"is not a field of a schedule; they are {', '.join(FIELDS)}",
                        path=str(key), file=NAME) for key in body if key not in FIELDS]
    cron, every, timezone, name = (_text(body, k, problems)
                                   for k in ("cron", "every", "timezone", "name"))
    wrong_name = name_problem(name)
    if wrong_name:
        problems.append(Problem(wrong_name, path="name", file=NAME))
    if not isinstance(body.get("paused", False), bool):
        problems.append(Problem("must be true or false", path="paused", file=NAME))
    workflow = _workflow(body, problems)
    trigger = None
    said = {p.path for p in problems}
    if not said & {"cron", "every", "timezone"}:  # (a field said wrong is not also missing)
        try:
            trigger = parse_trigger(cron, every, timezone, utcnow(), NAME)
        except InputError as e:
            problems += e.problems
    given = body.get("vars")
    if given is not None and not isinstance(given, dict):
        problems.append(Problem("must be an object of variable ids and values", path="vars",
                                file=NAME))
        given = None
    submission = None
    if workflow is not None:
        try:
            # (surrogatepass: a lone surrogate is told where it is written, by the reader)
            submission = build_submission(workflow.encode("utf-8", "surrogatepass"), services,
                                          macros, runtimes,
                                          given=GivenVars.of(given) if given else None,
                                          base=base)
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    assert trigger is not None and submission is not None
    schedule = Schedule.of(unique_id(), submission, trigger, name)
    schedule.paused = bool(body.get("paused", False))
    return schedule


@router.get("/schedules", summary="Every schedule, oldest first")
def list_schedules(request: Request) -> Response:
    return json_response([s.to_json() for s in context(request).registry.schedules
                          .list_schedules()])


@router.post("/schedules", status_code=201, summary="Add a schedule",
             openapi_extra=SCHEDULE_BODY,
             responses={201: {"description": "The new schedule"},
                        400: {"description": "Invalid workflow or trigger: every problem"}})
async def post_schedule(request: Request) -> Response:
    """The body is a JSON object (below). `?base=/dir` resolves the workflow's relative input
    paths against that directory (the client's: `steepy schedule add --server` sends its
    own), not the server's working directory, as for POST /workflows."""
    ctx = context(request)
    body = json_body(await request.body())
    try:
        base = given_base(query_value(request.query_params, "base"))
        schedule = await asyncio.to_thread(_new_schedule, body, ctx.services, ctx.macros,
                                           ctx.runtimes(), base)
    except InputError as e:
        raise ApiError(400, "Invalid schedule", e.problems) from None
    stored = await call(ctx.registry.schedules.add_schedule, schedule)
    ctx.schedules_changed()
    return json_response(stored.to_json(), 201, headers={"Location": f"/schedules/{stored.id}"})


@router.get("/schedules/{id}", summary="A schedule and its latest firings",
            responses=NOT_FOUND)
def get_schedule(request: Request, id: str) -> Response:
    schedules = context(request).registry.schedules
    found = schedules.get_schedule(id)
    if found is None:
        raise _missing(id)
    return json_response({**found.to_json(), "firings": schedules.firings(id)})


@router.put("/schedules/{id}", summary="Pause or resume a schedule",
            openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                "schema": {"type": "object", "properties": {"paused": {"type": "boolean"}},
                           "required": ["paused"]}}}}},
            responses={**NOT_FOUND, 400: {"description": "Invalid body"}})
async def put_schedule(request: Request, id: str) -> Response:
    """`{"paused": true}` pauses it; `{"paused": false}` resumes it from now on (the times
    it was paused for are not caught up)."""
    ctx = context(request)
    body = json_body(await request.body())
    if not isinstance(body, dict) or not isinstance(body.get("paused"), bool):
        raise ApiError(400, 'The body must be {"paused": true} or {"paused": false}')
    found = await call(ctx.registry.schedules.set_paused, id, body["paused"])
    if found is None:
        raise _missing(id)
    ctx.schedules_changed()
    return json_response(found.to_json())


@router.delete("/schedules/{id}", status_code=204, summary="Remove a schedule",
               responses=NOT_FOUND)
def delete_schedule(request: Request, id: str) -> Response:
    """Its submissions stay."""
    ctx = context(request)
    if not ctx.registry.schedules.remove_schedule(id):
        raise _missing(id)
    ctx.schedules_changed()
    return Response(status_code=204)
