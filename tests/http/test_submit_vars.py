"""POST /workflows' values for variables (the query parameter `vars`, a JSON object; Steep's
body unchanged) and its relative input paths, resolved against the server's working
directory (steepy.http.submit; no server needed)."""

from __future__ import annotations

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
    assert _problems('{"txt": 1}') == [
        "<vars>: txt: the workflow has no variable `txt' that can be set; did you mean `text'?"]
    assert _problems("[1]") == ["<vars>: the query parameter `vars' must be a JSON object of "
                                "variable ids and values"]
    assert _problems("{x")[0].startswith("<vars>: the query parameter `vars' is not JSON: ")
    (tmp_path / "other.txt").write_text("x")
    submission = build_submission(WORKFLOW, {"tool": SERVICE}, {}, None, '{"text": "other.txt"}')
    assert submission.vars == {"text": "other.txt"}
    assert submission.workflow.vars[0].value == str(tmp_path / "other.txt")
