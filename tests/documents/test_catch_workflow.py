"""The workflow's `catch' and a fallback's `stop: true' (extensions 10) from the file to the
model: the schema and the model take them, validation places what is wrong, a second
`catch' is a duplicate key, and both survive a round trip."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from steepy.cli import main
from steepy.documents.loading import parse_workflow
from tests.conftest import ROOT

WORKFLOW = """\
api: 4.7.0
vars:
  - id: measured
actions:
  - id: measure
    type: execute
    service: flaky
    outputs:
      - {id: output_file, var: measured}
    fallback:
      service: sleep
      stop: true
      inputs: [{id: seconds, value: 0}]
  - id: publish
    type: execute
    service: cp
    inputs: [{id: input_file, var: measured}]
    outputs: [{id: output_file, var: report}]
catch:
  service: sleep
  forActions: [publish]
  maxRecoveries: 2
  inputs: [{id: seconds, value: 0}]
"""


def _validate(tmp_path: Path, text: str):
    (tmp_path / "w.yaml").write_text(text)
    return CliRunner().invoke(main, ["validate", str(tmp_path / "w.yaml"),
                                     "--services", str(ROOT / "services")])


def test_a_stopping_fallback_need_not_bind_the_outputs_and_a_catch_is_valid(tmp_path) -> None:
    result = _validate(tmp_path, WORKFLOW)
    assert result.exit_code == 0, result.output


def test_the_catch_and_stop_survive_a_round_trip() -> None:
    workflow, _ = parse_workflow(WORKFLOW)
    assert workflow.actions[0].fallback.stop is True
    catch = workflow.catch
    assert (catch.service, catch.for_actions, catch.max_recoveries) == ("sleep", ["publish"], 2)
    assert catch.covers("publish") and not catch.covers("measure")
    again = type(workflow).from_json(workflow.to_json())
    assert again.to_json() == workflow.to_json()
    assert workflow.to_json()["catch"]["forActions"] == ["publish"]
    assert workflow.to_json()["actions"][0]["fallback"]["stop"] is True


def test_what_is_wrong_with_a_catch_is_placed(tmp_path) -> None:
    bad = (WORKFLOW.replace("forActions: [publish]", "forActions: [publsh]")
           .replace("service: sleep\n  forActions", "service: cp\n  forActions")
           .replace("\n  inputs: [{id: seconds, value: 0}]", "\n  inputs: [{id: input_file, value: x}]"))
    result = _validate(tmp_path, bad)
    assert result.exit_code == 2, result.output
    assert ("w.yaml:21:16: catch.forActions[0]: Unknown action `publsh' in `forActions'. The "
            "catch is for execute actions of this workflow. Did you mean `publish'? Its execute "
            "actions: measure, publish.") in result.output
    assert ("w.yaml:20:12: catch.service: Service `cp' needs output `output_file', but a catch "
            "has no outputs") in result.output
    assert "Traceback" not in result.output


def test_a_second_catch_is_a_duplicate_key(tmp_path) -> None:
    result = _validate(tmp_path, WORKFLOW + "catch:\n  service: sleep\n")
    assert result.exit_code == 2
    assert "w.yaml:24:1: catch: duplicate key `catch'" in result.output
