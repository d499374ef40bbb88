"""What a file is and what it asks for (issue 26, defects 2, 7 and 8): Steep's templating is
named as such, a macro file is read as macros even without `parameters', and a for-each that
enumerates over its own input hears one clear sentence about it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.documents.checking import document_kind
from steepy.documents.loading import parse_text, read_services
from steepy.errors import InputError
from tests.documents.services import CP

SERVICES = CP


def _validate(tmp_path: Path, monkeypatch, name: str, text: str, *extra: str):
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["validate", name, "--services", "services.yaml", *extra])


# ---------------------------------------------------------------- 2. Steep's templating

TEMPLATE = """\
---
template: true
---
api: 4.7.0
actions:
{% for i in range(1, 3) %}
  - type: execute
    service: cp{{ i }}
{% endfor %}
"""


@pytest.mark.parametrize("text", [TEMPLATE, TEMPLATE.replace("{% for i in range(1, 3) %}\n", "")
                                  .replace("{% endfor %}\n", "").replace("{{ i }}", "")])
def test_templating_is_named_at_its_front_matter(tmp_path, monkeypatch, text) -> None:
    """Whether or not the rest happens to be YAML, the one problem is the templating, which
    Steep applies to its configuration, service metadata and macros, never to a workflow
    (issue 28: those are rendered, steepy.documents.templating)."""
    result = _validate(tmp_path, monkeypatch, "w.yaml", text)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[0].startswith("w.yaml:2:1: this file uses Steep's templating (front matter "
                               "`template: true'), which only the configuration, service "
                               "metadata and macros may use (in Steep too)"), lines
    assert "not valid YAML" not in result.output and "expected one document" not in result.output
    assert lines[-1] == "1 problem in 1 file"


def test_templated_service_metadata_is_rendered(tmp_path) -> None:
    (tmp_path / "s.yaml").write_text("---\n# rendered by Steep\ntemplate: true\n---\n"
                                     + SERVICES.replace("path: cp", "path: {{ 'cp' }}"))
    assert [s.path for s in read_services(str(tmp_path / "s.yaml")).values()] == ["cp"]


def test_front_matter_without_templating_is_plain_yaml() -> None:
    with pytest.raises(InputError) as caught:
        parse_text("---\ntemplate: false\n---\napi: 4.7.0\n", "w.yaml")
    assert "expected one document but found 2" in str(caught.value)
    assert "templating" not in str(caught.value)
    assert parse_text("---\napi: 4.7.0\n", "w.yaml").data == {"api": "4.7.0"}


# ---------------------------------------------------------------- 7. macro files

MACRO = """\
id: copy_it
name: Copy it
actions:
  - type: execute
    service: cp
    inputs: [{id: i, var: src}]
    outputs: [{id: o, var: dst}]
"""


@pytest.mark.parametrize("data, kind", [
    ({"id": "m", "name": "m", "description": "d", "actions": []}, "macro"),
    ({"id": "m", "name": "m", "vars": []}, "macro"),
    ([{"id": "m", "name": "m", "description": "d"}], "macro"),
    ({"api": "4.7.0", "name": "w", "actions": []}, "workflow"),
    ({"name": "w", "actions": []}, "workflow"),
    ([{"id": "s", "name": "s", "description": "d", "path": "x", "runtime": "other"}], "service"),
    ({"id": "s", "name": "s", "description": "d", "path": "x"}, "service"),
    ([{"id": "s", "name": "s", "parameters": [{"id": "p", "cardinality": "1..1"}]}], "service"),
    ([{"id": "m", "name": "m"}, {"id": "s", "path": "x", "runtime": "other"}], "service"),
    ("text", "workflow"),
])
def test_the_kind_of_a_file_is_told_by_its_keys(data, kind) -> None:
    assert document_kind(data) == kind


def test_a_macro_without_parameters_is_read_as_a_macro(tmp_path, monkeypatch) -> None:
    result = _validate(tmp_path, monkeypatch, "m.yaml", MACRO)
    assert result.exit_code == 2
    assert result.output.splitlines()[:2] == [
        "m.yaml:1:1: `description' is required: a macro needs `id', `name' and `description'",
        "m.yaml:6:27: actions[0].inputs[0].var: Input variable `src' has no value. Give it a "
        "value in `vars' or make it the output of an action."]
    assert "unknown property" not in result.output  # not read as a workflow
    fixed = MACRO.replace("name: Copy it\n", "name: Copy it\ndescription: Copies\n")
    fixed = fixed.replace("var: src", "value: in.txt")
    result = _validate(tmp_path, monkeypatch, "m.yaml", fixed)
    assert result.exit_code == 0, result.output
    assert "m.yaml: valid: 1 macro(s): copy_it" in result.output


# ---------------------------------------------------------------- 8. a for-each over itself

OWN_ENUMERATOR = """\
api: 4.7.0
vars:
  - id: xs
    value: [a.txt, b.txt]
