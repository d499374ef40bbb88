"""What `show', `list' and `logs' say about stored items, in-process: a RUNNING
submission that no engine drives (issue 26, defect 4), and `logs' given a submission's id
(defect 15)."""

from __future__ import annotations

import re
import time

from click.testing import CliRunner

from steepy.cli import main
from steepy.model.processchain import ProcessChain
from steepy.registry import open_registry
from tests.engine.test_engine import _submit
from tests.registry.chains import store_chains

WORKFLOW = "api: 4.7.0\nname: left\nactions: []\n"


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_running_submission_without_engine_says_so(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(db)
    left = _submit(registry, WORKFLOW)
    registry.leases.fetch_next_submission("dead-engine", 0.05, only=left)  # lease: 50 ms
    driven = _submit(registry, WORKFLOW)
    registry.leases.fetch_next_submission("live-engine", 600, only=driven)
    waiting = _submit(registry, WORKFLOW)  # ACCEPTED: nothing to say
    time.sleep(0.1)  # the dead engine's lease runs out

    expected = re.compile(rf"submission {left}: no engine has owned it since \d\d:\d\d; "
                          r"start `steepy worker'")
    shown = _invoke("show", left, "--db", db)
    assert shown.exit_code == 0 and expected.search(shown.stderr), shown.output
    listed = _invoke("list", "--db", db)
    assert listed.exit_code == 0 and expected.search(listed.stderr), listed.output
    assert driven not in listed.stderr and waiting not in listed.stderr
    assert "no engine" not in _invoke("show", driven, "--db", db).output
    assert "no engine" not in _invoke("show", left, "--db", db, "--json").output  # JSON stays


def test_logs_of_a_submission_names_its_chains(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(db)
    sid = _submit(registry, WORKFLOW)
    store_chains(registry, sid, [ProcessChain(id=f"chain-{i:02}") for i in range(12)])

    result = _invoke("logs", sid, "--db", db)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"`{sid}' is a submission, not a process chain")
    assert lines[1] == "Its 12 process chain(s):"
    assert [line.split() for line in lines[2:12]] == [
        [f"chain-{i:02}", "REGISTERED"] for i in range(11, 1, -1)]  # newest first, 10 of 12
    assert lines[12] == f"  and 2 more (`steepy show {sid}' lists all)"
    assert lines[13] == "For example: steepy logs chain-11"

    empty = _submit(registry, WORKFLOW)
    result = _invoke("logs", empty, "--db", db)
    assert result.exit_code == 2 and "It has no process chains yet." in result.stderr
    result = _invoke("logs", "nothing-by-this-id", "--db", db)
    assert result.exit_code == 2
    assert result.stderr == "No process chain with the id `nothing-by-this-id'.\n"


def test_show_chain_says_what_followed_each_attempt_and_when_it_runs_again(
        tmp_path, monkeypatch) -> None:
    """Defect 3, in-process: the rule of each attempt's pause or why none followed, and the
    chain-level delay of a PAUSED chain."""
    from datetime import datetime, timedelta, timezone

    from steepy.model.attempt import AttemptRecord
    from steepy.model.policies import RetryPolicy
    from steepy.model.submission import ProcessChainStatus as CS

    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(db)
    sid = _submit(registry, WORKFLOW)
    policy = RetryPolicy.from_json({"maxAttempts": 3, "delay": "1h"})
    store_chains(registry, sid, [ProcessChain(id="c", retries=policy)])
    _, run = registry.queue.claim_chain("agent", only=sid)
    start = datetime.now(timezone.utc)
    due = start + timedelta(hours=1)
    attempts = [AttemptRecord("e", "s", 1, start, start, "FAILED", 1, delay_ms=200,
                              delay_rule="constant 200ms, jitter none; every failure is "
                                         "retried (no retryOn)"),
                AttemptRecord("e", "s", 2, start, start, "FAILED", 2,
                              delay_rule="no retry: abortOn matched exit code 2")]
    registry.queue.finish_run("c", run, "ERROR", CS.PAUSED, attempts=attempts,
                              auto_resume_after=due, submission_id=sid)

    shown = _invoke("show", "c", "--db", db)
    assert shown.exit_code == 0, shown.output
    when = due.replace(microsecond=0).isoformat()
    for line in ("  chain retries: 3 attempts, delay exponential 1h*1^(n-1), jitter none",
                 f"  paused: run 2 is due at {when}",
                 "    e attempt 1: FAILED exit code 1; next attempt after 200 ms "
                 "(constant 200ms, jitter none; every failure is retried (no retryOn))",
                 "    e attempt 2: FAILED exit code 2; no retry: abortOn matched exit code 2",
                 f"    next run due at {when} (chain retry delay)"):
        assert line in shown.stdout.splitlines(), shown.stdout
