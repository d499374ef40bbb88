"""Relative input paths of a workflow that `steepy submit --server` sends are the submitter's
(issue 30), as on a database: the client sends its working directory as `?base=`, and the
server resolves and checks them there; without it, against its own working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.http.conftest import Server

WORKFLOW = """\
api: 4.7.0
vars: [{id: words, value: mine.txt}, {id: copy}]
actions:
  - type: execute
    service: copy
    inputs: [{id: in, var: words}]
    outputs: [{id: out, var: copy}]
"""
SERVICES = """\
- id: copy
  name: Copy
  description: copies a file
  path: cp
  runtime: other
  parameters:
    - {id: in, name: In, description: i, type: input, cardinality: 1..1, dataType: file}
    - {id: out, name: Out, description: o, type: output, cardinality: 1..1}
"""


def _submit(here: Path, server: Server) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    return subprocess.run([sys.executable, "-m", "steepy", "submit", "wf.yaml", "--server",
                           server.url], cwd=here, env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.process
def test_submit_to_a_server_resolves_relative_paths_where_it_was_run(tmp_path: Path) -> None:
    (tmp_path / "services.yaml").write_text(SERVICES)
    server = Server(tmp_path / "server", "--agents", "1", "-s", str(tmp_path / "services.yaml"))
    try:
        _check(tmp_path, server)
    finally:
        assert server.stop() == 0


def _check(tmp_path: Path, server: Server) -> None:
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    missing = _submit(tmp_path, server)
    assert missing.returncode == 2
    assert (f"wf.yaml:2:27: vars[0].value: input file `mine.txt' does not exist (a relative "
            f"path is resolved against the directory it was submitted from, {tmp_path})"
            ) in missing.stderr
    (tmp_path / "mine.txt").write_text("b\na\n")
    done = _submit(tmp_path, server)
    assert done.returncode == 0, done.stderr
    submission_id = done.stdout.split()[-1]
    stored = server.http.get(f"/workflows/{submission_id}").json()["workflow"]["vars"]
    assert stored[0] == {"id": "words", "value": str(tmp_path / "mine.txt")}
    assert server.wait(submission_id)["status"] == "SUCCESS"
    # a schedule too (review, session 49: it was checked against the server's folder)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    scheduled = subprocess.run(
        [sys.executable, "-m", "steepy", "schedule", "add", "wf.yaml", "--every", "1h",
         "--server", server.url], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=60)
    assert scheduled.returncode == 0, scheduled.stderr
    # a value the workflow cannot use is placed in the file sent, as without a server
    # (review, session 49: the message named the server's `<request>:4:5')
    blamed = subprocess.run(
        [sys.executable, "-m", "steepy", "submit", "wf.yaml", "--var", "words=[mine.txt, "
         "mine.txt]", "--server", server.url], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60)
    assert blamed.returncode == 2
    assert blamed.stderr.splitlines()[0] == (
        "--var words: the workflow cannot use `words' = [\"mine.txt\", \"mine.txt\"]: "
        "wf.yaml:4:5: actions[0]: Input `in' of service `copy' is given 2 times; its "
        "cardinality is 1..1 (min..max values).")
    refused = server.http.post("/workflows", params={"base": "relative/dir"},
                               content=WORKFLOW)  # (a base must be absolute)
    assert refused.status_code == 400 and "`base' must be an absolute directory" in refused.text
    assert Path(ROOT, "mine.txt").exists() is False  # (not the server's folder's file)
