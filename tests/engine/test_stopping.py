"""Chains that end early without an error (extensions 10 and 11), through the engine and the
registry with real processes, in one submission: a fallback with `stop: true', a tool's
`prune' and the workflow's `catch' each end their chain, what needs their outputs is
skipped (recorded on the timeline), the rest runs, and the submission ends SUCCESS."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from steepy.cli.output import print_document
from steepy.engine.engine import Engine
from steepy.model import Service
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import Registry, open_registry
from steepy.registry.documents import submission_document
from tests.engine.test_engine import _settings, _submit

pytestmark = [pytest.mark.process]

SH = Service.from_json({
    "id": "sh", "name": "sh", "description": "runs a script: sh -c SCRIPT OUT IN",
    "path": "/bin/sh", "runtime": "other", "parameters": [
        {"id": "script", "name": "s", "description": "s", "type": "input",
         "cardinality": "1..1", "label": "-c"},
        {"id": "out", "name": "o", "description": "o", "type": "output", "cardinality": "0..1"},
        {"id": "in", "name": "i", "description": "i", "type": "input", "cardinality": "0..1"}]})

WORKFLOW = """
api: 4.7.0
catch:
  service: sh
  forActions: [caught]
  maxRecoveries: 1
  inputs: [{{id: script, value: 'echo "$STEEPY_FAILED_ACTION $STEEPY_FAILED_SERVICE
    $STEEPY_FAILED_EXIT_CODE" > {d}/catch-ran'}}]
actions:
  - id: broken
    type: execute
    service: sh
    inputs: [{{id: script, value: 'exit 3'}}]
    outputs: [{{id: out, var: b}}]
    fallback:
      service: sh
      stop: true
      inputs: [{{id: script, value: 'echo "$STEEPY_FAILED_ACTION" > {d}/fallback-ran'}}]
  - {{id: after-broken, type: execute, service: sh,
     inputs: [{{id: script, value: 'touch {d}/after-broken'}}, {{id: in, var: b}}]}}
  - id: pruner
    type: execute
    service: sh
    inputs: [{{id: script, value: 'echo prune nothing new > "$STEEPY_SIGNAL_FILE"'}}]
    outputs: [{{id: out, var: p}}]
  - {{id: after-pruner, type: execute, service: sh,
     inputs: [{{id: script, value: 'touch {d}/after-pruner'}}, {{id: in, var: p}}]}}
  - {{id: caught, type: execute, service: sh, inputs: [{{id: script, value: 'exit 5'}}],
     outputs: [{{id: out, var: c}}]}}
  - {{id: after-caught, type: execute, service: sh,
     inputs: [{{id: script, value: 'touch {d}/after-caught'}}, {{id: in, var: c}}]}}
  - {{id: fine, type: execute, service: sh, inputs: [{{id: script, value: 'echo ok > "$0"'}}],
     outputs: [{{id: out, var: f, store: true}}]}}
"""


@pytest.fixture
def registry(database_url) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


async def test_stopped_chains_skip_their_dependents_and_the_submission_succeeds(
        registry, tmp_path: Path, capsys) -> None:
    sid = _submit(registry, WORKFLOW.format(d=tmp_path))
    engine = Engine(registry, {"sh": SH}, {}, _settings(tmp_path, 2))
    await asyncio.wait_for(engine.run(until_submission=sid), 60)
    submission = registry.views.get_submission(sid)
    assert submission.status == SS.SUCCESS, submission.error_message
    assert Path(submission.results["f"][0]).read_text() == "ok\n"  # the rest ran
    assert "$stoppedAt" not in submission.results

    # each stop ran what it should, and nothing that needed a stopped action ran
    assert (tmp_path / "fallback-ran").read_text() == "broken\n"
    assert (tmp_path / "catch-ran").read_text().split() == ["caught", "sh", "5"]
    for name in ("after-broken", "after-pruner", "after-caught"):
        assert not (tmp_path / name).exists(), name

    # the timeline says what was skipped and why; the actions that stopped ran: they are not
    # skipped (review finding 10)
    skipped = {e["actionId"]: e["reason"] for e in registry.views.events(sid)
               if e["kind"] == "submission.skipped"}
    early = "needs `{}', which ended its chain early ({})"
    assert skipped == {
        "after-broken": early.format("broken", "failed, and its fallback ended the chain"),
        "after-pruner": early.format("pruner", "the tool pruned its chain: nothing new"),
        "after-caught": early.format("caught", "failed, and the workflow's catch ended the "
                                               "chain")}

    # each chain that stopped says where and why in its own key, its results are outputs
    # only (review finding 9), in `steepy show --json' and in Steep's GET /processchains/ID
    document = submission_document(registry.views, sid)
    assert document["skippedActions"] == skipped
    stops = {c["stopped"]["executableId"]: c for c in document["processChains"]
             if "stopped" in c}
    assert {k: (c["stopped"]["reason"], c["stopped"]["by"]) for k, c in stops.items()} == {
        "broken": ("failed, and its fallback ended the chain", "broken.fallback"),
        "pruner": ("the tool pruned its chain: nothing new", "pruner"),
        "caught": ("failed, and the workflow's catch ended the chain", "caught.catch")}
    for chain in document["processChains"]:
        assert not any(k.startswith("$") for k in chain.get("results", {})), chain
        steeps = registry.views.chain(chain["id"])
        assert steeps is not None and steeps["results"] == chain["results"]
        assert steeps.get("stopped") == chain.get("stopped")
    # and so does `steepy show'
    print_document(document)
    shown = capsys.readouterr().out
    assert "  stopped pruner: the tool pruned its chain: nothing new\n" in shown
    assert f"  skipped after-pruner: {skipped['after-pruner']}\n" in shown
