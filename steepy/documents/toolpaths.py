"""Whether the tools of services can be found on this machine (`steepy validate`): a warning,
never an error, since a worker on another machine (or a container, a SLURM node, an
environment module) may have a tool this machine has not. Only services that run here as
they are: runtime `other', no `python' environment, no `modules' to load first."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping

from steepy.errors import Problem
from steepy.model.service import Service

HERE = "other"  # the runtime that runs a tool as a process of this machine


def unfound_tools(services: Mapping[str, Service], ids: Iterable[str]) -> list[Problem]:
    """A warning for each of the services `ids` whose tool is not found here, at its `path'
    in the service's file when it was read from one."""
    found = []
    for service_id in dict.fromkeys(ids):
        service = services.get(service_id)
        if service is None or not _runs_here(service) or _found(service):
            continue
        where = "a program here" if "/" in service.path else "on PATH here"
        message = (f"the tool of service `{service_id}', `{service.path}', is not {where}; "
                   "only a machine that has it can run it")
        locate = getattr(services, "locate", None)
        placed = locate(service_id, Problem(message), ("path",)) if locate else None
        found.append(placed or Problem(message, file=f"service `{service_id}'"))
    return found


def _runs_here(service: Service) -> bool:
    return service.runtime == HERE and service.python is None and not service.modules


def _found(service: Service) -> bool:
    path = service.path
    if "/" in path:
        return os.path.isfile(path) and os.access(path, os.X_OK)
    search = service.environment.get("PATH", os.environ.get("PATH", os.defpath))
    return shutil.which(path, path=search) is not None
