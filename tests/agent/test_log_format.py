"""`logs.processChains.format: steep' (issue 28): each line of a process chain's log starts
with Steep's `yyyy-MM-dd HH:mm:ss - ', written into the file (what `steepy logs', the UI and
the API's byte ranges read); `plain', the default, keeps the tool's output as printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SERVICE = """\
- id: say
  name: say
  description: prints two lines
  path: sh
  runtime: other
  parameters:
    - {id: c, name: c, description: c, type: input, cardinality: 1..1, dataType: string,
       default: "-c"}
    - {id: s, name: s, description: s, type: input, cardinality: 1..1, dataType: string,
       default: "echo one; echo two"}
"""
WORKFLOW = "api: 4.7.0\nactions:\n  - {type: execute, service: say}\n"
STEEP_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d - (one|two)$")


@pytest.mark.process
@pytest.mark.parametrize("fmt", ["steep", "plain"])
def test_a_real_run_writes_the_chosen_format(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "services").mkdir()
    (tmp_path / "services" / "say.yaml").write_text(SERVICE)
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    setting = "" if fmt == "plain" else "logs:\n  processChains:\n    format: steep\n"
    (tmp_path / "steepy.yaml").write_text("services: services\n" + setting)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEEP")}
    run = subprocess.run([sys.executable, "-m", "steepy.cli", "run", "w.yaml"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    [log] = list((tmp_path / "logs" / "processchains").rglob("*.log"))
    lines = log.read_text().splitlines()
    if fmt == "plain":
        assert lines == ["one", "two"]
    else:
        assert len(lines) == 2 and all(STEEP_LINE.match(line) for line in lines), lines


class _Sink:
    def __init__(self) -> None:
        self.data = b""

    def append(self, chain_id: str, run_number: int, offset: int, data: bytes) -> None:
        assert offset == len(self.data)
        self.data += data


def test_the_database_copy_has_the_same_bytes_as_the_file(tmp_path: Path) -> None:
    """Byte offsets (Range requests, a tail's position) mean the same in the file and in the
    database's copy: the prefix is written into both."""
    import asyncio

    from steepy.agent.logs import ChainLog

    sink = _Sink()
    log = ChainLog(tmp_path / "c.log", sink, "c", 1, timestamps=True)
    log.write_lines(["one", "two"])
    asyncio.run(log.ship())
    log.write_lines(["three"])
    asyncio.run(log.ship())
    log.close()
    written = (tmp_path / "c.log").read_bytes()
    assert sink.data == written
    assert [line.split(" - ", 1)[1] for line in written.decode().splitlines()] == [
        "one", "two", "three"]
