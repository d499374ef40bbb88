"""What a chain that ran leaves for reuse (extensions 15), with real tools: only the work of
its own tools on the input files its key was taken from. A chain run long after it was
stored (`steepy retry' after the input was edited) and a chain that a fallback rescued leave
nothing that a later submission would reuse; chains of one key in one submission reuse as
many earlier chains."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

TOOL = """\
#!/bin/sh
# refuses an input that says `bad' or when `off' exists; else writes its input in capitals
echo ran >> "$COUNTER"
if grep -q bad "$1" || [ -e off ]; then echo "refused" >&2; exit 1; fi
tr a-z A-Z < "$1" > "$2"
"""
SERVICES = """\
- id: shout
  name: Shout
  description: its input in capitals
  path: {tool}
  runtime: other
  environment: {{COUNTER: {counter}}}
  parameters:
    - {{id: in, name: In, description: i, type: input, cardinality: 1..1, dataType: file}}
    - {{id: out, name: Out, description: o, type: output, cardinality: 1..1}}
- id: join
  name: Join
  description: its inputs one after the other
  path: sh
  runtime: other
  parameters:
    - {{id: script, name: S, description: s, type: input, cardinality: 1..1, label: -c}}
    - {{id: zero, name: Z, description: z, type: input, cardinality: 1..1, default: join}}
    - {{id: out, name: Out, description: o, type: output, cardinality: 1..1}}
    - {{id: in, name: In, description: i, type: input, cardinality: 1..n, dataType: file}}
- id: standin
  name: Stand-in
  description: writes a stand-in
  path: sh
  runtime: other
  checkOutputs: true
  parameters:
    - {{id: script, name: S, description: s, type: input, cardinality: 1..1, label: -c}}
    - {{id: zero, name: Z, description: z, type: input, cardinality: 1..1, default: standin}}
    - {{id: out, name: Out, description: o, type: output, cardinality: 1..1}}
"""
WORKFLOW = """\
api: 4.7.0
vars: [{id: text, value: x.txt}]
actions:
  - id: shout
    type: execute
    service: shout
    cache: deep
    inputs: [{id: in, var: text}]
    outputs: [{id: out, var: loud, store: true}]
"""
RESCUED = WORKFLOW + """\
    fallback:
      service: standin
      inputs: [{id: script, value: 'echo stand-in > "$1"'}]
      outputs: [{id: out, var: loud, store: true}]
"""


@pytest.fixture
def here(tmp_path: Path) -> Path:
    tool = tmp_path / "tool.sh"
    tool.write_text(TOOL)
    tool.chmod(0o755)
    (tmp_path / "services.yaml").write_text(SERVICES.format(tool=tool,
                                                            counter=tmp_path / "counter"))
    return tmp_path


def _steepy(here: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    return subprocess.run([sys.executable, "-m", "steepy", *args], cwd=here, env=env,
                          capture_output=True, text=True, timeout=120)


def _run(here: Path) -> tuple[int, dict, int]:
    """`steepy run --resume`: its exit code, its document, and how often the tool ran."""
    done = _steepy(here, "run", "wf.yaml", "-s", "services.yaml", "--resume", "--json")
    counter = here / "counter"
    ran = len(counter.read_text().split()) if counter.exists() else 0
    counter.unlink(missing_ok=True)
    return done.returncode, json.loads(done.stdout), ran


def test_a_retry_that_read_other_inputs_leaves_nothing_for_the_old_ones(here: Path) -> None:
    (here / "wf.yaml").write_text(WORKFLOW)
    (here / "x.txt").write_text("bad data\n")
    code, first, ran = _run(here)
    assert (code, first["status"], ran) == (1, "ERROR", 1)

    (here / "x.txt").write_text("good data\n")  # edited, then the failed chain runs again
    assert _steepy(here, "retry", first["id"]).returncode == 0
    worker = _steepy(here, "worker", "-s", "services.yaml", "--exit-when-idle")
    assert worker.returncode == 0, worker.stderr
    (here / "counter").unlink()
    shown = json.loads(_steepy(here, "show", first["id"], "--json").stdout)
    assert shown["status"] == "SUCCESS"

    (here / "x.txt").write_text("bad data\n")  # back to what the chain's key was taken from
    code, again, ran = _run(here)
    assert (code, again["status"], ran) == (1, "ERROR", 1)  # run, not reused from GOOD DATA

    (here / "x.txt").write_text("good data\n")  # what the retried chain did read: run, once
    assert _run(here)[2] == 1
    code, last, ran = _run(here)
    assert (code, last["status"], ran) == (0, "SUCCESS", 0)
    assert Path(last["results"]["loud"][0]).read_text() == "GOOD DATA\n"


def test_a_chain_a_fallback_rescued_is_not_reused(here: Path) -> None:
    (here / "wf.yaml").write_text(RESCUED)
    (here / "x.txt").write_text("fine\n")
    (here / "off").touch()
    code, first, ran = _run(here)
    assert (code, first["status"], ran) == (0, "SUCCESS", 1)
    assert Path(first["results"]["loud"][0]).read_text() == "stand-in\n"

    (here / "off").unlink()  # the tool works again: it runs, it is not the stand-in reused
    code, second, ran = _run(here)
    assert (code, ran) == (0, 1)
    assert Path(second["results"]["loud"][0]).read_text() == "FINE\n"
    assert _run(here)[2] == 0  # and its own work is reused


TWICE = """\
api: 4.7.0
vars: [{id: texts, value: [x.txt, x.txt, y.txt]}]
actions:
  - type: for
    input: texts
    enumerator: text
    output: louder
    actions:
      - {type: execute, service: shout, inputs: [{id: in, var: text}],
         outputs: [{id: out, var: loud}]}
    yieldToOutput: loud
  - type: execute
    service: join
    inputs: [{id: script, value: 'out=$1; shift; cat "$@" > "$out"'}, {id: in, var: louder}]
    outputs: [{id: out, var: joined, store: true}]
