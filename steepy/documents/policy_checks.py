"""Checks of retry policies beyond their own keys: where a policy stands, and warnings about
policies that are valid but probably not what their author meant (`steepy validate` prints
those with their location and exits 0).

The warning today: a `maxDelay` below a `delay` that does not grow (`RetryPolicy.cap_warning`).
The problem: `maxElapsed` and `stop` in `retries.processChains` (they bound an executable's
attempts; a process chain's runs do not record when the first began for them).
"""

from __future__ import annotations

from typing import Any, Iterator

from steepy.documents.loading import Document
from steepy.errors import InputError, Problem, json_path
from steepy.model.policies import RetryPolicy
from steepy.model.workflow import Workflow

# keys under `retries' that hold policies (a workflow's); otherwise `retries' is a policy
_POLICY_SLOTS = ("processChains", "executables")


def policy_warnings(document: Document) -> list[Problem]:
    """The warnings about every retry policy in a workflow, service or macro file."""
    found = []
    for path, data in _policies(document.data, ()):
        try:
            policy = RetryPolicy.from_json(data)
        except InputError:
            continue  # validation reports it
        if (message := policy.cap_warning()) is not None:
            found.append(document.locate(Problem(message, path=json_path(path + ("maxDelay",)))))
    return found


def chain_policy_problems(workflow: Workflow) -> list[Problem]:
    """`maxElapsed' and `stop' are refused in `retries.processChains'."""
    policy, found = workflow.retries, []
    if policy is not None:
        for key, given in (("maxElapsed", policy.max_elapsed is not None),
                           ("stop", policy.stop != "any")):
            if given:
                found.append(Problem(
                    f"{key} bounds the attempts of an executable (put it in a service's or an "
                    "execute action's retries, or in retries.executables); it cannot bound the "
                    "runs of a process chain", path=json_path(("retries", "processChains", key))))
    return found


def _policies(value: Any, path: tuple) -> Iterator[tuple[tuple, dict]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _policies(item, path + (i,))
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key != "retries" or not isinstance(item, dict):
            yield from _policies(item, path + (key,))
        elif any(slot in item for slot in _POLICY_SLOTS):
            for slot in _POLICY_SLOTS:
                if isinstance(item.get(slot), dict):
                    yield path + (key, slot), item[slot]
        else:
            yield path + (key,), item
