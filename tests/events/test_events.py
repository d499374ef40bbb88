"""The catalogue of timeline events (steepy/events/): every kind steepy writes comes from it,
each has a description and declared fields, an undeclared field fails where the event is
built, agents report under the timeline's names, and the reference page is rendered from it."""

from __future__ import annotations

import ast
import dataclasses
import re
import runpy
import sys
from datetime import datetime, timezone

import pytest

from steepy.events import (CATALOGUE, ChainFinished, ChainStarted, ChainWaiting, Event, EventKind,
                           kinds)
from steepy.events.reference import COMMAND, PAGE, markdown
from steepy.http.eventbus.messages import PROCESS_CHAIN_STATUS_CHANGED, Memory, translate
from steepy.model import Submission, Workflow
from steepy.events.webhooks import FINISHED, parse_pattern
from steepy.registry import open_registry
from steepy.ui.pages.workflows_events import DESCRIBE, HIDDEN, describe
from tests.conftest import ROOT

STEEPY = ROOT / "steepy"
# a kind-looking token: a group and a word, a glob (`chain.*`) or a prefix (`chain.`)
TOKEN = re.compile(r"(?<![\w.])(?:agent|chain|schedule|submission)\.(?:\*|[a-z][A-Za-z]*)?"
                   r"(?![\w.])")
# the look-alikes that are no kinds: Steep's configuration keys (not implemented) ...
NOT_KINDS = {"steepy/config/model.py": {"agent.enabled", "agent.id", "agent.autoShutdownTimeout",
                                        "agent.busyTimeout"},
             # sentences of `steepy --help' that end with "chain." or "submission."
             "steepy/cli/group.py": {"chain.", "submission."}}
# ... and webhook patterns in messages and examples (checked to be valid patterns)
PATTERNS = {"steepy/events/webhooks.py": {FINISHED, "chain.*"},
            "steepy/ui/pages/schedules.py": {"submission.status", "chain.finished"}}
