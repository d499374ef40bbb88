"""A submission's graph (`/workflows/{id}/graph`, the UI's alone): its workflow's actions and
the variables between them, each action coloured by the status of the process chains that ran
it (steepy.ui.graph_svg). Drawn on the server; the page's live region redraws it as the
submission's chain events arrive."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from steepy.events import kinds
from steepy.generator.graph import action_graph, action_of
from steepy.model import Workflow
from steepy.ui.graph_svg import NodeState, render_svg
from steepy.ui.render import not_found
from steepy.ui.render import page as render
from steepy.ui.routing import page

LIVE_KINDS = ",".join(kinds("chain", "submission"))


def node_states(ctx: Any, submission_id: str, graph_nodes: dict[str, Any]) -> dict[str, NodeState]:
    """Each node's chains by status. A chain counts once for each action it runs, and once
    for each for-each around them (a for-each's colour sums up its body)."""
    states: dict[str, NodeState] = {}
    records, _ = ctx.views.list_chains(submission_id)
    for record in records:
        actions = {action_of(e.id) for e in record.chain.executables}
        around = set()
        for action in actions:
            node = graph_nodes.get(action)
            while node is not None and node.parent is not None:
                around.add(node.parent)
                node = graph_nodes.get(node.parent)
        for node_id in actions | around:
            status = "REUSED" if record.reused else str(record.status)  # extensions 15
            states.setdefault(node_id, NodeState()).counts[status] += 1
    return states


def graph_page(request: Request) -> Response:
    ctx = request.app.state.ctx
    submission_id = request.path_params["id"]
    submission = ctx.views.submission(submission_id)
    if submission is None:
        return not_found(request, f"There is no submission with ID `{submission_id}'.")
    graph = action_graph(Workflow.from_json(submission["workflow"]))
    states = node_states(ctx, submission_id, {n.id: n for n in graph.nodes})
    return render(request, "graph.html", submission=submission, svg=render_svg(graph, states),
                  nodes=len(graph.nodes), live_kinds=LIVE_KINDS)


ROUTES = [page("/workflows/{id}/graph", graph_page, negotiated=False)]
