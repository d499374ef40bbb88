"""Chains that reused earlier work (extensions 15) in the UI, read as HTML from the app in
this process: their own bar colour in the timeline chart and their own group in the
workflow page's chain list, each naming the earlier chain; a status colour in the graph."""

from __future__ import annotations

import re
import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.http import ApiContext, create_app
from steepy.model import ExecuteAction, ProcessChain, Submission, Workflow
from steepy.model.processchain import Executable
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import open_registry
from steepy.registry.cache import CacheWrite, Reused
from steepy.registry.writes import RoundWrite
from tests.registry.earlier import earlier_work
from tests.ui.test_site import HTML


def _chain(cid: str, service: str) -> ProcessChain:
    return ProcessChain(cid, [Executable(f"{cid}-e", service, service)])


@pytest.fixture
def app(tmp_path):
    """Submission s: chain `old' reused the work of chain c0 of submission s0; chain `new'
    ran and succeeded."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    actions = [ExecuteAction("old-e", "sort"), ExecuteAction("new-e", "cat")]
    earlier_work(registry, "s0", "c0")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(actions=actions)))
    registry.submissions.controller_round("s", RoundWrite(
        1, chains=[_chain("old", "sort"), _chain("new", "cat")], save_state=True, state={},
        cache=CacheWrite(reused=[Reused("old", {}, "s0", "c0")])))
    assert registry.queue.claim_chain("agent-1") is not None  # `new', the one left
    registry.queue.finish_run("new", 1, "SUCCESS", CS.SUCCESS, results={})
    with TestClient(create_app(ApiContext(registry, log_dir=tmp_path / "logs"))) as client:
        yield client


def test_the_timeline_draws_a_reused_chain_in_its_own_colour(app) -> None:
    html = app.get("/workflows/s/timeline", headers=HTML).text
    assert "2 process chains, 1 run, 1 reused" in html
    old = html.split('<div class="tl-row" data-chain="old">')[1].split('<div class="tl-row"')[0]
    assert re.search(r'<div class="tl-run k-reused" style="left: [\d.]+%" title="old reused '
                     r'the work of chain c0 \(submission s0\) at [^"]+" data-reused>', old)
    assert "not started" not in old
    assert '<span class="tl-swatch k-reused"></span>reused earlier work' in html
    css = app.get("/ui/static/timeline.css").text + app.get("/ui/static/steepy.css").text
    assert ".tl-run.k-reused { min-width: 4.5rem; border-color: var(--reuse)" in css
    assert re.search(r"--reuse: #\w+; --reuse-bg: #\w+;", css)


def test_the_workflow_page_lists_reused_chains_as_a_group_of_their_own(app) -> None:
    html = app.get("/workflows/s", headers=HTML).text
    groups = re.findall(r'<section class="chain-group" data-status="(\w+)">\s*<h3><span '
                        r'class="badge ([\w-]+)">', html)
    assert groups == [("SUCCESS", "status-success"), ("REUSED", "status-reused")]
    reused = html.split('data-status="REUSED"')[1].split("</section>")[0]
    assert 'href="/processchains/old"' in reused and 'href="/processchains/new"' not in reused
    assert ('the work of <a class="mono" href="/processchains/c0">c0</a> (submission '
            '<a class="mono" href="/workflows/s0">s0</a>)') in reused
    assert re.search(r'data-kind="chain.reused">\s*<span class="mark status-reused"', html)


def test_the_graph_colours_an_action_whose_chains_were_reused(app) -> None:
    html = app.get("/workflows/s/graph", headers=HTML).text
    nodes = re.findall(r'<g class="g-node k-execute s-(\w+)" data-node="([\w-]+)"', html)
    assert sorted(nodes) == [("reused", "old-e"), ("success", "new-e")]
    assert '<span class="g-swatch s-reused"></span>reused earlier work' in html
