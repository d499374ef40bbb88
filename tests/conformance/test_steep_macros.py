"""Replay every case of the corpus's macro-cases.yaml (include expansion)."""

from __future__ import annotations

import pytest
import yaml

from steepy.documents.macros import MacroError, expand_includes
from steepy.model import ExecuteAction, ForEachAction, IncludeAction, Macro, Workflow
from tests.conftest import conformance_dir, load_conformance

CASES = load_conformance("macro-cases.yaml")["cases"]


def _fixture_documents(name: str) -> list:
    with open(conformance_dir() / "fixtures" / f"{name}.yaml", encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))


def _var(var):
    return None if var is None else (var.id, var.value)


def _policy(policy):
    return None if policy is None else policy.to_json()


def _action(action) -> tuple:
    """An action in the comparable form macro-cases.yaml prescribes (defaults filled in)."""
    if isinstance(action, ExecuteAction):
        inputs = [("anonymous", p.id, p.var.value) if p.anonymous else (p.id, _var(p.var))
                  for p in action.inputs]
        outputs = [(p.id, _var(p.var), p.prefix, p.store) for p in action.outputs]
        return ("execute", action.id, action.service, inputs, outputs, list(action.depends_on),
                _policy(action.retries), _policy(action.max_inactivity),
                _policy(action.max_runtime), _policy(action.deadline))
    if isinstance(action, ForEachAction):
        return ("for", action.id, _var(action.input), _var(action.enumerator), _var(action.output),
                [_action(a) for a in action.actions], _var(action.yield_to_output),
                _var(action.yield_to_input), list(action.depends_on))
    assert isinstance(action, IncludeAction)
    return ("include", action.id, action.macro, [(p.id, _var(p.var)) for p in action.inputs],
            [(p.id, _var(p.var)) for p in action.outputs], list(action.depends_on))


def _workflow(workflow: Workflow) -> dict:
    return {"api": workflow.api, "name": workflow.name, "priority": workflow.priority,
            "retries": _policy(workflow.retries), "vars": [_var(v) for v in workflow.vars],
            "actions": [_action(a) for a in workflow.actions]}


@pytest.mark.parametrize("case", CASES, ids=[c["fixture"] for c in CASES])
def test_macro_case(case: dict) -> None:
    macros_doc, workflow_doc, expected_doc = _fixture_documents(case["fixture"])
    macros = {} if case.get("macros") == "none" else {
        m.id: m for m in (Macro.from_json(d) for d in macros_doc or [])}
    workflow = Workflow.from_json(workflow_doc or {})
    before = _workflow(workflow)

    if case["expect"] == "error":
        with pytest.raises(MacroError) as info:
            expand_includes(workflow, macros)
        assert case["message_contains"] in str(info.value)
        return

    expanded = expand_includes(workflow, macros)
    expected = Workflow.from_json(expected_doc or {})
    assert _workflow(expanded) == _workflow(expected)
    assert _workflow(workflow) == before, "the input workflow must be left untouched"
