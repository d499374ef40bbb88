"""The engine's narrow face (steepy/engine/engine.py's docstring): what the CLI, the HTTP API,
the web UI and the plugins may use of an `Engine`; its parts are its own."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from steepy.engine import engine as engine_module
from steepy.engine.engine import Engine
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.engine.test_engine import MACROS, SERVICES, _settings
import pytest

FACE = {"run", "ready", "stop", "failure", "crash", "changed", "idle", "recover", "owner", "agent_count",
        "plugins", "settings", "resumed", "on_resumed", "finish_resumed"}
CALLERS = ("cli", "http", "ui", "plugins")  # the packages that hold an engine
USE = re.compile(r"\bengine\.([A-Za-z_]\w*)")


def test_callers_use_only_the_face() -> None:
    found: dict[str, set[str]] = {}
    for package in CALLERS:
        for path in (ROOT / "steepy" / package).rglob("*.py"):
            for line in path.read_text().splitlines():
                if "steepy.engine" in line:  # an import of the package, not an engine
                    continue
                for name in USE.findall(line):
                    found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    assert found, "no caller found: the test looks in the wrong place"
    beyond = {name: files for name, files in found.items() if name not in FACE}
    assert not beyond, f"reach-ins past the engine's face: {beyond}"


def test_every_name_of_the_face_is_documented() -> None:
    for name in FACE:
        assert f"`{name}" in engine_module.__doc__, name


def test_the_face_of_an_engine(tmp_path: Path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=3))
    assert engine.agent_count == 3 and engine.idle and engine.failure is None
    assert engine.plugins is engine.settings.agent.plugins
    for part in ("scheduler", "controller", "timekeeper", "notifier", "agents"):
        assert not hasattr(engine, part), part  # its own, behind the face


@pytest.mark.process  # a running engine has started its executor
async def test_the_face_of_an_idle_engine(tmp_path: Path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=3))
    running = asyncio.create_task(engine.run())
    await asyncio.sleep(0.2)
    for what in ("submissions", "chains", "schedules", "anything"):
        engine.changed(what)  # wakes whoever cares; nothing to do
    await asyncio.sleep(0.2)
    assert engine.idle and not running.done()
    engine.stop.set()
    await asyncio.wait_for(running, 20)
    assert engine.failure is None
