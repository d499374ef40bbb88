"""The graph view without a browser: the layered layout, the SVG (a for-each of 1,000 items is
one node with its counts), and the page read from the app in this process."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import pytest
from sqlalchemy import update

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.generator.graph import ActionGraph, GraphEdge, GraphNode, action_graph
from steepy.http import ApiContext, create_app
from steepy.model import Executable, ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from steepy.registry.tables import process_chains
from steepy.ui.graph_layout import assign_layers, forward_edges, layout, order_layers
from steepy.ui.graph_svg import NodeState, render_svg
from tests.registry.chains import store_chains
from tests.ui.test_site import HTML

SVG = "{http://www.w3.org/2000/svg}"
FAN_OUT = {"api": "4.7.0", "name": "fan out", "vars": [{"id": "src", "value": "in.txt"}],
           "actions": [
               {"id": "split", "type": "execute", "service": "split",
                "inputs": [{"id": "i", "var": "src"}], "outputs": [{"id": "o", "var": "parts"}]},
               {"id": "each", "type": "for", "input": "parts", "enumerator": "p",
                "output": "done", "yieldToOutput": "one", "actions": [
                    {"id": "work", "type": "execute", "service": "sort",
                     "inputs": [{"id": "i", "var": "p"}],
                     "outputs": [{"id": "o", "var": "one"}]}]},
               {"id": "join", "type": "execute", "service": "cat",
                "inputs": [{"id": "i", "var": "done"}], "outputs": [{"id": "o", "var": "all"}]}]}


def _graph(names: str, edges: str) -> ActionGraph:
    return ActionGraph("g", [GraphNode(n, "execute", n) for n in names.split()],
                       [GraphEdge(e[0], e[1], e) for e in edges.split()])


def test_layers_follow_the_longest_path() -> None:
    graph = _graph("a b c d", "ab bc ac cd")
    assert assign_layers([n.id for n in graph.nodes], forward_edges(graph)) == {
        "a": 0, "b": 1, "c": 2, "d": 3}


def test_a_cycle_of_depends_on_is_broken_not_followed() -> None:
    graph = _graph("a b c", "ab bc ca")
    edges = forward_edges(graph)
    assert edges == [("a", "b"), ("b", "c")]
    assert [len(row) for row in layout(graph).layers] == [1, 1, 1]


def test_ordering_uncrosses_two_chains() -> None:
    # in workflow order the lower row is d c: the edges a-c and b-d would cross
    graph = _graph("a b d c", "ac bd")
    edges = forward_edges(graph)
    rows = order_layers(assign_layers([n.id for n in graph.nodes], edges), edges,
                        [n.id for n in graph.nodes])
    assert rows == [["a", "b"], ["c", "d"]]
    boxes = layout(graph).boxes
    assert boxes["a"].x < boxes["b"].x and boxes["c"].x < boxes["d"].x
    assert boxes["a"].y < boxes["c"].y


def test_a_for_each_of_a_thousand_items_is_one_node_with_counts() -> None:
    graph = action_graph(Workflow.from_json(FAN_OUT))
    states = {"split": NodeState(), "work": NodeState(), "each": NodeState()}
    states["split"].counts["SUCCESS"] = 1
    states["work"].counts.update({"SUCCESS": 990, "RUNNING": 8, "ERROR": 2})
    svg = render_svg(graph, states)
    root = ET.fromstring(svg)  # well-formed XML
    nodes = {g.get("data-node"): g for g in root.iter(f"{SVG}g") if g.get("data-node")}
    assert set(nodes) == {"split", "each", "work", "join"}
    work = nodes["work"]
    assert (work.get("data-total"), work.get("data-status")) == ("1000", "ERROR")
    assert "s-error" in work.get("class")
    texts = [t.text for t in work.iter(f"{SVG}text")]
    assert texts == ["work", "sort", "×1000: 990 done, 8 running, 2 failed"]
    assert len([r for r in work.iter(f"{SVG}rect") if "g-bar" in r.get("class")]) == 3
    assert nodes["join"].get("data-status") == "NONE"
    assert nodes["split"].get("data-status") == "SUCCESS"
    # its service is its id: said once
    assert [t.text for t in nodes["split"].iter(f"{SVG}text")] == ["split", "1 done"]
    edges = [(g.get("data-source"), g.get("data-target"), g.findtext(f"{SVG}text"))
             for g in root.iter(f"{SVG}g") if g.get("data-source")]
    assert edges == [("split", "each", "parts"), ("each", "work", "p"), ("work", "join", "done")]
    assert len(svg) < 20_000  # not a thousand nodes


def test_node_status_needs_a_look_first() -> None:
    state = NodeState()
    state.counts.update({"SUCCESS": 3, "RUNNING": 1})
    assert state.status == "RUNNING" and state.summary() == "3 done, 1 running"
    state.counts["PAUSED"] = 1
    assert state.status == "RUNNING" and "1 retrying" in state.summary()
    assert NodeState().status == "NONE"


@pytest.fixture
def app(tmp_path):
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    registry.requests.add_submission(Submission(id="s1", workflow=Workflow.from_json(FAN_OUT),
                                                name="fan out"))
    chains = [ProcessChain(id="c-split", executables=[Executable("split", "split", "split")])]
    chains += [ProcessChain(id=f"c{k}", executables=[Executable(f"work${k}", "sort", "sort")])
               for k in range(1000)]
    store_chains(registry, "s1", chains)
    with registry.db.write() as conn:
        conn.execute(update(process_chains).where(process_chains.c.id != "c7")
                     .values(status="SUCCESS"))
        conn.execute(update(process_chains).where(process_chains.c.id == "c7")
                     .values(status="RUNNING"))
    with TestClient(create_app(ApiContext(registry, log_dir=tmp_path / "logs"))) as client:
        yield client


def test_the_graph_page_of_a_submission(app) -> None:
    response = app.get("/workflows/s1/graph")  # the UI's own path: any Accept
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "<h1>Graph of <a href=\"/workflows/s1\">fan out</a></h1>" in html
    assert 'data-live="s1" data-live-kinds="' in html and "data-live-region" in html
    assert 'href="/ui/static/graph.css' in html
    assert ('data-node="work" data-status="RUNNING" data-total="1000"' in html)
    assert "×1000: 999 done, 1 running" in html
    assert 'data-node="each" data-status="RUNNING" data-total="1000"' in html  # its body
    assert 'data-node="split" data-status="SUCCESS" data-total="1"' in html
    assert 'data-node="join" data-status="NONE" data-total="0"' in html
    page = app.get("/workflows/s1", headers=HTML).text
    assert 'href="/workflows/s1/graph">Graph</a>' in page
    assert app.get("/workflows/nope/graph").status_code == 404
