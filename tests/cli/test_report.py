"""`steepy report ID [-o FILE] [--trace FILE]`, in-process over a database with known runs and
attempts: the trace's rows (Nextflow's columns), the HTML's summary, chart, attempts and
durations per service, nothing in it to fetch; an unknown id or a chain's id is exit 2."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner
from sqlalchemy import insert, update

from steepy.cli import main
from steepy.model.attempt import AttemptRecord
from steepy.model.processchain import Executable, ProcessChain
from steepy.registry import open_registry
from steepy.registry.tables import attempts, events, process_chains, runs, submissions
from tests.engine.test_engine import _submit
from tests.registry.chains import store_chains

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
WORKFLOW = "api: 4.7.0\nname: report test\nactions: []\n"
HEADER = ("task_id\thash\tname\tstatus\texit\tsubmit\tstart\tcomplete\tduration\trealtime\t"
          "attempt\trun\texecutable\tagent\treason")
RULE = "constant 200ms, jitter none; retryOn matched exit code 1"


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _chain(chain_id: str, *executables: tuple[str, str]) -> ProcessChain:
    return ProcessChain(id=chain_id, executables=[Executable(e, "bin/" + s, s)
                                                  for e, s in executables])


def _run(conn, chain_id: str, number: int, begin: float, end: float, status: str,
         tried: list[AttemptRecord], **more) -> None:
    conn.execute(insert(runs).values(chain_id=chain_id, run_number=number, agent_id="agent-1",
                                     start_time=_at(begin), end_time=_at(end), status=status,
                                     **more))
    for ordinal, a in enumerate(tried):
        conn.execute(insert(attempts).values(chain_id=chain_id, run_number=number,
                                             **dict(a.to_row(), ordinal=ordinal)))


@pytest.fixture
def stored(tmp_path, monkeypatch) -> tuple[str, str]:
    """A finished submission: chain `c1' retried its first executable once in run 1; chain
    `c2' timed out in run 1 and succeeded in run 2. Its database's URL and its id."""
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(db)
    sid = _submit(registry, WORKFLOW)
    store_chains(registry, sid, [_chain("c1", ("split", "flaky"), ("join", "cat")),
                                 _chain("c2", ("nap", "sleep"))])
    with registry.db.write() as conn:
        conn.execute(update(submissions).where(submissions.c.id == sid).values(
            status="SUCCESS", start_time=T0, end_time=_at(6)))
        conn.execute(update(process_chains).values(status="SUCCESS"))
        _run(conn, "c1", 1, 0, 3, "SUCCESS", [
            AttemptRecord("split", "flaky", 1, _at(0.1), _at(0.5), "FAILED", 1, delay_ms=200,
                          delay_rule=RULE),
            AttemptRecord("split", "flaky", 2, _at(0.7), _at(1.7), "SUCCESS", 0),
            AttemptRecord("join", "cat", 1, _at(1.8), _at(2.0), "SUCCESS", 0)])
        _run(conn, "c2", 1, 0.5, 2.5, "ERROR", [
            AttemptRecord("nap", "sleep", 1, _at(0.5), _at(2.5), "TIMEOUT", None, signal=15,
                          timeout_kind="maximum runtime",
                          delay_rule="no retry: a timeout is not in retryOn")],
            error_message="timed out", auto_resume_after=_at(3))
        _run(conn, "c2", 2, 3, 5, "SUCCESS", [
            AttemptRecord("nap", "sleep", 1, _at(3), _at(5), "SUCCESS", 0)])
    registry.close()
    return db, sid


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_the_trace_has_a_row_per_attempt_in_nextflows_columns(stored, tmp_path) -> None:
    db, sid = stored
    result = _invoke("report", sid, "--db", db, "-o", "r.html", "--trace", "trace.tsv")
    assert result.exit_code == 0, result.output
    assert result.stderr == "wrote trace trace.tsv\nwrote report r.html\n"
    lines = (tmp_path / "trace.tsv").read_text().splitlines()
    assert lines == [
        HEADER,
        "1\tc1\tflaky\tFAILED\t1\t2026-03-01T12:00:00Z\t2026-03-01T12:00:00.100000Z\t"
        f"2026-03-01T12:00:00.500000Z\t500\t400\t1\t1\tsplit\tagent-1\texit code 1; next "
        f"attempt after 200ms ({RULE})",
        # submitted when the attempt before it ended: the pause counts to its duration
        "2\tc1\tflaky\tSUCCESS\t0\t2026-03-01T12:00:00.500000Z\t2026-03-01T12:00:00.700000Z\t"
        "2026-03-01T12:00:01.700000Z\t1200\t1000\t2\t1\tsplit\tagent-1\t-",
        "3\tc1\tcat\tSUCCESS\t0\t2026-03-01T12:00:01.700000Z\t2026-03-01T12:00:01.800000Z\t"
        "2026-03-01T12:00:02Z\t300\t200\t1\t1\tjoin\tagent-1\t-",
        "4\tc2\tsleep\tTIMEOUT\t-\t2026-03-01T12:00:00.500000Z\t2026-03-01T12:00:00.500000Z\t"
        "2026-03-01T12:00:02.500000Z\t2000\t2000\t1\t1\tnap\tagent-1\tmaximum runtime timeout; "
        "signal 15; no retry: a timeout is not in retryOn",
        "5\tc2\tsleep\tSUCCESS\t0\t2026-03-01T12:00:03Z\t2026-03-01T12:00:03Z\t"
        "2026-03-01T12:00:05Z\t2000\t2000\t1\t2\tnap\tagent-1\t-"]


def _text(html: str) -> str:
    """The words of some HTML, as one line."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_report_has_summary_chart_attempts_and_durations(stored, tmp_path) -> None:
    db, sid = stored
    assert _invoke("report", sid, "--db", db).exit_code == 0
    html = (tmp_path / f"report-{sid}.html").read_text()  # the default name

    summary = _text(html.split('id="timeline-chart"')[0])
    assert f"Report of report test SUCCESS Submission {sid}" in summary
    assert "Started 2026-03-01 12:00:00 UTC Ended 2026-03-01 12:00:06 UTC Duration 6s" in summary
    assert "2 process chains 2 SUCCESS" in summary
    assert "3 runs, 1 chain run more than once" in summary
    assert "5 attempts, 1 of them retries (1 executable retried)" in summary
    assert "0 chains reused" in summary

    # the UI's chart: a bar per run with its attempts and the pause inside, links into the file
    chart = html.split('id="timeline-chart"')[1].split('id="chains"')[0]
    assert len(re.findall(r'<div class="tl-run k-(\w+)"', chart)) == 3
    assert re.findall(r'class="tl-part k-(\w+)"', chart) == [
        "failed", "delay", "success", "success", "timeout", "success"]
    assert f"pause 200ms before attempt 2 of flaky ({RULE})" in chart
    assert 'class="tl-wait"' in chart and "chain retry after run 1" in chart
    assert 'href="#chain-c1"' in chart and "steepy-report:" not in chart
    assert 'id="chain-c1"' in html and 'id="chain-c2"' in html

    attempts_table = html.split('data-testid="attempts"')[1].split("</table>")[0]
    rows = [_text(r) for r in re.findall(r"<tr data-chain.*?</tr>", attempts_table, re.S)]
    assert rows[0] == (f"1 c1 1 split flaky 1 FAILED 1 2026-03-01 12:00:00 UTC 400ms "
                       f"exit code 1; next attempt after 200ms ({RULE})")
    assert rows[3].startswith("4 c2 1 nap sleep 1 TIMEOUT - ")
    assert rows[3].endswith("2s maximum runtime timeout; signal 15; no retry: a timeout is "
                            "not in retryOn")

    services = html.split('data-testid="services"')[1].split("</table>")[0]
    assert [_text(r) for r in re.findall(r"<tr data-service.*?</tr>", services, re.S)] == [
        "cat 1 200ms 200ms 200ms", "flaky 2 1s 400ms 700ms 1s", "sleep 2 4s 2s 2s"]


