"""A document's problems come out all at once (issue 26, defect 1): those of the schema, those
of the model for the parts the schema let through (every bad duration, not the first), and
those of validation (references, services, runtimes) for the parts both let through, in the
order of their lines; and nothing that only follows from a part already rejected. The same
list reaches `steepy validate`, `steepy submit`, `POST /workflows` (and so the UI's editor)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steepy.cli import main
from steepy.documents.checking import check_macros, check_workflow
from steepy.documents.loading import parse_text, read_definitions, read_services
from steepy.errors import InputError
from steepy.plugins.loaded import builtin_set
from tests.documents.services import CP

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SERVICES_YAML = CP + """\
- id: kcp
  name: kcp
  description: copy in a cluster
  path: cp
  runtime: kubernetes
  parameters:
    - {id: i, name: i, description: i, type: input, cardinality: 1..1}
    - {id: o, name: o, description: o, type: output, cardinality: 1..1}
"""

# one problem of each layer, and two bad durations in one action
LAYERED = """\
api: 4.7.0
prio: 3
vars:
  - id: in
    value: a.txt
actions:
  - type: execute
    service: cp
    retries:
      delay: 5 parsecs
    maxRuntime: 3 fortnights
    inputs: [{id: i, var: in}]
    outputs: [{id: o, var: mid}]
  - type: execute
    service: nosuch
    inputs: [{id: i, var: mid}]
  - type: execute
    service: kcp
    inputs: [{id: i, var: in}]
    outputs: [{id: o, var: out}]
"""
EXPECTED = [  # line, path, the start of the message
    (2, "prio", "unknown property `prio'"),
    (10, "actions[0].retries.delay", "Unknown duration unit: `parsecs'"),
    (11, "actions[0].maxRuntime", "Unknown duration unit: `fortnights'"),
    (15, "actions[1].service", "Service `nosuch' is not defined"),
]
KUBERNETES = "[1].runtime: Service `kcp' has runtime `kubernetes'"


@pytest.fixture
def services(tmp_path: Path):
    (tmp_path / "services.yaml").write_text(SERVICES_YAML)
    return read_services(str(tmp_path / "services.yaml"))


def _problems(text: str, services, macros=None) -> list:
    try:
        check_workflow(parse_text(text, "w.yaml"), services, macros or {},
                       builtin_set().runtimes())
    except InputError as e:
        return e.problems
    return []


def _shown(problems) -> list[tuple]:
    return [(p.line, p.path, p.message) for p in problems if p.file == "w.yaml"]


def test_every_layer_speaks_in_one_report(services) -> None:
    problems = _problems(LAYERED, services)
    shown = _shown(problems)
    assert [(line, path) for line, path, _ in shown] == [(line, path) for line, path, _ in EXPECTED]
    for (_, _, message), (_, _, start) in zip(shown, EXPECTED):
        assert message.startswith(start), message
    runtime = [p for p in problems if p.file != "w.yaml"]
    assert len(runtime) == 1 and KUBERNETES in str(runtime[0])  # placed in the services file


def test_a_part_the_schema_rejects_leaves_no_follow_on_noise(services) -> None:
    """The first action is no action (a bad type): the second takes its output and waits for
    it; neither `mid' having no value nor the dependency on `first' is reported."""
    text = ("api: 4.7.0\nvars: [{id: in, value: a.txt}]\nactions:\n"
            "  - {type: exec, id: first, service: cp, inputs: [{id: i, var: in}],"
            " outputs: [{id: o, var: mid}]}\n"
            "  - {type: execute, service: cp, dependsOn: [first], inputs: [{id: i, var: mid}],"
            " outputs: [{id: o, var: out}], deadline: 1 eon}\n"
            "  - {type: execute, service: cp, dependsOn: [ghost], inputs: [{id: i, var: in}],"
            " outputs: [{id: o, var: out2}]}\n")
    shown = _shown(_problems(text, services))
    assert [(line, path) for line, path, _ in shown] == [
        (4, "actions[0].type"), (5, "actions[1].deadline"), (6, "actions[2].dependsOn[0]")]
    assert "ghost" in shown[2][2]


