"""Declared outputs are checked after exit 0 (extensions 14), relative input files are
resolved against the submitter's directory, and `steepy wait` follows the submission: one
submission from one folder, run by a worker started in another, then waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.agent.outputs import missing_output
from steepy.cli import main
from steepy.model.processchain import Argument, ArgumentVariable, Executable

SERVICES = """\
- id: writer
  name: Writer
  description: sh -c SCRIPT writer INPUT OUTPUT
  path: sh
  runtime: other
  parameters:
    - {id: script, name: S, description: s, type: input, cardinality: 1..1, dataType: string,
       label: -c}
    - {id: zero, name: Z, description: z, type: input, cardinality: 1..1, dataType: string,
       default: writer}
    - {id: input, name: I, description: i, type: input, cardinality: 1..1, dataType: file}
    - {id: out, name: O, description: o, type: output, cardinality: 1..1, dataType: file}
- id: lenient
  name: Lenient
  description: the same, without the check
  path: sh
  runtime: other
  checkOutputs: false
  parameters:
    - {id: script, name: S, description: s, type: input, cardinality: 1..1, dataType: string,
       label: -c}
    - {id: zero, name: Z, description: z, type: input, cardinality: 1..1, dataType: string,
       default: writer}
    - {id: input, name: I, description: i, type: input, cardinality: 1..1, dataType: file}
    - {id: out, name: O, description: o, type: output, cardinality: 1..1, dataType: file}
"""
WORKFLOW = """\
api: 4.7.0
name: checked
vars:
  - {id: text, value: nowhere.txt}
actions:
  - id: copies
    type: execute
    service: writer
    inputs: [{id: script, value: 'cat "$1" > "$2"'}, {id: input, var: text}]
    outputs: [{id: out, var: copied}]
  - id: forgets
    type: execute
    service: writer
    inputs: [{id: script, value: 'echo done'}, {id: input, var: text}]
    outputs: [{id: out, var: forgotten}]
    retries: {maxAttempts: 2, delay: 10ms}
  - id: allowed
    type: execute
    service: lenient
    inputs: [{id: script, value: 'echo done'}, {id: input, var: text}]
    outputs: [{id: out, var: left_out}]
"""


def _output(data_type: str, path: str, check: bool = True) -> Executable:
    out = Argument("out1", ArgumentVariable("v", path), "output", None, data_type)
    return Executable("e", "tool", "svc", [out], check_outputs=check)


def test_the_first_missing_output_is_named(tmp_path: Path) -> None:
    file, folder = tmp_path / "f.txt", tmp_path / "d"
    assert missing_output(_output("file", str(file))) == (
        f"declared output `out1' was not written: {file}")
    folder.mkdir()
    assert missing_output(_output("string", str(folder))) is not None  # a directory, not a file
    assert missing_output(_output("directory", str(folder))) is None
    file.write_text("x")
    assert missing_output(_output("file", str(file))) is None
    assert missing_output(_output("directory", str(file))) is not None
    assert missing_output(_output("file", str(tmp_path / "no"), check=False)) is None
    assert missing_output(_output("custom", str(tmp_path / "no")), {"custom"}) is None


def test_what_is_there_instead_of_an_output_is_said(tmp_path: Path) -> None:
    """Review (session 49): a link to nothing, or a folder where a file was declared (and the
    other way round), was "not written", though `ls' shows something at the path."""
    link, folder, file = tmp_path / "link", tmp_path / "d", tmp_path / "f"
    link.symlink_to("/nonexistent")
    folder.mkdir()
    file.write_text("x")
    said = "declared output `out1' was not written: "
    assert missing_output(_output("file", str(link))) == (
        f"{said}{link} (a link to `/nonexistent', which does not exist)")
    assert missing_output(_output("file", str(folder))) == (
        f"{said}{folder} (a directory is there, not a file)")
    assert missing_output(_output("directory", str(file))) == (
        f"{said}{file} (a file is there, not a directory: the output's data type is directory)")