def test_the_report_fetches_nothing(stored, tmp_path) -> None:
    """One file: styles inline, the icon a data URL, no script, no address to load."""
    db, sid = stored
    assert _invoke("report", sid, "--db", db, "-o", "r.html").exit_code == 0
    html = (tmp_path / "r.html").read_text()
    assert "<style>" in html and ".tl-run" in html and "--ok-bg" in html
    assert not re.search(r"<script|<link rel=\"stylesheet|url\(|@import|src=", html)
    assert re.findall(r'<link[^>]*href="([^"]*)"', html)[0].startswith("data:image/svg+xml")
    assert not re.search(r'href="(?!#|data:)', html)


def test_reused_chains_succeeded_before_the_last_retry(stored, tmp_path) -> None:
    db, sid = stored
    registry = open_registry(db)
    with registry.db.write() as conn:
        conn.execute(insert(events).values(submission_id=sid, time=_at(4),
                                           kind="submission.retried",
                                           data=json.dumps({"previous": "ERROR"})))
    registry.close()
    assert _invoke("report", sid, "--db", db, "-o", "r.html").exit_code == 0
    assert "1 chain reused" in _text((tmp_path / "r.html").read_text())  # c1 ended at 3s


def test_an_unknown_id_or_a_chains_id_is_one_line_and_exit_2(stored, tmp_path) -> None:
    db, _ = stored
    result = _invoke("report", "nothing", "--db", db)
    assert (result.exit_code, result.stderr) == (2, "No submission with the id `nothing'.\n")
    result = _invoke("report", "c1", "--db", db)
    assert result.exit_code == 2
    assert result.stderr.startswith("`c1' is a process chain, not a submission; its submission")
    result = _invoke("report", _submitted_id(db), "--db", db, "-o", "no/such/dir/r.html")
    assert result.exit_code == 2
    assert result.stderr.startswith("Cannot write the report to no/such/dir/r.html: ")
    assert not list(tmp_path.glob("*.html"))