def test_paths_after_a_rejected_action_are_those_of_the_file(services) -> None:
    """Taking a rejected action out moves the ones after it; problems found in them still
    name their own index and line (also inside a for-each's body)."""
    text = ("api: 4.7.0\nvars: [{id: xs, value: [a, b]}]\nactions:\n"
            "  - type: for\n    input: xs\n    enumerator: x\n    actions:\n"
            "      - {type: execute}\n"
            "      - {type: execute, service: nosuch, inputs: [{id: i, var: x}]}\n"
            "  - {type: execute}\n"
            "  - {type: execute, service: cp, inputs: [{id: i, var: xs}], outputs: [{id: p, var: y}]}\n")
    shown = _shown(_problems(text, services))
    assert [(line, path) for line, path, _ in shown] == [
        (8, "actions[0].actions[0]"), (9, "actions[0].actions[1].service"), (10, "actions[1]"),
        (11, "actions[2]"), (11, "actions[2]"), (11, "actions[2].outputs[0].id")]
    assert [message.split(";")[0] for _, _, message in shown[3:5]] == [
        "Input `i' of service `cp' is given 2 times", "Output `o' of service `cp' is missing"]


def test_a_variable_defined_twice_and_a_bad_duration_come_out_together(services) -> None:
    text = ("api: 4.7.0\nactions:\n"
            "  - {type: execute, service: cp, inputs: [{id: i, var: {id: v, value: 1}}],"
            " outputs: [{id: o, var: w}]}\n"
            "  - {type: execute, service: cp, inputs: [{id: i, var: {id: v, value: 2}}],"
            " outputs: [{id: o, var: z}], maxRuntime: 1 eon}\n")
    shown = _shown(_problems(text, services))
    assert [(line, path) for line, path, _ in shown] == [
        (4, "actions[1].inputs[0].var"), (4, "actions[1].maxRuntime")]
    assert "defined more than once" in shown[0][2]


def test_a_service_file_reports_every_service_s_problems(tmp_path) -> None:
    (tmp_path / "s.yaml").write_text(SERVICES_YAML.replace("  runtime: other\n",
                                                           "  runtime: other\n  colour: red\n")
                                     + "  maxRuntime: 5 parsecs\n  deadline: 1 eon\n")
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "s.yaml")])
    assert result.exit_code == 2
    lines = [line.replace(f"{tmp_path}/", "") for line in result.output.splitlines()]
    assert [line.split(": ")[1] for line in lines if line.startswith("s.yaml:")] == [
        "[0].colour", "[1].runtime", "[1].maxRuntime", "[1].deadline"]
    found, problems = read_definitions(str(tmp_path / "s.yaml"), "service")
    assert sorted(found) == ["cp", "kcp"] and len(problems) == 3  # the runtime is validation's


def test_a_macro_file_reports_schema_and_validation_problems(tmp_path, services) -> None:
    text = ("- id: m\n  name: m\n  description: d\n  parameters:\n"
            "    - {id: p, name: p, description: p, type: inout}\n"
            "    - {id: q, name: q, description: q, type: input}\n"
            "  actions:\n"
            "    - {type: execute, service: cp, inputs: [{id: i, var: p}], outputs: [{id: o, var: r}]}\n"
            "    - {type: execute, service: cp, inputs: [{id: i, var: nothing}],"
            " outputs: [{id: o, var: s}]}\n")
    with pytest.raises(InputError) as caught:
        check_macros(parse_text(text, "m.yaml"), services, {}, builtin_set().runtimes())
    assert [(p.line, p.path) for p in caught.value.problems] == [
        (5, "[0].parameters[0].type"), (9, "[0].actions[1].inputs[0].var")]
    assert "`nothing' has no value" in caught.value.problems[1].message


# ---------------------------------------------------------------- N problems, N lines

KINDS = {  # what is done to one action: how many problems that makes
    "fine": (lambda a: None, 0),
    "unknown key": (lambda a: a.update(colour="red"), 1),
    "not an action": (lambda a: a.update(type="exec"), 1),
    "no service": (lambda a: a.pop("service"), 1),
    "bad delay": (lambda a: a.update(retries={"delay": "5 parsecs"}), 1),
    "two bad timeouts": (lambda a: a.update(maxRuntime="1 eon", deadline=-3), 2),
    "unknown service": (lambda a: a.update(service="nosuch"), 1),
    "dependency on nothing": (lambda a: a.update(dependsOn=["ghost"]), 1),
}


