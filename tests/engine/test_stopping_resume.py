"""A stopped chain across a controller's crash (extensions 10, 11): the stop is stored with
the chain's end, so a controller that takes over from the stored state skips the same actions,
and the skips are recorded once, together with the state that knows them."""

from __future__ import annotations

import pytest

from steepy.engine.controller import Controller
from steepy.generator import ProcessChainGenerator
from steepy.documents.loading import parse_workflow
from steepy.model import Submission
from steepy.model.stopping import stop_marker
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import Registry, open_registry
from steepy.registry.writes import RoundWrite
from tests.engine.test_stopping import SH

WORKFLOW = """
api: 4.7.0
vars: [{id: x, value: go}]
actions:
  - {id: a, type: execute, service: sh, inputs: [{id: script, value: 'true'}],
     outputs: [{id: out, var: va}]}
  - {id: b, type: execute, service: sh, inputs: [{id: script, var: x}, {id: in, var: va}]}
  - {id: c, type: execute, service: sh, inputs: [{id: script, var: x}], dependsOn: [b]}
"""


@pytest.fixture
def registry(database_url: str) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


def _generator(submission: Submission, state: dict | None) -> ProcessChainGenerator:
    generator = ProcessChainGenerator(submission.workflow, "/tmp", "/out", {"sh": SH})
    if state is not None:
        generator.load_state(state)
    return generator


def test_a_controller_that_takes_over_skips_the_same_actions_once(registry: Registry) -> None:
    workflow, _ = parse_workflow(WORKFLOW)
    submission = Submission(id="s", workflow=workflow, name="s")
    registry.requests.add_submission(submission)
    generator = _generator(submission, None)
    (chain,) = generator.generate()
    assert [e.id for e in chain.executables] == ["a", "b", "c"]
    registry.submissions.controller_round("s", RoundWrite(
        1, chains=[chain], save_state=True, state=generator.persist_state()))
    _, run = registry.queue.claim_chain("agent")
    registry.queue.finish_run(chain.id, run, "SUCCESS", CS.SUCCESS,
                              results=stop_marker("a", "the tool pruned its chain", "a"))
    view = registry.submissions.controller_round("s")

    # the controller dies before it stores its round; the next one does the same round
    (state, _), writes = registry.submissions.saved_state("s"), []
    for _attempt in range(2):
        writes.append(Controller._step(_generator(submission, state), submission, view, 2,
                                       False))
    needs_a = "needs `a', which ended its chain early (the tool pruned its chain)"
    assert writes[0].skipped == writes[1].skipped == [("b", needs_a), ("c", needs_a)]
    assert writes[1].save_state and writes[1].chains == []
    registry.submissions.controller_round("s", writes[1])

    skipped = [e for e in registry.views.events("s") if e["kind"] == "submission.skipped"]
    assert [e["actionId"] for e in skipped] == ["b", "c"]
    state, _ = registry.submissions.saved_state("s")
    assert _generator(submission, state).is_finished()
    assert registry.views.skipped_actions("s")["c"] == needs_a
