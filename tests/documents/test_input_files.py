"""Constant input files at submit time (steepy.documents.inputfiles): relative paths made
absolute against the base directory, those that do not exist reported at their value's place
(or where a value was given), URLs, string inputs and generated values left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from steepy.documents.inputfiles import InputBase
from steepy.documents.loading import parse_text
from steepy.documents.submissions import submission_from
from steepy.documents.variables import GivenVars
from steepy.errors import InputError
from steepy.model.service import Service

SERVICE = Service.from_json({
    "id": "tool", "name": "Tool", "description": "", "path": "tool", "runtime": "other",
    "parameters": [
        {"id": "file", "name": "", "description": "", "type": "input", "cardinality": "0..n",
         "dataType": "file"},
        {"id": "dir", "name": "", "description": "", "type": "input", "cardinality": "0..1",
         "dataType": "directory"},
        {"id": "word", "name": "", "description": "", "type": "input", "cardinality": "0..1",
         "dataType": "string"},
        {"id": "out", "name": "", "description": "", "type": "output", "cardinality": "0..1",
         "dataType": "file"}]})
WORKFLOW = """\
api: 4.7.0
vars:
  - id: files
    value: [here.txt, s3://bucket/key]
  - id: made
actions:
  - type: execute
    service: tool
    inputs:
      - {id: file, var: files}
      - {id: file, value: /no/such/file}
      - {id: dir, value: folder}
      - {id: word, value: not-a-path.txt}
    outputs: [{id: out, var: made}]
  - type: execute
    service: tool
    inputs:
      - {id: file, var: made}
      - {id: file, var: {id: inline, value: gone.txt}}
"""


def _submit(base: Path, given: GivenVars | None = None, named: str = "the directory it was "
            "submitted from"):
    return submission_from(parse_text(WORKFLOW, "wf.yaml"), {"tool": SERVICE}, {}, None, given,
                           InputBase(base, named))


def test_missing_files_are_reported_where_their_values_are(tmp_path: Path) -> None:
    with pytest.raises(InputError) as missing:
        _submit(tmp_path, named="the server's working directory")
    said = f"(a relative path is resolved against the server's working directory, {tmp_path})"
    assert [str(p) for p in missing.value.problems] == [
        f"wf.yaml:4:13: vars[0].value[0]: input file `here.txt' does not exist {said}",
        "wf.yaml:11:27: actions[0].inputs[1].value: input file `/no/such/file' does not exist",
        f"wf.yaml:12:26: actions[0].inputs[2].value: input directory `folder' does not exist "
        f"{said}",
        f"wf.yaml:19:45: actions[1].inputs[1].var.value: input file `gone.txt' does not exist "
        f"{said}"]


def test_relative_paths_become_absolute_and_the_rest_stays(tmp_path: Path) -> None:
    for name in ("here.txt", "gone.txt", "other.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError) as absolute:
        _submit(tmp_path)
    assert [p.path for p in absolute.value.problems] == ["actions[0].inputs[1].value"]

    text = WORKFLOW.replace("/no/such/file", str(tmp_path / "here.txt"))
    submission = submission_from(parse_text(text, "wf.yaml"), {"tool": SERVICE}, {}, None,
                                 GivenVars.of({"files": ["other.txt"]}),
                                 InputBase(tmp_path, "there"))
    first, second = submission.workflow.actions
    assert [i.var.value for i in first.inputs] == [
        [str(tmp_path / "other.txt")], str(tmp_path / "here.txt"), str(tmp_path / "folder"),
        "not-a-path.txt"]
    assert [i.var.value for i in second.inputs] == [None, str(tmp_path / "gone.txt")]
    assert submission.vars == {"files": ["other.txt"]}  # as given


def test_a_given_value_that_is_missing_is_reported_where_it_was_given(tmp_path: Path) -> None:
    with pytest.raises(InputError) as missing:
        _submit(tmp_path, GivenVars({"files": ["x.txt"]}, {"files": ("--var files", None, None)}))
    assert str(missing.value.problems[0]).startswith(  # the item of the list given
        "--var files: files[0]: input file `x.txt' does not exist")


LOOPS = """\
api: 4.7.0
vars:
  - id: files
    value: [here.txt, gone.txt]
  - id: words
    value: [a.txt]
  - id: nested
    value: [[here.txt], [deep.txt]]
actions:
  - type: for
    input: files
    enumerator: f
    actions:
      - type: execute
        service: tool
        inputs: [{id: file, var: f}]
  - type: for
    input: {id: dirs, value: [folder, nofolder]}
    enumerator: d
    actions:
      - type: execute
        service: tool
        inputs: [{id: dir, var: d}]
  - type: for
    input: words
    enumerator: w
    actions:
      - type: execute
        service: tool
        inputs: [{id: word, var: w}]
  - type: for
    input: nested
    enumerator: inner
    actions:
      - type: for
        input: inner
        enumerator: g
        actions:
          - type: execute
            service: tool
            inputs: [{id: file, var: g}]
"""


def _loops(base: Path, given: GivenVars | None = None):
    return submission_from(parse_text(LOOPS, "loops.yaml"), {"tool": SERVICE}, {}, None, given,
                           InputBase(base, "there"))


def test_a_constant_list_a_for_each_hands_to_a_file_input_is_checked(tmp_path: Path) -> None:
    """Review finding 8: the items of a list that a for-each iterates into an input of data
    type file or directory (also through an inner for-each) are paths, checked and made
    absolute like values given to the input directly; a list iterated into a string input is
    left alone."""
    (tmp_path / "here.txt").write_text("x")
    with pytest.raises(InputError) as missing:
        _loops(tmp_path)
    said = f"(a relative path is resolved against there, {tmp_path})"
    assert [str(p) for p in missing.value.problems] == [
        f"loops.yaml:4:23: vars[0].value[1]: input file `gone.txt' does not exist {said}",
        f"loops.yaml:18:31: actions[1].input.value[0]: input directory `folder' does not "
        f"exist {said}",
        f"loops.yaml:18:39: actions[1].input.value[1]: input directory `nofolder' does not "
        f"exist {said}",
        f"loops.yaml:8:26: vars[2].value[1][0]: input file `deep.txt' does not exist {said}"]

    for name in ("gone.txt", "deep.txt", "folder", "nofolder"):
        (tmp_path / name).mkdir()
    files, dirs, words, nested = _loops(tmp_path).workflow.actions
    assert files.input.value == [str(tmp_path / "here.txt"), str(tmp_path / "gone.txt")]
    assert dirs.input.value == [str(tmp_path / "folder"), str(tmp_path / "nofolder")]
    assert words.input.value == ["a.txt"]
    assert nested.input.value == [[str(tmp_path / "here.txt")], [str(tmp_path / "deep.txt")]]


def test_a_list_given_for_a_for_each_is_checked_where_it_was_given(tmp_path: Path) -> None:
    """Review finding 8, with `--var`: the values given replace the list and are checked."""
    for name in ("here.txt", "gone.txt", "deep.txt", "folder", "nofolder"):
        (tmp_path / name).write_text("x")
    with pytest.raises(InputError) as missing:
        _loops(tmp_path, GivenVars({"files": ["here.txt", "x.txt"]},
                                   {"files": ("--var files", None, None)}))
    assert [str(p) for p in missing.value.problems] == [
        f"--var files: files[1]: input file `x.txt' does not exist (a relative path is resolved "
        f"against there, {tmp_path})"]


def test_a_path_keeps_its_text_and_a_relative_one_gets_the_base_before_it(
        tmp_path: Path) -> None:
    """Review (session 49): a trailing `/' or `/.' means something to a tool (`find lnk/'
    enters a link to a folder, `rsync src/ dst', `cp -r src/. dst'), so a path is passed on as
    written, absolute ones too; a relative one gets the base directory before it, and loses
    only a leading `./'. Before, pathlib's text took the slash away."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("x")
    (tmp_path / "a b.txt").write_text("x")
    (tmp_path / "lnk").symlink_to(tmp_path / "sub")
    base = str(tmp_path)
    spellings = {
        "sub/a.txt": f"{base}/sub/a.txt", "./sub/a.txt": f"{base}/sub/a.txt",
        ".//sub/a.txt": f"{base}/sub/a.txt", "sub//a.txt": f"{base}/sub//a.txt",
        "sub/./a.txt": f"{base}/sub/./a.txt", "sub/../a b.txt": f"{base}/sub/../a b.txt",
        "sub/": f"{base}/sub/", "sub/.": f"{base}/sub/.", "sub": f"{base}/sub",
        "lnk/": f"{base}/lnk/", ".": f"{base}/.", "./": f"{base}/", "a b.txt": f"{base}/a b.txt",
        f"{base}/sub/a.txt": f"{base}/sub/a.txt", f"{base}//sub/a.txt": f"{base}//sub/a.txt",
        f"{base}/lnk/": f"{base}/lnk/"}
    text = WORKFLOW.replace("[here.txt, s3://bucket/key]", "[" + ", ".join(
        f"'{s}'" for s in spellings) + "]").replace("/no/such/file", str(tmp_path / "sub"))
    text = text.replace("value: folder", "value: lnk/").replace("gone.txt", "sub/a.txt")
    submission = submission_from(parse_text(text, "wf.yaml"), {"tool": SERVICE}, {}, None,
                                 None, InputBase(tmp_path, "there"))
    first = submission.workflow.actions[0]
    assert first.inputs[0].var.value == list(spellings.values())
    assert first.inputs[2].var.value == f"{base}/lnk/"


def test_a_file_named_as_a_folder_does_not_exist(tmp_path: Path) -> None:
    """`here.txt/' is no file a tool can open (pathlib's text, without the slash, was)."""
    (tmp_path / "here.txt").write_text("x")
    text = WORKFLOW.replace("[here.txt, s3://bucket/key]", "['here.txt/']")
    with pytest.raises(InputError) as missing:
        submission_from(parse_text(text, "wf.yaml"), {"tool": SERVICE}, {}, None, None,
                        InputBase(tmp_path, "there"))
    assert str(missing.value.problems[0]).startswith(
        "wf.yaml:4:13: vars[0].value[0]: input file `here.txt/' does not exist")


REACHED = """\
api: 4.7.0
vars:
  - id: f
    value: in.txt
  - id: files
    value: [each.txt]