@pytest.mark.process
def test_outputs_checked_inputs_resolved_and_waited_for(tmp_path: Path, monkeypatch) -> None:
    submitter, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (submitter / "data").mkdir(parents=True)
    elsewhere.mkdir()
    (submitter / "data" / "in.txt").write_text("the input\n")
    (tmp_path / "services.yaml").write_text(SERVICES)
    (submitter / "wf.yaml").write_text(WORKFLOW)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(submitter)

    def cli(*args: str):
        return CliRunner().invoke(main, [*args, "--db", db], catch_exceptions=False)

    submitted = cli("submit", "wf.yaml", "-s", "../services.yaml", "--var", "text=data/in.txt")
    assert submitted.exit_code == 0, submitted.output
    submission_id = submitted.stdout.split()[-1]
    env = dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"),
               STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"))
    worker = subprocess.run([sys.executable, "-m", "steepy.cli", "worker", "--db", db,
                             "--exit-when-idle", "-s", str(tmp_path / "services.yaml")],
                            cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert worker.returncode == 0, worker.stderr

    waited = cli("wait", submission_id)
    assert waited.exit_code == 1  # one chain failed: PARTIAL_SUCCESS, as `steepy run' says
    assert waited.stdout.startswith(f"submission {submission_id}: PARTIAL_SUCCESS")
    document = json.loads(cli("show", submission_id, "--json").stdout)
    assert document["vars"] == {"text": "data/in.txt"}
    chains = {c["executables"][0]["serviceId"] + str(i): c
              for i, c in enumerate(document["processChains"])}
    by_status = sorted((c["status"], len(c["runs"][0]["attempts"])) for c in chains.values())
    assert by_status == [("ERROR", 2), ("SUCCESS", 1), ("SUCCESS", 1)]
    [failed] = [c for c in chains.values() if c["status"] == "ERROR"]
    messages = [a["message"] for a in failed["runs"][0]["attempts"]]
    assert all("declared output `out' was not written: " in m for m in messages), messages
    assert all(m.endswith(". Last output:\ndone") for m in messages), messages  # what it said
    assert [a["exitCode"] for a in failed["runs"][0]["attempts"]] == [0, 0]
    copied = next(c for c in chains.values() if c["status"] == "SUCCESS"
                  and c["executables"][0]["serviceId"] == "writer")
    [output] = [a["variable"]["value"] for a in copied["executables"][0]["arguments"]
                if a["type"] == "output"]
    assert Path(output).read_text() == "the input\n"  # read from the submitter's folder


async def test_a_missing_output_is_looked_for_again_within_the_runtimes_bound(tmp_path):
    """An output written on another machine (SLURM: `outputs_settle_ms') may show here only
    later: it is looked for again until the bound has passed; a local run (bound 0) fails at
    once, without a pause."""
    from steepy.agent.outputs import missing_output_settled
    from steepy.runtimes.slurm import SlurmRuntime
    from tests.clocks import RecordingClock

    path = tmp_path / "written-elsewhere.txt"
    exe = _output("file", str(path))
    clock = RecordingClock()
    assert await missing_output_settled(exe, (), 0, clock.sleep, clock.monotonic) == (
        f"declared output `out1' was not written: {path}")
    assert clock.sleeps == []
    assert await missing_output_settled(exe, (), 1000, clock.sleep, clock.monotonic) == (
        f"declared output `out1' was not written: {path}")
    assert sum(clock.sleeps) == pytest.approx(1.0) and max(clock.sleeps) <= 0.2

    later = RecordingClock()

    async def the_node_writes_it(seconds: float) -> None:
        await later.sleep(seconds)
        if later.elapsed >= 0.6:
            path.write_text("x")

    assert await missing_output_settled(exe, (), 5000, the_node_writes_it, later.monotonic) is None
    assert later.elapsed == pytest.approx(0.6)
    assert SlurmRuntime.outputs_settle_ms == 5000


@pytest.mark.process
async def test_an_output_that_shows_late_is_waited_for_under_a_remote_runtime(tmp_path):
    """The output shows 0.3 s after the tool ended (as a node's write reaches this machine
    late): under a runtime that says its outputs may show late the attempt succeeds; under
    `other' it fails at once."""
    import asyncio

    from steepy.agent import AgentConfig, LocalAgent
    from steepy.model.processchain import ProcessChain
    from steepy.model.submission import ProcessChainStatus
    from steepy.plugins.kinds import KINDS
    from steepy.plugins.loaded import PluginSet, builtin_set
    from steepy.plugins.loading import Plugin
    from steepy.runtimes.other import OtherRuntime

    class Remote(OtherRuntime):
        supported_runtime = "remote"
        outputs_settle_ms = 3000

    plugins = PluginSet([*builtin_set().plugins,
                         Plugin("remote", KINDS["runtime"], Remote(), "test", selector="remote")])
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins, tmp_path=str(tmp_path)))

    async def run(runtime: str, out: Path):
        ended = tmp_path / f"{runtime}.ended"
        words = [Argument("s", ArgumentVariable("s", "-c"), "input"),
                 Argument("t", ArgumentVariable("t", f"touch {ended}"), "input"),
                 Argument("o", ArgumentVariable("o", str(out)), "output", None, "file")]

        async def node() -> None:  # writes the output 0.3 s after the tool ended
            while not ended.exists():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)
            out.write_text("x")

        writer = asyncio.ensure_future(node())
        try:
            return await agent.execute(ProcessChain(runtime, [
                Executable("e", "/bin/sh", "sh", words, runtime=runtime)]))
        finally:
            writer.cancel()

    remote = await run("remote", tmp_path / "r.txt")
    assert remote.status == ProcessChainStatus.SUCCESS, remote.error_message
    local = await run("other", tmp_path / "o.txt")
    assert local.status == ProcessChainStatus.ERROR
    assert "declared output `o' was not written" in local.error_message
    [attempt] = local.attempts
    assert (attempt.end_time - attempt.start_time).total_seconds() < 0.25


