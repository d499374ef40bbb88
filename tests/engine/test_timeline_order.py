"""The timeline tells a run in the order it happened: every `chain.attemptFailed` of a run
comes before that run's `chain.finished`."""

from __future__ import annotations

from tests.engine.test_engine import _run, _submit
import pytest

pytestmark = [pytest.mark.process]

CHAINS = 24
WORKFLOW = """
api: 4.7.0
name: failing twice each
vars:
  - {id: items, value: [%s]}
actions:
  - type: for
    input: items
    enumerator: i
    actions:
      - id: f
        type: execute
        service: cp
        inputs: [{id: input_file, value: /nonexistent/steepy-test-input}]
        outputs: [{id: output_file, var: copy}]
        retries: {maxAttempts: 2, delay: 1ms}
""" % ", ".join(str(i) for i in range(CHAINS))


async def test_attempt_events_precede_the_finish(database_url, tmp_path, monkeypatch) -> None:
    from steepy.registry import open_registry
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    registry = open_registry(database_url)
    sid = _submit(registry, WORKFLOW)
    await _run(registry, tmp_path, sid, agents=4)
    events = registry.views.events(sid)
    finished = {e["chainId"]: e["id"] for e in events if e["kind"] == "chain.finished"}
    failed = [e for e in events if e["kind"] == "chain.attemptFailed"]
    assert len(finished) == CHAINS and len(failed) == 2 * CHAINS
    late = [e for e in failed if e["id"] > finished[e["chainId"]]]
    assert late == [], f"{len(late)} attempt events after their chain's end"
