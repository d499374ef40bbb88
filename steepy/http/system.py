"""/ (version), /health, /services and /agents."""

from __future__ import annotations

import logging
import subprocess
import time
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, Request
from starlette.responses import Response

from steepy import __version__
from steepy.http.errors import ApiError
from steepy.http.responses import context, json_response
from steepy.registry.failures import describe, is_database_failure

router = APIRouter()
log = logging.getLogger(__name__)
STARTED = int(time.time() * 1000)


@lru_cache(maxsize=1)
def _commit() -> str:
    """The git commit steepy runs from, when it runs from a checkout."""
    root = Path(__file__).resolve().parent.parent.parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=2)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


@router.get("/", tags=["system"], summary="Version")
def version() -> Response:
    return json_response({"version": __version__, "build": "steepy", "commit": _commit(),
                          "timestamp": STARTED})


@router.get("/health", tags=["system"], summary="Health (needs no token)",
            responses={503: {"description": "A check failed"}})
def health(request: Request) -> Response:
    """`health` is false (and the status 503) when the database cannot be used: it cannot be
    read, its file is gone or overwritten, its disk is full or read-only. `database.error`
    (and each failed check's `error`) says why, without a password."""
    ctx = context(request)
    out: dict = {"health": True, "services": {"health": True, "count": len(ctx.services)}}
    db = ctx.registry.db
    try:
        agents = len(ctx.views.agents(ctx.agent_max_age_s))
        out["agents"] = {"health": True, "count": agents}
        out["submissions"] = {"health": True, "count": ctx.views.count_submissions()}
        problem = db.problem()
    except Exception as e:  # the database is unreachable or broken: report, don't fail
        if is_database_failure(e):
            problem = describe(e, db.url)
        else:  # a bug: its name only in the answer, its traceback in the log
            log.error("health check failed", exc_info=e)
            problem = type(e).__name__
        for key in ("agents", "submissions"):
            out.setdefault(key, {"health": False, "count": -1, "error": problem})
    if problem is not None:
        if problem.startswith("database "):
            log.warning("health check failed: %s", problem)
        out["health"] = False
        out["database"] = {"health": False, "error": problem}
    else:
        out["database"] = {"health": True}
    out["vms"] = {"health": True, "count": 0}
    return json_response(out, 200 if out["health"] else 503)


@router.get("/services", tags=["services"], summary="Service metadata")
def list_services(request: Request) -> Response:
    return json_response([s.to_json(all_lists=True) for s in context(request).services.values()])


@router.get("/services/{id}", tags=["services"], summary="One service",
            responses={404: {"description": "No service with this id"}})
def get_service(request: Request, id: str) -> Response:
    service = context(request).services.get(id)
    if service is None:
        raise ApiError(404, f"There is no service with ID `{id}'")
    return json_response(service.to_json(all_lists=True))


@router.get("/agents", tags=["agents"], summary="Live agents")
def list_agents(request: Request) -> Response:
    ctx = context(request)
    return json_response(ctx.views.agents(ctx.agent_max_age_s))


@router.get("/agents/{id}", tags=["agents"], summary="One live agent",
            responses={404: {"description": "No such agent"}})
@router.head("/agents/{id}", tags=["agents"], summary="Whether an agent is live",
             operation_id="head_agent", responses={404: {"description": "No such agent"}})
def get_agent(request: Request, id: str) -> Response:
    ctx = context(request)
    agent = next((a for a in ctx.views.agents(ctx.agent_max_age_s) if a["id"] == id), None)
    if agent is None:
        raise ApiError(404, f"There is no agent with ID `{id}'")
    if request.method == "HEAD":
        return Response(status_code=200)
    return json_response(agent)

