"""Declared outputs are checked after exit 0 (extensions 14), relative input files are
resolved against the submitter's directory, and `steepy wait` follows the submission: one
submission from one folder, run by a worker started in another, then waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.agent.outputs import missing_output
from steepy.cli import main
from steepy.model.processchain import Argument, ArgumentVariable, Executable

SERVICES = """\
- id: writer
  name: Writer
  description: sh -c SCRIPT writer INPUT OUTPUT
  path: sh
  runtime: other
  parameters:
    - {id: script, name: S, description: s, type: input, cardinality: 1..1, dataType: string,
       label: -c}
    - {id: zero, name: Z, description: z, type: input, cardinality: 1..1, dataType: string,
       default: writer}
    - {id: input, name: I, description: i, type: input, cardinality: 1..1, dataType: file}
    - {id: out, name: O, description: o, type: output, cardinality: 1..1, dataType: file}
- id: lenient
  name: Lenient
  description: the same, without the check
  path: sh
  runtime: other
  checkOutputs: false
  parameters:
    - {id: script, name: S, description: s, type: input, cardinality: 1..1, dataType: string,
       label: -c}
    - {id: zero, name: Z, description: z, type: input, cardinality: 1..1, dataType: string,
       default: writer}
    - {id: input, name: I, description: i, type: input, cardinality: 1..1, dataType: file}
    - {id: out, name: O, description: o, type: output, cardinality: 1..1, dataType: file}
"""
WORKFLOW = """\
api: 4.7.0
name: checked
vars:
  - {id: text, value: nowhere.txt}
actions:
  - id: copies
    type: execute
    service: writer
    inputs: [{id: script, value: 'cat "$1" > "$2"'}, {id: input, var: text}]
    outputs: [{id: out, var: copied}]
  - id: forgets
    type: execute
    service: writer
    inputs: [{id: script, value: 'echo done'}, {id: input, var: text}]
    outputs: [{id: out, var: forgotten}]
    retries: {maxAttempts: 2, delay: 10ms}
  - id: allowed
    type: execute
    service: lenient
    inputs: [{id: script, value: 'echo done'}, {id: input, var: text}]
    outputs: [{id: out, var: left_out}]
