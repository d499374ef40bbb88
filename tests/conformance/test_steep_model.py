"""Replays model-cases.yaml: workflow parsing, serialisation and required capabilities."""

from __future__ import annotations

import re

import pytest

from steepy.errors import InputError
from steepy.documents.loading import read_file
from steepy.model import Macro, Service, Workflow
from steepy.model.submission import MissingMacroError, collect_required_capabilities
from tests.conftest import conformance_dir, load_conformance

CASES = load_conformance("model-cases.yaml")


def _fixture(name: str):
    return read_file(conformance_dir() / "fixtures" / name).data


def _resolve(obj, path: str):
    """Follow a path like `actions[3].actions[0].inputs[0].var` through model objects."""
    names = {"dependsOn": "depends_on"}
    for part in re.findall(r"[A-Za-z_]+|\[\d+\]", path):
        if part.startswith("["):
            obj = obj[int(part[1:-1])]
        else:
            obj = getattr(obj, names.get(part, part))
    return obj


def _check_expected(workflow: Workflow, expected: dict) -> None:
    for key, want in expected.items():
        if key == "same_variable":
            for a, b in want:
                assert _resolve(workflow, a) is _resolve(workflow, b)
        elif key == "different_variable":
            for a, b in want:
                left = _resolve(workflow, a)
                left = getattr(left, "var", left)
                assert left is not _resolve(workflow, b)
        elif key.endswith("_count"):
            assert len(_resolve(workflow, key[:-len("_count")])) == want
        elif key.endswith("inputs") and isinstance(want, list):
            params = _resolve(workflow, key)
            assert len(params) == len(want)
            for param, spec in zip(params, want):
                assert param.id == spec["id"]
                if spec.get("kind") == "anonymous":
                    assert param.anonymous and param.var.value == spec["value"]
                else:
                    assert not param.anonymous
                    assert (param.var.id, param.var.value) == (spec["var"]["id"], spec["var"]["value"])
        elif isinstance(want, dict):
            _check_object(_resolve(workflow, key), want)
        else:
            assert _resolve(workflow, key) == want, key


def _check_object(obj, want: dict) -> None:
    for field, value in want.items():
        if field.endswith("_count"):
            assert len(getattr(obj, field[:-6])) == value
        elif field.startswith("actions["):
            _check_object(_resolve(obj, field), value)
        elif field in ("inputs", "outputs"):
            params = getattr(obj, field)
            assert len(params) == len(value)
            for param, spec in zip(params, value):
                assert param.id == spec["id"]
                assert (param.var.id, param.var.value) == (spec["var"]["id"], spec["var"]["value"])
                if "store" in spec:
                    assert param.store == spec["store"]
        elif field in ("input", "enumerator"):
            var = getattr(obj, field)
            assert (var.id, var.value) == (value["id"], value["value"])
        else:
            assert getattr(obj, field) == value, field


PARSING = CASES["workflow_parsing"]


@pytest.mark.parametrize("case", PARSING, ids=[c["name"] for c in PARSING])
def test_workflow_parsing(case: dict) -> None:
    data = _fixture(case["fixture"])
    expected = case["expected"]
    if expected.get("error"):
        with pytest.raises(InputError) as info:
            Workflow.from_json(data)
        duplicated = expected["message_contains"].split("=", 1)[1]
        assert f"`{duplicated}'" in str(info.value)  # steepy names the duplicated id
        return
    _check_expected(Workflow.from_json(data), expected)


def test_serialise_undeclared_output_var() -> None:
    data = {"vars": [{"id": "input1", "value": 5}, {"id": "output1"}],
            "actions": [{"type": "execute", "service": "cp",
                         "inputs": [{"id": "a", "var": "input1"}, {"id": "anon1", "value": 20}],
                         "outputs": [{"id": "b", "var": "output1"}, {"id": "c", "var": "output2"}]}]}
    out = Workflow.from_json(data).to_json()
    assert all(isinstance(v, dict) for v in out["vars"])
    action = out["actions"][0]
    assert action["inputs"][0]["var"] == "input1"
    assert action["inputs"][1] == {"id": "anon1", "value": 20}
    assert action["outputs"][0]["var"] == "output1"
    assert action["outputs"][1]["var"] == "output2"


def test_serialise_anonymous_input() -> None:
    workflow = Workflow.from_json(_fixture("model/workflow/anonymousInput.yaml"))
    param = workflow.to_json()["actions"][0]["inputs"][1]
    assert param == {"id": "input2", "value": 13}


CAPS = CASES["required_capabilities"]


@pytest.mark.parametrize("case", CAPS["cases"], ids=[c["name"] for c in CAPS["cases"]])
def test_required_capabilities(case: dict) -> None:
    services = {s.id: s for s in (Service.from_json(x) for x in _fixture(CAPS["services"]))}
    macros = {} if case.get("macros") == "none" else {
        m.id: m for m in (Macro.from_json(x) for x in _fixture(CAPS["macros"]))}
    workflow = Workflow.from_json(_fixture(case["workflow"]))
    if "expected_error" in case:
        with pytest.raises(MissingMacroError, match=case["expected_error"]["message_contains"]):
            collect_required_capabilities(workflow, services, macros)
        return
    assert set(collect_required_capabilities(workflow, services, macros)) == set(case["expected"])


def test_round_trip_of_every_workflow_fixture() -> None:
    """Reading, writing and reading again changes nothing (Steep's JSON shape is lossless)."""
    count = 0
    for path in sorted((conformance_dir() / "fixtures").glob("*.yaml")):
        try:
            data = read_file(path).data
        except InputError:  # the multi-document macro fixtures
            continue
        if not isinstance(data, dict) or "parameters" in data or "actions" not in data:
            continue
        try:
            workflow = Workflow.from_json(data)
        except InputError:
            continue
        first = workflow.to_json()
        assert Workflow.from_json(first).to_json() == first, path.name
        count += 1
    assert count > 50
