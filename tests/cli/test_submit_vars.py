"""Values for a workflow's variables at submit time (`--var name=value`, `--vars FILE`): read as
YAML, checked against the workflow (only variables with a default value; an unknown name with
a did-you-mean; a value the workflow cannot use, where it was given), stored with the
submission beside the source as written, and shown by `steepy show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main

SERVICES = """\
- id: echo
  name: Echo
  description: prints its words
  path: echo
  runtime: other
  parameters:
    - {id: words, name: Words, description: what to print, type: input, cardinality: 1..1,
       dataType: string}
"""
WORKFLOW = """\
api: 4.7.0
name: greet
vars:
  - id: who
    value: world
  - id: sizes
    value: [1]
  - id: printed
actions:
  - type: for
    input: sizes
    enumerator: size
    actions:
      - type: execute
        service: echo
        inputs: [{id: words, var: who}]
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    return tmp_path


def _submit(*args: str):
    return CliRunner().invoke(main, ["submit", "wf.yaml", "-s", "services.yaml", *args],
                              catch_exceptions=False)


def test_values_given_are_read_as_yaml_stored_and_shown(here: Path) -> None:
    (here / "params.yaml").write_text("who: file\nsizes: [5, 6]\n")
    result = _submit("--vars", "params.yaml", "--var", "who=[a, b]", "--var", "who=option")
    assert result.exit_code == 0, result.output
    submission_id = result.stdout.split()[-1]
    shown = CliRunner().invoke(main, ["show", submission_id], catch_exceptions=False)
    assert '  var who: "option"\n  var sizes: [5, 6]\n' in shown.stdout  # the option wins
    document = json.loads(CliRunner().invoke(main, ["show", submission_id, "--json"]).stdout)
    assert document["vars"] == {"who": "option", "sizes": [5, 6]}
    from steepy.registry import open_registry

    stored = open_registry(f"sqlite:///{here / '.steepy' / 'steepy.db'}").views.get_submission(
        submission_id)
    assert {v.id: v.value for v in stored.workflow.vars} == {
        "who": "option", "sizes": [5, 6], "printed": None}
    assert stored.source == WORKFLOW  # the file as written; the values beside it


def test_names_without_a_default_value_and_bad_values_are_located(here: Path) -> None:
    (here / "params.yaml").write_text("# values\nsizes: 3\nwho: [a, b]\n")
    unknown = _submit("--var", "woh=x", "--var", "printed=1", "--var", "=1", "--var", "x")
    assert unknown.exit_code == 2
    assert unknown.stderr.splitlines()[:2] == [
        "--var: `=1' is not name=value", "--var: `x' is not name=value"]
    names = _submit("--var", "woh=x", "--var", "printed=1")
    assert names.exit_code == 2
    assert names.stderr.splitlines()[:2] == [
        "--var printed: variable `printed' has no default value in the workflow, so it cannot "
        "be set (a variable without a `value' is one for an action to write)",
        "--var woh: the workflow has no variable `woh' that can be set; did you mean `who'?"]
    values = _submit("--vars", "params.yaml", "--var", "sizes={a: 1}")
    assert values.exit_code == 2
    lines = values.stderr.splitlines()
    assert lines[0] == ("--var sizes: variable `sizes' takes a string, number, boolean or list, "
                        "not an object")
    typed = _submit("--vars", "params.yaml")
    assert typed.exit_code == 2
    assert typed.stderr.splitlines()[0].startswith(
        "params.yaml:3:6: the workflow cannot use `who' = [\"a\", \"b\"]: wf.yaml:")
    assert not (here / ".steepy").exists()  # nothing stored


def test_run_takes_the_same_options(here: Path) -> None:
    result = CliRunner().invoke(main, ["run", "wf.yaml", "-s", "services.yaml", "--var",
                                       "who=[a, b]"], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr.startswith("--var who: the workflow cannot use `who' = [\"a\", \"b\"]: "
                                    "wf.yaml:")
    assert not (here / ".steepy").exists()


def test_submit_resume_is_stored_with_the_submission(here: Path) -> None:
    """`steepy submit --resume` (extensions 15): the submission reuses earlier work; without
    it, the configuration's `cache.enabled` decides (nothing stored)."""
    from steepy.registry import open_registry

    ids = [_submit(*args).stdout.split()[-1] for args in (["--resume"], [])]
    views = open_registry(f"sqlite:///{here / '.steepy' / 'steepy.db'}").views
    assert [views.get_submission(i).resume for i in ids] == [True, None]


def test_values_are_shown_as_written_and_a_long_one_cut(here: Path) -> None:
    """Review (session 49): `steepy show' printed `h\\u00e9llo' for `héllo', and a list of
    50,000 items as one line of 250 KB."""
    result = _submit("--var", "who=héllo 日本", "--var", f"sizes=[{', '.join(['7'] * 50000)}]")
    assert result.exit_code == 0, result.output
    shown = CliRunner().invoke(main, ["show", result.stdout.split()[-1]]).stdout
    assert '  var who: "héllo 日本"\n' in shown
    (line,) = [x for x in shown.splitlines() if x.startswith("  var sizes: ")]
    assert line == ("  var sizes: [" + ", ".join(["7"] * 67)
                    + "… (50,000 items; --json shows it whole)")
