"""A retry decision as a plugin (extensions 1): the `retryPolicy' kind, `plugin: NAME' in a
policy, checked against the plugins steepy has, and at work in the agent."""

from __future__ import annotations

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.errors import InputError
from steepy.model.attempt import FAILED
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus
from steepy.plugins.kinds import KINDS, RetryFailure
from steepy.plugins.loaded import PluginSet, builtin_set
from steepy.plugins.loading import Plugin


def test_the_policy_key():
    policy = RetryPolicy.from_json({"plugin": "on-fridays"})
    assert (policy.plugin, policy.max_attempts) == ("on-fridays", -1)  # the plugin gives up
    assert policy.to_json() == {"maxAttempts": -1, "plugin": "on-fridays"}
    assert RetryPolicy.from_json({"plugin": "x", "maxAttempts": 4}).max_attempts == 4
    with pytest.raises(InputError, match="plugin must be the name of a retryPolicy plugin"):
        RetryPolicy.from_json({"plugin": 3})


class Patient:
    """Retries after 20 ms, then 40 ms, and gives up after the third attempt."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int, RetryFailure]] = []

    def next(self, elapsed_ms: int, attempts: int, failure: RetryFailure) -> int | None:
        self.asked.append((elapsed_ms, attempts, failure))
        return None if attempts >= 3 else 20 * attempts


def broken(elapsed_ms, attempts, failure):
    raise ValueError("no calendar")


def failing(exe_id: str, plugin: str) -> Executable:
    words = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
             for i, v in enumerate(["-c", "echo busy; exit 3"])]
    return Executable(exe_id, "/bin/sh", "sh", words,
                      retries=RetryPolicy.from_json({"plugin": plugin}))


@pytest.mark.process
async def test_the_plugin_decides(tmp_path):
    patient = Patient()
    plugins = PluginSet([*builtin_set().plugins,
                         Plugin("patient", KINDS["retryPolicy"], patient, "test"),
                         Plugin("broken", KINDS["retryPolicy"], type("B", (), {
                             "next": staticmethod(broken)})(), "test")])
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins))

    outcome = await agent.execute(ProcessChain("c1", [failing("e", "patient")]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert [(a, f.exit_code, f.timeout_kind, f.last_lines) for _, a, f in patient.asked] == [
        (1, 3, None, ("busy",)), (2, 3, None, ("busy",)), (3, 3, None, ("busy",))]
    assert patient.asked[0][2].message.startswith("Execution of service `sh' failed")
    assert [e for e, _, _ in patient.asked] == sorted(e for e, _, _ in patient.asked)
    assert patient.asked[2][0] >= 60  # two pauses of 20 and 40 ms lay before attempt 3
    rows = [(r.attempt, r.outcome, r.delay_ms, r.delay_rule) for r in outcome.attempts]
    chosen = "retry policy plugin `patient'; every failure is retried (no retryOn)"
    assert rows == [(1, FAILED, 20, chosen), (2, FAILED, 40, chosen),
                    (3, FAILED, None, "no retry: retry policy plugin `patient' gave up")]

    outcome = await agent.execute(ProcessChain("c2", [failing("e", "broken")]))
    assert outcome.status == ProcessChainStatus.ERROR and len(outcome.attempts) == 1
    assert outcome.error_message.endswith(
        "\nRetry policy plugin `broken' failed: ValueError: no calendar")
    assert outcome.error_message.startswith("Execution of service `sh' failed")


@pytest.mark.process
async def test_the_plugin_decides_after_an_attempt_cut_by_a_crash(tmp_path):
    """A run that goes on from a cut run asks the plugin for the pause after the cut attempt
    (not the policy's own delay): one that gives up ends the executable without running it."""
    from datetime import datetime, timedelta, timezone

    from steepy.model.attempt import AGENT_LOST, AttemptRecord

    patient = Patient()
    plugins = PluginSet([*builtin_set().plugins,
                         Plugin("patient", KINDS["retryPolicy"], patient, "test")])
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins))
    ran = tmp_path / "ran"
    exe = failing("e", "patient")
    exe.arguments[1].variable.value = f"touch {ran}; exit 3"
    began = datetime.now(timezone.utc) - timedelta(seconds=5)
    cut = [AttemptRecord("e", "sh", n, began, outcome=AGENT_LOST, last_lines=["half"])
           for n in (1, 2, 3)]
    outcome = await agent.execute(ProcessChain("c1", [exe]), run_number=2, history=cut[:1])
    assert outcome.status == ProcessChainStatus.ERROR and ran.exists()
    elapsed, attempts, failure = patient.asked[0]
    assert attempts == 1 and elapsed >= 5000 and failure.last_lines == ("half",)
    assert failure.message == "Execution of service `sh' failed: attempt 1 was cut (AGENT_LOST)"

    ran.unlink()
    patient.asked.clear()
    outcome = await agent.execute(ProcessChain("c2", [exe]), run_number=2, history=cut)
    assert outcome.status == ProcessChainStatus.ERROR and not ran.exists()
    assert [a for _, a, _ in patient.asked] == [3]
    assert outcome.error_message.endswith(
        "attempt 3 was cut (AGENT_LOST) (retry policy plugin `patient' gave up, counting those "
        "of cut runs)")
