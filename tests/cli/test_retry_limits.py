"""`steepy validate` against steepy.yaml's `retries.limits' (extensions 1): each value a level
gave, where it was written; the engine's default checked when steepy.yaml is read."""

from __future__ import annotations

import pytest

from tests.cli.policyfiles import cp_service, folder, validate

CONFIG = """\
retries:
  limits:
    maxAttempts: 1..20
    delay: 100ms..
    maxDelay: ..1h
    exponentialBackoff: 1..10
"""
SERVICES = cp_service("  retries:\n    maxAttempts: 3\n    delay: 10ms\n")
WORKFLOW = """\
api: 4.7.0
retries:
  executables:
    maxAttempts: 5
    maxDelay: 2h
vars:
  - {id: a, value: x.txt}
actions:
  - type: execute
    service: cp
    inputs: [{id: i, var: a}]
    outputs: [{id: o, var: b}]
    retries:
      maxAttempts: 50
      delay: 1s
  - type: execute
    service: cp
    inputs: [{id: i, var: b}]
    outputs: [{id: o, var: c}]
    retries: {inherit: true, exponentialBackoff: 2}
  - type: execute
    service: cp
    inputs: [{id: i, var: c}]
    outputs: [{id: o, var: d}]
    retries: {inherit: true, maxAttempts: -1, delay: 1s}
"""


@pytest.fixture
def here(tmp_path, monkeypatch):
    return folder(tmp_path, monkeypatch, {"services/cp.yaml": SERVICES, "w.yaml": WORKFLOW,
                                          "steepy.yaml": CONFIG})


_validate = validate


def test_each_value_beyond_a_limit_is_reported_where_it_was_written(here) -> None:
    result = _validate("w.yaml")
    assert result.exit_code == 2
    limit = "this site's limit {} (steepy.yaml retries.limits)"
    assert result.stderr.splitlines()[:4] == [
        # the service's delay, taken by the second action (inherit: true): in its file, once
        "services/cp.yaml:11:12: [0].retries.delay: delay 10ms is below " + limit.format("100ms"),
        # the workflow's default, as written (here no executable takes it: cp has a policy)
        "w.yaml:5:15: retries.executables.maxDelay: maxDelay 2h is above " + limit.format("1h"),
        # the actions' own
        "w.yaml:14:20: actions[0].retries.maxAttempts: maxAttempts 50 is above "
        + limit.format(20),
        "w.yaml:25:43: actions[2].retries.maxAttempts: maxAttempts -1 (unlimited) is above "
        + limit.format(20),
    ]
    assert "4 problems" in result.stderr


def test_a_workflow_within_the_limits_is_valid(here) -> None:
    fixed = (WORKFLOW.replace("maxDelay: 2h", "maxDelay: 1h")
             .replace("maxAttempts: 50", "maxAttempts: 20")
             .replace("maxAttempts: -1", "maxAttempts: 2"))
    (here / "w.yaml").write_text(fixed)
    (here / "services" / "cp.yaml").write_text(SERVICES.replace("10ms", "100ms"))
    result = _validate("w.yaml")
    assert result.exit_code == 0, result.output
    assert "valid" in result.stdout


def test_without_limits_nothing_is_refused(here) -> None:
    (here / "steepy.yaml").write_text("tmpPath: .steepy/tmp\n")
    assert _validate("w.yaml").exit_code == 0


@pytest.mark.parametrize("config, message", [
    (CONFIG + "  executables: {maxAttempts: 30}\n",
     "steepy.yaml:7:16: retries.executables: maxAttempts 30 is above this site's limit 20 "
     "(steepy.yaml retries.limits)"),
    (CONFIG.replace("1..20", "20"),
     "steepy.yaml:3:18: retries.limits.maxAttempts: expected a range of whole numbers such as "
     "`1..20' (either end may be left out: `1..'), got `20'"),
    (CONFIG.replace("..1h", "1h..1s"),
     "steepy.yaml:5:15: retries.limits.maxDelay: `1h..1s': the low end is above the high end"),
    (CONFIG + "  executables: {maxAttempts: many}\n",
     "steepy.yaml:7:16: retries.executables: maxAttempts must be an integer"),
])
def test_steepy_yaml_is_checked(here, config: str, message: str) -> None:
    (here / "steepy.yaml").write_text(config)
    result = _validate("w.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0].startswith(message), result.stderr


def test_a_service_file_is_checked_against_the_limits(here) -> None:
    result = _validate("services/cp.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "services/cp.yaml:11:12: [0].retries.delay: delay 10ms is below this site's limit "
        "100ms (steepy.yaml retries.limits)")


def test_the_chains_policy_and_the_catchs_are_checked_too(here) -> None:
    """Review finding 6: retries.processChains and the catch's retries were not checked."""
    (here / "services" / "sh.yaml").write_text(SERVICES.replace("id: cp", "id: sh").replace(
        "    - {id: o, name: o, description: o, type: output, cardinality: 1..1}\n", ""))
    (here / "w.yaml").write_text("""\
api: 4.7.0
retries:
  processChains: {maxAttempts: 1000}
catch:
  service: sh
  inputs: [{id: i, value: x}]
  retries: {maxAttempts: 30, delay: 1s}
actions:
  - type: execute
    service: cp
    inputs: [{id: i, value: x}]
    outputs: [{id: o, var: y}]
    retries: {maxAttempts: 2, delay: 1s}
""")
    result = _validate("w.yaml")
    assert result.exit_code == 2
    limit = "this site's limit 20 (steepy.yaml retries.limits)"
    assert result.stderr.splitlines()[:2] == [
        "w.yaml:3:32: retries.processChains.maxAttempts: maxAttempts 1000 is above " + limit,
        "w.yaml:7:26: catch.retries.maxAttempts: maxAttempts 30 is above " + limit,
    ]
    assert "2 problems" in result.stderr
