"""/vms and /setups: steepy has no cloud manager, so it has no virtual machines and no setups.
It answers as Steep does when there are none, so Steep's clients (its web UI's VM pages) work:
empty lists (/vms with Steep's paging headers), and 404 for any id."""

from __future__ import annotations

from enum import StrEnum

from fastapi import APIRouter, Query
from starlette.responses import Response

from steepy.http.errors import ApiError
from steepy.http.responses import OFFSET, SIZE, json_response, page_response

router = APIRouter(tags=["cloud"])


class VMStatus(StrEnum):
    """The statuses of Steep's VMs (the `status` filter of GET /vms)."""

    CREATING = "CREATING"
    PROVISIONING = "PROVISIONING"
    RUNNING = "RUNNING"
    LEFT = "LEFT"
    DESTROYING = "DESTROYING"
    DESTROYED = "DESTROYED"
    ERROR = "ERROR"


NOT_FOUND = {404: {"description": "No such VM (steepy creates none)"}}


@router.get("/vms", summary="Virtual machines (none: steepy has no cloud manager)")
def list_vms(size: int = SIZE, offset: int = OFFSET,
             status: VMStatus | None = Query(None, description="Only VMs with this status")
             ) -> Response:
    return page_response([], 0, size, offset)


@router.get("/vms/{id}", summary="One virtual machine", responses=NOT_FOUND)
def get_vm(id: str) -> Response:
    raise ApiError(404, f"There is no VM with ID `{id}'")


@router.get("/setups", summary="Setups of virtual machines (none)")
def list_setups() -> Response:
    return json_response([])


@router.get("/setups/{id}", summary="One setup",
            responses={404: {"description": "No such setup (steepy has none)"}})
def get_setup(id: str) -> Response:
    raise ApiError(404, f"There is no setup with ID `{id}'")