def test_what_an_earlier_attempt_left_is_removed_and_nothing_beyond(tmp_path: Path) -> None:
    """Before an attempt, its output paths are made as new: a file (or link: never what it
    points to) is removed, a directory where a file was declared too, a directory output is
    emptied, or made again where something else was. Outputs of other data types, and a
    directory output that is empty, are nothing to remove."""
    from steepy.agent.outputs import left_outputs, remove_left_outputs

    kept = tmp_path / "kept.txt"
    kept.write_text("not an output\n")
    half, link, folder_for_file = tmp_path / "half.txt", tmp_path / "link", tmp_path / "made"
    half.write_text("PARTIAL\n")
    link.symlink_to(kept)
    (folder_for_file / "inner").mkdir(parents=True)
    full, empty, file_for_folder = tmp_path / "full", tmp_path / "empty", tmp_path / "f"
    (full / "sub").mkdir(parents=True)
    (full / "sub" / "x").write_text("x")
    (full / "link").symlink_to(kept)
    empty.mkdir()
    file_for_folder.write_text("not a folder")

    def argument(path: Path, data_type: str) -> Argument:
        return Argument("o", ArgumentVariable("v", str(path)), "output", None, data_type)

    exe = Executable("e", "tool", "svc", [
        Argument("i", ArgumentVariable("w", str(kept)), "input", None, "file"),
        *(argument(p, "file") for p in (half, link, folder_for_file, tmp_path / "none")),
        *(argument(p, "directory") for p in (full, empty, file_for_folder))])
    left = left_outputs(exe)
    assert left == [(str(half), False), (str(link), False), (str(folder_for_file), False),
                    (str(full), True), (str(file_for_folder), True)]
    assert remove_left_outputs(left) is None
    assert not half.exists() and not os.path.lexists(link) and not folder_for_file.exists()
    assert kept.read_text() == "not an output\n"  # a link's target stays
    assert full.is_dir() and list(full.iterdir()) == []
    assert file_for_folder.is_dir() and empty.is_dir()
    assert left_outputs(exe) == []


