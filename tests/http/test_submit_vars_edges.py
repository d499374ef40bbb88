"""POST /workflows?vars=... with values no tool can take (a tester's run, session 30): a
number or boolean for a file input checked as its text, NaN and Infinity (not JSON, though
Python's reader takes them), a number too large to be finite, an object inside a list, a NUL
character, `vars' given twice. Each is a 400 naming `<vars>' and the variable; nothing is
stored (the app in-process)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

from steepy.errors import InputError
from steepy.http.submit import query_value
from tests.documents.test_input_files import SERVICE

WORKFLOW = b"""\
api: 4.7.0
vars:
  - {id: text, value: in.txt}
  - {id: texts, value: [in.txt]}
  - {id: label, value: words}
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
RESOLVED = "(a relative path is resolved against the server's working directory, "
FINITE = "is not a finite number: a workflow's values are JSON, which has no NaN or infinity"


@pytest.fixture
def api(tmp_path: Path, monkeypatch):
    with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from steepy.http import ApiContext, create_app
    from steepy.registry import open_registry

    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("x")
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    context = ApiContext(registry, {"tool": SERVICE}, {}, log_dir=tmp_path / "logs")
    with TestClient(create_app(context)) as client:
        yield client


def _refused(api, *vars_texts: str) -> list[str]:
    """The problems of a 400 answer, one a line after Steep's message (nothing stored)."""
    before = api.get("/workflows").json()
    answer = api.post("/workflows", params=[("vars", text) for text in vars_texts],
                      content=WORKFLOW)
    assert answer.status_code == 400, answer.text
    assert api.get("/workflows").json() == before
    message, _, problems = answer.text.partition("\n\n")
    assert message == "Invalid workflow:", answer.text
    return problems.splitlines()


def test_a_number_or_boolean_for_a_file_input_is_checked_as_its_text(api, tmp_path) -> None:
    (tmp_path / "42").write_text("x")
    accepted = api.post("/workflows", params={"vars": '{"text": 42}'}, content=WORKFLOW)
    assert accepted.status_code == 202, accepted.text
    stored = api.get(f"/workflows/{accepted.json()['id']}").json()
    assert stored["workflow"]["vars"][0] == {"id": "text", "value": str(tmp_path / "42")}
    assert _refused(api, '{"text": false, "texts": [1.5, ""]}') == [
        f"<vars>: text: input file `false' does not exist {RESOLVED}{tmp_path}); the value is "
        "the boolean false, taken as its text",
        f"<vars>: texts[0]: input file `1.5' does not exist {RESOLVED}{tmp_path}); the value "
        "is the number 1.5, taken as its text",
        "<vars>: texts[1]: an input file cannot be an empty path"]


def test_nan_infinity_and_numbers_too_large_are_refused(api) -> None:
    for constant in ("NaN", "Infinity", "-Infinity"):
        assert _refused(api, f'{{"label": {constant}}}') == [
            f"<vars>: the query parameter `vars' is not JSON: {constant} is not a finite "
            "number (JSON has no NaN or Infinity)"]
    assert _refused(api, '{"label": 1e999, "texts": ["in.txt", -1e999]}') == [
        f"<vars>: label: infinity {FINITE}", f"<vars>: texts[1]: -infinity {FINITE}"]


def test_objects_in_lists_and_nul_characters_are_refused_at_their_item(api) -> None:
    takes = "takes a string, number, boolean or list, not an object"
    assert _refused(api, '{"texts": ["in.txt", {"a": 1}], "label": "echo a\\u0000b"}') == [
        f"<vars>: texts[1]: variable `texts' {takes}",
        "<vars>: label: a NUL character cannot be passed to a tool"]


def test_vars_given_twice_is_refused_not_one_of_them_used() -> None:
    from starlette.datastructures import QueryParams

    twice = QueryParams([("vars", '{"label": "a"}'), ("vars", '{"label": "b"}')])
    with pytest.raises(InputError) as caught:
        query_value(twice, "vars")
    assert str(caught.value.problems[0]) == (
        "<vars>: the query parameter `vars' is given 2 times; give it once")
    assert query_value(QueryParams([("vars", "{}")]), "vars") == "{}"
    assert query_value(QueryParams([]), "vars") is None


def test_post_workflows_with_vars_twice_is_a_400(api) -> None:
    assert _refused(api, '{"label": "a"}', '{"label": "b"}') == [
        "<vars>: the query parameter `vars' is given 2 times; give it once"]


def test_lone_surrogates_are_refused_not_stored_and_a_500(api) -> None:
    """`"\\ud800"' is valid JSON but no Unicode character: the submission was stored, then
    answered 500 (it cannot be sent as UTF-8), and every engine that ran it stopped."""
    surrogate = "not valid Unicode: a lone surrogate \\ud800 cannot be passed to a tool"
    assert _refused(api, '{"label": "\\ud800", "texts": ["in.txt", "a\\ud800"]}') == [
        f"<vars>: label: {surrogate}", f"<vars>: texts[1]: {surrogate}"]
    assert _refused(api, '{"la\\ud800bel": "x"}') == [
        f"<vars>: variable id `la\\ud800bel': {surrogate}"]
    answer = api.post("/workflows", content=json.dumps(
        {**yaml.safe_load(WORKFLOW), "name": "\ud800"}).encode())
    assert answer.status_code == 400, answer.text
    assert answer.text.endswith(f"name: {surrogate}")
    assert api.get("/workflows").json() == []


@pytest.mark.parametrize("depth", [400, 960, 3000])
def test_vars_nested_too_deeply_are_a_400(api, depth: int) -> None:
    """The JSON reader ran out of stack at about 990 levels (a 500); from about 950 the
    submission was stored, then too deep to send back (a 500 too). As a document: 400 at most."""
    label = "[" * depth + "]" * depth
    assert _refused(api, f'{{"label": {label}}}') == [
        "<vars>: the query parameter `vars' is nested too deeply"]
    accepted = api.post("/workflows", params={"vars": '{"label": ' + "[" * 398 + "]" * 398 + "}"},
                        content=WORKFLOW)
    assert accepted.status_code == 202, accepted.text


def test_a_schedule_with_a_lone_surrogate_is_a_400_not_stored(api) -> None:
    """POST /schedules encoded the workflow's text before reading it: a lone surrogate was a
    500 (UnicodeEncodeError). It is refused as bad input; nothing is stored."""
    workflow = WORKFLOW.decode().replace("value: words", "value: x\ud800")
    body = json.dumps({"workflow": workflow, "every": "1h"})
    answer = api.post("/schedules", content=body.encode(),
                      headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert api.get("/schedules").json() == []
