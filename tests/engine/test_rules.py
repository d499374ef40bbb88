"""Steep's final-status table, submission results and process-chain retry decisions."""

from __future__ import annotations

import pytest

from steepy.agent.config import ChainOutcome
from steepy.engine.controller import final_status, submission_results
from steepy.model import ProcessChain, RetryPolicy
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import ChainRecord
from steepy.registry.records import utcnow
from steepy.engine.scheduler import after_run
from tests.conftest import load_conformance

DATA = load_conformance("submission-status.yaml")


def _counts(when: dict) -> list[tuple[int, int, int]]:
    """(total, failed, cancelled) examples for a rule's symbolic counts."""
    failed = when.get("failed", 0)
    cancelled = when.get("cancelled", 0)
    examples = []
    for total in (1, 2, 5):
        f = {"all": total, "some_but_not_all": total - 1, "N >= 2": 3}.get(failed, failed)
        c = 1 if cancelled == "at_least_one" else cancelled
        if isinstance(f, int) and f <= total and (failed != "some_but_not_all" or 0 < f < total):
            examples.append((max(total, f + c), f, c))
    return examples


# the "unexpected error" rule is a behaviour of the running engine: test_engine covers it
RULES = [r for r in DATA["final_status_rules"] if not r["when"].get("unexpected_error")]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r["status"] + str(r["when"]))
def test_final_status_rules(rule: dict) -> None:
    when = rule["when"]
    finished_values = [when["generator_finished"]] if "generator_finished" in when else [True, False]
    for finished in finished_values:
        for total, failed, cancelled in _counts(when):
            status, message = final_status(finished, total, failed, cancelled)
            assert status == rule["status"]
            expected = rule.get("error_message")
            if expected:
                assert message == expected.replace("<N>", str(failed))


@pytest.mark.parametrize("vector", DATA["submission_results_rule"]["vectors"])
def test_submission_results(vector: dict) -> None:
    chains = [{k: v} for k, v in vector["chain_results"].items()]
    assert submission_results(chains, vector["out_path"]) == vector["submission_results"]


def _record(retries: dict | None) -> ChainRecord:
    chain = ProcessChain(id="1", retries=None if retries is None else RetryPolicy.from_json(retries))
    return ChainRecord(chain=chain, submission_id="s", status=CS.RUNNING, results=None,
                       next_run_at=None, seq=1)


@pytest.mark.parametrize("scenario", DATA["scheduler_scenarios"], ids=lambda s: s["name"])
def test_process_chain_retry_decisions(scenario: dict) -> None:
    record = _record(scenario["chain"].get("retries"))
    status = None
    runs = pauses = 0
    delays = []
    for outcome in scenario["run_outcomes"]:
        runs += 1
        kind = outcome if isinstance(outcome, str) else next(iter(outcome))
        chain_outcome = ChainOutcome({"error": CS.ERROR, "success": CS.SUCCESS,
                                      "cancelled": CS.CANCELLED}[kind])
        before = utcnow()
        decision = after_run(record, runs, chain_outcome, before)
        status, resume_at = decision.status, decision.resume_at
        if status == CS.PAUSED:
            pauses += 1
            delays.append((resume_at - before).total_seconds() * 1000)
        else:
            break
    expected = scenario["expected"]
    assert status == expected["final_status"] and runs == expected["runs"]
    assert pauses == expected.get("paused_transitions", 0)
    for got, want in zip(delays, expected.get("auto_resume_delays_ms", [])):
        assert want <= got < want + 1000