LEFTOVERS = """\
api: 4.7.0
name: leftovers
actions:
  - id: half
    type: execute
    service: lenient
    inputs:
      - {id: script, value: 'if [ "$STEEPY_ATTEMPT" = 1 ]; then echo PARTIAL > "$2"; exit 1; fi'}
      - {id: input, var: text}
    outputs: [{id: out, var: partial}]
    retries: {maxAttempts: 2, delay: 10ms}
  - id: checked
    type: execute
    service: writer
    inputs:
      - {id: script, value: 'if [ "$STEEPY_ATTEMPT" = 1 ]; then echo PARTIAL > "$2"; exit 1; fi'}
      - {id: input, var: text}
    outputs: [{id: out, var: unwritten}]
    retries: {maxAttempts: 2, delay: 10ms}
  - id: folder
    type: execute
    service: lenient
    inputs:
      - {id: script, value: 'mkdir "$2" && echo made > "$2/f" && [ "$STEEPY_ATTEMPT" = 2 ]'}
      - {id: input, var: text}
    outputs: [{id: out, var: made}]
    retries: {maxAttempts: 2, delay: 10ms}
vars:
  - {id: text, value: in.txt}
"""


def _run(here: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """`steepy run wf.yaml --json` in `here` (its own database and folders): the process and
    the submission's document."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    env.update(STEEPY_TMPPATH=str(here / "tmp"), STEEPY_OUTPATH=str(here / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(here / "logs"))
    ran = subprocess.run([sys.executable, "-m", "steepy.cli", "run", "wf.yaml", "-s",
                          "services.yaml", "--db", f"sqlite:///{here / 'steepy.db'}", "--json"],
                         cwd=here, env=env, capture_output=True, text=True, timeout=120)
    return ran, json.loads(ran.stdout)


REQUEUED = """\
api: 4.7.0
name: requeued
actions:
  - type: execute
    service: writer
    inputs:
      - id: script
        value: |
          n=$(cat polls 2>/dev/null || echo 0); echo $((n + 1)) > polls
          if [ "$n" -lt 1 ]; then
            echo PARTIAL > "$2"; echo "requeue 100ms" > "$STEEPY_SIGNAL_FILE"; exit 0
          fi
      - {id: input, var: text}
    outputs: [{id: out, var: result}]
vars:
  - {id: text, value: in.txt}
"""


@pytest.mark.process
def test_a_requeued_attempt_does_not_find_what_it_left(tmp_path: Path) -> None:
    """A re-queued attempt keeps its number (extensions 11): what it wrote before it asked to
    be run again is removed all the same, so a run that then writes nothing is an ERROR, not
    a SUCCESS with the half-written file as its result."""
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "wf.yaml").write_text(REQUEUED)
    (tmp_path / "in.txt").write_text("in\n")
    ran, document = _run(tmp_path)
    [chain] = document["processChains"]
    assert chain["status"] == "ERROR", ran.stderr
    assert (tmp_path / "polls").read_text() == "2\n"
    last = chain["runs"][0]["attempts"][-1]
    assert "declared output `out' was not written" in last["message"]


@pytest.mark.process
def test_a_retry_does_not_find_what_the_failed_attempt_left(tmp_path: Path) -> None:
    """Attempt 1 writes half its output and fails; attempt 2 exits 0 without writing: the
    half-written file is gone before attempt 2 starts, so it neither passes the output check
    (ERROR) nor becomes the result of a service without the check (its output is missing,
    not PARTIAL). A tool that makes its output with `mkdir' succeeds on its retry (a folder
    where its service declares a file: `checkOutputs: false')."""
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "wf.yaml").write_text(LEFTOVERS)
    (tmp_path / "in.txt").write_text("in\n")
    ran, document = _run(tmp_path)
    chains = {c["executables"][0]["id"]: c for c in document["processChains"]}
    assert {k: c["status"] for k, c in chains.items()} == {
        "half": "SUCCESS", "checked": "ERROR", "folder": "SUCCESS"}, ran.stderr
    [partial] = chains["half"]["results"]["partial"]
    assert not os.path.exists(partial)
    [second] = chains["checked"]["runs"][0]["attempts"][1:]
    assert "declared output `out' was not written" in second["message"]
    [made] = chains["folder"]["results"]["made"]
    assert Path(made, "f").read_text() == "made\n"


