"""Which policy an executable runs with: action > service > workflow default > engine default,
whole policies unless `inherit: true`, then per key."""

from __future__ import annotations

import pytest

from steepy.errors import InputError
from steepy.model.inheritance import (ACTION, ENGINE, SERVICE, WORKFLOW, executable_levels,
                                      executable_policy, resolve)
from steepy.model.policies import RetryPolicy


def policy(**data) -> RetryPolicy:
    return RetryPolicy.from_json(data)


SERVICE_P = policy(maxAttempts=5, delay="2s", jitter="full")
WORKFLOW_P = policy(maxAttempts=4, maxDelay="10s", exponentialBackoff=2)
ENGINE_P = policy(maxAttempts=2, delay="1s", maxDelay="1m", requeue={"exitCodes": [75]})


@pytest.mark.parametrize("own, service, workflow, engine, expected", [
    (policy(maxAttempts=9), SERVICE_P, WORKFLOW_P, ENGINE_P, policy(maxAttempts=9)),
    (None, SERVICE_P, WORKFLOW_P, ENGINE_P, SERVICE_P),
    (None, None, WORKFLOW_P, ENGINE_P, WORKFLOW_P),
    (None, None, None, ENGINE_P, ENGINE_P),
    (None, None, None, None, None),
])
def test_the_first_level_with_a_policy_decides_as_a_whole(own, service, workflow, engine,
                                                         expected) -> None:
    assert executable_policy(own, service, workflow, engine) == expected


def test_an_inheriting_policy_takes_each_key_it_does_not_give_from_the_next_level() -> None:
    own = policy(inherit=True, maxAttempts=7)
    assert executable_policy(own, SERVICE_P, WORKFLOW_P, ENGINE_P) == policy(
        maxAttempts=7, delay="2s", jitter="full")  # the service's policy is a whole one


def test_inheritance_goes_down_every_inheriting_level() -> None:
    resolved = resolve(executable_levels(
        policy(inherit=True, maxAttempts=7), policy(inherit=True, jitter="equal"),
        policy(inherit=True, delay="3s"), ENGINE_P))
    assert resolved.policy == policy(maxAttempts=7, jitter="equal", delay="3s", maxDelay="1m",
                                     requeue={"exitCodes": [75]})
    assert resolved.sources == {"maxAttempts": ACTION, "jitter": SERVICE, "delay": WORKFLOW,
                                "maxDelay": ENGINE, "requeue": ENGINE}
    assert not resolved.policy.inherit


def test_a_key_given_with_its_default_value_is_not_inherited() -> None:
    own = policy(inherit=True, maxAttempts=1, delay=0)
    assert executable_policy(own, SERVICE_P) == policy(jitter="full")


def test_what_was_given_survives_json() -> None:
    own = policy(inherit=True, maxAttempts=1, delay="0s")
    again = RetryPolicy.from_json(own.to_json())
    assert own.to_json() == {"maxAttempts": 1, "delay": "0s", "inherit": True}
    assert executable_policy(again, SERVICE_P) == policy(jitter="full")


def test_a_policy_made_in_code_gives_what_differs_from_the_defaults() -> None:
    own = RetryPolicy(max_attempts=3, inherit=True)
    assert executable_policy(own, SERVICE_P) == policy(maxAttempts=3, delay="2s", jitter="full")


def test_an_inheriting_last_level_leaves_steepys_defaults() -> None:
    own = policy(inherit=True, delay="1s")
    assert executable_policy(own, None, None, policy(inherit=True, maxAttempts=3)) == policy(
        maxAttempts=3, delay="1s")


def test_waits_and_the_keys_it_replaces_are_not_mixed_across_levels() -> None:
    waits = [{"strategy": "fixed", "delay": "1s"}]
    own = policy(inherit=True, waits=waits)
    assert executable_policy(own, SERVICE_P) == policy(waits=waits, maxAttempts=5, jitter="full")
    below = policy(inherit=True, waits=waits, maxAttempts=3)
    assert executable_policy(policy(inherit=True, delay="5s"), below) == policy(
        delay="5s", maxAttempts=3)


def test_inherit_must_be_a_boolean() -> None:
    with pytest.raises(InputError) as info:
        policy(inherit="yes")
    assert "inherit must be true or false" in str(info.value)


def test_levels_are_named_for_messages() -> None:
    assert [name for name, _ in executable_levels(None, None, None, None)] == [
        ACTION, SERVICE, WORKFLOW, ENGINE]


def test_a_workflows_default_survives_its_json() -> None:
    from steepy.model.workflow import Workflow

    data = {"api": "4.7.0", "retries": {"processChains": {"maxAttempts": 2},
                                        "executables": {"inherit": True, "maxAttempts": 1}},
            "vars": [], "actions": []}
    workflow = Workflow.from_json(data)
    assert workflow.executable_retries == policy(inherit=True, maxAttempts=1)
    assert Workflow.from_json(workflow.to_json()).to_json()["retries"] == data["retries"]


@pytest.mark.parametrize("own", [policy(inherit=True, maxElapsed="1h"),
                                 policy(inherit=True, plugin="p")])
def test_an_inheriting_policy_without_max_attempts_inherits_it(own: RetryPolicy) -> None:
    """maxElapsed or a plugin alone means unlimited attempts only in a policy that does not
    inherit: an inheriting one takes maxAttempts from below (review finding 5)."""
    assert "maxAttempts" not in own.to_json()
    resolved = resolve(executable_levels(own, None, policy(maxAttempts=5), None))
    assert resolved.policy is not None and resolved.policy.max_attempts == 5
    assert resolved.sources["maxAttempts"] == WORKFLOW


def test_unlimited_attempts_implied_after_inheriting_are_seen_by_site_limits() -> None:
    resolved = resolve(executable_levels(policy(inherit=True, maxElapsed="1h"), None,
                                         policy(inherit=True, delay="1s"), None))
    assert resolved.policy is not None and resolved.policy.max_attempts == -1
    assert resolved.sources["maxAttempts"] == ACTION  # where maxElapsed was written