"""


def _output(data_type: str, path: str, check: bool = True) -> Executable:
    out = Argument("out1", ArgumentVariable("v", path), "output", None, data_type)
    return Executable("e", "tool", "svc", [out], check_outputs=check)


def test_the_first_missing_output_is_named(tmp_path: Path) -> None:
    file, folder = tmp_path / "f.txt", tmp_path / "d"
    assert missing_output(_output("file", str(file))) == (
        f"declared output `out1' was not written: {file}")
    folder.mkdir()
    assert missing_output(_output("string", str(folder))) is not None  # a directory, not a file
    assert missing_output(_output("directory", str(folder))) is None
    file.write_text("x")
    assert missing_output(_output("file", str(file))) is None
    assert missing_output(_output("directory", str(file))) is not None
    assert missing_output(_output("file", str(tmp_path / "no"), check=False)) is None
    assert missing_output(_output("custom", str(tmp_path / "no")), {"custom"}) is None


@pytest.mark.process
def test_outputs_checked_inputs_resolved_and_waited_for(tmp_path: Path, monkeypatch) -> None:
    submitter, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (submitter / "data").mkdir(parents=True)
    elsewhere.mkdir()
    (submitter / "data" / "in.txt").write_text("the input\n")
    (tmp_path / "services.yaml").write_text(SERVICES)
    (submitter / "wf.yaml").write_text(WORKFLOW)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(submitter)

    def cli(*args: str):
        return CliRunner().invoke(main, [*args, "--db", db], catch_exceptions=False)

    submitted = cli("submit", "wf.yaml", "-s", "../services.yaml", "--var", "text=data/in.txt")
    assert submitted.exit_code == 0, submitted.output
    submission_id = submitted.stdout.split()[-1]
    env = dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"),
               STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"))
    worker = subprocess.run([sys.executable, "-m", "steepy.cli", "worker", "--db", db,
                             "--exit-when-idle", "-s", str(tmp_path / "services.yaml")],
                            cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert worker.returncode == 0, worker.stderr

    waited = cli("wait", submission_id)
    assert waited.exit_code == 1  # one chain failed: PARTIAL_SUCCESS, as `steepy run' says
    assert waited.stdout.startswith(f"submission {submission_id}: PARTIAL_SUCCESS")
    document = json.loads(cli("show", submission_id, "--json").stdout)
    assert document["vars"] == {"text": "data/in.txt"}
    chains = {c["executables"][0]["serviceId"] + str(i): c
              for i, c in enumerate(document["processChains"])}
    by_status = sorted((c["status"], len(c["runs"][0]["attempts"])) for c in chains.values())
    assert by_status == [("ERROR", 2), ("SUCCESS", 1), ("SUCCESS", 1)]
    [failed] = [c for c in chains.values() if c["status"] == "ERROR"]
    messages = [a["message"] for a in failed["runs"][0]["attempts"]]
    assert all("declared output `out' was not written: " in m for m in messages), messages
    assert all(m.endswith(". Last output:\ndone") for m in messages), messages  # what it said
    assert [a["exitCode"] for a in failed["runs"][0]["attempts"]] == [0, 0]
    copied = next(c for c in chains.values() if c["status"] == "SUCCESS"
                  and c["executables"][0]["serviceId"] == "writer")
    [output] = [a["variable"]["value"] for a in copied["executables"][0]["arguments"]
                if a["type"] == "output"]
    assert Path(output).read_text() == "the input\n"  # read from the submitter's folder


async def test_a_missing_output_is_looked_for_again_within_the_runtimes_bound(tmp_path):
    """An output written on another machine (SLURM: `outputs_settle_ms') may show here only
    later: it is looked for again until the bound has passed; a local run (bound 0) fails at
    once, without a pause."""
    from steepy.agent.outputs import missing_output_settled
    from steepy.runtimes.slurm import SlurmRuntime
    from tests.clocks import RecordingClock

    path = tmp_path / "written-elsewhere.txt"
    exe = _output("file", str(path))
    clock = RecordingClock()
    assert await missing_output_settled(exe, (), 0, clock.sleep, clock.monotonic) == (
        f"declared output `out1' was not written: {path}")
    assert clock.sleeps == []
    assert await missing_output_settled(exe, (), 1000, clock.sleep, clock.monotonic) == (
        f"declared output `out1' was not written: {path}")
    assert sum(clock.sleeps) == pytest.approx(1.0) and max(clock.sleeps) <= 0.2

    later = RecordingClock()

    async def the_node_writes_it(seconds: float) -> None:
        await later.sleep(seconds)
        if later.elapsed >= 0.6:
            path.write_text("x")

    assert await missing_output_settled(exe, (), 5000, the_node_writes_it, later.monotonic) is None
    assert later.elapsed == pytest.approx(0.6)
    assert SlurmRuntime.outputs_settle_ms == 5000


@pytest.mark.process
async def test_an_output_that_shows_late_is_waited_for_under_a_remote_runtime(tmp_path):
    """The output shows 0.3 s after the tool ended (as a node's write reaches this machine
    late): under a runtime that says its outputs may show late the attempt succeeds; under
    `other' it fails at once."""
    import asyncio

    from steepy.agent import AgentConfig, LocalAgent
    from steepy.model.processchain import ProcessChain
    from steepy.model.submission import ProcessChainStatus
    from steepy.plugins.kinds import KINDS
    from steepy.plugins.loaded import PluginSet, builtin_set
    from steepy.plugins.loading import Plugin
    from steepy.runtimes.other import OtherRuntime

    class Remote(OtherRuntime):
        supported_runtime = "remote"
        outputs_settle_ms = 3000

    plugins = PluginSet([*builtin_set().plugins,
                         Plugin("remote", KINDS["runtime"], Remote(), "test", selector="remote")])
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins, tmp_path=str(tmp_path)))

    async def run(runtime: str, out: Path):
        ended = tmp_path / f"{runtime}.ended"
        words = [Argument("s", ArgumentVariable("s", "-c"), "input"),
                 Argument("t", ArgumentVariable("t", f"touch {ended}"), "input"),
                 Argument("o", ArgumentVariable("o", str(out)), "output", None, "file")]

        async def node() -> None:  # writes the output 0.3 s after the tool ended
            while not ended.exists():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)
            out.write_text("x")

        writer = asyncio.ensure_future(node())
        try:
            return await agent.execute(ProcessChain(runtime, [
                Executable("e", "/bin/sh", "sh", words, runtime=runtime)]))
        finally:
            writer.cancel()

    remote = await run("remote", tmp_path / "r.txt")
    assert remote.status == ProcessChainStatus.SUCCESS, remote.error_message
    local = await run("other", tmp_path / "o.txt")
    assert local.status == ProcessChainStatus.ERROR
    assert "declared output `o' was not written" in local.error_message
    [attempt] = local.attempts
    assert (attempt.end_time - attempt.start_time).total_seconds() < 0.25
