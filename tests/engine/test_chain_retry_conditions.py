"""`retryOn` and `abortOn` under `retries.processChains` (extensions 9): the failure that
ended a run decides whether the chain runs again."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from steepy.agent.config import AttemptRecord, ChainOutcome
from steepy.model import ProcessChain, RetryPolicy
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import ChainRecord, open_registry
from steepy.engine.scheduler import after_run
from tests.conftest import ROOT
from tests.engine.test_engine import _run, _submit

NOW = datetime.now(timezone.utc)


def _failed(exit_code=None, lines=(), timeout=None) -> ChainOutcome:
    attempt = AttemptRecord("e", "s", 1, NOW, NOW, outcome="TIMEOUT" if timeout else "FAILED",
                            exit_code=exit_code, timeout_kind=timeout, last_lines=list(lines))
    return ChainOutcome(CS.ERROR, attempts=[attempt])


@pytest.mark.parametrize("policy, outcome, retried", [
    ({}, _failed(3), True),  # Steep: every failure
    ({}, _failed(timeout="deadline"), True),  # (no conditions: Steep's rule holds)
    ({"retryOn": {"exitCodes": [3]}}, _failed(3), True),
    ({"retryOn": {"exitCodes": ["10..20"]}}, _failed(3), False),
    ({"retryOn": {"output": "rate limit"}}, _failed(1, ["HTTP 429: rate limit"]), True),
    ({"retryOn": {"timeouts": ["maxInactivity"]}}, _failed(timeout="maximum inactivity"), True),
    ({"retryOn": {"timeouts": ["maxInactivity"]}}, _failed(timeout="maximum runtime"), False),
    ({"abortOn": {"exitCodes": [2]}}, _failed(2), False),
    ({"abortOn": {"exitCodes": [2]}}, _failed(1), True),
    ({"retryOn": {"exitCodes": [2]}, "abortOn": {"output": "fatal"}}, _failed(2, ["fatal"]), False),
    ({"retryOn": {"exitCodes": [2]}}, ChainOutcome(CS.ERROR), False),  # no failed attempt
])
def test_conditions_decide(policy: dict, outcome: ChainOutcome, retried: bool) -> None:
    chain = ProcessChain(id="c", retries=RetryPolicy.from_json({"maxAttempts": 3, **policy}))
    record = ChainRecord(chain=chain, submission_id="s", status=CS.RUNNING, results=None,
                         next_run_at=None, seq=1)
    decision = after_run(record, 1, outcome, NOW)
    assert decision.status == (CS.PAUSED if retried else CS.ERROR)


WORKFLOW = """
api: 4.7.0
name: chain retries with conditions
retries:
  processChains: {maxAttempts: 3, delay: 10ms, %s}
vars:
  - id: result
actions:
  - id: step
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 2}, {id: exit_code, value: 3}]
    outputs: [{id: output_file, var: result}]
    retries: {maxAttempts: 1}
"""


@pytest.mark.process
@pytest.mark.parametrize("condition, runs, status", [
    ("retryOn: {exitCodes: [3]}", ["ERROR", "ERROR", "SUCCESS"], "SUCCESS"),
    ("retryOn: {exitCodes: [4]}", ["ERROR"], "ERROR"),
    ("abortOn: {exitCodes: [3]}", ["ERROR"], "ERROR"),
])
async def test_a_real_chain_follows_them(tmp_path, monkeypatch, condition, runs, status) -> None:
    monkeypatch.chdir(ROOT)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    sid = _submit(registry, WORKFLOW % condition)
    await _run(registry, tmp_path, sid)
    assert registry.views.get_submission(sid).status == status
    (record,), _ = registry.views.list_chains(sid)
    assert [r.status for r in registry.views.runs(record.chain.id)] == runs
