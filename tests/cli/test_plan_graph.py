"""`steepy plan --format text|dot|mermaid [--chains]`: the graph of a workflow's actions or of
its process chains. Graphviz is not installed where the tests run, so the DOT is read by a
parser of DOT's grammar below (quoted IDs, attribute lists, subgraphs, edges), and the
Mermaid by the line forms of a flowchart."""

from __future__ import annotations

import re

from click.testing import CliRunner

from steepy.cli import main
from steepy.cli.graphs import dot_quote, mermaid_text, to_dot, to_mermaid
from steepy.generator.graph import ActionGraph, GraphEdge, GraphNode
from tests.conftest import ROOT

FAN_OUT = str(ROOT / "workflows" / "fan-out.yaml")
SERVICES = ["--services", str(ROOT / "services")]

# -- a reader of DOT's grammar -------------------------------------------------------------------

TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(->|--|[{}\[\];,=])'
                   r'|([A-Za-z_][\w.]*|-?\d+(?:\.\d+)?))')


def _tokens(text: str) -> list[str]:
    out, at = [], 0
    while at < len(text.rstrip()):
        found = TOKEN.match(text, at)
        assert found, f"not DOT at {text[at:at + 30]!r}"
        out.append(found.group(0).strip())
        at = found.end()
    return out


def _id(token: str) -> str:
    assert token[0] == '"' or re.fullmatch(r"[A-Za-z_][\w.]*|-?\d+(\.\d+)?", token), token
    if token[0] != '"':
        return token
    # `\"` is DOT's one escape; `\\` and `\n` stay for the label (a backslash, a new line)
    return re.sub(r'\\(["\\])', lambda m: m.group(1), token[1:-1])


class Dot:
    """Parses `digraph ID { stmt_list }`; collects nodes, edges (with attributes), clusters."""

    def __init__(self, text: str):
        self.tokens, self.at = _tokens(text), 0
        self.nodes: dict[str, dict] = {}
        self.edges: list[tuple[str, str, dict]] = []
        self.clusters: dict[str, list[str]] = {}
        assert self.take() == "digraph"
        self.name = _id(self.take())
        self.block(None)
        assert self.at == len(self.tokens), "text after the graph"

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        assert expected is None or token == expected, (token, expected)
        self.at += 1
        return token

    def block(self, cluster: str | None) -> None:
        self.take("{")
        while self.tokens[self.at] != "}":
            self.statement(cluster)
            if self.tokens[self.at] == ";":
                self.take()
        self.take("}")

    def attributes(self) -> dict:
        found: dict = {}
        self.take("[")
        while self.tokens[self.at] != "]":
            key = _id(self.take())
            self.take("=")
            found[key] = _id(self.take())
            if self.tokens[self.at] in ",;":
                self.take()
        self.take("]")
        return found

    def statement(self, cluster: str | None) -> None:
        first = self.take()
        if first == "subgraph":
            name = _id(self.take())
            self.clusters[name] = []
            self.block(name)
        elif first in ("node", "edge", "graph"):
            self.attributes()
        elif self.tokens[self.at] == "=":
            self.take()
            _id(self.take())
        elif self.tokens[self.at] == "->":
            self.take()
            target = _id(self.take())
            attrs = self.attributes() if self.tokens[self.at] == "[" else {}
            self.edges.append((_id(first), target, attrs))
        else:
            self.nodes[_id(first)] = self.attributes() if self.tokens[self.at] == "[" else {}
            if cluster is not None:
                self.clusters[cluster].append(_id(first))


# -- Mermaid's flowchart lines -------------------------------------------------------------------

LABEL = r'"[^"]*"'
NODE = re.compile(rf'^(\s*)(n\d+)(\[{LABEL}\]|\{{\{{{LABEL}\}}\}}|\[\[{LABEL}\]\])$')
SUBGRAPH = re.compile(rf'^(\s*)subgraph (n\d+_body) \[{LABEL}\]$')
EDGE = re.compile(rf'^\s*(n\d+) (-->|-\.->)(\|{LABEL}\|)? (n\d+)$')


def check_mermaid(text: str) -> tuple[set[str], list[tuple[str, str, str]]]:
    """Every line a known form, subgraphs closed, edges between declared nodes; returns the
    nodes and edges (source, arrow, target)."""
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    nodes: set[str] = set()
    edges = []
    depth = 0
    for line in lines[1:]:
        if (m := NODE.match(line)) is not None:
            nodes.add(m.group(2))
        elif SUBGRAPH.match(line):
            depth += 1
        elif line.strip() == "end":
            depth -= 1
            assert depth >= 0
        elif (m := EDGE.match(line)) is not None:
            assert {m.group(1), m.group(4)} <= nodes
            edges.append((m.group(1), m.group(2), m.group(4)))
        else:
            raise AssertionError(f"not a flowchart line: {line!r}")
    assert depth == 0
    return nodes, edges


