"""Values no tool can take, refused in every document steepy reads (a code review): a
string with a lone surrogate (a JSON escape such as "\\udc80" is no Unicode character: it was
stored, then every engine that ran it stopped with UnicodeEncodeError, the chain left
RUNNING and run again at each restart), a NUL character, NaN and infinity. Once in the
workflow's own values, in a `--vars' file, in the API's `vars'; and a JSON document nested
more deeply than the YAML reader reads (stored, then too deep to be sent back). Exit code 2,
at the value's place, nothing stored (tests/http/test_submit_vars_edges.py: the HTTP API)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from steepy.cli import main
from steepy.documents import yamlreader
from steepy.documents.loading import parse_text, read_services
from steepy.errors import InputError
from tests.documents.test_given_vars_edges import WORKFLOW, here  # noqa: F401 (a fixture)
from tests.documents.test_input_files import SERVICE

SURROGATE = "not valid Unicode: a lone surrogate \\udc80 cannot be passed to a tool"
NUL = "a NUL character cannot be passed to a tool"
FINITE = "is not a finite number: a workflow's values are JSON, which has no NaN or infinity"



def _json_workflow(here: Path, label: str) -> str:
    """WORKFLOW as JSON, one key a line, with `label' as the value of `label' (as written)."""
    data = yaml.safe_load(WORKFLOW)
    data["vars"][2]["value"] = "LABEL"
    text = json.dumps(data, indent=1).replace('"LABEL"', label)
    (here / "wf.json").write_text(text)
    return text


def _refused(here: Path, *args: str) -> list[str]:
    """The problems `steepy submit` tells (exit code 2, nothing stored)."""
    result = CliRunner().invoke(main, ["submit", *args, "-s", "s.yaml"], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert not (here / ".steepy").exists()
    return result.stderr.splitlines()[:-1]


def test_a_json_workflow_with_an_escaped_surrogate_is_refused_at_the_value(here: Path) -> None:
    text = _json_workflow(here, '"\\udc80"')
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "udc80" in t)
    assert _refused(here, "wf.json") == [f"wf.json:{line}:13: vars[2].value: {SURROGATE}"]
    _json_workflow(here, '"a\\ud800\\udc80b"')  # a pair is a character: taken
    assert CliRunner().invoke(main, ["plan", "wf.json", "-s", "s.yaml"]).exit_code == 0


def test_a_vars_file_with_an_escaped_surrogate_is_refused_where_it_was_given(here) -> None:
    (here / "v.json").write_text('{"text": "words.txt",\n "label": "x\\udc80"}')
    assert _refused(here, "wf.yaml", "--vars", "v.json") == [f"v.json:2:11: {SURROGATE}"]
    (here / "v.json").write_text('{"texts": ["words.txt", "\\udc80"]}')
    assert _refused(here, "wf.yaml", "--vars", "v.json") == [f"v.json:1:25: texts[1]: {SURROGATE}"]
    (here / "v.json").write_text('{"la\\udc80bel": "x"}')
    assert _refused(here, "wf.yaml", "--vars", "v.json") == [
        f"v.json: variable id `la\\udc80bel': {SURROGATE}"]  # (the YAML reader cannot place it)


def test_a_yaml_escape_of_a_surrogate_is_refused_by_either_reader(here, monkeypatch) -> None:
    """libyaml refuses the escape itself; PyYAML's own reader yields the surrogate."""
    (here / "wf.yaml").write_text(WORKFLOW.replace("value: words\n", 'value: "x\\udc80"\n'))
    told = _refused(here, "wf.yaml")
    if yamlreader._Loader is not yaml.SafeLoader:
        assert told == ["wf.yaml:8:16: not valid YAML: found invalid Unicode character escape "
                        "code (while parsing a quoted scalar)"]
    monkeypatch.setattr(yamlreader, "_Loader", yaml.SafeLoader)
    assert _refused(here, "wf.yaml") == [f"wf.yaml:8:12: vars[2].value: {SURROGATE}"]


def test_nan_infinity_and_nul_in_the_workflow_are_refused_as_when_given(here: Path) -> None:
    (here / "wf.yaml").write_text(WORKFLOW.replace("value: words\n", "value: .nan\n")
                                  .replace("value: [words.txt]", "value: [words.txt, -.inf]"))
    assert _refused(here, "wf.yaml") == [f"wf.yaml:6:24: vars[1].value[1]: -infinity {FINITE}",
                                         f"wf.yaml:8:12: vars[2].value: NaN {FINITE}"]
    text = _json_workflow(here, '"a\\u0000b"')
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "u0000" in t)
    assert _refused(here, "wf.json") == [f"wf.json:{line}:13: vars[2].value: {NUL}"]
    _json_workflow(here, "NaN")
    assert _refused(here, "wf.json") == [f"wf.json:{line}:13: vars[2].value: NaN {FINITE}"]


