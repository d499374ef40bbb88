"""A workflow's retry policies checked against the `retryPolicy' plugins steepy has: every
`plugin: NAME' must name one (extensions 1). A problem is placed at the `plugin' key where it
was written: an action's or fallback's `retries', the workflow's `retries.executables', or the
service's file. A process chain's policy (`retries.processChains') cannot name a plugin: the
plugin decides the pauses between the attempts of an executable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from steepy.model.suggestions import closest
from steepy.errors import Problem, json_path
from steepy.model.policies import RetryPolicy
from steepy.model.workflow import Action, ExecuteAction, ForEachAction, Workflow

__all__ = ["plugin_problems"]


def plugin_problems(workflow: Workflow, services: Mapping, known: tuple[str, ...]) -> list[Problem]:
    """Every `plugin' of the workflow's policies (and its services') that names no
    `retryPolicy' plugin of `known', located."""
    problems: dict[tuple, Problem] = {}

    def add(problem: Problem) -> None:
        problems.setdefault((problem.file, problem.path, problem.message), problem)

    chains = workflow.retries
    if chains is not None and chains.plugin is not None:
        add(Problem("a process chain's retry policy cannot name a plugin: a retryPolicy plugin "
                    "picks the pauses between the attempts of an executable (give it in "
                    "retries.executables or an action's retries)",
                    path=json_path(("retries", "processChains", "plugin"))))
    if (message := _unknown(workflow.executable_retries, known)) is not None:
        add(Problem(message, path=json_path(("retries", "executables", "plugin"))))
    for path, part in _executables(workflow.actions, ("actions",)):
        if (message := _unknown(part.retries, known)) is not None:
            add(Problem(message, path=json_path(path + ("retries", "plugin"))))
        service = services.get(part.service)
        if (message := _unknown(getattr(service, "retries", None), known)) is not None:
            locate = getattr(services, "locate", None)
            placed = locate(part.service, Problem(message), ("retries", "plugin")) if locate else None
            add(placed or Problem(f"the retry policy of service `{part.service}': {message}",
                                  path=json_path(path + ("service",))))
    return list(problems.values())


def _unknown(policy: RetryPolicy | None, known: tuple[str, ...]) -> str | None:
    if policy is None or policy.plugin is None or policy.plugin in known:
        return None
    close = closest(policy.plugin, known)
    hint = f" (did you mean `{close}'?)" if close else ""
    have = ", ".join(f"`{name}'" for name in known) or "none"
    return (f"unknown retry policy plugin `{policy.plugin}'{hint}; the retryPolicy plugins "
            f"are: {have}")


def _executables(actions: list[Action], path: tuple) -> Iterator[tuple[tuple, ExecuteAction]]:
    """(JSON path, the action or its fallback) of every executable the actions make."""
    for i, action in enumerate(actions):
        here = path + (i,)
        if isinstance(action, ExecuteAction):
            yield here, action
            if action.fallback is not None:
                yield here + ("fallback",), action.fallback  # type: ignore[misc]
        elif isinstance(action, ForEachAction):
            yield from _executables(action.actions, here + ("actions",))
