"""Every problem of a workflow, macro or service file at once, in the order of its lines.

Three layers look at a document: the JSON Schema, the model's `from_json`
(`steepy.documents.layers` runs both, each on what the one before let through) and validation
(the meaning: references, wiring, services, the runtimes steepy has). Validation checks the
model built from the parts the first two let through, and is told which ids those parts
held, so that it does not report what only their absence causes. `steepy validate`, `steepy
submit`/`run`, `POST /workflows` and the web UI's editor all get this one list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from steepy.documents.layers import Layered, build_layers
from steepy.documents.limits import limit_problems
from steepy.documents.loading import Definitions, Document, layered_items
from steepy.documents.retryplugins import plugin_problems
from steepy.documents.validation import validate_macro, validate_workflow
from steepy.documents.validation_services import Runtimes
from steepy.errors import InputError, Problem, json_path
from steepy.model.macro import Macro
from steepy.model.timeouts import TimeoutKind
from steepy.model.workflow import Workflow

# keys only a service has, and keys a workflow cannot have (all three kinds share the rest)
SERVICE_KEYS = {"path", "runtime", "runtimeArgs", "requiredCapabilities", "environment",
                "passEnvironment"} | {kind.value for kind in TimeoutKind}
NOT_WORKFLOW_KEYS = {"id", "description", "parameters"}
WORKFLOW_KEYS = {"api", "priority"}


def document_kind(data: Any) -> str:
    """What a file holds, by its keys: `service' (a service or a list of them: a key only
    services have, or parameters with a cardinality), `macro' (a macro or a list of them: an
    `id', `description' or `parameters' and no `api') or `workflow'."""
    items = [x for x in (data if isinstance(data, list) else [data]) if isinstance(x, dict)]
    if not items:
        return "workflow"
    keys = {key for item in items for key in item}
    parameters = [p for item in items if isinstance(item.get("parameters"), list)
                  for p in item["parameters"] if isinstance(p, dict)]
    if keys & SERVICE_KEYS or any("cardinality" in p for p in parameters):
        return "service"
    if isinstance(data, list) or (keys & NOT_WORKFLOW_KEYS and not keys & WORKFLOW_KEYS):
        return "macro"
    return "workflow"


def not_a_workflow(data: Any) -> str | None:
    """What a file given as a workflow holds instead, in words, when it surely is service
    metadata or a macro file (a list of them, or an object with their `parameters' and no
    `api'); None otherwise (its problems are a workflow's)."""
    kind = document_kind(data)  # (a list of no object is a workflow's problem)
    surely = isinstance(data, list) or (isinstance(data, dict) and "parameters" in data
                                        and "api" not in data)
    if kind == "workflow" or not surely:
        return None
    if kind == "service":
        return ("this file holds service metadata, not a workflow: services are given with "
                "`--services FILE' (or `services' in steepy.yaml) and run by a workflow's "
                "execute actions")
    return ("this file holds macros, not a workflow: macros are given with `--macros FILE' "
            "(or `macros' in steepy.yaml) and used by a workflow's include actions")


def in_line_order(problems: Iterable[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.file or "", p.line or 0, p.column or 0))


def check_workflow(document: Document, services: Mapping | None, macros: Mapping | None,
                   runtimes: Runtimes | Iterable[str] | None) -> Workflow:
    """The workflow of `document`, valid against its services, macros and `runtimes` (None:
    not checked); InputError with every problem otherwise."""
    instead = not_a_workflow(document.data)
    if instead is not None:
        raise InputError(document.locate(Problem(instead, path=json_path(()))))
    layered = build_layers(document.data, "workflow", Workflow.from_json)
    problems = list(layered.problems)
    if layered.value is not None:
        problems += [layered.original(p) for p in validate_workflow(
            layered.value, macros=macros, services=services, runtimes=runtimes,
            opaque=layered.pruned.opaque)]
        site = Runtimes.of(runtimes)  # with the site's retry limits
        if site is not None:
            problems += [layered.original(p)
                         for p in limit_problems(layered.value, services or {}, site.retries)]
            problems += [layered.original(p) for p in plugin_problems(
                layered.value, services or {}, site.retry_plugins)]
    if problems:
        raise InputError(in_line_order(document.locate(p) for p in problems))
    return layered.value


def check_macros(document: Document, services: Mapping | None, macros: Mapping | None,
                 runtimes: Runtimes | Iterable[str] | None) -> list[Macro]:
    """The macros of a macro file, each valid against the services, the other macros (this
    file's version of each of its own) and `runtimes`; InputError with every problem."""
    known = Definitions(macros or {})
    known.sources = dict(getattr(macros, "sources", {}))
    problems: list[Problem] = []
    built: list[tuple[tuple, Layered]] = []
    for base, layered in layered_items(document, "macro", Macro.from_json):
        problems += [document.locate(p, base) for p in layered.problems]
        if layered.value is not None:
            known.define(layered.value, document, base, layered)
            built.append((base, layered))
    for base, layered in built:
        found = validate_macro(layered.value, macros=known, services=services,
                               runtimes=runtimes, opaque=layered.pruned.opaque)
        problems += [document.locate(layered.original(p), base) for p in found]
    if problems:
        raise InputError(in_line_order(problems))
    return [layered.value for _, layered in built]
