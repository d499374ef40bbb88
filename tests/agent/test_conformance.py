"""Every scenario of agent-timeouts.yaml, replayed with real processes and real (short) times.

Scenarios are read when the tests are collected, so new ones are picked up automatically.

Every duration of a scenario (timeouts, retry delays, the tool's waits, when it is cancelled) is
multiplied by TIME_SCALE, and so are the milliseconds in the expected timeout messages: the
scenarios keep their exact meaning (which timeout fires first, how often the tool starts, the
final status and message) while the tightest margin, maxInactivityNoTimeout's 100 ms between a
line every 100 ms and a 200 ms limit, becomes 300 ms. Together with the tool's waits being
measured from its own fork (tests/agent/tool.py), that absorbs what a loaded machine does to
a tool: a start-up of several hundred ms, lines a few tens of ms late (bench/load_margins.py
measures both). Timers that fire are checked against what the machine delivered instead of an
idle machine: never early, and no later than a probe timer on the same event loop was.
"""

from __future__ import annotations

import copy
import re

import pytest

from steepy.agent.messages import last_output
from steepy.model.durations import model_duration
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import attempts_for, replay, uses_docker
from tests.components import component
from tests.runtimes.docker.containers import container_gone
from tests.conftest import conformance_params

# read lazily: without the corpus only these are skipped (test_scenarios imports check)
SCENARIOS = conformance_params("agent-timeouts.yaml", "scenarios", id=lambda s: s["name"])
TIME_SCALE = 3
# how much later than a probe timer on the same loop the agent's timer may fire: the probe
# wakes a task (one more loop iteration), the agent's timer runs a callback, so this is slack
TIMER_SLACK_MS = 50
# a cancelled chain ends this soon after the cancellation was made: the tools die on SIGTERM at
# once, far within the grace period (2 s); the rest is killing, reaping and bookkeeping
CANCEL_PROMPT_MS = 1500

_DURATION_KEYS = {"timeout", "delay", "maxDelay"}
_POLICY_KEYS = {"maxInactivity", "maxRuntime", "deadline"}


def _scaled_ms(value, factor: int):
    return model_duration(value) * factor


def scale(node, factor: int, key: str | None = None):
    """A copy of a scenario (or part of one) with every duration multiplied by `factor`."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in _POLICY_KEYS and not isinstance(v, dict) and v is not None:
                out[k] = _scaled_ms(v, factor)  # a bare duration: the timeout itself
            elif k == "message" and isinstance(v, str):
                out[k] = re.sub(r"timed out after (\d+) ms",
                                lambda m: f"timed out after {int(m[1]) * factor} ms", v)
            elif k in ("command", "container"):
                out[k] = copy.deepcopy(v)  # argv of real commands (`sleep 2000` is seconds)
            else:
                out[k] = scale(v, factor, k)
        return out
    if isinstance(node, list):
        return [scale(v, factor, key) for v in node]
    if key is not None and (key in _DURATION_KEYS or key.endswith("_ms")) and node is not None \
            and not isinstance(node, bool):
        return _scaled_ms(node, factor)
    return node


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
    if "message" in expected:  # Steep's message; steepy ends it with the tool's last lines
        assert outcome.error_message == expected["message"] + last_output(attempts[-1].last_lines)
    if "root_cause_message" in expected:
        # the tool's own error, not wrapped into a timeout: the message ends with its output
        assert outcome.error_message.endswith("\n" + expected["root_cause_message"])
        assert "timed out" not in outcome.error_message
        assert attempts[-1].last_lines[-1] == expected["root_cause_message"]
    if "estimator_calls" in expected:
        assert result.estimator_calls == expected["estimator_calls"]
    if outcome.status != ProcessChainStatus.SUCCESS:
        assert outcome.results == {}


def check_timers(result) -> None:
    """Each timer that ended an attempt fired on time, as far as this machine allows: not
    before its limit, and not later than the loop delivered a probe timer meanwhile."""
    for late in result.timer_late_ms:
        assert 0 <= late <= result.loop_late_ms + TIMER_SLACK_MS, (late, result.loop_late_ms)


def test_scaling_keeps_the_meaning() -> None:
    scenario = {
        "executables": [{"maxRuntime": {"timeout": 200, "errorOnTimeout": True},
                         "deadline": "1s", "maxInactivity": 150,
                         "retries": {"maxAttempts": 3, "delay": 100, "exponentialBackoff": 2},
                         "behaviour": {"calls": [{"lines": {"count": 5, "every_ms": 100,
                                                            "then_fail": {"exit_code": 4}}},
                                                 {"block_ms": 2000}]}},
                        {"behaviour": {"command": ["sleep", "2000"]}}],
        "cancel": {"after_ms": 200, "via": "agent"},
        "expected": {"outcome": "ERROR", "runtime_calls": 3,
                     "message": "Execution of service `dummy' timed out after 200 ms (maximum runtime)"}}
    scaled = scale(scenario, 3)
    first = scaled["executables"][0]
    assert first["maxRuntime"] == {"timeout": 600, "errorOnTimeout": True}
    assert first["deadline"] == 3000 and first["maxInactivity"] == 450
    assert first["retries"] == {"maxAttempts": 3, "delay": 300, "exponentialBackoff": 2}
    assert first["behaviour"]["calls"] == [
        {"lines": {"count": 5, "every_ms": 300, "then_fail": {"exit_code": 4}}}, {"block_ms": 6000}]
    assert scaled["executables"][1]["behaviour"]["command"] == ["sleep", "2000"]
    assert scaled["cancel"] == {"after_ms": 600, "via": "agent"}
    assert scaled["expected"] == {
        "outcome": "ERROR", "runtime_calls": 3,
        "message": "Execution of service `dummy' timed out after 600 ms (maximum runtime)"}
    assert scenario["cancel"]["after_ms"] == 200  # the original is left alone


@pytest.mark.process
@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_agent_scenario(scenario: dict, tmp_path) -> None:
    scenario = scale(scenario, TIME_SCALE)
    docker = component("docker") if uses_docker(scenario) else None
    result = await replay(scenario, tmp_path, docker=docker)
    check(scenario, result)
    check_timers(result)
    cancel = scenario.get("cancel")
    if cancel is not None:
        # cancelled promptly, measured from when the cancellation was made (its own timer may
        # fire late on a loaded machine)
        assert result.cancelled_at_ms is not None
        assert result.elapsed_ms - result.cancelled_at_ms < CANCEL_PROMPT_MS
    if "progress_after_line" in scenario["expected"]:
        # one estimate per line: line/5 in both attempts; then 1.0 when the executable is done
        assert result.progress_events == [0.0, 0.2, 0.4, 0.6, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    if scenario["executables"][0].get("runtime") == "docker":
        run, *rest = result.docker_calls
        assert run[0] == "run"
        name = run[run.index("--name") + 1]
        assert name.startswith("steep-exe0-sleep-")
        assert run[-3:] == [docker["image"], "sleep", "2000"]  # alpine cannot be pulled here
        assert ["kill", name] in rest
        assert container_gone(docker, name)
