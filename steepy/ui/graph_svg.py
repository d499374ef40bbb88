"""The graph view's picture: an SVG of a workflow's actions, placed by graph_layout, each node
coloured by the status of its process chains.

A node stands for every chain that ran its action: the body of a for-each over 1,000 items is
one node `×1000` with its counts by status (and a bar of them), not 1,000 nodes. Colours come
from the page's CSS classes (`s-success`...), so dark mode applies.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from html import escape

from steepy.generator.graph import FEEDBACK, ActionGraph, GraphNode
from steepy.ui.graph_layout import Box, Layout, layout

# the status a node shows when its chains differ: the first of these that any of them has
# (REUSED: a SUCCESS chain that reused earlier work, extensions 15)
SHOWN_FIRST = ("ERROR", "RUNNING", "PAUSED", "REGISTERED", "CANCELLED", "SUCCESS", "REUSED")
WORDS = {"SUCCESS": "done", "ERROR": "failed", "RUNNING": "running", "PAUSED": "retrying",
         "REGISTERED": "waiting", "CANCELLED": "cancelled", "REUSED": "reused"}
MAX_CHARS = 26  # of a line in a node


@dataclass
class NodeState:
    """The chains of one node: how many have each status."""

    counts: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def status(self) -> str:
        """The node's colour: what needs a look first (a failure, then what still runs)."""
        return next((s for s in SHOWN_FIRST if self.counts.get(s)), "NONE")

    def summary(self) -> str:
        """`3 done, 1 running`, in the order of SHOWN_FIRST reversed (done first)."""
        return ", ".join(f"{self.counts[s]} {WORDS[s]}" for s in reversed(SHOWN_FIRST)
                         if self.counts.get(s))


def render_svg(graph: ActionGraph, states: dict[str, NodeState],
               placed: Layout | None = None) -> str:
    """The whole <svg>."""
    placed = placed or layout(graph)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" '
           f'viewBox="0 0 {placed.width:.0f} {placed.height:.0f}" width="{placed.width:.0f}" '
           f'height="{placed.height:.0f}" aria-label="Graph of the workflow\'s actions">',
           '<defs><marker id="g-arrow" viewBox="0 0 10 10" refX="10" refY="5" '
           'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
           '<path d="M0,0 L10,5 L0,10 z" class="g-arrowhead"/></marker></defs>']
    out += [_cluster(graph, node, placed.boxes) for node in graph.nodes if node.kind == "for"]
    out += [_edge(edge.source, edge.target, edge.label, edge.kind, placed.boxes)
            for edge in graph.edges if edge.source in placed.boxes and edge.target in placed.boxes]
    out += [_node(node, placed.boxes[node.id], states.get(node.id, NodeState()))
            for node in graph.nodes]
    out.append("</svg>")
    return "\n".join(out)


def _cluster(graph: ActionGraph, loop: GraphNode, boxes: dict[str, Box]) -> str:
    """A dashed frame around a for-each and everything in its body."""
    inside = [boxes[n.id] for n in graph.nodes if loop.id in graph.ancestors(n.id)]
    members = [boxes[loop.id]] + inside
    left = min(b.x for b in members) - 10
    top = min(b.y for b in members) - 10
    right = max(b.x + b.w for b in members) + 10
    bottom = max(b.y + b.h for b in members) + 10
    return (f'<rect class="g-cluster" x="{left:.0f}" y="{top:.0f}" width="{right - left:.0f}" '
            f'height="{bottom - top:.0f}" rx="10"/>')


def _edge(source: str, target: str, label: str | None, kind: str,
          boxes: dict[str, Box]) -> str:
    a, b = boxes[source], boxes[target]
    if kind == FEEDBACK or b.y <= a.y:  # back up: leave and enter at the sides
        x1, y1, x2, y2 = a.x + a.w, a.y + a.h / 2, b.x + b.w, b.y + b.h / 2
        bend = 60 + abs(y1 - y2) / 4
        path = (f"M{x1:.0f},{y1:.0f} C{x1 + bend:.0f},{y1:.0f} {x2 + bend:.0f},{y2:.0f} "
                f"{x2:.0f},{y2:.0f}")
        mid_x, mid_y = max(x1, x2) + bend * 0.75, (y1 + y2) / 2
    else:
        x1, y1, x2, y2 = a.cx, a.y + a.h, b.cx, b.y
        middle = (y1 + y2) / 2
        path = f"M{x1:.0f},{y1:.0f} C{x1:.0f},{middle:.0f} {x2:.0f},{middle:.0f} {x2:.0f},{y2:.0f}"
        mid_x, mid_y = (x1 + x2) / 2, middle
    title = f"{source} → {target}" + (f": {label}" if label else " (dependsOn)")
    text = ("" if label is None else
            f'<text class="g-edge-label" x="{mid_x:.0f}" y="{mid_y + 4:.0f}">'
            f"{escape(_short(label))}</text>")
    return (f'<g class="g-edge k-{kind}" data-source="{escape(source)}" '
            f'data-target="{escape(target)}"><title>{escape(title)}</title>'
            f'<path d="{path}" marker-end="url(#g-arrow)"/>{text}</g>')


def _node(node: GraphNode, box: Box, state: NodeState) -> str:
    status = state.status.lower()
    lines = [f'<text class="g-id" x="{box.x + 10:.0f}" y="{box.y + 20:.0f}">'
             f"{escape(_short(node.id))}</text>"]
    if node.label != node.id:
        lines.append(f'<text class="g-label" x="{box.x + 10:.0f}" y="{box.y + 36:.0f}">'
                     f"{escape(_short(node.label))}</text>")
    if state.total:
        many = f"×{state.total}: " if state.total > 1 else ""
        lines.append(f'<text class="g-counts" x="{box.x + 10:.0f}" y="{box.y + 52:.0f}">'
                     f"{escape(many + state.summary())}</text>")
    title = f"{node.id}: {node.label}" + (f" — {state.summary()}" if state.total else
                                          " — no process chain yet")
    body = (f'<rect class="g-box" x="{box.x:.0f}" y="{box.y:.0f}" width="{box.w:.0f}" '
            f'height="{box.h:.0f}" rx="{14 if node.kind == "for" else 6}"/>'
            + "".join(lines) + _bar(box, state))
    return (f'<g class="g-node k-{node.kind} s-{status}" data-node="{escape(node.id)}" '
            f'data-status="{escape(state.status)}" data-total="{state.total}">'
            f"<title>{escape(title)}</title>{body}</g>")


def _bar(box: Box, state: NodeState) -> str:
    """A strip along the node's bottom: one segment per status, as wide as its share."""
    if state.total < 2:
        return ""
    out, x = [], box.x + 1
    for status in reversed(SHOWN_FIRST):
        count = state.counts.get(status, 0)
        if count:
            width = (box.w - 2) * count / state.total
            out.append(f'<rect class="g-bar s-{status.lower()}" x="{x:.1f}" '
                       f'y="{box.y + box.h - 6:.0f}" width="{width:.1f}" height="5"/>')
            x += width
    return "".join(out)


def _short(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…"
