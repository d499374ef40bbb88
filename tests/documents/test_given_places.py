"""Values given for a workflow's variables (`--vars FILE`, `--var name=value`): every problem
of them at once, a missing item of a list at the item itself with its JSON path, and a YAML
error at the end of a one-line value inside that line (a new-user run, session 37: only the
first problem was told, a missing item was placed at its list, `--var prefix=[1,2' at a
line 2 that is not there)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.documents.inputfiles import InputBase
from steepy.documents.loading import parse_text
from steepy.documents.submissions import submission_from
from steepy.documents.variables import GivenVars, read_given
from steepy.errors import InputError
from tests.documents.test_input_files import SERVICE

WORKFLOW = """\
api: 4.7.0
vars:
  - id: files
    value: [a.txt]
  - id: prefix
    value: hello
actions:
  - type: for
    input: files
    enumerator: f
    actions:
      - type: execute
        service: tool
        inputs: [{id: file, var: f}, {id: word, var: prefix}]
"""
NOT_THERE = "input file `q.txt' does not exist (a relative path is resolved against here, "


def _problems(base: Path, given: GivenVars) -> list[str]:
    with pytest.raises(InputError) as caught:
        submission_from(parse_text(WORKFLOW, "wf.yaml"), {"tool": SERVICE}, {}, None, given,
                        InputBase(base, "here"))
    return [str(p).replace(str(base) + "/", "") for p in caught.value.problems]


def test_every_problem_of_a_vars_file_at_once_and_an_item_at_its_place(tmp_path: Path) -> None:
    """A name the workflow does not have is placed at the name (its key), a value at itself."""
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "vars.yaml").write_text("prefix: a\nprefx: b\nfiles: [a.txt, q.txt]\n")
    given = read_given([str(tmp_path / "vars.yaml")], [])
    assert _problems(tmp_path, given) == [
        "vars.yaml:2:1: the workflow has no variable `prefx' that can be set; did you mean "
        "`prefix'?",
        f"vars.yaml:3:16: files[1]: {NOT_THERE}{tmp_path})"]


def test_an_item_of_a_var_option_is_placed_inside_its_value(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    given = read_given([], ["files=[a.txt, q.txt]", "prefx=1"])
    assert _problems(tmp_path, given) == [
        "--var prefx: the workflow has no variable `prefx' that can be set; did you mean "
        "`prefix'?",
        f"--var files:1:9: files[1]: {NOT_THERE}{tmp_path})"]
    given = GivenVars.of({"files": ["a.txt", "q.txt"]})  # the API's: no text, a JSON path
    assert _problems(tmp_path, given) == [f"<vars>: files[1]: {NOT_THERE}{tmp_path})"]


def test_a_problem_a_server_reports_of_an_item_is_placed_where_it_was_given() -> None:
    given = read_given([], ["files=[a.txt, q.txt]"])
    assert str(given.problem_at("files[1]", "m")) == "--var files:1:9: files[1]: m"
    assert str(given.problem_at("files", "m")) == "--var files: m"
    assert given.problem_at("other[0]", "m") is None


def test_problems_of_several_files_and_options_come_together(tmp_path: Path) -> None:
    (tmp_path / "list.yaml").write_text("- prefix\n")
    with pytest.raises(InputError) as caught:
        read_given([str(tmp_path / "list.yaml"), str(tmp_path / "none.yaml")],
                   ["prefix=[1,2", "x"])
    assert [str(p).replace(str(tmp_path) + "/", "") for p in caught.value.problems] == [
        "list.yaml:1:1: a vars file holds `name: value' pairs (an object)",
        "none.yaml: cannot read file: No such file or directory",
        # the end of the one-line value, not a line 2
        "--var prefix:1:5: not valid YAML: did not find expected ',' or ']' (while parsing a "
        "flow sequence)",
        "--var: `x' is not name=value"]


def test_a_yaml_error_at_the_end_of_a_file_is_at_its_last_character() -> None:
    for text in ("a: [1, 2", "a: [1, 2\n", "a: [1, 2\n\n  \n"):
        with pytest.raises(InputError) as caught:
            parse_text(text, "v.yaml")
        assert caught.value.problems[0].location() == "v.yaml:1:9", text
    with pytest.raises(InputError) as caught:  # inside the text: where the parser stopped
        parse_text("a:\n - [x\n - y\n", "v.yaml")
    assert caught.value.problems[0].location() == "v.yaml:3:5"


def test_plan_prints_every_problem_of_the_values_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    (tmp_path / "s.yaml").write_text("- " + "\n  ".join(_service_yaml().splitlines()) + "\n")
    (tmp_path / "vars.yaml").write_text("prefx: b\nfiles: [a.txt, q.txt]\n")
    result = CliRunner().invoke(main, ["plan", "wf.yaml", "-s", "s.yaml", "--vars", "vars.yaml"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "vars.yaml:1:1: the workflow has no variable `prefx' that can be set; did you mean "
        "`prefix'?",
        f"vars.yaml:2:16: files[1]: input file `q.txt' does not exist (a relative path is "
        f"resolved against the directory it was submitted from, {tmp_path})"]


def _service_yaml() -> str:
    import yaml

    return yaml.safe_dump(SERVICE.to_json(), sort_keys=False)
