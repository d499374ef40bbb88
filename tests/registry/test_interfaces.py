"""The registry's audiences: each SQL implementation offers exactly what its interface
declares, with the same signatures, and only the registry package speaks SQL."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from steepy.registry import interfaces
from steepy.registry.housekeeping import SqlHousekeeping
from steepy.registry.leases import SqlLeases
from steepy.registry.logs import SqlLogStore
from steepy.registry.outbox import SqlOutbox
from steepy.registry.queue import SqlChainQueue
from steepy.registry.requests import SqlRequests
from steepy.registry.schedules import SqlSchedules
from steepy.registry.submissions import SqlSubmissionStore
from steepy.registry.views import SqlReadViews

PAIRS = [(interfaces.ChainQueue, SqlChainQueue), (interfaces.SubmissionStore, SqlSubmissionStore),
         (interfaces.Leases, SqlLeases), (interfaces.Requests, SqlRequests),
         (interfaces.ReadViews, SqlReadViews), (interfaces.LogStore, SqlLogStore),
         (interfaces.Schedules, SqlSchedules), (interfaces.Housekeeping, SqlHousekeeping),
         (interfaces.Outbox, SqlOutbox)]
STEEPY = Path(__file__).resolve().parents[2] / "steepy"


def _public(cls: type) -> dict[str, inspect.Signature]:
    """Its public methods, also those it inherits (the reads' SQL text, reads.py)."""
    found: dict[str, inspect.Signature] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ not in ("builtins", "typing"):
            found.update({name: inspect.signature(member) for name, member in vars(klass).items()
                          if callable(member) and not name.startswith("_")})
    return found


@pytest.mark.parametrize(("protocol", "implementation"), PAIRS,
                         ids=[p.__name__ for p, _ in PAIRS])
def test_each_implementation_is_exactly_its_interface(protocol, implementation) -> None:
    declared, offered = _public(protocol), _public(implementation)
    assert set(offered) == set(declared), "public methods differ from the interface"
    for name, signature in declared.items():
        assert str(offered[name]) == str(signature), name


def test_no_method_belongs_to_two_audiences_except_the_shared_counts() -> None:
    seen: dict[str, str] = {}
    shared = []
    for protocol, _ in PAIRS:
        for name in _public(protocol):
            if name in seen:
                shared.append(name)
            seen[name] = protocol.__name__
    # the controller needs its submission's counts, and so do the views
    assert shared == ["chain_counts"]


def test_only_the_registry_imports_sqlalchemy() -> None:
    offenders = []
    for path in STEEPY.rglob("*.py"):
        if "registry" in path.relative_to(STEEPY).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] in ("sqlalchemy", "psycopg", "sqlite3") for n in names):
                offenders.append(str(path.relative_to(STEEPY)))
    assert offenders == []
