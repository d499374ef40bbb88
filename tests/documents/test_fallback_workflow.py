"""Fallback (extensions 10) from the file to the process chain: the schema takes it, the
validator checks that its outputs bind exactly the action's output variables and that its
service fits, includes carry it, and the generator puts its executable right after the
action's, writing the same paths."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from steepy.cli import main
from steepy.generator import ProcessChainGenerator
from steepy.model.ids import CounterIds
from steepy.documents.loading import parse_workflow
from steepy.documents.loading import read_macros, read_services
from steepy.documents.macros import expand_includes
from steepy.documents.validation import validate_workflow
from tests.conftest import ROOT

SERVICES = read_services(str(ROOT / "services"))

WORKFLOW = """\
api: 4.7.0
vars:
  - id: measured
  - id: report
actions:
  - id: measure
    type: execute
    service: flaky
    outputs:
      - id: output_file
        var: measured
    fallback:
      service: stand-in
      inputs:
        - id: value
          value: none
      outputs:
        - id: output_file
          var: measured
      retries:
        maxAttempts: 2
  - id: publish
    type: execute
    service: cp
    inputs:
      - id: input_file
        var: measured
    outputs:
      - id: output_file
        var: report
"""


def _validate(tmp_path: Path, text: str):
    (tmp_path / "w.yaml").write_text(text)
    return CliRunner().invoke(main, ["validate", str(tmp_path / "w.yaml"),
                                     "--services", str(ROOT / "services")])


def test_a_valid_fallback_and_its_service_in_the_summary(tmp_path) -> None:
    result = _validate(tmp_path, WORKFLOW)
    assert result.exit_code == 0, result.output
    assert "services: cp, flaky, stand-in" in result.output


def test_its_outputs_must_bind_exactly_the_actions_output_variables(tmp_path) -> None:
    extra = WORKFLOW.replace("          var: measured\n      retries",
                             "          var: report\n      retries")
    result = _validate(tmp_path, extra)
    assert result.exit_code == 2, result.output
    assert ("w.yaml:18:9: actions[0].fallback.outputs: The fallback does not bind output "
            "variable `measured' of its action") in result.output
    assert ("w.yaml:19:16: actions[0].fallback.outputs[0].var: Output variable `report' of the "
            "fallback is not an output of its action (its outputs: measured)") in result.output
    assert "Traceback" not in result.output


def test_its_service_and_parameters_are_checked_where_they_stand(tmp_path) -> None:
    bad = WORKFLOW.replace("service: stand-in", "service: stand-inn")
    result = _validate(tmp_path, bad)
    assert result.exit_code == 2
    assert ("w.yaml:13:16: actions[0].fallback.service: Service `stand-inn' of the fallback is "
            "not defined. Did you mean `stand-in'?") in result.output
    wrong = WORKFLOW.replace("        - id: value\n", "        - id: valu\n")
    result = _validate(tmp_path, wrong)
    assert result.exit_code == 2
    assert ("w.yaml:15:15: actions[0].fallback.inputs[0].id: Service `stand-in' has no "
            "parameter `valu'. Did you mean `value'?") in result.output


def test_its_input_variables_need_values_and_the_schema_rejects_unknown_keys(tmp_path) -> None:
    result = _validate(tmp_path, WORKFLOW.replace("          value: none\n",
                                                  "          var: nowhere\n"))
    assert result.exit_code == 2
    assert ("actions[0].fallback.inputs[0].var: Input variable `nowhere' has no value"
            in result.output)
    result = _validate(tmp_path, WORKFLOW.replace("      retries:\n", "      dependsOn: []\n"
                                                                      "      retries:\n"))
    assert result.exit_code == 2
    assert "actions[0].fallback" in result.output and "dependsOn" in result.output


def test_its_outputs_are_not_a_second_writer_of_the_variable() -> None:
    workflow, _ = parse_workflow(WORKFLOW)
    assert validate_workflow(workflow, services=SERVICES) == []


def _chains(text: str):
    workflow, _ = parse_workflow(text)
    generator = ProcessChainGenerator(workflow, "/tmp", "/out", SERVICES,
                                      id_generator=CounterIds())
    return generator.generate({}, set())


def test_the_fallback_runs_in_the_same_chain_right_after_writing_the_same_path() -> None:
    (chain,) = _chains(WORKFLOW)
    measure, fallback, publish = chain.executables
    assert (measure.id, fallback.id, publish.id) == ("measure", "measure.fallback", "publish")
    assert (fallback.service_id, fallback.fallback_for, measure.fallback_for) == (
        "stand-in", "measure", None)
    path = [a.variable.value for a in measure.arguments if a.type == "output"]
    assert [a.variable.value for a in fallback.arguments if a.type == "output"] == path
    assert [a.variable.value for a in publish.arguments if a.type == "input"] == path
    assert fallback.retries.max_attempts == 2
    # it round-trips through the registry's JSON, and Steep's shape has just one key more
    data = chain.to_json()
    assert data["executables"][1]["fallbackFor"] == "measure"
    assert "fallbackFor" not in data["executables"][0]
    assert type(chain).from_json(data) == chain


def test_without_a_fallback_the_ids_are_drawn_as_before() -> None:
    """Steep's id order holds where there is no fallback; with one, the action's own paths
    do not change (the fallback draws its ids after the action's)."""
    plain = WORKFLOW.split("    fallback:")[0] + "  - id: publish" + WORKFLOW.split("  - id: publish")[1]
    (chain,) = _chains(plain)
    assert [e.id for e in chain.executables] == ["measure", "publish"]
    outputs = [a.variable.value for e in chain.executables for a in e.arguments
               if a.type == "output"]
    # id 0 goes to flaky's defaulted `fail_times', 1 and 2 to the files, 3 to the chain
    assert outputs == ["/tmp/1.txt", "/tmp/2.txt"] and chain.id == "3"
    (with_fallback,) = _chains(WORKFLOW)
    assert [a.variable.value for a in with_fallback.executables[0].arguments] == \
        [a.variable.value for a in chain.executables[0].arguments]


MACRO = """\
- id: guarded
  name: guarded
  description: a flaky tool with a stand-in
  parameters:
    - {id: o, name: o, description: result, type: output}
  vars:
    - id: private
  actions:
    - id: try
      type: execute
      service: flaky
      outputs: [{id: output_file, var: private}]
      fallback:
        service: stand-in
        outputs: [{id: output_file, var: private}]
    - id: copy
      type: execute
      service: cp
      inputs: [{id: input_file, var: private}]
      outputs: [{id: output_file, var: o}]
"""


def test_an_include_carries_the_fallback_with_its_variables_renamed(tmp_path) -> None:
    (tmp_path / "m.yaml").write_text(MACRO)
    macros = read_macros(str(tmp_path))
    workflow, _ = parse_workflow("api: 4.7.0\nactions:\n  - {type: include, id: inc, "
                                 "macro: guarded, outputs: [{id: o, var: out}]}\n")
    assert validate_workflow(workflow, macros, SERVICES) == []
    first = expand_includes(workflow, macros).actions[0]
    assert first.id == "$inc$guarded$try"
    assert first.fallback is not None and first.fallback.service == "stand-in"
    assert [p.var.id for p in first.fallback.outputs] == [p.var.id for p in first.outputs] == [
        "$inc$guarded$private"]
