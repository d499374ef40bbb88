"""Reuse of unchanged work (extensions 15) with real tools and files: a workflow run twice
with `--resume` runs nothing the second time and ends with the same results; after one
input file changed, exactly the chains downstream of it run again, as `steepy plan --resume`
said beforehand; an action with `cache: false` always runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = """\
#!/bin/sh
# appends its tag to the counter, then writes its inputs and the tag to its output
echo "$1" >> "$COUNTER"
out=$2
shift 2
cat "$@" > "$out"
echo "$TAG" >> "$out"
"""
SERVICES = """\
- id: step
  name: Step
  description: copies its inputs and adds a line
  path: {tool}
  runtime: other
  environment: {{COUNTER: {counter}, TAG: done}}
  parameters:
    - {{id: tag, name: Tag, description: its name, type: input, cardinality: 1..1}}
    - {{id: out, name: Out, description: the copy, type: output, cardinality: 1..1}}
    - {{id: in, name: In, description: the inputs, type: input, cardinality: 1..2}}
"""
WORKFLOW = """\
api: 4.7.0
vars:
  - {id: one, value: one.txt}
  - {id: two, value: two.txt}
  - {id: a, value: a}
  - {id: b, value: b}
  - {id: c, value: c}
actions:
  - {type: execute, service: step, inputs: [{id: tag, var: a}, {id: in, var: one}],
     outputs: [{id: out, var: x}]}
  - {type: execute, service: step, inputs: [{id: tag, var: b}, {id: in, var: two}],
     outputs: [{id: out, var: y}]}
  - {type: execute, service: step, inputs: [{id: tag, var: c}, {id: in, var: x}, {id: in, var: y}],
     outputs: [{id: out, var: z, store: true}]}
"""


@pytest.fixture
def here(tmp_path: Path) -> Path:
    tool = tmp_path / "tool.sh"
    tool.write_text(TOOL)
    tool.chmod(0o755)
    (tmp_path / "services.yaml").write_text(SERVICES.format(tool=tool,
                                                            counter=tmp_path / "counter"))
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    (tmp_path / "one.txt").write_text("1\n")
    (tmp_path / "two.txt").write_text("2\n")
    return tmp_path


def _run(here: Path, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    done = subprocess.run([sys.executable, "-m", "steepy", "run", "wf.yaml", "-s",
                           "services.yaml", "--json", *args], cwd=here, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _ran(here: Path) -> list[str]:
    counter = here / "counter"
    lines = counter.read_text().split() if counter.exists() else []
    counter.unlink(missing_ok=True)
    return sorted(lines)


def _stored_again(first: dict, second: dict) -> None:
    """The stored result of the reusing submission is its own, in its output folder, and
    the earlier file itself (a hard link: no copy of the data); its chains name the earlier
    files."""
    (earlier,), (now,) = first["results"]["z"], second["results"]["z"]
    assert f"/out/{second['id']}/" in now and f"/out/{first['id']}/" in earlier
    assert os.path.samefile(earlier, now)
    assert [c["results"] for c in second["processChains"] if "z" in (c["results"] or {})] == [
        {"z": [earlier]}]


def _final(document: dict) -> str:
    (path,) = document["results"]["z"]
    return Path(path).read_text()


@pytest.mark.process
def test_a_second_run_reuses_everything_and_a_changed_input_reruns_what_depends_on_it(
        here: Path) -> None:
    assert _plan(here).endswith("3 chains: 3 to run, 0 reused\n")
    assert not (here / ".steepy").exists()  # no database here yet: none was made
    first = _run(here, "--resume")
    assert _ran(here) == ["a", "b", "c"]
    assert all("reused" not in c for c in first["processChains"])

    second = _run(here, "--resume")
    assert _ran(here) == []  # nothing executed
    assert second["status"] == "SUCCESS"
    _stored_again(first, second)
    assert _final(second) == "1\ndone\n2\ndone\ndone\n"
    earlier = {c["id"] for c in first["processChains"]}
    assert all(c["reused"]["submissionId"] == first["id"]
               and c["reused"]["processChainId"] in earlier for c in second["processChains"])

    shown = subprocess.run([sys.executable, "-m", "steepy", "show", second["id"]], cwd=here,
                           capture_output=True, text=True, timeout=60)
    assert "  3 chains, 3 reused\n" in shown.stdout and "SUCCESS (reused)" in shown.stdout
    as_json = subprocess.run([sys.executable, "-m", "steepy", "show", second["id"], "--json"],
                             cwd=here, capture_output=True, text=True, timeout=60)
    assert (second["reusedProcessChains"], json.loads(as_json.stdout)["reusedProcessChains"],
            "reusedProcessChains" in first) == (3, 3, False)

    assert _plan(here).endswith("3 chains: 0 to run, 3 reused\n")

    (here / "two.txt").write_text("2, changed\n")
    planned = _plan(here)  # says why, without running or storing anything
    assert "step: input `in' changed: two.txt" in planned
    assert "step: input `in' is written by a chain that runs" in planned
    assert planned.endswith("3 chains: 2 to run, 1 reused\n")
    third = _run(here, "--resume")
    assert _ran(here) == ["b", "c"]  # `a' does not depend on two.txt
    assert _final(third) == "1\ndone\n2, changed\ndone\ndone\n"
    assert sum("reused" in c for c in third["processChains"]) == 1

    fourth = _run(here)  # without --resume (cache.enabled is false): everything runs
    assert _ran(here) == ["a", "b", "c"]
    assert _final(fourth) == _final(third)

    # `cache: false' on an action: its chain always runs, and what reads its output too
    (here / "wf.yaml").write_text(WORKFLOW.replace("outputs: [{id: out, var: y}]}",
                                                   "outputs: [{id: out, var: y}], cache: false}"))
    planned = _plan(here)
    assert "runs: its action or service says `cache: false'" in planned
    assert "step: input `in' is written by a chain that runs" in planned
    _run(here, "--resume")
    assert _ran(here) == ["b", "c"]


ORDERED = """\
api: 4.7.0
vars:
  - {id: parts, value: [one.txt, two.txt]}
