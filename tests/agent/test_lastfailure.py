"""STEEPY_LAST_FAILED_AT and STEEPY_LAST_MESSAGE (extensions 3) from an attempt's record."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from steepy.agent.lastfailure import MAX_CHARS, last_failure_env, one_line
from steepy.agent.messages import failure_message
from steepy.agent.process import RunResult
from steepy.model.attempt import FAILED, TIMEOUT, AttemptRecord
from steepy.model.processchain import Executable

START = datetime(2026, 11, 27, 9, 30, tzinfo=timezone.utc)


def record(message: str | None, lines: list[str] = (), **more) -> AttemptRecord:
    more.setdefault("outcome", FAILED)
    attempt = more.pop("attempt", 1)
    return AttemptRecord("e", "tool", attempt, START, end_time=START + timedelta(seconds=1.5),
                         message=message, last_lines=list(lines), **more)


def test_first_attempt_gets_empty_values():
    assert last_failure_env(None) == {"STEEPY_LAST_FAILED_AT": "", "STEEPY_LAST_MESSAGE": ""}


def test_the_command_never_shows():
    exe = Executable("e", "docker", "tool", [])
    argv = ["docker", "run", "-e", "API_KEY=hunter22", "image"]
    text = failure_message(exe, argv, RunResult(exit_code=3, last_lines=["a", "boom", ""]))
    env = last_failure_env(record(text, ["a", "boom", ""], exit_code=3))
    assert env == {"STEEPY_LAST_FAILED_AT": "2026-11-27T09:30:01.500Z",
                   "STEEPY_LAST_MESSAGE": "Execution of service `tool' failed: exited with code 3"
                                          "; last output: boom"}
    killed = failure_message(exe, argv, RunResult(signal=9))
    assert one_line(record(killed)) == ("Execution of service `tool' failed: was killed by "
                                        "signal 9 (SIGKILL) without output.")


def test_one_bounded_line():
    timed_out = record("Execution of service `tool' timed out after 50 ms (maximum runtime)",
                       timeout_kind="maximum runtime", outcome=TIMEOUT)
    assert one_line(timed_out) == timed_out.message
    long = one_line(record("x\ty " * 1000, ["last\rline"]))
    assert len(long) == MAX_CHARS and long.endswith("...") and "\t" not in long
    assert one_line(record("a", ["tab\there\x0bend"])) == "a; last output: tab here end"
    assert one_line(record(None)) == "attempt 1 ended FAILED"


def test_control_characters_become_spaces():
    """A NUL byte cannot be in an environment; no control character stays (C0, DEL, C1)."""
    text = one_line(record("failed\x00 here\x1b[31m", ["x\x00y\x7f\x85z", "\x00\x07"]))
    assert text == "failed here [31m; last output: x y z"


def test_a_fallback_is_told_the_same_way(monkeypatch):
    """STEEPY_FAILED_MESSAGE is made as STEEPY_LAST_MESSAGE: no command, one bounded,
    redacted line."""
    from steepy.agent.lastfailure import failed_env

    monkeypatch.setenv("STEEPY_HTTP_TOKEN", "s3cr3t-token")
    exe = Executable("act", "docker", "tool", [])
    argv = ["docker", "run", "-e", "API_KEY=hunter22", "image"]
    text = failure_message(exe, argv, RunResult(exit_code=3, last_lines=["s3cr3t-token\x00"]))
    failed = record(text, ["s3cr3t-token\x00"], exit_code=3)
    assert failed_env(exe, failed, text) == {
        "STEEPY_FAILED_ACTION": "act", "STEEPY_FAILED_SERVICE": "tool",
        "STEEPY_FAILED_EXIT_CODE": "3",
        "STEEPY_FAILED_MESSAGE": "Execution of service `tool' failed: exited with code 3; "
                                 "last output: ***"}
    assert failed_env(exe, None, "x" * 5000)["STEEPY_FAILED_EXIT_CODE"] == ""
    assert len(failed_env(exe, None, "x" * 5000)["STEEPY_FAILED_MESSAGE"]) == MAX_CHARS


def test_the_engine_secrets_never_show(monkeypatch):
    monkeypatch.setenv("STEEPY_HTTP_TOKEN", "s3cr3t-token")
    monkeypatch.setenv("STEEPY_DB_URL", "postgresql://steepy:pa55word@db/steepy")
    monkeypatch.setenv("STEEPY_TMP_PATH", "/scratch")  # no secret: stays
    text = one_line(record("failed: s3cr3t-token in /scratch", ["auth pa55word refused"]))
    assert text == "failed: *** in /scratch; last output: auth *** refused"


def test_a_run_that_goes_on_from_cut_runs_is_told_the_same():
    from steepy.agent.resume import resume_point
    from steepy.agent.signals import SIGNAL_REASON
    from steepy.model.attempt import BY_TOOL, PRUNED, REQUEUED
    from steepy.model.policies import RetryPolicy

    exe = Executable("e", "/bin/true", "tool", [],
                     retries=RetryPolicy.from_json({"maxAttempts": 3}))
    failed = record("Execution of service `tool' failed: `x' exited with code 3. Last output:\noops", ["oops"],
                    exit_code=3)
    requeued = record("the tool asked to be re-queued after 1s", attempt=2, outcome=REQUEUED,
                      delay_rule=f"requeue after 1s; {SIGNAL_REASON}", requeued_by=BY_TOOL,
                      due_time=START + timedelta(seconds=3))
    at = resume_point(exe, [failed, requeued], START + timedelta(seconds=2))
    assert (at.last_failure, at.signal_requeues, at.performed) == (failed, 1, 1)
    assert last_failure_env(at.last_failure)["STEEPY_LAST_MESSAGE"] == (
        "Execution of service `tool' failed: exited with code 3; last output: oops")
    pruned = record("the tool pruned its chain", outcome=PRUNED)
    assert resume_point(exe, [failed, pruned], START).ended == (pruned, None)
