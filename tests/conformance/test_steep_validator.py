"""Replays validator-cases.yaml: Steep's workflow and macro validation cases."""

from __future__ import annotations

import pytest

from steepy.documents.loading import read_file
from steepy.model import Macro, Workflow
from steepy.documents.validation import validate_macro, validate_workflow
from tests.conftest import conformance_dir, load_conformance

CASES = load_conformance("validator-cases.yaml")


def _macros(names: list[str]) -> dict[str, Macro]:
    macros: dict[str, Macro] = {}
    for name in names:
        macro = Macro.from_json(read_file(conformance_dir() / "fixtures" / f"{name}.yaml").data)
        macros[macro.id] = macro
    return macros


def _contains_in_order(text: str, fragments: list[str]) -> bool:
    at = 0
    for fragment in fragments:
        at = text.find(fragment, at)
        if at < 0:
            return False
        at += len(fragment)
    return True


@pytest.mark.parametrize("case", CASES, ids=[f"{c['name']}-{c['fixture']}" for c in CASES])
def test_validator_case(case: dict) -> None:
    data = read_file(conformance_dir() / "fixtures" / f"{case['fixture']}.yaml").data
    macros = _macros(case["macros"])
    if case["kind"] == "workflow":
        problems = validate_workflow(Workflow.from_json(data), macros=macros)
    else:
        problems = validate_macro(Macro.from_json(data), macros=macros)
    expected = case["expected"]
    assert len(problems) == expected["count"], [p.message for p in problems]
    for problem, want in zip(problems, expected.get("errors", [])):
        for fragment in want.get("message_contains", []):
            assert fragment in problem.message
        if "message_contains_in_order" in want:
            assert _contains_in_order(problem.message, want["message_contains_in_order"]), problem.message
        if "path" in want:
            assert problem.steep_path == want["path"]
