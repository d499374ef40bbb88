"""`cache:` of an execute action (extensions 15): `false` or `deep` reaches the executable
(steepy plan --json shows it), anything else is a located error before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from steepy.cli import main
from tests.conftest import ROOT

SERVICES = ["--services", str(ROOT / "services")]
WORKFLOW = """\
api: 4.7.0
actions:
  - type: execute
    service: cp
    cache: {value}
    inputs: [{{id: input_file, value: /etc/hostname}}]
    outputs: [{{id: output_file, var: copy}}]
"""


def _plan(tmp_path: Path, value: str):
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.format(value=value))
    return CliRunner().invoke(main, ["plan", str(path), "--json", *SERVICES])


def test_an_actions_cache_reaches_its_executable(tmp_path: Path) -> None:
    for value, shown in (("false", False), ("deep", "deep")):
        done = _plan(tmp_path, value)
        assert done.exit_code == 0, done.output
        ((chain,),) = json.loads(done.output)
        assert chain["executables"][0]["cache"] == shown


def test_another_value_is_a_located_error(tmp_path: Path) -> None:
    done = _plan(tmp_path, "true")
    assert done.exit_code == 2
    assert ("wf.yaml:5:12: actions[0].cache: `true' is not allowed here; allowed: false, "
            "deep") in done.output, done.output
