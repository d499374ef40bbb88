"""Reading YAML/JSON with positions, duplicate keys, schema errors; never a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steepy.errors import InputError
from steepy.documents.loading import parse_text, parse_workflow, read_macros, read_services

WORKFLOW = """\
api: 4.7.0
vars:
  - id: a
    value: x.txt
actions:
  - type: execute
    service: cp
    inputs:
      - id: input_file
        var: a
    outputs:
      - id: output_file
        var: b
    retries:
      maxAttempts: 3
      delay: 5 parsecs
"""


def test_positions_follow_json_paths() -> None:
    doc = parse_text(WORKFLOW, "w.yaml")
    assert doc.positions["actions[0].service"] == (7, 14)
    assert doc.positions["actions[0].retries.delay"] == (16, 14)


def test_duplicate_key_is_an_error_with_its_line() -> None:
    with pytest.raises(InputError) as info:
        parse_text("a: 1\nb: 2\na: 3\n", "d.yaml")
    (problem,) = info.value.problems
    assert (problem.line, problem.column) == (3, 1)
    assert "duplicate key `a'" in problem.message


def test_duplicate_key_in_json_is_located() -> None:
    with pytest.raises(InputError) as info:
        parse_text('{"a": 1,\n "a": 2}', "d.json")
    assert info.value.problems[0].line == 2


def test_json_syntax_error_has_line_and_column() -> None:
    with pytest.raises(InputError) as info:
        parse_text('{"a": 1,\n  "b": }', "bad.json")
    problem = info.value.problems[0]
    assert (problem.line, problem.column) == (2, 8) and "not valid JSON" in problem.message


def test_yaml_syntax_error_has_line() -> None:
    with pytest.raises(InputError) as info:
        parse_text("a: [1, 2\nb: 3\n", "bad.yaml")
    assert info.value.problems[0].line is not None


def test_model_problem_is_located_in_the_file() -> None:
    with pytest.raises(InputError) as info:
        parse_workflow(WORKFLOW, "w.yaml")
    problem = info.value.problems[0]
    assert problem.path == "actions[0].retries.delay"
    assert (problem.file, problem.line, problem.column) == ("w.yaml", 16, 14)
    assert "parsecs" in problem.message


def test_schema_problems_are_all_reported() -> None:
    text = WORKFLOW.replace("maxAttempts", "maxAtempts").replace("type: execute", "type: exec")
    with pytest.raises(InputError) as info:
        parse_workflow(text, "w.yaml")
    messages = " | ".join(p.message for p in info.value.problems)
    assert "exec" in messages and "execute, for, include" in messages


def test_json_workflow_is_read_like_yaml() -> None:
    data = parse_text(WORKFLOW, "w.yaml").data
    data["actions"][0]["retries"]["delay"] = "5s"
    workflow, _ = parse_workflow(json.dumps(data), "<request>")
    assert workflow.actions[0].retries.delay == 5000


def test_yaml_dates_stay_text() -> None:
    assert parse_text("v: 2024-01-02\n").data == {"v": "2024-01-02"}


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    with pytest.raises(InputError, match="too large"):
        parse_text("\n".join(lines) + "\n")


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


SERVICE = """\
- id: {id}
  name: Copy
  description: Copy a file
  path: cp
  runtime: other
  parameters:
    - id: input_file
      name: Input
      description: Input
      type: input
      cardinality: 1..1
"""


def test_services_from_folder_glob_and_list(tmp_path) -> None:
    _write(tmp_path, "a.yaml", SERVICE.format(id="a"))
    _write(tmp_path, "b.yml", SERVICE.format(id="b"))
    assert set(read_services(str(tmp_path))) == {"a", "b"}
    assert set(read_services(str(tmp_path / "*.yaml"))) == {"a"}
    assert set(read_services([str(tmp_path / "a.yaml"), str(tmp_path / "b.yml")])) == {"a", "b"}


def test_duplicate_service_id_across_files(tmp_path) -> None:
    _write(tmp_path, "a.yaml", SERVICE.format(id="same"))
    _write(tmp_path, "b.yaml", SERVICE.format(id="same"))
    with pytest.raises(InputError, match="already defined"):
        read_services(str(tmp_path))


def test_bad_cardinality_names_file_line_and_path(tmp_path) -> None:
    path = _write(tmp_path, "s.yaml", SERVICE.format(id="a").replace("1..1", "2..1"))
    with pytest.raises(InputError) as info:
        read_services(str(path))
    problem = info.value.problems[0]
    assert problem.path == "[0].parameters[0].cardinality" and problem.line == 11
    assert "minimum is greater than maximum" in problem.message


def test_macros_single_object(tmp_path) -> None:
    path = _write(tmp_path, "m.yaml", "id: m\nname: M\ndescription: d\nparameters: []\nactions: []\n")
    assert list(read_macros(str(path))) == ["m"]


def test_missing_file_is_an_input_error(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_services(str(tmp_path / "nope.yaml"))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parsing_arbitrary_text_raises_only_input_error(text: str) -> None:
    try:
        parse_text(text)
    except InputError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}[]:,-\"' \n\tab1&*!|>#%@`", max_size=120))
def test_workflow_from_arbitrary_yaml_raises_only_input_error(text: str) -> None:
    try:
        parse_workflow(text, "x.yaml")
    except InputError:
        pass


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["id", "type", "var", "value", "actions", "inputs", "outputs",
                                       "service", "for", "execute", "include", "retries",
                                       "maxRuntime", "dependsOn", "enumerator", "input", "vars"]),
                      children, max_size=5),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["api", "vars", "actions", "retries", "priority", "name"]),
                       JSONISH, max_size=4))
def test_workflow_from_arbitrary_json_raises_only_input_error(data: dict) -> None:
    try:
        parse_workflow(json.dumps(data), "x.json")
    except InputError:
        pass
