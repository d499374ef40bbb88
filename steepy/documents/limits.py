"""A workflow checked against the site's retry limits (steepy.yaml `retries.limits',
extensions 1): the policy each executable would run with (its action's or fallback's, its
service's, the workflow's default, the engine's: steepy.model.inheritance), each value some
level gave within its bound; the workflow's catch is one of them. `retries.processChains' is
checked as written (it inherits from nowhere). A problem is placed where the value was
written: in the workflow (`actions[0].retries.maxAttempts', `retries.executables.delay',
`catch.retries.delay') or in the service's file. The engine's default was checked when
steepy.yaml was read (steepy.config.retries).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from steepy.errors import InputError, Problem, json_path
from steepy.model.inheritance import (ACTION, ENGINE, SERVICE, WORKFLOW, executable_levels,
                                      given_keys, resolve)
from steepy.model.limits import SiteRetries
from steepy.model.policies import RetryPolicy
from steepy.model.workflow import Action, ExecuteAction, Fallback, ForEachAction, Workflow


def _executables(workflow: Workflow) -> Iterator[tuple[tuple, ExecuteAction | Fallback]]:
    """(JSON path, the action, its fallback or the catch) of every executable the workflow
    makes."""
    yield from _of_actions(workflow.actions, ("actions",))
    if workflow.catch is not None:
        yield ("catch",), workflow.catch


def _of_actions(actions: list[Action],
                path: tuple) -> Iterator[tuple[tuple, ExecuteAction | Fallback]]:
    for i, action in enumerate(actions):
        here = path + (i,)
        if isinstance(action, ExecuteAction):
            yield here, action
            if action.fallback is not None:
                yield here + ("fallback",), action.fallback
        elif isinstance(action, ForEachAction):
            yield from _of_actions(action.actions, here + ("actions",))


def limit_problems(workflow: Workflow, services: Mapping, site: SiteRetries) -> list[Problem]:
    """Every value of an executable's policy that `site`'s limits refuse, located (paths
    relative to the workflow document, or the service's file); and an inheriting policy
    whose keys from several levels do not make one policy."""
    problems: dict[tuple, Problem] = {}
    # the workflow's defaults, as written (even if no executable takes it)
    for name, policy in (("executables", workflow.executable_retries),
                         ("processChains", workflow.retries)):
        for key, message in site.problems(policy, given_keys(policy)) if policy else ():
            problem = Problem(message, path=json_path(("retries", name, key)))
            problems[(problem.file, problem.path, problem.message)] = problem
    for path, part in _executables(workflow):
        service = services.get(part.service)
        service_policy: RetryPolicy | None = getattr(service, "retries", None)
        try:
            resolved = resolve(executable_levels(part.retries, service_policy,
                                                 workflow.executable_retries, site.default))
        except InputError as e:  # the keys of several levels do not make one policy
            problem = Problem(f"the policy inherited from the levels below cannot be used: {e}",
                              path=json_path(path + ("retries", "inherit")))
            problems.setdefault((None, problem.path, problem.message), problem)
            continue
        if resolved.policy is None or not site.limits:
            continue
        for key, message in site.problems(resolved.policy, resolved.sources):
            problem = _placed(resolved.sources[key], key, message, path, part.service, services)
            if problem is not None:
                problems.setdefault((problem.file, problem.path, problem.message), problem)
    return list(problems.values())


def service_limit_problems(services: Mapping, site: SiteRetries) -> list[Problem]:
    """The values of each service's own policy that `site`'s limits refuse, in its file
    (for validating a service file: no workflow's policy is known)."""
    problems = []
    for service_id, service in services.items():
        policy = getattr(service, "retries", None)
        if policy is None:
            continue
        for key, message in site.problems(policy, given_keys(policy)):
            problem = _placed(SERVICE, key, message, (), service_id, services)
            if problem is not None:
                problems.append(problem)
    return problems


def _placed(level: str, key: str, message: str, path: tuple, service_id: str,
            services: Mapping) -> Problem | None:
    if level == ACTION:
        return Problem(message, path=json_path(path + ("retries", key)))
    if level == WORKFLOW:
        return Problem(message, path=json_path(("retries", "executables", key)))
    if level == SERVICE:
        locate = getattr(services, "locate", None)
        placed = locate(service_id, Problem(message), ("retries", key)) if locate else None
        return placed or Problem(f"the retry policy of service `{service_id}': {message}",
                                 path=json_path(path + ("service",)))
    assert level == ENGINE  # checked when steepy.yaml was read
    return None