def _chain(kinds: list[str]) -> dict:
    """Actions that copy v0 -> v1 -> ... (each waits for the last), each changed by its kind."""
    actions = []
    for n, kind in enumerate(kinds):
        action = {"type": "execute", "id": f"a{n}", "service": "cp",
                  "inputs": [{"id": "i", "var": f"v{n}"}], "outputs": [{"id": "o", "var": f"v{n + 1}"}]}
        if n:
            action["dependsOn"] = [f"a{n - 1}"]
        KINDS[kind][0](action)
        actions.append(action)
    return {"api": "4.7.0", "vars": [{"id": "v0", "value": "a.txt"}], "actions": actions}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=8),
       extra=st.sampled_from(["none", "unknown top-level key", "old api", "bad chain retries"]))
def test_n_independent_problems_make_n_lines(services, kinds, extra) -> None:
    data = _chain(kinds)
    expected = sum(KINDS[kind][1] for kind in kinds) + (extra != "none")
    if extra == "unknown top-level key":
        data["prio"] = 1
    elif extra == "old api":
        data["api"] = "3.0.0"
    elif extra == "bad chain retries":
        data["retries"] = {"processChains": {"maxAttempts": 2, "delay": "soon"}}
    problems = _problems(yaml.safe_dump(data, sort_keys=False), services)
    assert len(problems) == expected, [str(p) for p in problems]
    assert [p.line for p in problems] == sorted(p.line for p in problems)


# ---------------------------------------------------------------- every way in


def test_validate_and_submit_say_the_same(tmp_path, monkeypatch) -> None:
    (tmp_path / "services.yaml").write_text(SERVICES_YAML)
    (tmp_path / "w.yaml").write_text(LAYERED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STEEPY_DB_URL", f"sqlite:///{tmp_path / 'steepy.db'}")
    outputs = []
    for command in ("validate", "submit"):
        result = CliRunner().invoke(main, [command, "w.yaml", "--services", "services.yaml"])
        assert result.exit_code == 2, result.output
        outputs.append([line for line in result.output.splitlines() if "w.yaml:" in line
                        or KUBERNETES in line])
    assert outputs[0] == outputs[1] and len(outputs[0]) == len(EXPECTED) + 1
    assert [line.split(": ")[1] for line in outputs[0] if line.startswith("w.yaml")] == [
        path for _, path, _ in EXPECTED]


def test_post_workflows_answers_with_every_problem(tmp_path, services) -> None:
    from steepy.http import ApiContext, create_app
    from steepy.registry import open_registry

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, services, {}, log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx), raise_server_exceptions=False) as client:
        response = client.post("/workflows", content=LAYERED,
                               headers={"Accept": "application/json"})
        assert response.status_code == 400
        errors = json.loads(response.headers["x-steepy-problems"])
        mine = [(e["line"], e["path"]) for e in errors if e["file"] == "<request>"]
        assert mine == [(line, path) for line, path, _ in EXPECTED]
        assert any(KUBERNETES.split(": ", 1)[1] in e["message"] for e in errors)
        assert client.get("/workflows").json() == []


def test_bad_actions_are_found_in_one_round_not_one_round_each() -> None:
    """Every action the model cannot read is reported by one build: taking them out one
    build at a time made 200 bad durations in 2,000 actions take 1m48s."""
    from steepy.documents.layers import build_layers
    from steepy.model.workflow import Workflow

    actions = [{"type": "execute", "id": f"a{i}", "service": "cp",
                **({"deadline": "1 eon"} if i % 2 else {})} for i in range(40)]
    builds = []

    def make(view):
        builds.append(1)
        return Workflow.from_json(view)

    layered = build_layers({"api": "4.7.0", "actions": actions}, "workflow", make)
    assert layered.value is not None and len(layered.value.actions) == 40  # (deadlines out)
    assert [p.path for p in layered.problems] == [f"actions[{i}].deadline"
                                                  for i in range(1, 40, 2)]
    assert len(builds) == 2  # one that finds all twenty, one of what is left
