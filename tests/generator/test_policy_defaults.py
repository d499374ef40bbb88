"""Where an executable's retry policy comes from (generator/executables.py with
model/inheritance.py): action > service > workflow default > engine default."""

from __future__ import annotations

from steepy.model import Macro
from steepy.model.policies import RetryPolicy
from tests.generator.test_generator import CP, execute, generator, param, service

PATIENT = service("patient", param("i", "input"), param("o", "output"),
                  retries={"maxAttempts": 5, "delay": "1s"})
SERVICES = {"cp": CP, "patient": PATIENT}
ENGINE = RetryPolicy.from_json({"maxAttempts": 2, "jitter": "full"})


def policies(workflow: dict, **kwargs) -> dict[str, dict | None]:
    gen = generator(workflow, SERVICES, engine_retries=ENGINE, **kwargs)
    return {e.id: None if e.retries is None else e.retries.to_json()
            for chain in gen.generate() for e in chain.executables}


WORKFLOW = {"api": "4.7.0", "vars": [{"id": "in", "value": "x"}], "actions": [
    execute("own", "in", "v1", retries={"maxAttempts": 9}),
    execute("service", "in", "v2", "patient"),
    execute("default", "in", "v3"),
    execute("inherits", "in", "v4", "patient", retries={"inherit": True, "delay": "10ms"}),
    execute("down", "in", "v5", retries={"inherit": True, "exponentialBackoff": 2})]}


def test_each_executable_gets_the_policy_of_the_first_level_that_has_one() -> None:
    with_default = {**WORKFLOW, "retries": {"executables": {"inherit": True, "delay": "3s"}}}
    assert policies(with_default) == {
        "own": {"maxAttempts": 9},
        "service": {"maxAttempts": 5, "delay": 1000},
        "default": {"maxAttempts": 2, "delay": 3000, "jitter": "full"},  # workflow, then engine
        "inherits": {"maxAttempts": 5, "delay": 10},
        "down": {"maxAttempts": 2, "delay": 3000, "exponentialBackoff": 2, "jitter": "full"}}


def test_without_a_workflow_default_the_engines_applies() -> None:
    assert policies(WORKFLOW)["default"] == {"maxAttempts": 2, "jitter": "full"}


def test_the_workflow_default_reaches_the_executables_of_included_macros() -> None:
    macro = Macro.from_json({"id": "m", "name": "m", "description": "m", "parameters": [
        {"id": "a", "name": "a", "description": "a", "type": "input"},
        {"id": "b", "name": "b", "description": "b", "type": "output"}],
        "actions": [execute("inner", "a", "b")]})
    workflow = {"api": "4.7.0", "retries": {"executables": {"maxAttempts": 4}},
                "vars": [{"id": "in", "value": "x"}],
                "actions": [{"type": "include", "macro": "m", "id": "inc",
                             "inputs": [{"id": "a", "var": "in"}],
                             "outputs": [{"id": "b", "var": "out"}]}]}
    assert list(policies(workflow, macros={"m": macro}).values()) == [{"maxAttempts": 4}]
