"""Checks of a service definition on its own that its schema cannot express, run whenever
service metadata is read (`steepy.documents.loading.read_services`). What a definition means for a
workflow that uses it (parameters, runtimes) is `steepy.documents.validation_services`.

Kept apart from that module: reading files checks definitions alone, while what a definition
means for a workflow depends on the runtimes steepy has (a parameter of that check).
"""

from __future__ import annotations

from steepy.errors import Problem, json_path
from steepy.model.service import Service


def definition_problems(service: Service, base: tuple = ()) -> list[Problem]:
    """Problems of one service definition that its schema cannot see; `base' is where it
    stands in its document."""
    return [Problem(f"cardinality `{p.cardinality}': minimum is greater than maximum",
                    path=json_path(base + ("parameters", i, "cardinality")))
            for i, p in enumerate(service.parameters) if p.cardinality.empty]