def _submitted_id(db: str) -> str:
    registry = open_registry(db)
    try:
        return registry.views.submission_summaries(None, 1, 0)[0][0]["id"]
    finally:
        registry.close()


FLAKY = """
api: 4.7.0
name: flaky once
actions:
  - id: step
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 1}]
    outputs: [{id: output_file, var: result}]
"""


@pytest.mark.process
def test_a_real_run_reported_from_the_database_and_from_a_server(tmp_path) -> None:
    """A tool that fails once and then succeeds, run by `steepy serve': the report and the
    trace made over the server's HTTP API are those made from its database."""
    import subprocess
    import sys

    from tests.conftest import ROOT
    from tests.http.conftest import Server

    server = Server(tmp_path, "--agents", "1")
    try:
        sid = server.submit(FLAKY)
        assert server.wait(sid)["status"] == "SUCCESS"
        made = {}
        for where in (["--server", server.url], ["--db", f"sqlite:///{tmp_path / 'steepy.db'}"]):
            name = where[0].strip("-")
            done = subprocess.run(
                [sys.executable, "-m", "steepy.cli", "report", sid, *where, "-o",
                 str(tmp_path / f"{name}.html"), "--trace", str(tmp_path / f"{name}.tsv")],
                cwd=ROOT, env=server.env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            made[name] = ((tmp_path / f"{name}.tsv").read_text(),
                          (tmp_path / f"{name}.html").read_text())
    finally:
        assert server.stop() == 0

    trace, html = made["server"]
    assert trace == made["db"][0]
    header, failed, succeeded = [line.split("\t") for line in trace.splitlines()]
    assert header == HEADER.split("\t")
    row = dict(zip(header, failed))
    assert (row["task_id"], row["name"], row["status"], row["exit"], row["attempt"],
            row["run"], row["executable"]) == ("1", "flaky", "FAILED", "1", "1", "1", "step")
    assert re.fullmatch(r"exit code 1; next attempt after \d+ms \(exponential 100ms\*2\^\(n-1\)"
                        r".*\)", row["reason"]), row["reason"]
    row = dict(zip(header, succeeded))
    assert (row["status"], row["exit"], row["attempt"], row["reason"]) == (
        "SUCCESS", "0", "2", "-")
    assert int(row["duration"]) >= int(row["realtime"]) + 100  # the pause came before it
    assert row["submit"] < row["start"] < row["complete"]

    assert re.findall(r'class="tl-part k-(\w+)"', html) == ["failed", "delay", "success"]
    assert re.findall(r'data-outcome="(\w+)"', html) == ["FAILED", "SUCCESS"]
    assert 'data-service="flaky"' in html and "1 of them retries" in html
    assert _without_times(html) == _without_times(made["db"][1])


def _without_times(html: str) -> str:
    """A report without the time it was made (two reports are made a moment apart)."""
    return re.sub(r"<dt>Report made</dt><dd>.*?</dd>", "", html)


def test_a_running_submission_is_reported_as_it_is_now(tmp_path, monkeypatch) -> None:
    """A run that has not ended: its bar reaches until now, with the failed attempt its
    agent reported; its attempts are not in the table yet."""
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(db)
    sid = _submit(registry, WORKFLOW)
    store_chains(registry, sid, [_chain("c1", ("split", "flaky"))])
    began = datetime.now(timezone.utc) - timedelta(seconds=10)
    with registry.db.write() as conn:
        conn.execute(update(submissions).values(status="RUNNING", start_time=began))
        conn.execute(update(process_chains).values(status="RUNNING"))
        conn.execute(insert(runs).values(chain_id="c1", run_number=1, agent_id="agent-1",
                                         start_time=began))
        conn.execute(insert(events).values(
            submission_id=sid, chain_id="c1", time=began + timedelta(seconds=2),
            kind="chain.attemptFailed", data=json.dumps({
                "executableId": "split", "serviceId": "flaky", "attempt": 1,
                "outcome": "FAILED", "exitCode": 3})))
    registry.close()

    assert _invoke("report", sid, "--db", db, "-o", "r.html").exit_code == 0
    html = (tmp_path / "r.html").read_text()
    assert re.search(r'data-testid="duration">1\ds so far<', html)
    assert re.search(r'<div class="tl-run k-running" style="left: 0.0%; width: 100.0%"', html)
    assert 'title="flaky (split), attempt 1: FAILED, exit code 3"' in html
    assert "No attempt has been recorded yet" in html
    assert "1 process chains" not in html and "<span class=\"number\">1</span>" in html
