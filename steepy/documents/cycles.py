"""Cycles in a directed graph: the strongly connected components that loop (Tarjan's
algorithm, iterative so that deep graphs do not hit the recursion limit)."""

from __future__ import annotations


def find_cycles(order: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components that form cycles, members in `order`, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for start in order:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, [])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, []))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, []):
                    found.append(component)
    position = {name: i for i, name in enumerate(dict.fromkeys(order))}
    cycles = [sorted(c, key=position.__getitem__) for c in found]
    return sorted(cycles, key=lambda c: position[c[0]])