def test_what_cannot_be_removed_is_said_and_the_attempt_goes_on(tmp_path: Path,
                                                                monkeypatch) -> None:
    """A folder inside a directory output that another user made (a container's root) cannot
    be emptied: `remove_left_outputs` says why (the attempt logs it and runs, as it would have
    without the removal), and a folder not ours to read holds nothing to remove. (The
    refusals are the operating system's as a user other than root gets them; these tests
    run as root, which is refused nothing, so they are made here.)"""
    import errno
    import shutil

    from steepy.agent import outputs

    folder = tmp_path / "out"
    (folder / "locked").mkdir(parents=True)
    (folder / "locked" / "f").write_text("x")
    exe = Executable("e", "tool", "svc", [
        Argument("o", ArgumentVariable("v", str(folder)), "output", None, "directory")])
    left = outputs.left_outputs(exe)
    assert left == [(str(folder), True)]

    def refused(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    half = tmp_path / "half.txt"  # an output after it: removed all the same
    half.write_text("PARTIAL\n")
    exe.arguments.append(Argument("f", ArgumentVariable("w", str(half)), "output", None, "file"))
    left = outputs.left_outputs(exe)
    real_rmtree = shutil.rmtree

    def refused(path, *args, **kwargs):  # (as a folder a container's root made)
        kwargs["onerror"](os.rmdir, str(path), (PermissionError, PermissionError(
            errno.EACCES, os.strerror(errno.EACCES)), None))

    monkeypatch.setattr(shutil, "rmtree", refused)
    assert outputs.remove_left_outputs(left) == (
        f"cannot remove what an earlier attempt left at {folder / 'locked'}: Permission denied")
    assert (folder / "locked" / "f").exists() and not half.exists()
    monkeypatch.setattr(shutil, "rmtree", real_rmtree)

    def unreadable(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr(os, "scandir", unreadable)
    assert outputs.left_outputs(exe) == [(str(folder), True)]  # to be seen to, not skipped


def test_a_failure_to_remove_one_output_leaves_the_others_made(tmp_path: Path,
                                                               monkeypatch) -> None:
    """A file that cannot be removed does not keep a directory output the failed attempt
    removed from being made again."""
    import errno

    from steepy.agent.outputs import remove_left_outputs

    stuck, gone = tmp_path / "stuck.txt", tmp_path / "gone"
    stuck.write_text("x")
    real_unlink = os.unlink

    def unlink(path, *args, **kwargs):
        if str(path) == str(stuck):
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    why = remove_left_outputs([(str(stuck), False), (str(gone), True)])
    assert why is not None and str(stuck) in why
    assert gone.is_dir()


def test_a_directory_output_starts_each_attempt_as_an_empty_folder(tmp_path: Path) -> None:
    """One the failed attempt removed is made again; one it made unreadable (`chmod 000`,
    ours) is opened and emptied."""
    from steepy.agent.outputs import left_outputs, remove_left_outputs

    gone, closed = tmp_path / "gone", tmp_path / "closed"
    closed.mkdir()
    (closed / "f").write_text("x")
    closed.chmod(0o000)
    exe = Executable("e", "tool", "svc", [
        Argument("o", ArgumentVariable("v", str(p)), "output", None, "directory")
        for p in (gone, closed)])
    assert left_outputs(exe) == [(str(gone), True), (str(closed), True)]
    assert remove_left_outputs(left_outputs(exe)) is None
    assert gone.is_dir() and list(gone.iterdir()) == []
    assert closed.stat().st_mode & 0o700 == 0o700 and list(closed.iterdir()) == []
    assert left_outputs(exe) == []


@pytest.mark.process
async def test_an_attempt_runs_when_what_was_left_cannot_be_removed(tmp_path: Path,
                                                                    monkeypatch, caplog) -> None:
    """Leftovers that cannot be removed are logged and the attempt runs with them there (as
    it always did): no failure of its own, no attempt spent on it."""
    import errno
    import logging
    import shutil

    from steepy.agent import AgentConfig, LocalAgent
    from steepy.model.policies import RetryPolicy
    from steepy.model.processchain import ProcessChain
    from steepy.model.submission import ProcessChainStatus

    folder = tmp_path / "out"
    script = ('mkdir -p "$1/sub" && echo "$STEEPY_ATTEMPT" > "$1/sub/n"; '
              '[ "$STEEPY_ATTEMPT" = 2 ]')
    exe = Executable("e", "sh", "svc", [
        Argument("s", ArgumentVariable("s", script), "input", "-c"),
        Argument("z", ArgumentVariable("z", "tool"), "input"),
        Argument("o", ArgumentVariable("v", str(folder)), "output", None, "directory")],
        retries=RetryPolicy(max_attempts=2))

    def refused(path, *args, **kwargs):  # (as a folder a container's root made)
        kwargs["onerror"](os.rmdir, str(path), (PermissionError, PermissionError(
            errno.EACCES, os.strerror(errno.EACCES)), None))

    monkeypatch.setattr(shutil, "rmtree", refused)
    agent = LocalAgent("agent-1", AgentConfig(log_dir=tmp_path / "logs"))
    with caplog.at_level(logging.WARNING, logger="steepy.agent.attempt"):
        outcome = await agent.execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert [a.attempt for a in outcome.attempts] == [1, 2]
    assert (folder / "sub" / "n").read_text() == "2\n"
    assert f"cannot remove what an earlier attempt left at {folder}" in caplog.text
    assert "attempt 2 runs with it there" in caplog.text
    log = (tmp_path / "logs").rglob("c.log")
    assert any("steepy: cannot remove what an earlier attempt left at" in f.read_text()
               for f in log)  # where `steepy logs' shows it, not only the engine's log


@pytest.mark.process
async def test_a_first_try_removes_nothing(tmp_path: Path) -> None:
    """A chain's first try of an executable has new paths: nothing is looked at, let alone
    removed (a path that is not new, as a plugin may make one, stays as it is)."""
    from steepy.agent import AgentConfig, LocalAgent
    from steepy.model.processchain import ProcessChain
    from steepy.model.submission import ProcessChainStatus

    there = tmp_path / "there.txt"
    there.write_text("not this chain's\n")
    exe = Executable("e", "true", "svc", [
        Argument("o", ArgumentVariable("v", str(there)), "output", None, "file")])
    agent = LocalAgent("agent-1", AgentConfig(log_dir=tmp_path / "logs"))
    outcome = await agent.execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS
    assert there.read_text() == "not this chain's\n"


def test_a_file_suffix_cannot_climb_out_of_its_output(tmp_path: Path) -> None:
    """`fileSuffix: /../..' would make a directory output's path a folder other outputs are
    in (tmpPath itself), which a retry empties: refused where it is written. A `/' or `..'
    within a name is fine."""
    from steepy.cli import main

    (tmp_path / "s.yaml").write_text("""\
- id: climbs
  name: Climbs
  description: d
  path: sh
  runtime: other
  parameters:
    - {id: out, name: O, description: o, type: output, cardinality: 1..1,
       dataType: directory, fileSuffix: /../..}
- id: climbs-after-a-newline
  name: Climbs
  description: d
  path: sh
  runtime: other
  parameters:
    - {id: out, name: O, description: o, type: output, cardinality: 1..1,
       dataType: directory, fileSuffix: "/../\nx"}
- id: fine
  name: Fine
  description: d
  path: sh
  runtime: other
  parameters:
    - {id: out, name: O, description: o, type: output, cardinality: 1..1,
       fileSuffix: /result..txt}
""")
    (tmp_path / "wf.yaml").write_text("api: 4.7.0\nactions:\n"
                                      "  - {type: execute, service: fine, "
                                      "outputs: [{id: out, var: x}]}\n")
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "wf.yaml"), "-s",
                                       str(tmp_path / "s.yaml")])
    assert result.exit_code == 2
    assert f"s.yaml:8:" in result.output
    assert "[0].parameters[0].fileSuffix: `/../..' does not have the expected form" in (
        result.output)
    assert "[1].parameters[0].fileSuffix: " in result.output  # (`$' before a last newline)
    assert "[2]" not in result.output
