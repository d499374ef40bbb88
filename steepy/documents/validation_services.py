"""Checks of the services a workflow executes (steepy's own rules; Steep checks neither):
the service exists, its parameters match, and steepy has a runtime that can run it.

Which runtimes steepy has is a parameter (`Runtimes', what the configured plugins offer):
checking reads no configuration and no process-wide state. A service whose runtime steepy
does not have (say `kubernetes') is fine to define: it is a problem only for a workflow that
executes it, and is reported at the service's `runtime' (file:line:column when the services
were read from files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from steepy.documents.limits import service_limit_problems
from steepy.model.suggestions import suggest
from steepy.errors import Problem
from steepy.model.limits import NO_SITE, SiteRetries
from steepy.model.service import INPUT, OUTPUT, Service
from steepy.model.workflow import ExecuteAction, Fallback


@dataclass(frozen=True)
class Runtimes:
    """What checking services needs to know of the runtimes: the names steepy can run
    services with, and for a runtime it lacks what to say instead of "cannot run" (e.g. for
    Steep's `kubernetes'); and the site's retry settings, which its executables' policies
    are checked against (steepy.documents.limits); and the names of the `retryPolicy'
    plugins a policy may name (`plugin: NAME', steepy.documents.retryplugins)."""

    names: tuple[str, ...]
    hints: Mapping[str, str] = field(default_factory=dict)
    retries: SiteRetries = NO_SITE
    retry_plugins: tuple[str, ...] = ()

    @classmethod
    def of(cls, runtimes: "Runtimes | Iterable[str] | None") -> "Runtimes | None":
        """`runtimes' as Runtimes (names alone: no hints); None stays None."""
        if runtimes is None or isinstance(runtimes, Runtimes):
            return runtimes
        return cls(tuple(runtimes))


def runtime_message(service: Service, runtimes: Runtimes) -> str | None:
    supported = ", ".join(runtimes.names)
    if service.runtime in runtimes.names:
        return None
    said = runtimes.hints.get(service.runtime, "which steepy cannot run.")
    return (f"Service `{service.id}' has runtime `{service.runtime}', {said} "
            f"Supported runtimes: {supported}.")


# runtimes that run the tool in an image of its own: a service's `python' and `modules' do
# not reach it (steepy.agent.software)
CONTAINER_RUNTIMES = ("docker", "kubernetes")


def software_message(service: Service) -> tuple[str, str] | None:
    """The key and the message when a container's service asks for software of the host."""
    if service.runtime not in CONTAINER_RUNTIMES:
        return None
    key = "python" if service.python is not None else "modules" if service.modules else None
    if key is None:
        return None
    return key, (f"Service `{service.id}' has runtime `{service.runtime}': its container "
                 f"brings its own software, so `{key}' does not reach the tool. Install it in "
                 f"the image, or use runtime `other' or `slurm'.")


def runtime_problem(service: Service, services: dict[str, Service],
                    runtimes: Runtimes | None) -> Problem | None:
    """The problem of an unsupported runtime, at the service's `runtime' if known (None:
    runtimes are not checked), or of software a container does not get (at `python' or
    `modules')."""
    key, message = software_message(service) or (
        "runtime", None if runtimes is None else runtime_message(service, runtimes))
    if message is None:
        return None
    problem = Problem(message)
    locate = getattr(services, "locate", None)
    return (locate(service.id, problem, (key,)) if locate else None) or problem


def service_file_problems(services: dict[str, Service],
                          runtimes: Runtimes | Iterable[str] | None) -> list[Problem]:
    """Problems of service definitions themselves (for validating a service file)."""
    runtimes = Runtimes.of(runtimes)
    found = [runtime_problem(s, services, runtimes) for s in services.values()]
    limited = [] if runtimes is None else service_limit_problems(services, runtimes.retries)
    return [p for p in found if p is not None] + limited


def check_services(checker: Any, reached: list[str]) -> None:
    """Problems of the execute actions of `checker` with its services, and of the runtimes of
    the services in `reached` (those its includes execute, too) when it has `runtimes'."""
    services = checker.services
    if services is None:
        return
    runtimes = checker.runtimes
    runtime_reported: set[str] = set()

    def check(site: Any, a: Any, service: Service, base: tuple) -> None:
        _parameters(checker, site, a, service, base)
        problem = runtime_problem(service, services, runtimes)
        if problem is not None and service.id not in runtime_reported:
            runtime_reported.add(service.id)
            if problem.line is None:  # not read from a file: say it at the action
                checker.add(problem.message, site, base + ("service",))
            else:
                checker.problems.append(problem)

    for site, a, service in checker._resolved(ExecuteAction, "service", services,
                                              "Service `{}' is not defined."):
        check(site, a, service, site.path)
        if a.fallback is not None:  # extensions 10: the fallback's service, the same way
            base = site.path + ("fallback",)
            fallback_service = services.get(a.fallback.service)
            if fallback_service is None:
                checker.add(f"Service `{a.fallback.service}' of the fallback is not defined."
                            + known(services, "services", a.fallback.service), site,
                            base + ("service",))
            else:
                check(site, a.fallback, fallback_service, base)
    for name in reached:
        service = services.get(name)
        if service is None or name in runtime_reported:
            continue
        runtime_reported.add(name)
        problem = runtime_problem(service, services, runtimes)
        if problem is not None:
            checker.problems.append(problem)


def _parameters(checker: Any, site: Any, a: ExecuteAction | Fallback, service: Service,
                base: tuple) -> None:
    counts: dict[str, int] = {}
    for role, params in (("inputs", a.inputs), ("outputs", a.outputs)):
        expected = INPUT if role == "inputs" else OUTPUT
        for i, p in enumerate(params):
            sp = service.parameter(p.id)
            where = base + (role, i, "id")
            if sp is None:
                names = [x.id for x in service.parameters]
                checker.add(f"Service `{service.id}' has no parameter `{p.id}'.{suggest(p.id, names)}"
                            f" Its parameters: {', '.join(names) or 'none'}.", site, where)
            elif sp.type != expected:
                checker.add(f"Parameter `{p.id}' of service `{service.id}' is an {sp.type}; "
                            f"list it under `{sp.type}s', not `{role}'.", site, where)
            else:
                value = p.var.value  # (a variable a for-each loops over itself: one item)
                many = isinstance(value, list) and p.var.id not in checker.looped
                if many and _holds_null(value):
                    checker.add(f"Input `{p.id}' of service `{service.id}' is given a list that "
                                "holds null: a tool cannot take it (leave the item out)", site,
                                base + (role, i))
                counts[p.id] = counts.get(p.id, 0) + (len(value) if many else 1)
    for sp in service.parameters:
        count = counts.get(sp.id, 0)
        if count == 0 and sp.type == INPUT and sp.default is not None and str(sp.cardinality) == "1..1":
            continue  # steepy fills in the default value
        if not sp.cardinality.allows(count):
            how = "is missing" if count == 0 else f"is given {count} times"
            checker.add(f"{sp.type.capitalize()} `{sp.id}' of service `{service.id}' {how}; its "
                        f"cardinality is {sp.cardinality} (min..max values).", site, base)


def _holds_null(value: list) -> bool:
    """Whether a list (at any depth) holds null, which would reach the tool as text."""
    stack = [value]
    while stack:
        for item in stack.pop():
            if item is None:
                return True
            if isinstance(item, list):
                stack.append(item)
    return False


def known(registry: dict, what: str, name: str = "") -> str:
    names = sorted(registry)
    hint = suggest(name, names) if name else ""
    if hint:
        return hint
    if not names:
        return f" No {what} are configured."
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f" Known {what}: {shown}."
