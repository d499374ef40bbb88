"""Which retry policy an executable runs with (extensions 1, "Defaults and inheritance").

Four levels may give one, most specific first: the execute action (or its fallback), its
service, the workflow's default (`retries.executables`) and the engine's (steepy.yaml
`retries.executables`). The first level that has a policy decides. A policy decides alone,
as a whole: a key it does not give has steepy's default. With `inherit: true` it gives only
the keys written in it; each other key comes from the next level that has a policy, and so on
down, until a level without `inherit` (whose every key counts) or the last level (after it,
steepy's defaults). A key counts as given when it was written (`RetryPolicy.given`, kept
through JSON), or when it differs from its default (a policy made in code).

`waits` and the keys it replaces (`delay`, `exponentialBackoff`, `strategy`) exclude each
other: once a level gives one side, the other side is taken from no level below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from steepy.model.policies import RetryPolicy

ACTION, SERVICE, WORKFLOW, ENGINE = "action", "service", "workflow default", "engine default"
EXCLUSIVE = (frozenset({"waits"}), frozenset({"delay", "exponentialBackoff", "strategy"}))


@dataclass
class Resolved:
    """The policy an executable runs with, and for each key some level gave, the level."""

    policy: RetryPolicy | None
    sources: dict[str, str] = field(default_factory=dict)  # key -> ACTION, SERVICE, ...


def given_keys(policy: RetryPolicy) -> dict:
    """The keys `policy` gives, as JSON (`inherit` itself left out)."""
    data = dict(policy.given)
    data.update(policy.to_json())
    data.pop("inherit", None)
    return data


def resolve(levels: Sequence[tuple[str, RetryPolicy | None]]) -> Resolved:
    """The policy of the levels (name, policy or None), most specific first."""
    present = [(name, policy) for name, policy in levels if policy is not None]
    if not present:
        return Resolved(None)
    name, first = present[0]
    if not first.inherit:
        return Resolved(first, dict.fromkeys(given_keys(first), name))
    merged: dict = {}
    sources: dict[str, str] = {}
    blocked: set[str] = set()
    for name, policy in present:
        for key, value in given_keys(policy).items():
            if key not in merged and key not in blocked:
                merged[key] = value
                sources[key] = name
        for side in EXCLUSIVE:
            if side & merged.keys():
                blocked |= set().union(*(other for other in EXCLUSIVE if other is not side))
        if not policy.inherit:
            break
    resolved = RetryPolicy.from_json(merged)
    if "maxAttempts" not in merged and resolved.max_attempts < 0:  # implied: site limits see it
        sources["maxAttempts"] = sources.get("maxElapsed") or sources["plugin"]
    return Resolved(resolved, sources)


def executable_levels(own: RetryPolicy | None, service: RetryPolicy | None,
                      workflow: RetryPolicy | None, engine: RetryPolicy | None
                      ) -> list[tuple[str, RetryPolicy | None]]:
    return [(ACTION, own), (SERVICE, service), (WORKFLOW, workflow), (ENGINE, engine)]


def executable_policy(own: RetryPolicy | None, service: RetryPolicy | None,
                      workflow: RetryPolicy | None = None,
                      engine: RetryPolicy | None = None) -> RetryPolicy | None:
    """The policy of an executable whose action (or fallback) gives `own`, its service
    `service`, with the workflow's and the engine's defaults."""
    return resolve(executable_levels(own, service, workflow, engine)).policy
