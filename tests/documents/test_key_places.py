"""A key the schema does not know is a problem of its own, at the key (not at its value), with
the allowed key it most resembles; a variable without a value is shown with the one it most
resembles (a new-user run, session 37: `inptus' was reported at the line after it, two
unknown keys of one object as one problem, neither with a `did you mean')."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.documents.checking import check_workflow
from steepy.documents.loading import parse_text, read_services
from steepy.model.suggestions import closest, suggest
from steepy.errors import InputError
from steepy.model.service import Service
from tests.documents.services import CP

SERVICES = {"cp": Service.from_json(s) for s in __import__("yaml").safe_load(CP)}

TYPOS = """\
api: 4.7.0
vars:
  - id: files
    value: [a.txt, b.txt]
  - id: copies
actions:
  - type: for
    input: files
    enumertor: f
    output: copies
    yieldToOuput: c
    actions:
      - type: execute
        service: cp
        inptus:
          - {id: i, var: f}
        outputs:
          - {id: o, var: c}
"""


def _problems(text: str, name: str = "w.yaml") -> list[str]:
    with pytest.raises(InputError) as caught:
        check_workflow(parse_text(text, name), SERVICES, {}, None)
    return [str(p) for p in caught.value.problems]


def _unknown(problems: list[str]) -> list[str]:
    return [p.split("; allowed here")[0] for p in problems if "unknown property" in p]


def test_each_unknown_key_is_a_problem_at_the_key_with_a_did_you_mean() -> None:
    assert _unknown(_problems(TYPOS)) == [
        "w.yaml:9:5: actions[0].enumertor: unknown property `enumertor' (did you mean "
        "`enumerator'?)",
        "w.yaml:11:5: actions[0].yieldToOuput: unknown property `yieldToOuput' (did you mean "
        "`yieldToOutput'?)",
        # its value (a list) starts on the next line, 16:11
        "w.yaml:15:9: actions[0].actions[0].inptus: unknown property `inptus' (did you mean "
        "`inputs'?)"]


def test_a_key_on_the_line_of_its_value_and_in_json_is_placed_at_the_key() -> None:
    inline = TYPOS.replace("        outputs:\n          - {id: o, var: c}\n",
                           "        outputs: [{id: o, var: c, stor: true}]\n")
    assert _unknown(_problems(inline))[-1] == (
        "w.yaml:17:35: actions[0].actions[0].outputs[0].stor: unknown property `stor' "
        "(did you mean `store'?)")
    text = json.dumps({"api": "4.7.0", "actions": [{"type": "execute", "service": "cp",
                                                   "retires": 1}]}, indent=1)
    (problem,) = _unknown(_problems(text, "w.json"))
    line = text.splitlines().index('   "retires": 1') + 1
    assert problem == (f"w.json:{line}:4: actions[0].retires: unknown property `retires' "
                       "(did you mean `retries'?)")


def test_the_rest_is_still_checked_after_two_unknown_keys() -> None:
    """Only the unknown keys are taken out, every one: the action is still read and
    validated (its service is not defined)."""
    text = ("api: 4.7.0\nactions:\n  - type: execute\n    service: cpp\n    inptus: []\n"
            "    outptus: []\n")
    assert [p.split("; allowed")[0] for p in _problems(text)] == [
        "w.yaml:4:14: actions[0].service: Service `cpp' is not defined. Did you mean `cp'?",
        "w.yaml:5:5: actions[0].inptus: unknown property `inptus' (did you mean `inputs'?)",
        "w.yaml:6:5: actions[0].outptus: unknown property `outptus' (did you mean `outputs'?)"]


def test_service_metadata_keys_are_placed_at_the_key(tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(CP.replace("  runtime: other\n", "  runtime: other\n  paramters:\n    []\n"))
    with pytest.raises(InputError) as caught:
        read_services(str(path))
    assert [str(p).replace(f"{tmp_path}/", "").split("; allowed")[0]
            for p in caught.value.problems] == [
        "s.yaml:6:3: [0].paramters: unknown property `paramters' (did you mean `parameters'?)"]


def test_a_variable_without_a_value_is_shown_with_the_one_it_resembles() -> None:
    text = TYPOS.replace("enumertor", "enumerator").replace("yieldToOuput", "yieldToOutput")
    text = text.replace("inptus", "inputs").replace("var: f}", "var: fils}")
    assert _problems(text) == [
        "w.yaml:16:26: actions[0].actions[0].inputs[0].var: Input variable `fils' has no "
        "value. Give it a value in `vars' or make it the output of an action. Did you mean "
        "`files'?"]


def test_one_home_for_did_you_mean() -> None:
    assert closest("inptus", ["inputs", "outputs"]) == "inputs"
    assert closest("same", ["same"]) is None  # the name itself is no suggestion
    assert suggest("upers", ["uppers", "joined"]) == " Did you mean `uppers'?"
    assert suggest("zzz", ["uppers"]) == ""


def test_validate_prints_each_unknown_key_at_its_line(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(TYPOS)
    (tmp_path / "s.yaml").write_text(CP)
    result = CliRunner().invoke(main, ["validate", "w.yaml", "-s", "s.yaml"])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert [line.split(": ")[0] for line in lines if "unknown property" in line] == [
        "w.yaml:9:5", "w.yaml:11:5", "w.yaml:15:9"]
