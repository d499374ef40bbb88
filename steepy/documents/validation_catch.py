"""Checks of a workflow's `catch' (extensions 10): its service exists and has the inputs given,
the actions in `forActions' are execute actions of the workflow, and its input variables
have values."""

from __future__ import annotations

from typing import Iterable

from steepy.model.suggestions import suggest
from steepy.documents.validation_services import known
from steepy.errors import Problem, json_path
from steepy.model.service import INPUT, Service
from steepy.model.workflow import ExecuteAction, Workflow


def catch_problems(workflow: Workflow, services: dict[str, Service] | None,
                   opaque: Iterable[str] = ()) -> list[Problem]:
    catch = workflow.catch
    if catch is None:
        return []
    problems: list[Problem] = []

    def add(message: str, *path: object) -> None:
        problems.append(Problem(message, path=json_path(("catch",) + path),
                                steep_path=["workflow", "catch"]))

    executes = [a.id for a in workflow.all_actions() if isinstance(a, ExecuteAction)]
    hidden = set(opaque)
    for i, action_id in enumerate(catch.for_actions or []):
        if action_id not in executes and action_id not in hidden:
            add(f"Unknown action `{action_id}' in `forActions'. The catch is for execute "
                f"actions of this workflow.{suggest(action_id, executes)} Its execute actions: "
                f"{', '.join(executes) or 'none'}.", "forActions", i)
    produced = {p.var.id for a in workflow.all_actions() if isinstance(a, ExecuteAction)
                for p in a.outputs}
    for i, p in enumerate(catch.inputs):
        if not p.anonymous and p.var.value is None and p.var.id not in produced | hidden:
            add(f"Input variable `{p.var.id}' of the catch has no value. Give it a value in "
                "`vars' or make it the output of an action.", "inputs", i, "var")
    if services is not None:
        service = services.get(catch.service)
        if service is None:
            add(f"Service `{catch.service}' of the catch is not defined."
                + known(services, "services", catch.service), "service")
        else:
            for i, p in enumerate(catch.inputs):
                param = service.parameter(p.id)
                if param is None or param.type != INPUT:
                    names = [x.id for x in service.parameters if x.type == INPUT]
                    add(f"Service `{service.id}' has no input parameter `{p.id}'."
                        f"{suggest(p.id, names)} Its inputs: {', '.join(names) or 'none'}.",
                        "inputs", i, "id")
            given = {p.id for p in catch.inputs}
            for param in service.parameters:
                if param.cardinality.min == 0 or param.id in given:
                    continue
                if param.type == INPUT and param.default is None:
                    add(f"Input `{param.id}' of service `{service.id}' is missing; its "
                        f"cardinality is {param.cardinality}.", "inputs")
                elif param.type != INPUT:
                    add(f"Service `{service.id}' needs output `{param.id}', but a catch has no "
                        "outputs: choose a service whose outputs are optional.", "service")
    return problems
