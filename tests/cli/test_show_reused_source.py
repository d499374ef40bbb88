"""`steepy show SUBMISSION` names where its reused chains came from (extensions 15): a line
naming the submission they all came from and, per chain, `SUCCESS (reused) from chain Y`;
when they came from several, the line counts them and each chain names its submission too.
`--json` has had the source all along (`"reused": {"submissionId", "processChainId"}`).
Tester's defect A: only `steepy show CHAIN`, `events` and `logs` named the source. The tools
are real processes (`sh`), run by `steepy run` in-process on a SQLite database."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.cli.output import _reused_from
from tests.cli.test_outcome_and_reuse import SERVICES

# two chains: one greets `who', one `whom'
WORKFLOW = """\
api: 4.7.0
name: greet2
vars:
  - id: script
    value: 'echo "hello $1" > "$2"'
  - id: who
    value: world
  - id: whom
    value: moon
  - id: one
  - id: two
actions:
  - type: execute
    service: sh
    inputs: [{id: script, var: script}, {id: arg, var: who}]
    outputs: [{id: out, var: one, store: true}]
  - type: execute
    service: sh
    inputs: [{id: script, var: script}, {id: arg, var: whom}]
    outputs: [{id: out, var: two, store: true}]
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch, no_steepy_variables) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "greet2.yaml").write_text(WORKFLOW)
    return tmp_path


def steepy(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _run(*args: str) -> str:
    return steepy("run", "greet2.yaml", "-s", "services.yaml", "--resume",
                  *args).stdout.split()[1]


def _chains(submission_id: str) -> dict[str, dict]:
    """A submission's chains by the value they greet."""
    document = json.loads(steepy("show", submission_id, "--json").stdout)
    return {next(a["variable"]["value"] for a in c["executables"][0]["arguments"]
                 if a["id"] == "arg"): c for c in document["processChains"]}


def _rows(shown: str) -> dict[str, str]:
    """The status cell of each chain in `steepy show`'s table (tab-separated: piped)."""
    lines = shown.splitlines()
    start = lines.index("chain\tstatus\truns\texecutables") + 1
    return {line.split("\t")[0]: line.split("\t")[1] for line in lines[start:]}


@pytest.mark.process
def test_show_of_a_submission_names_the_chains_and_submissions_it_reused(here: Path) -> None:
    first = _run()
    earlier = _chains(first)
    assert all("reused" not in c for c in earlier.values())
    assert "reused" not in steepy("show", first).stdout  # nothing reused: nothing said

    # `who' changed: its chain runs, the other is first's
    second = _run("--var", "who=there")
    now = _chains(second)
    assert now["moon"]["reused"] == {"submissionId": first,
                                     "processChainId": earlier["moon"]["id"]}  # --json
    shown = steepy("show", second).stdout
    assert "\n  2 chains, 1 reused\n  reused from submission " + first + "\n" in shown
    assert _rows(shown) == {now["moon"]["id"]: f"SUCCESS (reused) from chain "
                                               f"{earlier['moon']['id']}",
                            now["there"]["id"]: "SUCCESS"}

    # both reused, from two submissions: each chain names its own
    third = _run("--var", "who=there")
    latest = _chains(third)
    shown = steepy("show", third).stdout
    (line,) = [x for x in shown.splitlines() if x.startswith("  reused from ")]
    assert line.startswith("  reused from 2 submissions: ")
    assert sorted(line.split(": ", 1)[1].split(", ")) == sorted(
        [f"{first} (1 chain)", f"{second} (1 chain)"])
    assert _rows(shown) == {
        latest["moon"]["id"]: f"SUCCESS (reused) from submission {first}, chain "
                              f"{earlier['moon']['id']}",
        latest["there"]["id"]: f"SUCCESS (reused) from submission {second}, chain "
                               f"{now['there']['id']}"}
    assert "  2 chains, 2 reused\n" in shown


def test_many_source_submissions_are_named_up_to_three() -> None:
    sources = Counter({"a": 3, "b": 2, "c": 1, "d": 1, "e": 1})
    assert _reused_from(sources) == ("reused from 5 submissions: a (3 chains), b (2 chains), "
                                     "c (1 chain) and 2 more")
    assert _reused_from(Counter({"a": 10_000})) == "reused from submission a"