actions:
  - {type: execute, service: step, inputs: [{id: tag, value: cat}, {id: in, var: parts}],
     outputs: [{id: out, var: z, store: true}]}
"""


@pytest.mark.process
def test_a_list_the_workflow_gives_in_another_order_runs_again(here: Path) -> None:
    """`cat b a' is not `cat a b': values the workflow (or --var) gives keep their order in
    the key; only those earlier chains reported (a for-each's output) count in any order."""
    (here / "wf.yaml").write_text(ORDERED)
    _run(here, "--resume")
    assert _ran(here) == ["cat"]
    assert _run(here, "--resume", "--var", "parts=[one.txt, two.txt]")["processChains"][0][
        "reused"]
    swapped = _run(here, "--resume", "--var", "parts=[two.txt, one.txt]")
    assert _ran(here) == ["cat"] and "reused" not in swapped["processChains"][0]
    assert _final(swapped) == "2\n1\ndone\n"


def _plan(here: Path) -> str:
    """`steepy plan --resume --all` in this process (it reads the database, stores nothing)."""
    from click.testing import CliRunner

    from steepy.cli import main

    cwd = os.getcwd()
    os.chdir(here)
    try:
        done = CliRunner(env={k: None for k in os.environ if k.startswith(("STEEPY_", "STEEP_"))}
                         ).invoke(main, ["plan", "wf.yaml", "-s", "services.yaml", "--resume",
                                         "--all"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.process
@pytest.mark.postgres
def test_reuse_on_postgresql(here: Path, postgres_url: str) -> None:
    first = _run(here, "--resume", "--db", postgres_url)
    assert _ran(here) == ["a", "b", "c"]
    second = _run(here, "--resume", "--db", postgres_url)
    assert _ran(here) == []
    _stored_again(first, second)
    (here / "one.txt").write_text("1, changed\n")
    _run(here, "--resume", "--db", postgres_url)
    assert _ran(here) == ["a", "c"]


@pytest.mark.process
def test_work_the_collector_takes_between_lookup_and_store_runs_again(here: Path,
                                                                      monkeypatch) -> None:
    """`steepy gc' while a `--resume' run reuses the submission it deletes: the run looked
    the earlier chains up and found their files, then the collector deleted their records
    and files, then the run stored its chains as reused: SUCCESS with results naming files
    that were gone (a join read nothing: a review). The store finds the records gone and
    runs those chains instead; the collector deletes records before files."""
    import steepy
    from steepy.engine import reuse as reuse_module
    from steepy.registry import open_registry

    first = _run(here, "--resume")
    assert sorted(_ran(here)) == ["a", "b", "c"]
    db = f"sqlite:///{here / '.steepy' / 'steepy.db'}"
    looked_up = reuse_module.Reuse.round

    def collected_meanwhile(self, write, finished, resume):
        out = looked_up(self, write, finished, resume)
        if out.cache is not None and out.cache.reused:  # the lookup found the earlier work
            registry = open_registry(db)
            registry.housekeeping.delete_submissions([first["id"]])
            registry.close()
        return out

    monkeypatch.setattr(reuse_module.Reuse, "round", collected_meanwhile)
    monkeypatch.chdir(here)
    for name in [k for k in os.environ if k.startswith(("STEEPY_", "STEEP_"))]:
        monkeypatch.delenv(name)
    second = steepy.run("wf.yaml", services="services.yaml", db=db, resume=True)
    assert second.status == "SUCCESS"
    assert sorted(_ran(here)) == ["a", "b", "c"]  # run again, not taken for reused
    assert Path(second.results["z"][0]).read_text() == "1\ndone\n2\ndone\ndone\n"


@pytest.mark.process
def test_a_chain_after_a_stored_output_is_reused_too(here: Path) -> None:
    """A chain that reads what a reused chain stores reads the earlier file, so its key is
    the earlier one's and it is reused as well (review: keeping the stored output's new path
    made it run every time)."""
    (here / "wf.yaml").write_text(WORKFLOW.replace("outputs: [{id: out, var: x}]",
                                                   "outputs: [{id: out, var: x, store: true}]"))
    first = _run(here, "--resume")
    assert _ran(here) == ["a", "b", "c"]
    second = _run(here, "--resume")
    assert _ran(here) == []
    assert second["status"] == "SUCCESS" and second["reusedProcessChains"] == 3
    assert all(f"/out/{second['id']}/" in path for values in second["results"].values()
               for path in values)
    assert sorted(len(v) for v in first["results"].values()) == [1, 1]


@pytest.mark.process
def test_a_chain_whose_results_went_to_another_output_folder_runs_again(here: Path) -> None:
    """After `outPath` changed, the chain that stores a result runs again and stores it
    there (reused, its result would lie in the old folder: no result of the submission);
    the chains before it are reused, and `steepy plan --resume` says why it runs."""
    first = _run(here, "--resume")
    assert _ran(here) == ["a", "b", "c"]
    (here / "steepy.yaml").write_text("outPath: elsewhere\n")
    planned = _plan(here)
    assert ("its earlier run stored its results in another output folder (outPath changed "
            f"since): {first['results']['z'][0]}") in planned
    assert planned.endswith("3 chains: 1 to run, 2 reused\n")
    second = _run(here, "--resume")
    assert _ran(here) == ["c"]
    (result,) = second["results"]["z"]
    assert result.startswith(f"{here / 'elsewhere'}/{second['id']}/")
    assert Path(result).read_text() == _final(first)
    third = _run(here, "--resume")
    assert (third["reusedProcessChains"], _ran(here)) == (3, [])
    (here / "steepy.yaml").unlink()  # back to the first folder: its earlier run serves again
    assert (_run(here, "--resume")["reusedProcessChains"], _ran(here)) == (3, [])


@pytest.mark.process
@pytest.mark.parametrize("first, then", [("../shared/out", "../shared/out"), ("out", ".")])
def test_the_output_folder_is_compared_as_chains_name_it(here: Path, first: str,
                                                         then: str) -> None:
    """`../shared/out` is the same folder each time (the results are the submission's,
    and reused); a folder above the earlier one is another (placing could not move the
    result out of the earlier submission's folder, which the collector deletes)."""
    (here / "steepy.yaml").write_text(f"outPath: {first}\n")
    earlier = _run(here, "--resume")
    assert _ran(here) == ["a", "b", "c"] and earlier["results"]
    (here / "steepy.yaml").write_text(f"outPath: {then}\n")
    again = _run(here, "--resume")
    (result,) = again["results"]["z"]
    folder = os.path.normpath(here / then)
    assert result.startswith(f"{folder}/{again['id']}/"), result
    assert _ran(here) == ([] if first == then else ["c"])


@pytest.mark.process
def test_a_chain_whose_output_was_not_written_runs_again(here: Path) -> None:
    """Review (session 49): with `checkOutputs: false`, a tool that exits 0 without writing
    its output succeeds; its chain was recorded, reused on every later run (outputs "still
    as they were": not there then, not there now), and each run warned that its stored
    result could not be placed. Reuse needs the earlier outputs to be there."""
    lazy = here / "lazy.sh"
    lazy.write_text('#!/bin/sh\necho "$1" >> "$COUNTER"\n')
    lazy.chmod(0o755)
    (here / "services.yaml").write_text((here / "services.yaml").read_text() + f"""\
- id: lazy
  name: Lazy
  description: writes nothing
  path: {lazy}
  runtime: other
  checkOutputs: false
  environment: {{COUNTER: {here / 'counter'}}}
  parameters:
    - {{id: tag, name: Tag, description: its name, type: input, cardinality: 1..1}}
    - {{id: out, name: Out, description: not written, type: output, cardinality: 1..1}}
""")
    (here / "wf.yaml").write_text("api: 4.7.0\nactions:\n  - {type: execute, service: lazy, "
                                  "inputs: [{id: tag, value: l}], outputs: [{id: out, var: o, "
                                  "store: true}]}\n")
    assert _run(here, "--resume")["status"] == "SUCCESS" and _ran(here) == ["l"]
    again = _run(here, "--resume")
    assert (again.get("reusedProcessChains", 0), _ran(here)) == (0, ["l"])


@pytest.mark.process
def test_no_resume_runs_everything_where_the_configuration_reuses(here: Path) -> None:
    """Review (session 49): with `cache.enabled: true` there was no way to run everything
    once from the command line (`--resume` had no off switch)."""
    (here / "steepy.yaml").write_text("cache:\n  enabled: true\n")
    _run(here)
    assert _ran(here) == ["a", "b", "c"]
    assert _run(here)["reusedProcessChains"] == 3 and _ran(here) == []
    assert _run(here, "--no-resume").get("reusedProcessChains", 0) == 0
    assert _ran(here) == ["a", "b", "c"]
