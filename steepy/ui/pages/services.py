"""Services (`/services`, `/services/{id}`): the loaded service metadata, with parameters and
the retry and timeout policies in words (durations formatted, delays spelled out)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from steepy.model.durations import format_duration
from steepy.model.conditions import RetryCondition
from steepy.model.common import POLICY_FIELDS
from steepy.model.policies import RetryPolicy, TimeoutKind, TimeoutPolicy
from steepy.ui.render import not_found
from steepy.ui.render import page as render
from steepy.ui.routing import page

SHOWN_DELAYS = 5  # the first pauses of a retry policy, spelled out


@dataclass
class Fact:
    """One line of a policy: what it is called in the YAML, and what it means."""

    key: str
    text: str


def attempts_words(n: int) -> str:
    if n < 0:
        return "unlimited"
    if n == 0:
        return "0 (the executable is skipped, never run)"
    if n == 1:
        return "1 (no retry)"
    return f"{n} (the first and {n - 1} retr{'y' if n == 2 else 'ies'})"


def delays(policy: RetryPolicy) -> list[int]:
    """The pauses (ms, before jitter) before the second, third... attempt."""
    count = SHOWN_DELAYS if policy.max_attempts < 0 else min(SHOWN_DELAYS,
                                                               policy.max_attempts - 1)
    return [policy.delay_after_attempts(n) for n in range(1, count + 1)]


def condition_words(condition: RetryCondition) -> str:
    parts = []
    if condition.exit_codes:
        codes = [f"{c[0]}..{c[1]}" if isinstance(c, tuple) else str(c)
                 for c in condition.exit_codes]
        parts.append("exit code " + ", ".join(codes))
    if condition.output is not None:
        parts.append(f"output matching /{condition.output}/")
    if condition.timeouts:
        parts.append("timeout " + ", ".join(condition.timeouts))
    return " or ".join(parts) or "nothing"


def retry_facts(policy: RetryPolicy | None) -> list[Fact]:
    if policy is None:
        return []
    facts = [Fact("maxAttempts", attempts_words(policy.max_attempts))]
    if policy.max_attempts == 1 or policy.max_attempts == 0:
        return facts
    facts.append(Fact("delay", policy.describe_delay_rule()))
    pauses = delays(policy)
    if pauses:
        more = ", ..." if policy.max_attempts < 0 or policy.max_attempts - 1 > len(pauses) else ""
        facts.append(Fact("pauses", ", ".join(format_duration(d) for d in pauses) + more
                          + " (before jitter)"))
    if policy.retry_on is not None:
        facts.append(Fact("retryOn", "only failures with " + condition_words(policy.retry_on)
                          + " are retried"))
    if policy.abort_on is not None:
        facts.append(Fact("abortOn", "failures with " + condition_words(policy.abort_on)
                          + " are never retried"))
    if policy.retry_on is None and policy.abort_on is None:
        facts.append(Fact("retried", "every failure (no retryOn or abortOn)"))
    return facts


def timeout_facts(owner: Any) -> list[Fact]:
    facts = []
    for kind in TimeoutKind:
        policy: TimeoutPolicy | None = kind.policy(owner)
        if policy is not None:
            end = "ERROR" if policy.error_on_timeout else "CANCELLED"
            facts.append(Fact(kind.value, f"{format_duration(policy.timeout)}: when {kind.meaning} "
                                   f"{format_duration(policy.timeout)}, the attempt is stopped "
                                   f"and the chain ends {end}"))
    return facts


def services(request: Request) -> Response:
    ctx = request.app.state.ctx
    found = sorted(ctx.services.values(), key=lambda s: s.id)
    policies = {s.id: [key for key, attr in POLICY_FIELDS if getattr(s, attr) is not None]
                for s in found}
    return render(request, "services.html", services=found, policies=policies)


def service(request: Request) -> Response:
    ctx = request.app.state.ctx
    service_id = request.path_params["id"]
    found = ctx.services.get(service_id)
    if found is None:
        return not_found(request, f"There is no service with ID `{service_id}'.")
    return render(request, "service.html", service=found, retries=retry_facts(found.retries),
                  timeouts=timeout_facts(found))


ROUTES = [page("/services", services), page("/services/{id}", service)]
