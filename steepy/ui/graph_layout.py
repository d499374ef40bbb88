"""Where the UI's graph view draws each node: a layered layout computed here, no script.

Layers by longest path (a node sits one layer below the lowest node it reads from; a
for-each's body below the for-each), feedback edges left out so cycles cannot occur. Within
a layer, nodes are ordered by the mean position of their neighbours in the layer above, then
in the layer below, a few sweeps (the barycenter heuristic), which removes most crossings of
small graphs. Coordinates are in SVG user units.
"""

from __future__ import annotations

from dataclasses import dataclass

from steepy.generator.graph import FEEDBACK, ActionGraph

NODE_W, NODE_H = 200, 64
GAP_X, GAP_Y = 40, 64
MARGIN = 24
SWEEPS = 4


@dataclass
class Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2


@dataclass
class Layout:
    boxes: dict[str, Box]  # node id -> where it is drawn
    layers: list[list[str]]
    width: float
    height: float


def forward_edges(graph: ActionGraph) -> list[tuple[str, str]]:
    """The edges that point down: data and dependsOn edges, and a for-each to each node of
    its body; an edge that would close a cycle (a bad dependsOn) is dropped."""
    edges = [(e.source, e.target) for e in graph.edges if e.kind != FEEDBACK]
    edges += [(n.parent, n.id) for n in graph.nodes if n.parent is not None]
    known = {n.id for n in graph.nodes}
    below: dict[str, list[str]] = {}
    for source, target in dict.fromkeys(edges):
        if source in known and target in known:
            below.setdefault(source, []).append(target)
    kept: list[tuple[str, str]] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(node: str) -> None:
        stack = [(node, iter(below.get(node, [])))]
        state[node] = 1
        while stack:
            current, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[current] = 2
                stack.pop()
            elif state.get(child) == 1:
                continue  # closes a cycle
            else:
                kept.append((current, child))
                if child not in state:
                    state[child] = 1
                    stack.append((child, iter(below.get(child, []))))

    for n in graph.nodes:
        if n.id not in state:
            visit(n.id)
    return kept


def assign_layers(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from a source: each node one layer below its lowest predecessor."""
    above: dict[str, list[str]] = {n: [] for n in nodes}
    for source, target in edges:
        above[target].append(source)
    layer: dict[str, int] = {}
    for node in nodes:
        stack = [node]
        while stack:
            current = stack[-1]
            if current in layer:
                stack.pop()
                continue
            missing = [p for p in above[current] if p not in layer]
            if missing:
                stack.extend(missing)
                continue
            layer[current] = 1 + max((layer[p] for p in above[current]), default=-1)
            stack.pop()
    return layer


def order_layers(layer: dict[str, int], edges: list[tuple[str, str]],
                 nodes: list[str]) -> list[list[str]]:
    """Nodes of each layer, ordered by the barycenter of their neighbours, sweeping down and
    up `SWEEPS` times; ties keep the workflow's order."""
    rows: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for node in nodes:
        rows[layer[node]].append(node)
    up: dict[str, list[str]] = {n: [] for n in nodes}
    down: dict[str, list[str]] = {n: [] for n in nodes}
    for source, target in edges:
        down[source].append(target)
        up[target].append(source)
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, len(rows)) if downward else range(len(rows) - 2, -1, -1)
        for i in indices:
            reference = rows[i - 1] if downward else rows[i + 1]
            position = {n: p for p, n in enumerate(reference)}
            neighbours = up if downward else down
            current = {n: p for p, n in enumerate(rows[i])}

            def key(node: str) -> float:
                near = [position[m] for m in neighbours[node] if m in position]
                return sum(near) / len(near) if near else current[node]

            rows[i].sort(key=key)
    return rows


def layout(graph: ActionGraph) -> Layout:
    nodes = [n.id for n in graph.nodes]
    edges = forward_edges(graph)
    rows = order_layers(assign_layers(nodes, edges), edges, nodes)
    widest = max((len(r) for r in rows), default=0)
    width = 2 * MARGIN + widest * NODE_W + max(0, widest - 1) * GAP_X
    boxes: dict[str, Box] = {}
    for depth, row in enumerate(rows):
        row_width = len(row) * NODE_W + max(0, len(row) - 1) * GAP_X
        left = (width - row_width) / 2
        for i, node in enumerate(row):
            boxes[node] = Box(left + i * (NODE_W + GAP_X), MARGIN + depth * (NODE_H + GAP_Y),
                              NODE_W, NODE_H)
    height = 2 * MARGIN + len(rows) * NODE_H + max(0, len(rows) - 1) * GAP_Y
    return Layout(boxes, rows, max(width, 2 * MARGIN + NODE_W), max(height, 2 * MARGIN))
