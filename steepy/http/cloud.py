"""/vms and /setups: steepy has no cloud manager (`cloud.enabled` is not supported), so it
answers as Steep does with cloud disabled: /vms is an empty list with Steep's paging headers
(Steep's VM registry is there either way) and 404 for any id; /setups and /setups/{id} are
404 "Setups are unavailable because cloud configuration is disabled"."""

from __future__ import annotations

from enum import StrEnum

from fastapi import APIRouter, Query
from starlette.responses import Response

from steepy.http.errors import ApiError
from steepy.http.responses import OFFSET, SIZE, page_response

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


CLOUD_DISABLED = {404: {"description": "Always: cloud configuration is disabled"}}
NO_CLOUD = "Setups are unavailable because cloud configuration is disabled"


@router.get("/setups", summary="Setups of virtual machines (none: cloud is disabled)",
            responses=CLOUD_DISABLED)
def list_setups() -> Response:
    raise ApiError(404, NO_CLOUD)


@router.get("/setups/{id}", summary="One setup (none: cloud is disabled)",
            responses=CLOUD_DISABLED)
def get_setup(id: str) -> Response:
    raise ApiError(404, NO_CLOUD)