actions:
  - type: include
    macro: reads
    inputs: [{id: source, var: f}, {id: note, value: not-a-path.txt}]
  - type: for
    input: files
    enumerator: g
    actions:
      - type: include
        macro: outer
        inputs: [{id: given, var: g}]
  - type: execute
    service: tool
    inputs: [{id: word, value: w}]
    fallback:
      service: tool
      inputs: [{id: file, value: fallback.txt}]
catch:
  service: tool
  inputs: [{id: dir, value: caught}]
"""
MACROS = [
    {"id": "reads", "name": "", "description": "", "parameters": [
        {"id": "source", "name": "", "description": "", "type": "input"},
        {"id": "note", "name": "", "description": "", "type": "input"}],
     "actions": [{"type": "execute", "service": "tool",
                  "inputs": [{"id": "file", "var": "source"}, {"id": "word", "var": "note"}]}]},
    {"id": "outer", "name": "", "description": "", "parameters": [
        {"id": "given", "name": "", "description": "", "type": "input"}],
     "actions": [{"type": "include", "macro": "reads",
                  "inputs": [{"id": "source", "var": "given"}, {"id": "note", "value": "x"}]}]}]


def _reached(base: Path):
    from steepy.model.macro import Macro

    macros = {m["id"]: Macro.from_json(m) for m in MACROS}
    return submission_from(parse_text(REACHED, "wf.yaml"), {"tool": SERVICE}, macros, None,
                           None, InputBase(base, "there"))


def test_inputs_an_include_a_fallback_or_the_catch_read_are_paths_too(tmp_path: Path) -> None:
    """Review (session 49): a constant that reaches a tool only through a macro (also one
    included by another, in a for-each), an action's fallback or the workflow's catch was
    passed on as written: relative to whatever folder the engine ran in (a `serve' started
    elsewhere: `cat: in.txt: No such file'), and a missing one was stored and failed in the
    tool. A value a macro hands to a string input stays as it is."""
    with pytest.raises(InputError) as missing:
        _reached(tmp_path)
    said = f"(a relative path is resolved against there, {tmp_path})"
    assert [str(p) for p in missing.value.problems] == [
        f"wf.yaml:4:12: vars[0].value: input file `in.txt' does not exist {said}",
        f"wf.yaml:6:13: vars[1].value[0]: input file `each.txt' does not exist {said}",
        f"wf.yaml:23:34: actions[2].fallback.inputs[0].value: input file `fallback.txt' does "
        f"not exist {said}",
        f"wf.yaml:26:29: catch.inputs[0].value: input directory `caught' does not exist {said}"]

    for name in ("in.txt", "each.txt", "fallback.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "caught").mkdir()
    workflow = _reached(tmp_path).workflow
    include, loop, action = workflow.actions
    assert [i.var.value for i in include.inputs] == [f"{tmp_path}/in.txt", "not-a-path.txt"]
    assert loop.input.value == [f"{tmp_path}/each.txt"]
    assert action.fallback.inputs[0].var.value == f"{tmp_path}/fallback.txt"
    assert workflow.catch.inputs[0].var.value == f"{tmp_path}/caught"