def test_a_key_is_refused_at_its_object(here: Path) -> None:
    (here / "wf.yaml").write_text(WORKFLOW.replace("value: words\n", 'value: {"x\\0y": 1}\n'))
    assert _refused(here, "wf.yaml") == [f"wf.yaml:8:12: vars[2].value: key `x\\x00y': {NUL}"]


def test_service_metadata_is_checked_too(here: Path) -> None:
    service = SERVICE.to_json()
    service["description"] = "\udc80"
    (here / "s.json").write_text(json.dumps([service]))
    with pytest.raises(InputError) as caught:
        read_services(here / "s.json")
    assert [str(p) for p in caught.value.problems] == [
        f"{here / 's.json'}:1:48: [0].description: {SURROGATE}"]


def test_the_api_refuses_them_in_a_text_a_dict_and_its_vars(here: Path) -> None:
    import steepy

    with steepy.connect(here / "db.sqlite", services="s.yaml") as client:
        for workflow, told in [  # (a dict is read as its JSON: placed in that)
                (WORKFLOW.replace("value: words\n", "value: x\udc80\n"), f":8:13: {SURROGATE}"),
                ({**yaml.safe_load(WORKFLOW), "name": "\udc80"}, f":11: name: {SURROGATE}")]:
            with pytest.raises(steepy.InputError) as caught:
                client.submit(workflow)
            assert [str(p)[:11] + str(p)[-len(told):] for p in caught.value.problems] == [
                "<workflow>:" + told]
        for vars, told in [
                ({"label": "x\udc80"}, f"<vars>: label: {SURROGATE}"),
                ({"texts": ["words.txt", "\x00"]}, f"<vars>: texts[1]: {NUL}"),
                ({"texts": ("words.txt", "\udc80")}, f"<vars>: texts[1]: {SURROGATE}"),
                ({"texts": ("words.txt", float("nan"))}, f"<vars>: texts[1]: NaN {FINITE}"),
                ({"la\udc80bel": "x"}, f"<vars>: variable id `la\\udc80bel': {SURROGATE}"),
                ({"label": json.loads("[" * 401 + "]" * 401)},
                 "<vars>: label: the value is nested too deeply")]:
            with pytest.raises(steepy.InputError) as caught:
                client.submit("wf.yaml", vars=vars)
            assert [str(p) for p in caught.value.problems] == [told]
    assert not (here / "db.sqlite").exists()


def test_a_json_document_nested_deeper_than_yaml_reads_is_refused(here: Path) -> None:
    """The JSON reader went on to about 990 levels; the server then stored the workflow and
    answered 500 (too deep to send back)."""
    _json_workflow(here, "[" * 398 + "]" * 398)  # in an object in a list in the object
    assert CliRunner().invoke(main, ["plan", "wf.json", "-s", "s.yaml"]).exit_code == 2
    assert _refused(here, "wf.json") == ["wf.json: the document is nested too deeply"]
    _json_workflow(here, "[" * 397 + "]" * 397)  # 400 levels, as the YAML reader reads
    assert parse_text((here / "wf.json").read_text(), "wf.json").data["api"] == "4.7.0"


def test_the_check_is_one_cheap_walk() -> None:
    """A document of 100,000 values: read in about the time it took (the walk: a few ms)."""
    import time

    from steepy.documents.values import unusable_values

    data = {"texts": [f"in/file{i}.txt" for i in range(100_000)],
            "objects": [{"id": f"a{i}", "value": i / 2} for i in range(10_000)]}
    start = time.process_time()
    assert unusable_values(data) == []
    assert time.process_time() - start < 0.5
    data["objects"][9_999]["value"] = float("inf")
    assert unusable_values(data) == [(("objects", 9_999, "value"), f"infinity {FINITE}")]


@pytest.mark.parametrize("character", ["\x00", "\x01", "\x7f"])
def test_a_raw_control_character_in_yaml_is_placed_at_its_line_and_column(here, character):
    """YAML's reader refuses the character before parsing and says only its position in the
    text (`in "<unicode string>", position 113' on a second line): its line and column."""
    (here / "wf.yaml").write_text(WORKFLOW.replace("value: words\n",
                                                   f'value: "wo{character}rds"\n'))
    line, column = next((n + 1, text.index(character) + 1) for n, text in enumerate(
        (here / "wf.yaml").read_text().splitlines()) if character in text)
    assert _refused(here, "wf.yaml") == [
        f"wf.yaml:{line}:{column}: not valid YAML: control characters are not allowed: "
        f"U+{ord(character):04X}"]
