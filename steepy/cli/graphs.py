"""A graph of actions or process chains (steepy.generator.graph) as text, Graphviz DOT or a
Mermaid flowchart, for `steepy plan --format`. A for-each is a cluster (DOT) or a subgraph
(Mermaid) holding its body; dependsOn edges are dashed, fed-back variables dotted."""

from __future__ import annotations

from steepy.generator.graph import DEPENDS, FEEDBACK, ActionGraph, GraphEdge

FORMATS = ("text", "dot", "mermaid")
INDENT = "  "


def render(graph: ActionGraph, fmt: str) -> str:
    return {"text": to_text, "dot": to_dot, "mermaid": to_mermaid}[fmt](graph)


# -- text ----------------------------------------------------------------------------------------


def to_text(graph: ActionGraph) -> str:
    """One line per node (a for-each's body indented below it), then one line per edge."""
    lines: list[str] = []

    def nodes(parent: str | None, depth: int) -> None:
        for node in graph.children(parent):
            detail = "" if node.label == node.id else f" ({node.label})"
            lines.append(f"{INDENT * depth}{node.id}{detail}")
            nodes(node.id, depth + 1)

    nodes(None, 0)
    if graph.edges:
        lines.append("")
    for edge in graph.edges:
        what = {DEPENDS: "dependsOn", FEEDBACK: f"{edge.label}, fed back"}.get(edge.kind,
                                                                             edge.label)
        lines.append(f"{edge.source} -> {edge.target}  [{what}]")
    return "\n".join(lines)


# -- Graphviz DOT --------------------------------------------------------------------------------


def dot_quote(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, line breaks as `\\n`."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r", "").replace("\n", "\\n") + '"'


def _dot_label(lines: list[str]) -> str:
    return "\\n".join(dot_quote(line)[1:-1] for line in lines)


def to_dot(graph: ActionGraph) -> str:
    out = [f"digraph {dot_quote(graph.name or 'workflow')} {{", f"{INDENT}rankdir=TB;",
           f'{INDENT}node [shape=box, style=rounded, fontname="sans-serif"];',
           f'{INDENT}edge [fontname="sans-serif", fontsize=10];']
    _dot_nodes(graph, None, 1, out)
    for edge in graph.edges:
        out.append(f"{INDENT}{dot_quote(edge.source)} -> {dot_quote(edge.target)}"
                   f"{_dot_edge_attributes(edge)};")
    out.append("}")
    return "\n".join(out)


def _dot_nodes(graph: ActionGraph, parent: str | None, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    for node in graph.children(parent):
        shape = {"for": ", shape=hexagon", "include": ", shape=component"}.get(node.kind, "")
        out.append(f'{pad}{dot_quote(node.id)} [label="{_dot_label(node.lines)}"{shape}];')
        if node.kind == "for":
            out.append(f"{pad}subgraph {dot_quote('cluster_' + node.id)} {{")
            out.append(f"{pad}{INDENT}label={dot_quote(node.label)}; style=dashed;")
            _dot_nodes(graph, node.id, depth + 1, out)
            out.append(f"{pad}}}")


def _dot_edge_attributes(edge: GraphEdge) -> str:
    attributes = []
    if edge.label is not None:
        attributes.append(f"label={dot_quote(edge.label)}")
    if edge.kind == DEPENDS:
        attributes.append("style=dashed")
    elif edge.kind == FEEDBACK:
        attributes.append("style=dotted, constraint=false")
    return f" [{', '.join(attributes)}]" if attributes else ""


# -- Mermaid -------------------------------------------------------------------------------------


def mermaid_text(text: str) -> str:
    """Text for inside a Mermaid double-quoted label: quotes and the characters Mermaid reads
    as markup as entity codes (`#quot;`), line breaks as `<br/>`."""
    codes = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "|": "#124;",
             "`": "#96;", "\r": "", "\n": "<br/>"}
    return "".join(codes.get(c, c) for c in text)


def to_mermaid(graph: ActionGraph) -> str:
    """A `flowchart`; nodes get ids of their own (n0, n1...), since action ids may hold
    characters Mermaid does not take in an id."""
    ids = {node.id: f"n{i}" for i, node in enumerate(graph.nodes)}
    out = ["flowchart TD"]
    _mermaid_nodes(graph, None, 1, ids, out)
    for edge in graph.edges:
        arrow = {DEPENDS: "-.->", FEEDBACK: "-.->"}.get(edge.kind, "-->")
        label = "" if edge.label is None else f'|"{mermaid_text(edge.label)}"|'
        out.append(f"{INDENT}{ids[edge.source]} {arrow}{label} {ids[edge.target]}")
    return "\n".join(out)


def _mermaid_nodes(graph: ActionGraph, parent: str | None, depth: int, ids: dict[str, str],
                   out: list[str]) -> None:
    pad = INDENT * depth
    for node in graph.children(parent):
        text = "<br/>".join(mermaid_text(line) for line in node.lines)
        opening, closing = {"for": ("{{", "}}"), "include": ("[[", "]]")}.get(node.kind,
                                                                             ("[", "]"))
        out.append(f'{pad}{ids[node.id]}{opening}"{text}"{closing}')
        if node.kind == "for":
            out.append(f'{pad}subgraph {ids[node.id]}_body ["{mermaid_text(node.label)}"]')
            _mermaid_nodes(graph, node.id, depth + 1, ids, out)
            out.append(f"{pad}end")
