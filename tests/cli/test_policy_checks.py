"""`steepy validate` on retry policies beyond their keys: the maxDelay warning (exit 0, printed
with its location) and maxElapsed/stop refused in `retries.processChains'; `steepy show`'s
line for a policy."""

from __future__ import annotations

import pytest

from tests.cli.policyfiles import cp_service, folder, validate
from steepy.cli.output import _retries

SERVICES = cp_service("  retries: {maxAttempts: 3, delay: 2s, maxDelay: 1s, strategy: fixed}\n")
WORKFLOW = """\
api: 4.7.0
retries:
  processChains: {maxAttempts: 2, delay: 1s, maxDelay: 1s}
vars:
  - {id: a, value: x.txt}
actions:
  - type: execute
    service: cp
    inputs: [{id: i, var: a}]
    outputs: [{id: o, var: b}]
    retries:
      maxAttempts: 3
      delay: 1s
      maxDelay: 500ms
  - type: execute
    service: cp
    inputs: [{id: i, var: b}]
    outputs: [{id: o, var: c}]
    retries: {maxAttempts: 3, delay: 1s, maxDelay: 500ms, exponentialBackoff: 1.5}
"""


@pytest.fixture
def here(tmp_path, monkeypatch):
    return folder(tmp_path, monkeypatch, {"services/cp.yaml": SERVICES, "w.yaml": WORKFLOW})


_validate = validate


def test_max_delay_below_a_constant_delay_is_a_located_warning(here) -> None:
    result = _validate("w.yaml", "services/cp.yaml")
    assert result.exit_code == 0, result.output
    assert "w.yaml: valid" in result.stdout and "services/cp.yaml: valid" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert [line.split(": warning: ")[0] for line in warnings] == [
        "w.yaml:14:17", "services/cp.yaml:9:50"], warnings
    assert warnings[0].split(": warning: ")[1] == (
        "actions[0].retries.maxDelay: maxDelay (500ms) is below delay (1s) and there is no "
        "backoff: every pause is 500ms. steepy caps the delay as Steep's code does; Steep's "
        "documentation says maxDelay only applies with an exponentialBackoff larger than 1")
    assert warnings[1].split(": warning: ")[1].startswith(
        "[0].retries.maxDelay: maxDelay (1s) is below delay (2s)")


def test_max_elapsed_and_stop_are_refused_for_process_chains(here) -> None:
    (here / "w.yaml").write_text(WORKFLOW.replace(
        "processChains: {maxAttempts: 2, delay: 1s, maxDelay: 1s}",
        "processChains: {maxAttempts: 2, maxElapsed: 1m, stop: all}"))
    result = _validate("w.yaml")
    assert result.exit_code == 2
    assert ("w.yaml:3:47: retries.processChains.maxElapsed: maxElapsed bounds the attempts of "
            "an executable (put it in a service's or an execute action's retries, or in "
            "retries.executables); it cannot bound the runs of a process chain") in result.stderr
    assert "w.yaml:3:57: retries.processChains.stop: stop bounds the attempts" in result.stderr


def test_show_names_every_limit_and_the_delay_rule() -> None:
    assert _retries({"maxElapsed": 30000, "stop": "all", "capAfterJitter": True,
                     "jitter": "full", "waits": [{"strategy": "fixed", "delay": 1000},
                                                 {"delay": 1000, "exponentialBackoff": 1.5}]}) == (
        "unlimited attempts, max elapsed 30s, stop all, delay fixed 1s + exponential "
        "1s*1.5^(n-1), jitter full, capped after jitter")
    assert _retries({"maxAttempts": 2, "delay": 300}) == (
        "2 attempts, delay exponential 300ms*1^(n-1), jitter none")