"""


def test_chains_of_one_key_reuse_as_many_earlier_chains(here: Path) -> None:
    """A for-each over one file twice makes two chains of one key: the next submission
    reuses both earlier ones, one each, so the join reads three files again, as before,
    and is reused too (it read one file twice, and ran, before)."""
    (here / "wf.yaml").write_text(TWICE)
    (here / "x.txt").write_text("x\n")
    (here / "y.txt").write_text("y\n")
    code, first, ran = _run(here)
    assert (code, ran) == (0, 3)
    code, second, ran = _run(here)
    assert (code, ran) == (0, 0)
    assert all("reused" in c for c in second["processChains"])
    sources = [c["reused"]["processChainId"] for c in second["processChains"]]
    assert len(set(sources)) == 4
    assert Path(second["results"]["joined"][0]).read_text() == "X\nX\nY\n"
    # more chains of the key than earlier ones: the one more runs (it took an earlier chain
    # again, and the join read one file twice: a review)
    (here / "wf.yaml").write_text(TWICE.replace("[x.txt, x.txt, y.txt]",
                                                "[x.txt, x.txt, x.txt, y.txt]"))
    code, third, ran = _run(here)
    assert (code, ran) == (0, 1)
    copies = [c["reused"]["processChainId"] for c in third["processChains"] if "reused" in c]
    assert len(copies) == len(set(copies)) == 3  # x twice and y, each its own earlier chain


def test_a_retry_with_a_fixed_tool_leaves_nothing_for_the_old_tool(here: Path) -> None:
    """The loop "fix the tool, `steepy retry'": the chain's key was taken with the broken
    tool; what the fixed tool made is not recorded under it, or going back to the broken
    tool (a `git checkout') would reuse the fixed tool's work."""
    broken = TOOL.replace('echo ran >> "$COUNTER"', 'echo ran >> "$COUNTER"; exit 1')
    tool = here / "tool.sh"
    tool.write_text(broken)
    (here / "wf.yaml").write_text(WORKFLOW.replace("    cache: deep\n", ""))
    (here / "x.txt").write_text("fine\n")
    code, first, ran = _run(here)
    assert (code, first["status"], ran) == (1, "ERROR", 1)

    tool.write_text(TOOL)  # fixed, then the failed chain runs again
    assert _steepy(here, "retry", first["id"]).returncode == 0
    worker = _steepy(here, "worker", "-s", "services.yaml", "--exit-when-idle")
    assert worker.returncode == 0, worker.stderr
    (here / "counter").unlink()

    tool.write_text(broken)  # back to the tool the chain's key was taken with
    code, again, ran = _run(here)
    assert (code, again["status"], ran) == (1, "ERROR", 1)  # run, not the fixed tool's work


def test_in_deep_mode_an_output_edited_with_its_size_and_time_kept_runs_again(
        here: Path) -> None:
    """`cache: deep' compares outputs by content too: an output overwritten with other text
    of its size and given its old modification time is not reused (standard mode would)."""
    (here / "wf.yaml").write_text(WORKFLOW)  # (the action says `cache: deep')
    (here / "x.txt").write_text("fine\n")
    code, first, ran = _run(here)
    assert (code, ran) == (0, 1)
    (output,) = (Path(p) for p in first["results"]["loud"])
    assert _run(here)[2] == 0  # unchanged: reused
    kept = output.stat()
    output.write_text("XXXX\n")  # other content, the same size
    os.utime(output, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    code, again, ran = _run(here)
    assert (code, ran) == (0, 1)  # run again, not the edited file handed on
    assert Path(again["results"]["loud"][0]).read_text() == "FINE\n"
