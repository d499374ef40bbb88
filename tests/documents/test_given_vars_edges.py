"""Values given for a workflow's variables that no tool can take, refused at submit where they
were given (a tester's run, session 30): a number or boolean for a file input taken as its
text and checked like any path, an empty path, NaN and infinity, a `--var` value that is not
UTF-8, an object inside a list, a NUL character. Exit code 2, never a traceback, nothing
stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from steepy.cli import main
from tests.conftest import ROOT
from tests.documents.test_input_files import SERVICE

WORKFLOW = """\
api: 4.7.0
vars:
  - id: text
    value: words.txt
  - id: texts
    value: [words.txt]
  - id: label
    value: words
actions:
  - type: execute
    service: tool
    inputs: [{id: file, var: text}, {id: word, var: label}]
  - type: for
    input: texts
    enumerator: each
    actions:
      - type: execute
        service: tool
        inputs: [{id: file, var: each}]
"""
RESOLVED = "(a relative path is resolved against the directory it was submitted from, "


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump([SERVICE.to_json()], sort_keys=False))
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    (tmp_path / "words.txt").write_text("a b\n")
    return tmp_path


def _submit(*args: str):
    return CliRunner().invoke(main, ["submit", "wf.yaml", "-s", "s.yaml", *args],
                              catch_exceptions=False)


def _refused(here: Path, *args: str) -> list[str]:
    """The problems `steepy submit` tells (exit code 2, nothing stored)."""
    result = _submit(*args)
    assert result.exit_code == 2, result.output
    assert not (here / ".steepy").exists()
    return [line.replace(str(here), "HERE") for line in result.stderr.splitlines()[:-1]]


def test_a_number_or_boolean_for_a_file_input_is_a_path_checked(here: Path) -> None:
    """`--var text=2024' is the file ./2024; YAML's `no' (false) and `010' (8) are checked
    as the text the tool would get, with how YAML read them and how to quote them."""
    (here / "2024").write_text("x")
    plan = CliRunner().invoke(main, ["plan", "wf.yaml", "-s", "s.yaml", "--var", "text=2024"])
    assert plan.exit_code == 0, plan.output
    assert f"tool {here / '2024'} words" in plan.stdout
    assert _refused(here, "--var", "text=no", "--var", "text=010", "--var", "label=x") == [
        f"--var text: input file `8' does not exist {RESOLVED}HERE); YAML read `010' as the "
        "number 8: to mean the name `010', quote it (--var 'text=\"010\"')"]
    assert _refused(here, "--var", "text=no") == [
        f"--var text: input file `false' does not exist {RESOLVED}HERE); YAML read `no' as the "
        "boolean false: to mean the name `no', quote it (--var 'text=\"no\"')"]
    (here / "nums.yaml").write_text("# items\ntexts: [2024, no, 42]\n")
    assert _refused(here, "--vars", "nums.yaml") == [  # each item where it is written
        f"nums.yaml:2:15: texts[1]: input file `false' does not exist {RESOLVED}HERE); YAML "
        "read `no' as the boolean false: to mean the name `no', quote it (\"no\")",
        f"nums.yaml:2:19: texts[2]: input file `42' does not exist {RESOLVED}HERE)"]
    (here / "wf.yaml").write_text(WORKFLOW.replace("value: words.txt", "value: 42"))
    assert _refused(here) == [  # in the workflow itself: no text of the value at hand
        f"wf.yaml:4:12: vars[0].value: input file `42' does not exist {RESOLVED}HERE); the "
        "value is the number 42, taken as its text"]


def test_an_empty_path_for_a_file_input_is_refused_where_it_was_given(here: Path) -> None:
    assert _refused(here, "--var", "text=", "--var", "texts=[words.txt, '']") == [
        "--var text: an input file cannot be an empty path",
        "--var texts:1:13: texts[1]: an input file cannot be an empty path"]
    (here / "wf.yaml").write_text(WORKFLOW.replace("value: words.txt", 'value: ""'))
    assert _refused(here) == ["wf.yaml:4:12: vars[0].value: an input file cannot be an empty "
                              "path"]


def test_nan_and_infinity_are_refused_where_they_were_given(here: Path) -> None:
    finite = "is not a finite number: a workflow's values are JSON, which has no NaN or infinity"
    (here / "vars.yaml").write_text("texts: [1, -.inf]\nlabel: .inf\n")
    assert _refused(here, "--var", "label=.nan", "--vars", "vars.yaml") == [
        f"--var label: NaN {finite}",  # the option's label wins: the file's is not told
        f"vars.yaml:1:12: texts[1]: -infinity {finite}"]
    assert _refused(here, "--var", "texts=[words.txt, .inf]") == [
        f"--var texts:1:13: texts[1]: infinity {finite}"]
    import steepy

    with steepy.connect(here / "db.sqlite", services="s.yaml") as client:
        with pytest.raises(steepy.InputError) as caught:
            client.submit("wf.yaml", vars={"label": float("nan")})
    assert [str(p) for p in caught.value.problems] == [f"<vars>: label: NaN {finite}"]
    assert not (here / "db.sqlite").exists()


@pytest.mark.process
def test_a_var_value_that_is_not_utf8_is_located_not_a_traceback(here: Path) -> None:
    """A command line is bytes: Python holds those that are not UTF-8 as lone surrogates,
    which the YAML reader cannot take (it raised UnicodeEncodeError, exit code 5)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL"):
        env.pop(key, None)
    ran = subprocess.run([sys.executable, "-m", "steepy.cli", "submit", "wf.yaml", "-s",
                          "s.yaml", "--var", b"label=ok\xff\xfe", "--var", b"la\xffbel=x"],
                         cwd=here, env=env, capture_output=True)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.splitlines()[0] == b"--var label:1:3: not valid UTF-8 (byte 0xff)"
    assert b"Traceback" not in ran.stderr
    assert not (here / ".steepy").exists()


def test_an_object_is_refused_at_any_depth_with_the_path_of_its_item(here: Path) -> None:
    takes = "takes a string, number, boolean or list, not an object"
    assert _refused(here, "--var", "texts=[words.txt, [a, {a: 1}]]", "--var", "label={a: 1}") == [
        f"--var label: variable `label' {takes}",
        f"--var texts:1:17: texts[1][1]: variable `texts' {takes}"]
    (here / "wf.yaml").write_text(WORKFLOW.replace("value: words\n", "value: {a: 1}\n"))
    result = _submit("--var", "label={b: [1, {c: x}]}")  # an object for an object: as before
    assert result.exit_code == 0, result.output


def test_a_nul_character_is_refused_where_it_was_given(here: Path) -> None:
    """It would fail at run time only (`cannot run: bad request')."""
    nul = "a NUL character cannot be passed to a tool"
    (here / "vars.yaml").write_text('label: "echo a\\0b"\ntexts: [words.txt, "x\\0"]\n')
    assert _refused(here, "--vars", "vars.yaml") == [
        f"vars.yaml:1:8: {nul}", f"vars.yaml:2:20: texts[1]: {nul}"]
    assert _refused(here, "--var", 'label="\\0"') == [f"--var label: {nul}"]


def test_a_value_of_two_documents_is_refused(here: Path) -> None:
    """Review (session 49): `--var label=$'a\\n---\\nb'` kept `a' without a word (a
    `--vars` file of two documents is refused)."""
    assert _refused(here, "--var", "label=a\n---\nb") == [
        "--var label: holds 2 YAML documents (a line `---' starts one); a value is one (text "
        'with such a line: in double quotes, "a\\n---\\nb")']
    assert _submit("--var", 'label="a\\n---\\nb"').exit_code == 0  # as it says