def _plan(*args: str) -> str:
    result = CliRunner().invoke(main, ["plan", FAN_OUT, *SERVICES, *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_dot_of_a_for_each_is_a_cluster_and_edges_carry_the_variables() -> None:
    text = _plan("--format", "dot")
    dot = Dot(text)
    assert dot.name == "Fan-out over split parts, fan-in with cat"
    assert list(dot.nodes) == ["split_numbers", "sort_each_part", "sort_part", "join_parts"]
    assert dot.clusters == {"cluster_sort_each_part": ["sort_part"]}
    assert [(a, b, e.get("label")) for a, b, e in dot.edges] == [
        ("split_numbers", "sort_each_part", "parts"), ("sort_each_part", "sort_part", "part"),
        ("sort_part", "join_parts", "sorted_parts")]
    assert dot.nodes["join_parts"]["label"] == "join_parts\\ncat"
    assert '  "sort_part" -> "join_parts" [label="sorted_parts"];' in text.splitlines()


def test_mermaid_of_the_same_workflow() -> None:
    text = _plan("--format", "mermaid")
    nodes, edges = check_mermaid(text)
    assert len(nodes) == 4 and len(edges) == 3
    assert '  n1{{"sort_each_part<br/>for each part in parts"}}' in text.splitlines()
    assert '  n2 -->|"sorted_parts"| n3' in text.splitlines()


def test_text_lists_actions_then_edges() -> None:
    assert _plan("--format", "text").splitlines() == [
        "split_numbers (split)", "sort_each_part (for each part in parts)", "  sort_part (sort)",
        "join_parts (cat)", "", "split_numbers -> sort_each_part  [parts]",
        "sort_each_part -> sort_part  [part]", "sort_part -> join_parts  [sorted_parts]"]


def test_chains_of_the_whole_plan_with_their_dependencies() -> None:
    dot = Dot(_plan("--format", "dot", "--chains", "--all"))
    # a simulated directory holds one file: split, one part sorted, join
    labels = {node: attrs["label"].split("\\n")[1] for node, attrs in dot.nodes.items()}
    assert sorted(labels.values()) == ["join_parts", "sort_part$0", "split_numbers"]
    assert [(labels[a], labels[b], e["label"]) for a, b, e in dot.edges] == [
        ("split_numbers", "sort_part$0", "part$0"), ("sort_part$0", "join_parts", "sorted_parts")]
    nodes, mermaid_edges = check_mermaid(_plan("--format", "mermaid", "--chains", "--all"))
    assert len(nodes) == 3 and len(mermaid_edges) == 2
    first_step = Dot(_plan("--format", "dot", "--chains"))  # without --all: the first step
    assert len(first_step.nodes) == 1 and first_step.edges == []


def test_ids_and_labels_with_quotes_and_markup_are_escaped() -> None:
    odd = 'a "quoted" \\ id\n<b>#1|x'
    graph = ActionGraph('say "hi"', [GraphNode(odd, "execute", "svc"),
                                     GraphNode("plain", "for", "for each x in y")],
                        [GraphEdge(odd, "plain", 'v"1|<')])
    dot = Dot(to_dot(graph))
    assert dot.name == 'say "hi"' and odd.replace("\n", "\\n") in dot.nodes
    assert dot_quote('a"b\\') == '"a\\"b\\\\"'
    nodes, edges = check_mermaid(to_mermaid(graph))
    assert nodes == {"n0", "n1"} and edges == [("n0", "-->", "n1")]
    assert mermaid_text('"<#|>') == "#quot;#lt;#35;#124;#gt;"


def test_chains_alone_or_with_json_is_refused() -> None:
    result = CliRunner().invoke(main, ["plan", FAN_OUT, *SERVICES, "--chains"])
    assert result.exit_code == 2
    assert "--chains: draws a graph: give --format text, dot or mermaid too" in result.output
    result = CliRunner().invoke(main, ["plan", FAN_OUT, *SERVICES, "--format", "dot", "--json"])
    assert result.exit_code == 2 and "give one of them" in result.output
    assert "Traceback" not in result.output
