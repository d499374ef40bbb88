"""A workflow as a graph of actions and variables, and a plan as a graph of process chains."""

from __future__ import annotations

from steepy.generator import simulate
from steepy.generator.graph import (DATA, DEPENDS, FEEDBACK, action_graph, action_of,
                                    chain_graph)
from steepy.model import Workflow
from steepy.model.ids import CounterIds
from tests.generator.test_generator import SERVICES, execute

WORKFLOW = {
    "api": "4.7.0", "name": "nested",
    "vars": [{"id": "src", "value": ["a", "b"]}],
    "actions": [
        execute("first", "src", "copies"),
        {"id": "outer", "type": "for", "input": "copies", "enumerator": "c",
         "output": "all", "yieldToOutput": "inner_out", "actions": [
             {"id": "inner", "type": "for", "input": "c", "enumerator": "d",
              "output": "inner_out", "yieldToOutput": "leaf_out", "yieldToInput": "again",
              "actions": [execute("leaf", "d", "leaf_out"), execute("redo", "d", "again")]}]},
        execute("last", "all", "end", "join"),
        {"id": "macro", "type": "include", "macro": "m", "dependsOn": ["first"],
         "inputs": [{"id": "i", "value": 1}]},
        {**execute("other", "src", "x"), "dependsOn": ["last"],
         "fallback": {"service": "cp", "inputs": [{"id": "i", "var": "end"}],
                      "outputs": [{"id": "o", "var": "x"}]}},
    ]}


def test_nodes_keep_the_workflow_order_and_their_for_each() -> None:
    graph = action_graph(Workflow.from_json(WORKFLOW))
    assert [(n.id, n.kind, n.parent) for n in graph.nodes] == [
        ("first", "execute", None), ("outer", "for", None), ("inner", "for", "outer"),
        ("leaf", "execute", "inner"), ("redo", "execute", "inner"), ("last", "execute", None),
        ("macro", "include", None), ("other", "execute", None)]
    assert graph.nodes[1].label == "for each c in copies"
    assert graph.nodes[6].lines == ["macro", "include m"]
    assert graph.ancestors("leaf") == ["inner", "outer"]


def test_edges_are_variables_from_writer_to_reader() -> None:
    graph = action_graph(Workflow.from_json(WORKFLOW))
    edges = {(e.source, e.target, e.label, e.kind) for e in graph.edges}
    assert edges == {
        ("first", "outer", "copies", DATA),
        ("outer", "inner", "c", DATA),  # the outer enumerator is the inner input
        ("inner", "leaf", "d", DATA), ("inner", "redo", "d", DATA),
        ("leaf", "last", "all", DATA),  # what the bodies yield is the for-each's output
        ("redo", "inner", "again", FEEDBACK),
        ("last", "other", "end", DATA),  # read by the fallback; dependsOn adds nothing
        ("first", "macro", None, DEPENDS),
    }


def test_executable_ids_lead_back_to_their_action() -> None:
    assert action_of("first") == "first"
    assert action_of("leaf$3$0") == "leaf"
    assert action_of("other.fallback") == "other"
    assert action_of("$macro$m$step$2") == "macro"


def test_chain_graph_links_a_directory_to_the_files_read_inside_it() -> None:
    from tests.generator.test_generator import param, service

    split = service("split", param("i", "input"), param("o", "output", dataType="directory"))
    workflow = Workflow.from_json({
        "api": "4.7.0", "vars": [{"id": "src", "value": "in.txt"}],
        "actions": [execute("split", "src", "parts", "split"),
                    {"id": "each", "type": "for", "input": "parts", "enumerator": "p",
                     "output": "copies", "yieldToOutput": "copy",
                     "actions": [execute("cp", "p", "copy")]},
                    execute("join", "copies", "joined", "join")]})
    steps = simulate(workflow, {**SERVICES, "split": split}, id_generator=CounterIds())
    graph = chain_graph(steps)
    labels = {n.id: n.label for n in graph.nodes}
    assert sorted(labels.values()) == ["cp$0", "join", "split"]
    assert {(labels[e.source], labels[e.target], e.label) for e in graph.edges} == {
        ("split", "cp$0", "p$0"), ("cp$0", "join", "copies")}
