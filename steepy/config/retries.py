"""The `retries' keys (extensions 1): the engine's default retry policy of every executable
(`retries.executables') and the site's limits on every policy (`retries.limits')."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from steepy.config.section import Section
from steepy.errors import InputError
from steepy.model.inheritance import given_keys
from steepy.model.limits import Bound, SiteRetries
from steepy.model.policies import RetryPolicy


def _policy(value: Any) -> Any:
    """A retry policy as in a workflow (kept as written; `SiteRetries' holds it read)."""
    if value is None:
        return None
    try:
        RetryPolicy.from_json(value)
    except InputError as e:
        raise ValueError("; ".join(p.message if p.message.startswith(p.path or "")
                                   else f"{p.path}: {p.message}" for p in e.problems)) from None
    return value


def _bound(key: str):
    def check(value: str | None) -> str | None:
        if value is not None:
            Bound.parse(key, value)
        return value
    return AfterValidator(check)


class RetryLimitsSettings(Section):
    """`retries.limits': a range `LOW..HIGH' per key (an end left out: open)."""

    max_attempts: Annotated[str | None, _bound("maxAttempts")] = Field(None, alias="maxAttempts")
    delay: Annotated[str | None, _bound("delay")] = None
    max_delay: Annotated[str | None, _bound("maxDelay")] = Field(None, alias="maxDelay")
    max_elapsed: Annotated[str | None, _bound("maxElapsed")] = Field(None, alias="maxElapsed")
    exponential_backoff: Annotated[str | None, _bound("exponentialBackoff")] = Field(
        None, alias="exponentialBackoff")

    def bounds(self) -> tuple[Bound, ...]:
        return tuple(Bound.parse(info.alias or name, getattr(self, name))
                     for name, info in type(self).model_fields.items()
                     if getattr(self, name) is not None)


class RetriesSettings(Section):
    """`retries': what every workflow run here gets unless it says otherwise."""

    limits: RetryLimitsSettings = Field(default_factory=RetryLimitsSettings)
    # the policy of an executable whose action, service and workflow give none
    executables: Annotated[dict | None, AfterValidator(_policy)] = None

    @field_validator("executables")
    @classmethod
    def _within_limits(cls, value: dict | None, info: ValidationInfo) -> dict | None:
        limits = info.data.get("limits")
        if value is None or limits is None:
            return value
        default = RetryPolicy.from_json(value)
        found = SiteRetries(default, limits.bounds()).problems(default, given_keys(default))
        if found:
            raise ValueError("; ".join(message for _, message in found))
        return value

    def site(self) -> SiteRetries:
        default = None if self.executables is None else RetryPolicy.from_json(self.executables)
        return SiteRetries(default, self.limits.bounds())