# the kinds as stored in databases and shown by the API: never renamed
STORED = {
    "agent.arrived", "agent.left", "chain.agentLost", "chain.attemptFailed",
    "chain.attemptRequeued", "chain.cancelRequested", "chain.fallbackStarted", "chain.finished",
    "chain.priority", "chain.progress", "chain.registered", "chain.requeued", "chain.resumed",
    "chain.retryScheduled", "chain.reused", "chain.started", "chain.waiting", "schedule.fired",
    "schedule.skipped", "submission.cancelRequested", "submission.priority",
    "submission.resumed", "submission.retried", "submission.skipped", "submission.status"}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def kind_literals(path) -> list[tuple[int, str]]:
    """(line, token) of every kind-looking token in a string literal of `path` (docstrings
    and template names left out)."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _docstrings(tree)
    return sorted((node.lineno, token) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in skip and not node.value.endswith(".html")
                  for token in TOKEN.findall(node.value))


def test_no_kind_is_a_string_literal_outside_the_catalogue() -> None:
    found = {}
    for path in sorted(STEEPY.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name.startswith("steepy/events/"):
            continue
        allowed = NOT_KINDS.get(name, set()) | PATTERNS.get(name, set())
        hits = [f"{line}: {token}" for line, token in kind_literals(path) if token not in allowed]
        if hits:
            found[name] = hits
    assert found == {}, "write these with steepy.events (EventKind, an event's dataclass)"
    # the look-alikes allowed are what they are said to be, and still there
    for name, tokens in NOT_KINDS.items():
        assert tokens <= {t for _, t in kind_literals(ROOT / name)}
        assert not tokens & set(EventKind)
    for name, tokens in PATTERNS.items():
        assert tokens <= {t for _, t in kind_literals(ROOT / name)}
        assert all(parse_pattern(t) for t in tokens)


def test_the_scan_finds_what_it_looks_for(tmp_path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('"""chain.finished in a docstring"""\nA = "chain.started"\n'
                     'B = f"x {1} chain.*"\nC = "submission.,agent."\nD = "agent.html"\n'
                     'E = "steepy.events"\n')
    assert kind_literals(probe) == [(2, "chain.started"), (3, "chain.*"), (4, "agent."),
                                    (4, "submission.")]


def test_live_pages_name_their_kinds_in_code() -> None:
    """Which events refresh a page is said in its Python module (scanned above), not in its
    template."""
    for template in sorted((STEEPY / "ui" / "templates").glob("*.html")):
        for value in re.findall(r'data-live-kinds="([^"]*)"', template.read_text()):
            assert value == "{{ live_kinds }}", template.name


def test_the_kinds_stored_keep_their_names() -> None:
    assert {str(k) for k in EventKind} == STORED
    assert all(isinstance(k, str) and k == k.value for k in EventKind)


def test_each_kind_has_a_description_and_declared_fields() -> None:
    assert set(CATALOGUE) == set(EventKind)
    for kind in EventKind:
        cls = kind.event
        assert cls.kind is kind and issubclass(cls, Event)
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        assert kind.description and "\n" not in kind.description, kind
        assert kind.description.endswith("."), kind
        names = [s.name for s in kind.fields]
        assert len(set(names)) == len(names)
        for spec in kind.fields:
            assert re.fullmatch(r"[a-z][A-Za-z]*", spec.name), (kind, spec.name)
            assert spec.doc and spec.type, (kind, spec.name)
    assert {k.group for k in EventKind} == {"agent", "chain", "schedule", "submission"}
    assert kinds("agent") == (EventKind.AGENT_ARRIVED, EventKind.AGENT_LEFT)
    with pytest.raises(ValueError, match="no kind of event is in group attempt"):
        kinds("attempt")


def test_an_undeclared_field_fails_when_the_event_is_built() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'exit_code'"):
        ChainStarted(run=1, agent="a1", exit_code=3)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'agent'"):
        ChainStarted(run=1)
    with pytest.raises(TypeError, match="`chain.started' has no field 'exitCode'"):
        EventKind.CHAIN_STARTED.build({"run": 1, "agent": "a1", "exitCode": 3})
    with pytest.raises(dataclasses.FrozenInstanceError):
        ChainStarted(run=1, agent="a1").run = 2  # type: ignore[misc]


def test_data_is_named_as_the_api_shows_it() -> None:
    at = datetime(2026, 11, 27, 9, 30, tzinfo=timezone.utc)
    event = ChainFinished(run=2, status="PAUSED", error_message="boom", resume_at=at)
    assert event.data() == {"run": 2, "status": "PAUSED", "errorMessage": "boom",
                            "resumeAt": "2026-11-27T09:30:00Z"}
    assert EventKind.CHAIN_FINISHED.build(
        {"run": 2, "status": "PAUSED", "errorMessage": "boom", "resumeAt": at}) == event
    assert EventKind.CHAIN_RESUMED.build({}).data() == {}


def test_an_event_written_is_read_back_with_its_kind_and_fields(tmp_path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'db'}")
    registry.requests.add_submission(Submission(id="s1", workflow=Workflow()))
    registry.queue.add_event("s1", ChainWaiting(reason="no agent offers gpu", chains=2))
    first, second = registry.views.events("s1")
    assert (first["kind"], first["status"]) == (EventKind.SUBMISSION_STATUS, "ACCEPTED")
    assert {k: v for k, v in second.items() if k not in ("id", "time")} == {
        "kind": "chain.waiting", "reason": "no agent offers gpu", "chains": 2}


def test_the_reference_page_is_current() -> None:
    page = ROOT / PAGE
    assert page.exists() and page.read_text() == markdown(), (
        f"{PAGE} is out of date: run `.venv/bin/{COMMAND}`")
    for kind in EventKind:
        assert f"## {kind}\n\n{kind.description}\n" in markdown()


def test_python_m_steepy_events_writes_the_page(tmp_path, monkeypatch, capsys) -> None:
    target = tmp_path / "events.md"
    monkeypatch.setattr(sys, "argv", ["steepy.events", str(target)])
    with pytest.raises(SystemExit) as ended:
        runpy.run_module("steepy.events", run_name="__main__")
    assert ended.value.code == 0 and target.read_text() == markdown()
    monkeypatch.setattr(sys, "argv", ["steepy.events"])
    with pytest.raises(SystemExit):
        runpy.run_module("steepy.events", run_name="__main__")
    assert capsys.readouterr().out == markdown()


def test_the_ui_has_words_for_every_kind() -> None:
    assert set(EventKind) - set(DESCRIBE) == set()
    assert HIDDEN <= set(EventKind)
    for kind in EventKind:  # no field at all: still words, no exception
        line = describe({"id": 1, "time": "t", "kind": str(kind)})
        assert line.text and line.kind == kind


def test_the_event_bus_reads_the_field_the_catalogue_declares() -> None:
    """A paused chain cancelled: its previous status is the event's `previous`."""
    event = {"id": 1, "time": "t", "kind": "chain.cancelRequested", "submissionId": "s1",
             "chainId": "c1", **EventKind.CHAIN_CANCEL_REQUESTED.build(
                 {"previous": "PAUSED", "status": "CANCELLED"}).data(),
             "chainStatus": "CANCELLED"}
    [message] = translate([event], Memory())
    assert message.address == PROCESS_CHAIN_STATUS_CHANGED
    assert message.body["previousStatus"] == "PAUSED"


@pytest.mark.process
async def test_agents_report_under_the_timelines_names(tmp_path) -> None:
    """What an agent reports builds as an event of its kind: the scheduler writes it as it
    is (a requeued attempt, failed attempts, a retry, a fallback, progress)."""
    from steepy.agent import AgentConfig, LocalAgent
    from steepy.model.policies import RetryPolicy
    from steepy.model.processchain import ProcessChain
    from tests.agent.harness import tool_executable

    reported: list = []
    policy = RetryPolicy.from_json({"maxAttempts": 2, "delay": 10,
                                    "requeue": {"exitCodes": [75], "delay": 10}})
    main, _ = tool_executable("act", "primary", [{"fail": {"exit_code": 75}},
                                                 {"fail": {"exit_code": 3}}], tmp_path,
                              retries=policy)
    fallback, _ = tool_executable("act.fallback", "stand-in", ["return"], tmp_path)
    fallback.fallback_for = "act"
    agent = LocalAgent("agent-1", AgentConfig(log_dir=tmp_path / "logs"),
                       on_event=lambda kind, data: reported.append((kind, data)))
    outcome = await agent.execute(ProcessChain("c", [main, fallback]))
    assert outcome.status == "SUCCESS", outcome.error_message
    assert [k for k, _ in reported if k != EventKind.CHAIN_PROGRESS] == [
        "chain.attemptRequeued", "chain.attemptFailed", "chain.retryScheduled",
        "chain.attemptFailed", "chain.fallbackStarted"]
    for kind, data in reported:
        assert isinstance(kind, EventKind) and data["chainId"] == "c"
        kind.build({k: v for k, v in data.items() if k != "chainId"})
