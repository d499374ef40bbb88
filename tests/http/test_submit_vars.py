"""POST /workflows' values for variables (the query parameter `vars`, a JSON object; Steep's
body unchanged) and its input paths: relative ones resolved against the server's working
directory and checked, absolute ones passed on unchecked as Steep does (steepy.http.submit;
no server needed, the app in-process)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from steepy.errors import InputError
from steepy.http.submit import build_submission
from tests.documents.test_input_files import SERVICE

WORKFLOW = b"""\
api: 4.7.0
vars:
  - {id: text, value: in.txt}
actions:
  - type: execute
    service: tool
    inputs: [{id: file, var: text}]
"""


def _problems(vars_text: str | None) -> list[str]:
    with pytest.raises(InputError) as bad:
        build_submission(WORKFLOW, {"tool": SERVICE}, {}, None, vars_text)
    return [str(p) for p in bad.value.problems]


def test_values_in_the_query_and_paths_against_the_servers_folder(tmp_path: Path,
                                                                   monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _problems(None) == [
        "<request>:3:23: vars[0].value: input file `in.txt' does not exist (a relative path is "
        f"resolved against the server's working directory, {tmp_path})"]
    assert _problems('{"text": "nope.txt"}')[0].startswith(
        "<vars>: text: input file `nope.txt' does not exist (a relative path")
    assert _problems('{"txt": 1}') == [  # and the default value's file, checked too
        "<vars>: txt: the workflow has no variable `txt' that can be set; did you mean `text'?",
        "<request>:3:23: vars[0].value: input file `in.txt' does not exist (a relative path is "
        f"resolved against the server's working directory, {tmp_path})"]
    assert _problems("[1]") == ["<vars>: the query parameter `vars' must be a JSON object of "
                                "variable ids and values"]
    assert _problems("{x")[0].startswith("<vars>:1:2: the query parameter `vars' is not JSON: ")
    assert _problems('{"a": 1,\n "b": [')[0].startswith("<vars>:2:8: ")  # (where it broke)
    (tmp_path / "other.txt").write_text("x")
    submission = build_submission(WORKFLOW, {"tool": SERVICE}, {}, None, '{"text": "other.txt"}')
    assert submission.vars == {"text": "other.txt"}
    assert submission.workflow.vars[0].value == str(tmp_path / "other.txt")


def test_the_query_parameter_resume() -> None:
    """`POST /workflows?resume=true` (extensions 15): true or false, nothing else."""
    from steepy.http.submit import given_resume

    assert [given_resume(t) for t in (None, "true", "False")] == [None, True, False]
    with pytest.raises(InputError) as caught:
        given_resume("yes")
    assert str(caught.value.problems[0]) == (
        "<request>: the query parameter `resume' must be true or false, not `yes'")


def test_absolute_input_paths_are_passed_on_unchecked(tmp_path: Path, monkeypatch) -> None:
    """Review S3: Steep's agents may see files the server does not, so an absolute path
    POSTed to the API is stored as given; a relative one is resolved against the server's
    working directory and must exist there (issue 30)."""
    with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from steepy.http import ApiContext, create_app
    from steepy.registry import open_registry

    monkeypatch.chdir(tmp_path)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    context = ApiContext(registry, {"tool": SERVICE}, {}, log_dir=tmp_path / "logs")
    elsewhere = "/data/on/the/agents/in.txt"
    with TestClient(create_app(context)) as api:
        accepted = api.post("/workflows", params={"vars": f'{{"text": "{elsewhere}"}}',
                                                  "resume": "true"}, content=WORKFLOW)
        assert accepted.status_code == 202, accepted.text
        document = api.get(f"/workflows/{accepted.json()['id']}").json()
        assert document["workflow"]["vars"] == [{"id": "text", "value": elsewhere}]
        assert document["resume"] is True  # extensions 15: what was asked for, shown
        refused = api.post("/workflows", content=WORKFLOW.replace(b"in.txt", b"data/in.txt"))
        assert refused.status_code == 400
        assert ("input file `data/in.txt' does not exist (a relative path is resolved against "
                f"the server's working directory, {tmp_path})") in refused.text