actions:
  - type: for
    id: each
    input: xs
    enumerator: xs
    actions:
      - type: execute
        service: cp
        inputs: [{id: i, var: xs}]
        outputs: [{id: o, var: out}]
"""


def test_an_enumerator_that_is_its_own_input_gets_one_clear_message(tmp_path, monkeypatch) -> None:
    result = _validate(tmp_path, monkeypatch, "w.yaml", OWN_ENUMERATOR)
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "w.yaml:9:17: actions[0].enumerator: For-each action `each' uses variable `xs' as both "
        "its input and its enumerator. The enumerator holds one item of the input at a time, so "
        "it needs a variable of its own (e.g. `enumerator: xs_item', used inside the loop).",
        "1 problem in 1 file"]
    fixed = OWN_ENUMERATOR.replace("enumerator: xs", "enumerator: x").replace("var: xs}", "var: x}")
    assert _validate(tmp_path, monkeypatch, "w.yaml", fixed).exit_code == 0


@pytest.mark.parametrize("item", ["[]", "[1]"], ids=["empty", "a-number"])
@pytest.mark.parametrize("option", ["--services", "--macros"])
def test_a_list_among_a_files_services_or_macros_is_located_not_a_traceback(
        tmp_path, monkeypatch, item, option) -> None:
    """`- []` in a services or macros file (a list where one of them belongs) was taken by the
    schema, which reads a list as a file of them, and then broke the model (exit 5)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text("api: 4.7.0\nactions: []\n")
    (tmp_path / "odd.yaml").write_text(f"- {item}\n")
    args = ["validate", "w.yaml", option, "odd.yaml"]
    if option == "--macros":
        args += ["--services", str(Path(__file__).resolve().parents[2] / "services")]
    result = CliRunner().invoke(main, args)
    kind = "service" if option == "--services" else "macro"
    assert result.exit_code == 2, result.output
    assert f"odd.yaml:1:3: [0]: expected a {kind} (an object), got a list" in result.output


@pytest.mark.parametrize("where", ["value", "var", "--var"])
def test_a_list_holding_null_for_an_input_is_located_not_run(tmp_path, monkeypatch, where) -> None:
    """null inside a list reached the tool as Python's `None' (`sleep None'): refused where the
    input is given, exit 2, nothing stored."""
    monkeypatch.chdir(tmp_path)
    services = str(Path(__file__).resolve().parents[2] / "services")
    given = "value: [null]" if where == "value" else "var: n"
    value = "[null]" if where == "var" else "[1]"
    (tmp_path / "w.yaml").write_text(
        f"api: 4.7.0\nvars: [{{id: n, value: {value}}}]\nactions:\n  - type: execute\n"
        f"    service: sleep\n    inputs: [{{id: seconds, {given}}}]\n")
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    args = ["run", "w.yaml", "-s", services, "--db", db]
    result = CliRunner().invoke(main, args + (["--var", "n=[null]"] if where == "--var" else []))
    assert result.exit_code == 2, result.output
    assert "w.yaml:6:14: actions[0].inputs[0]: Input `seconds' of service `sleep'" in result.output
    assert "list that holds null: a tool cannot take it" in result.output
    assert not (tmp_path / "steepy.db").exists()
