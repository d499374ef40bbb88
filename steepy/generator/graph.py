"""A workflow as a graph: its actions as nodes and the variables that connect them as edges
(`steepy plan --format dot|mermaid|text`, the UI's graph view).

An edge runs from the action that writes a variable to each action that reads it. A for-each
writes its enumerator (read by its body) and its output, which the body's action yields; a
variable fed back to the for-each's input (`yieldToInput`) is a `feedback` edge, the one kind
that runs backwards. `dependsOn` without a variable is a `depends` edge. Includes stay one
node each. Variables nobody writes (the workflow's inputs) connect nothing and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from steepy.generator.executables import FALLBACK_SUFFIX
from steepy.model import ExecuteAction, ForEachAction, IncludeAction, ProcessChain, Workflow
from steepy.model.processchain import DATA_TYPE_DIRECTORY
from steepy.model.workflow import Action

DATA, DEPENDS, FEEDBACK = "data", "depends", "feedback"


@dataclass
class GraphNode:
    id: str
    kind: str  # execute, for, include
    label: str  # its service, its macro, or `for each ENUMERATOR in INPUT`
    parent: str | None = None  # the for-each whose body it is in

    @property
    def lines(self) -> list[str]:
        """What a drawing writes in the node: its id, and what it runs unless that is the id."""
        return [self.id] if self.label == self.id else [self.id, self.label]


@dataclass(frozen=True)
class GraphEdge:
    source: str
    target: str
    label: str | None  # the variable; None for dependsOn
    kind: str = DATA


@dataclass
class ActionGraph:
    name: str | None
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)

    def children(self, parent: str | None) -> list[GraphNode]:
        return [n for n in self.nodes if n.parent == parent]

    def ancestors(self, node_id: str) -> list[str]:
        """The for-eaches around a node, innermost first."""
        parents = {n.id: n.parent for n in self.nodes}
        found, current = [], parents.get(node_id)
        while current is not None:
            found.append(current)
            current = parents.get(current)
        return found


def action_of(executable_id: str) -> str:
    """The workflow action an executable of a process chain came from: an iteration of a
    for-each appends `$k` to the ids in its body, an include prefixes `$INCLUDE$MACRO$`, a
    fallback's executable has the action's id and `.fallback`."""
    executable_id = executable_id.removesuffix(FALLBACK_SUFFIX)
    if executable_id.startswith("$"):
        return executable_id.split("$")[1]
    return executable_id.split("$")[0]


def action_graph(workflow: Workflow) -> ActionGraph:
    """The graph of the workflow's actions (includes not expanded)."""
    graph = ActionGraph(workflow.name)
    writers: dict[str, list[str]] = {}
    readers: list[tuple[str, str]] = []  # (variable, action)
    feedback: list[tuple[str, str]] = []  # (variable, for-each)
    _collect(workflow.actions, None, graph, writers, readers, feedback)
    seen: set[tuple[str, str, str | None]] = set()

    def add(source: str, target: str, label: str | None, kind: str) -> None:
        if source != target and (source, target, label) not in seen:
            seen.add((source, target, label))
            graph.edges.append(GraphEdge(source, target, label, kind))

    for var, reader in readers:
        for writer in writers.get(var, []):
            add(writer, reader, var, DATA)
    for var, loop in feedback:
        for writer in writers.get(var, []):
            add(writer, loop, var, FEEDBACK)
    connected = {(e.source, e.target) for e in graph.edges}
    for action in workflow.all_actions():
        for dep in action.depends_on:
            if (dep, action.id) not in connected:
                add(dep, action.id, None, DEPENDS)
    return graph


def _collect(actions: list[Action], parent: str | None, graph: ActionGraph,
             writers: dict[str, list[str]], readers: list[tuple[str, str]],
             feedback: list[tuple[str, str]]) -> None:
    """Nodes, writers and readers of `actions`, depth first; a for-each's output is written
    by whatever writes what its body yields, known once the body is collected."""
    for action in actions:
        if isinstance(action, ExecuteAction):
            graph.nodes.append(GraphNode(action.id, "execute", action.service, parent))
            params = action.inputs + (action.fallback.inputs if action.fallback else [])
            outputs = action.outputs + (action.fallback.outputs if action.fallback else [])
            readers.extend((p.var.id, action.id) for p in params if not p.anonymous)
            for var in dict.fromkeys(p.var.id for p in outputs):
                writers.setdefault(var, []).append(action.id)
        elif isinstance(action, IncludeAction):
            graph.nodes.append(GraphNode(action.id, "include", f"include {action.macro}",
                                         parent))
            readers.extend((p.var.id, action.id) for p in action.inputs if not p.anonymous)
            for p in action.outputs:
                writers.setdefault(p.var.id, []).append(action.id)
        else:
            assert isinstance(action, ForEachAction)
            graph.nodes.append(GraphNode(
                action.id, "for", f"for each {action.enumerator.id} in {action.input.id}",
                parent))
            readers.append((action.input.id, action.id))
            writers.setdefault(action.enumerator.id, []).append(action.id)
            _collect(action.actions, action.id, graph, writers, readers, feedback)
            if action.output is not None:
                yielded = action.yield_to_output
                found = writers.get(yielded.id, []) if yielded is not None else []
                writers.setdefault(action.output.id, []).extend(found or [action.id])
            if action.yield_to_input is not None:
                feedback.append((action.yield_to_input.id, action.id))


def chain_graph(steps: list[list[ProcessChain]]) -> ActionGraph:
    """The process chains of a plan as nodes, an edge where one chain reads a file another
    writes or a file inside a directory it writes (labelled with the reading variable)."""
    graph = ActionGraph(None)
    files: dict[str, str] = {}  # a written path -> its chain
    directories: list[tuple[str, str]] = []
    for chain in (c for step in steps for c in step):
        graph.nodes.append(GraphNode(chain.id, "chain",
                                     " → ".join(e.id for e in chain.executables)))
        for arg in _arguments(chain, "output"):
            files[arg.variable.value] = chain.id
            if arg.data_type == DATA_TYPE_DIRECTORY:
                directories.append((arg.variable.value.rstrip("/") + "/", chain.id))
    seen: set[tuple[str, str, str]] = set()
    for chain in (c for step in steps for c in step):
        for arg in _arguments(chain, "input"):
            value = arg.variable.value
            writer = files.get(value) or next(
                (w for prefix, w in directories if value.startswith(prefix)), None)
            key = (writer or "", chain.id, arg.variable.id)
            if writer is not None and writer != chain.id and key not in seen:
                seen.add(key)
                graph.edges.append(GraphEdge(writer, chain.id, arg.variable.id))
    return graph


def _arguments(chain: ProcessChain, kind: str):
    return (a for e in chain.executables for a in e.arguments if a.type == kind)
