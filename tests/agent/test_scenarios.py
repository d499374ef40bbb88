"""steepy's own agent scenarios (tests/agent/scenarios/*.yaml): one per extension and every
combination of two timeouts, replayed with real processes like the conformance scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from steepy.agent import AgentConfig
from tests.agent.harness import attempts_for, replay
from tests.agent.test_conformance import check, check_timers

pytestmark = [pytest.mark.process]

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
SCENARIOS = [s for f in sorted(SCENARIO_DIR.glob("*.yaml"))
             for s in yaml.safe_load(f.read_text())["scenarios"]]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
async def test_steepy_scenario(scenario: dict, tmp_path) -> None:
    config = AgentConfig(kill_grace_period_ms=scenario.get("kill_grace_ms", 2000),
                         log_dir=tmp_path / "logs")
    result = await replay(scenario, tmp_path, config)
    check(scenario, result)
    check_timers(result)
    expected = scenario["expected"]
    outcome = result.outcome
    records = [r for r in outcome.attempts if r.executable_id == "exe0"]
    if "calls" in expected:
        assert result.calls == expected["calls"]
    if "attempt_outcomes" in expected:
        assert [r.outcome for r in records] == expected["attempt_outcomes"]
    if "timeout_kinds" in expected:
        assert [r.timeout_kind for r in records] == expected["timeout_kinds"]
    if "exit_codes" in expected:
        assert [r.exit_code for r in records] == expected["exit_codes"]
    attempts = attempts_for(outcome, "exe0")
    if "delays_ms" in expected:
        assert [r.delay_ms for r in attempts] == expected["delays_ms"]
    if "delays_within" in expected:
        delays = [r.delay_ms for r in attempts[:-1]]
        assert len(delays) == len(expected["delays_within"])
        for delay, (low, high) in zip(delays, expected["delays_within"]):
            assert low <= delay <= high
    for fragment in expected.get("message_contains", []):
        assert fragment in outcome.error_message
    if "min_elapsed_ms" in expected:
        assert result.elapsed_ms >= expected["min_elapsed_ms"]
    if "max_elapsed_ms" in expected:
        assert result.elapsed_ms <= expected["max_elapsed_ms"]
    if "max_ms_after_cancel" in expected:  # measured from when the cancellation was made
        assert result.cancelled_at_ms is not None
        assert result.elapsed_ms - result.cancelled_at_ms <= expected["max_ms_after_cancel"]
    for r in outcome.attempts:  # every record is complete (extensions section 4)
        assert r.end_time is not None and r.end_time >= r.start_time
        assert r.service_id and r.outcome in ("SUCCESS", "FAILED", "TIMEOUT", "CANCELLED", "SKIPPED")
