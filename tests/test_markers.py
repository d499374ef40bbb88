"""The fast floor keeps its word: under a selection that leaves `process` tests out, starting
a process is refused and remembered (tests/floor.py); the fixtures that mark their tests
exist under the names the markers are keyed by."""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
from types import SimpleNamespace

import pytest

from tests.floor import (FIXTURE_MARKS, ProcessForbidden, _allowed, _forbid_processes,
                         _leaves_out_processes)


def _config(markexpr: str) -> SimpleNamespace:
    return SimpleNamespace(option=SimpleNamespace(markexpr=markexpr))


@pytest.mark.parametrize("markexpr,guarded", [
    ("not (process or postgres or slurm or docker or browser or slow)", True),
    ("not process", True),
    ("not slow and not process", True),
    ("", False),
    ("not slow", False),
    ("process", False),
    ("process or not process", False),
    ("postgres", False),  # a test marked postgres and process is selected
    ("database and not slow", False),
    ("slurm and not process", True),
])
def test_the_guard_is_on_when_process_tests_are_left_out(markexpr: str, guarded: bool) -> None:
    assert _leaves_out_processes(_config(markexpr)) is guarded


def test_every_way_to_start_a_process_is_refused_and_remembered() -> None:
    originals = (subprocess.Popen._execute_child, os.posix_spawn, os.fork)
    spawned: list[str] = []
    undo = _forbid_processes(spawned)
    try:
        with pytest.raises(ProcessForbidden, match="mark the test or its module `process`"):
            subprocess.run(["true"])
        with pytest.raises(ProcessForbidden):
            os.posix_spawn("/bin/true", ["true"], {})

        async def child() -> None:
            await asyncio.create_subprocess_exec("true")

        with pytest.raises(ProcessForbidden):
            asyncio.run(child())
    finally:
        undo()
    assert spawned == ["subprocess ['true']", "os.posix_spawn", "subprocess ['true']"]
    assert (subprocess.Popen._execute_child, os.posix_spawn, os.fork) == originals


def test_only_the_version_lookup_of_get_slash_may_run() -> None:
    assert _allowed(["git", "rev-parse", "HEAD"])
    assert not _allowed(["git", "status"]) and not _allowed("sh")


@pytest.mark.parametrize("where", sorted(FIXTURE_MARKS))
def test_each_marking_fixture_is_where_it_is_named(where: str) -> None:
    module, _, name = where.rpartition(".")
    found = getattr(importlib.import_module(module), name, None)
    assert found is not None, f"{where} is gone: its tests are no longer marked"
