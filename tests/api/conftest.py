"""What the API's tests share: a service that runs `sh -c SCRIPT` and workflows of it, in a
scratch directory that is the working directory (so no steepy.yaml of the repository's and no
STEEPY_* variables of the caller's are read)."""

from __future__ import annotations

import os

import pytest

SERVICES = """\
- id: sh
  name: Shell
  description: Run a script (sh -c SCRIPT sh ARG OUT).
  path: sh
  runtime: other
  parameters:
    - id: script
      name: Script
      description: The script; $1 is the argument, $2 the output file
      type: input
      label: -c
      cardinality: 1..1
      dataType: string
    - id: zero
      name: Name
      description: $0 of the script
      type: input
      cardinality: 1..1
      dataType: string
      default: sh
    - id: arg
      name: Argument
      description: $1 of the script
      type: input
      cardinality: 1..1
      dataType: string
      default: x
    - id: out
      name: Output
      description: $2 of the script, a file
      type: output
      cardinality: 1..1
      dataType: string
      fileSuffix: .txt
"""

# echo its argument into its output; `script` and `who` may be set with vars
WORKFLOW = """\
api: 4.7.0
name: greet
vars:
  - id: script
    value: 'echo "hello $1" | tee "$2"'
  - id: who
    value: world
  - id: greeting
actions:
  - type: execute
    service: sh
    inputs:
      - id: script
        var: script
      - id: arg
        var: who
    outputs:
      - id: out
        var: greeting
        store: true
"""


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The working directory of the test, with `services.yaml` and `greet.yaml`."""
    for name in list(os.environ):
        if name.startswith(("STEEPY_", "STEEP_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "greet.yaml").write_text(WORKFLOW)
    return tmp_path
