"""steepy's checks beyond Steep's validator: services, parameters, cardinality, api version."""

from __future__ import annotations

import pytest

from steepy.model import Service, Workflow
from steepy.documents.validation import api_problem, validate_workflow
from steepy.documents.validation_services import Runtimes

CP = Service.from_json({
    "id": "cp", "name": "cp", "description": "copy", "path": "cp", "runtime": "other",
    "parameters": [
        {"id": "flag", "name": "f", "description": "f", "type": "input", "cardinality": "1..1",
         "dataType": "boolean", "default": False, "label": "-f"},
        {"id": "input_file", "name": "i", "description": "i", "type": "input", "cardinality": "1..2"},
        {"id": "output_file", "name": "o", "description": "o", "type": "output", "cardinality": "1..1"},
    ]})


def _workflow(inputs: list, outputs: list, service: str = "cp", vars_: list | None = None) -> Workflow:
    return Workflow.from_json({"vars": vars_ or [], "actions": [
        {"type": "execute", "service": service, "inputs": inputs, "outputs": outputs}]})


OUT = [{"id": "output_file", "var": "o"}]


def test_valid_with_default_filled_in() -> None:
    assert validate_workflow(_workflow([{"id": "input_file", "value": "a"}], OUT), services={"cp": CP}) == []


def test_unknown_service() -> None:
    (p,) = validate_workflow(_workflow([], [], service="cpx"), services={"cp": CP})
    assert "Service `cpx' is not defined" in p.message and p.path == "actions[0].service"


def test_parameter_of_the_wrong_kind() -> None:
    problems = validate_workflow(_workflow([{"id": "input_file", "value": "a"},
                                            {"id": "output_file", "value": "b"}], OUT),
                                 services={"cp": CP})
    assert [p.path for p in problems] == ["actions[0].inputs[1].id"]
    assert "is an output" in problems[0].message


def test_cardinality_counts_literal_lists() -> None:
    wf = _workflow([{"id": "input_file", "var": "many"}], OUT,
                   vars_=[{"id": "many", "value": ["a", "b", "c"]}])
    (p,) = validate_workflow(wf, services={"cp": CP})
    assert "given 3 times" in p.message and "1..2" in p.message


def test_missing_required_output() -> None:
    (p,) = validate_workflow(_workflow([{"id": "input_file", "value": "a"}], []), services={"cp": CP})
    assert "Output `output_file' of service `cp' is missing" in p.message


def test_services_not_checked_when_not_given() -> None:
    assert validate_workflow(_workflow([], [], service="anything")) == []


@pytest.mark.parametrize("api,fragment", [
    ("3.2.0", "older"), ("4.8.0", "newer"), ("five", "not an API version"), ("5.0.0", "newer")])
def test_api_versions_outside_the_range(api: str, fragment: str) -> None:
    assert fragment in api_problem(api).message


@pytest.mark.parametrize("api", ["4.0.0", "4.7.0", "4.3.1"])
def test_api_versions_inside_the_range(api: str) -> None:
    assert api_problem(api) is None


def test_dependency_cycle_through_a_for_each_body() -> None:
    wf = Workflow.from_json({"vars": [{"id": "l", "value": [1]}], "actions": [
        {"id": "a", "type": "execute", "service": "cp", "dependsOn": "f"},
        {"id": "f", "type": "for", "input": "l", "enumerator": "i", "dependsOn": "a",
         "actions": [{"id": "b", "type": "execute", "service": "cp"}]}]})
    messages = [p.message for p in validate_workflow(wf)]
    assert any("circular dependency between actions `a', `f'" in m for m in messages)


# -- the runtimes: a parameter, never the configuration ------------------------------------------

LSF = Service.from_json({"id": "lsfcp", "name": "cp", "description": "copy", "path": "cp",
                         "runtime": "lsf", "parameters": []})
LSF_FLOW = _workflow([], [], service="lsfcp")


def test_runtimes_are_checked_against_those_given() -> None:
    (p,) = validate_workflow(LSF_FLOW, services={"lsfcp": LSF}, runtimes=["other", "docker"])
    assert p.message == ("Service `lsfcp' has runtime `lsf', which steepy cannot run. Supported "
                         "runtimes: other, docker.")
    assert validate_workflow(LSF_FLOW, services={"lsfcp": LSF}, runtimes=["other", "lsf"]) == []
    assert validate_workflow(LSF_FLOW, services={"lsfcp": LSF}) == []  # none given: not checked


def test_a_runtime_of_steep_that_steepy_lacks_gets_a_hint() -> None:
    hinted = Runtimes(("other",), {"lsf": "which only the cluster has."})
    (p,) = validate_workflow(LSF_FLOW, services={"lsfcp": LSF}, runtimes=hinted)
    assert p.message == ("Service `lsfcp' has runtime `lsf', which only the cluster has. "
                         "Supported runtimes: other.")


def test_checking_is_the_same_with_or_without_a_configuration(tmp_path, monkeypatch) -> None:
    """No steepy.yaml, and one that declares the runtime `lsf' (with the process's plugin set
    forgotten each time): checking a workflow reads neither, only its arguments."""
    import steepy.plugins.pluginset as pluginset

    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / "steepy.yaml").write_text(
        "plugins:\n  - {name: lsf, type: runtime, object: 'steepy.runtimes.other:OtherRuntime',"
        " supportedRuntime: lsf}\n")
    bare = tmp_path / "bare"
    bare.mkdir()
    results = []
    for directory in (bare, configured, bare):
        monkeypatch.chdir(directory)
        monkeypatch.setattr(pluginset, "_active", None)
        results.append([validate_workflow(LSF_FLOW, services={"lsfcp": LSF}, runtimes=names)
                        for names in (["other"], ["other", "lsf"])])
    assert results[0] == results[1] == results[2]
    assert [len(found) for found in results[0]] == [1, 0]
