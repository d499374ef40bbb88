"""Every scenario of agent-timeouts.yaml, replayed with real processes and real (short) times.

Scenarios are read when the tests are collected, so new ones are picked up automatically."""

from __future__ import annotations

import pytest

from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import attempts_for, replay
from tests.conftest import load_conformance

SCENARIOS = load_conformance("agent-timeouts.yaml")["scenarios"]


def check(scenario: dict, result) -> None:
    """Assert what a scenario's `expected` block says."""
    expected = scenario["expected"]
    outcome = result.outcome
    assert outcome.status == ProcessChainStatus(expected["outcome"]), outcome.error_message
    first = scenario["executables"][0]
    attempts = attempts_for(outcome, first.get("id", "exe0"))
    if "runtime_calls" in expected:
        if "calls" in first["behaviour"]:
            assert result.calls[0] == expected["runtime_calls"]
        assert len(attempts) == expected["runtime_calls"]
    if "message" in expected:
        assert outcome.error_message == expected["message"]
    if "root_cause_message" in expected:
        # the tool's own error, not wrapped into a timeout: the message ends with its output
        assert outcome.error_message.endswith("\n" + expected["root_cause_message"])
        assert "timed out" not in outcome.error_message
        assert attempts[-1].last_lines[-1] == expected["root_cause_message"]
    if "estimator_calls" in expected:
        assert result.estimator_calls == expected["estimator_calls"]
    if outcome.status != ProcessChainStatus.SUCCESS:
        assert outcome.results == {}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
async def test_agent_scenario(scenario: dict, tmp_path) -> None:
    result = await replay(scenario, tmp_path)
    check(scenario, result)
    cancel = scenario.get("cancel")
    if cancel is not None:
        # cancelled promptly: the tools die on SIGTERM, far within the grace period
        assert result.elapsed_ms < cancel["after_ms"] + 1500
    if "progress_after_line" in scenario["expected"]:
        # one estimate per line: line/5 in both attempts; then 1.0 when the executable is done
        assert result.progress_events == [0.0, 0.2, 0.4, 0.6, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    if scenario["executables"][0].get("runtime") == "docker":
        run, *rest = result.docker_calls
        assert run[0] == "run"
        name = run[run.index("--name") + 1]
        assert name.startswith("steep-exe0-sleep-")
        assert run[-3:] == ["alpine", "sleep", "2000"]
        assert ["kill", name] in rest
