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
    assert [a["exitCode"] for a in failed["runs"][0]["attempts"]] == [0, 0]
    copied = next(c for c in chains.values() if c["status"] == "SUCCESS"
                  and c["executables"][0]["serviceId"] == "writer")
    [output] = [a["variable"]["value"] for a in copied["executables"][0]["arguments"]
                if a["type"] == "output"]
    assert Path(output).read_text() == "the input\n"  # read from the submitter's folder
