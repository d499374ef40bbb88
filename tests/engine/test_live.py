"""The live view of `steepy run` on a terminal, and its plain counterpart when piped."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import time
from datetime import timedelta

from rich.console import Console

from steepy.cli.live import (RECENT, Counted, Timeline, event_line, render,
                              take_snapshot)
from steepy.events import ChainRetryScheduled
from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.processchain import Executable
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import open_registry
from steepy.registry.records import utcnow
from tests.conftest import ROOT
from tests.registry.chains import store_chains
import pytest


def _chain(cid: str, service: str) -> ProcessChain:
    return ProcessChain(id=cid, executables=[Executable(id=f"{cid}-e", path=service,
                                                        service_id=service)])


def test_view_shows_counts_running_chains_and_pending_retries(tmp_path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'db'}")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow()))
    registry.leases.fetch_next_submission("me")
    store_chains(registry, "s", [_chain("a", "sort"), _chain("b", "flaky"), _chain("c", "cat"),
                                 _chain("d", "cp")], None)
    for _ in range(3):
        registry.queue.claim_chain("agent-1")
    registry.queue.finish_run("b", 1, "ERROR", CS.PAUSED, auto_resume_after=utcnow() + timedelta(seconds=30))
    registry.queue.add_event("s", ChainRetryScheduled(
        executable_id="c-e", service_id="cat", attempt=2, delay_ms=5000,
        at=utcnow() + timedelta(seconds=5)), "c")
    events = registry.views.events("s")
    snap = take_snapshot(registry, "s", events)
    assert snap.counts == {"REGISTERED": 1, "RUNNING": 2, "PAUSED": 1}
    assert [(c, s) for c, s, _ in snap.running] == [("a", "sort"), ("c", "cat")]
    assert [w[:2] for w in snap.waiting] == [("chain b", "process chain retry"),
                                             ("c-e (cat)", "attempt 2 of chain c")]
    out = io.StringIO()
    Console(file=out, force_terminal=True, width=120).print(render(snap))
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert "submission: RUNNING" in text and "retry pending" in text
    assert re.search(r"29\.\d s|30\.0 s", text) and "agent-1" in text


def test_view_counts_the_chains_that_reused_earlier_work(tmp_path) -> None:
    from steepy.registry.cache import CacheWrite, Reused
    from steepy.registry.writes import RoundWrite

    from tests.registry.earlier import earlier_work

    registry = open_registry(f"sqlite:///{tmp_path / 'db'}")
    earlier_work(registry, "earlier", "a0")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow()))
    registry.submissions.controller_round("s", RoundWrite(
        1, chains=[_chain("a", "sort"), _chain("b", "cat")], save_state=True, state={},
        cache=CacheWrite(reused=[Reused("a", {}, "earlier", "a0")])))
    snap = take_snapshot(registry, "s", registry.views.events("s"))
    assert (snap.counts, snap.reused) == ({"REGISTERED": 1, "SUCCESS": 1}, 1)
    out = io.StringIO()
    Console(file=out, force_terminal=True, width=120).print(render(snap))
    header, _, row = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).splitlines()[1:4]
    assert re.findall(r"[A-Z()a-z]+", header)[-2:] == ["CANCELLED", "(reused)"]
    assert re.findall(r"\d+", row)[-1:] == ["1"]


def test_the_view_keeps_a_few_events_not_the_whole_timeline() -> None:
    timeline = Timeline()
    timeline.add([{"id": 1, "kind": "chain.retryScheduled", "chainId": "x"}])
    timeline.add([{"id": i, "kind": "chain.finished", "chainId": f"c{i}"} for i in range(2, 2000)])
    assert timeline.last_id == 1999 and len(timeline.recent) == RECENT
    assert list(timeline.retries) == ["x"]  # x has not finished: its retry is pending
    timeline.add([{"id": 2000, "kind": "chain.finished", "chainId": "x"}])
    assert timeline.retries == {}


def test_chains_are_counted_again_after_twenty_times_what_counting_took() -> None:
    counts: list[int] = []

    def count() -> dict[str, int]:
        time.sleep(0.05)  # a million chains: counting them takes a while
        counts.append(1)
        return {"SUCCESS": len(counts)}

    counted = Counted()
    assert counted.get(count) == {"SUCCESS": 1}
    assert counted.get(count) == {"SUCCESS": 1}  # not again within a second
    assert counted.get(count, final=True) == {"SUCCESS": 2}  # the last drawing is exact


def test_event_lines_stay_single_lines() -> None:
    line = event_line({"id": 1, "time": "t", "kind": "chain.attemptFailed",
                       "message": "failed:\nlast line 1\nlast line 2"})
    assert "\n" not in line and line.endswith("failed: | last line 1 | last line 2")


def _run(tmp_path, tty: bool) -> str:
    env = dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"), STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"), COLUMNS="120")
    argv = [sys.executable, "-m", "steepy.cli", "run", "workflows/linear.yaml", "--db",
            f"sqlite:///{tmp_path / 'db'}", "--services", "services"]
    if not tty:
        return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60).stdout
    leader, follower = pty.openpty()
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(timeout=60) == 0
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", b"".join(chunks).decode("utf-8", "replace"))


@pytest.mark.process
def test_run_on_a_terminal_draws_the_live_view(tmp_path) -> None:
    out = _run(tmp_path, tty=True)
    assert "REGISTERED" in out and "submission: SUCCESS" in out  # the table's title
    assert re.search(r"\s0 │\s+0 │\s+0 │\s+[1-9]\d* │\s+0 │\s+0\s", out)  # the final counts


@pytest.mark.process
def test_run_piped_prints_one_line_per_event(tmp_path) -> None:
    out = _run(tmp_path, tty=False)
    assert "REGISTERED" not in out and "│" not in out
    lines = [line for line in out.splitlines() if re.match(r"\d{4}-\d\d-\d\dT", line)]
    kinds = [line.split()[1] for line in lines]
    assert kinds[0] == "submission.status" and kinds[-1] == "submission.status"
    assert "chain.started" in kinds and "chain.finished" in kinds
