"""YAML merge keys (`<<: *a`, `<<: [*a, *b]`) read as YAML 1.1 defines them, with every
value at the place it was written; a key written twice is still an error."""

from __future__ import annotations

import pytest

from steepy.documents.checking import check_workflow
from steepy.documents.loading import parse_text
from steepy.errors import InputError
from steepy.model.service import Service
from tests.documents.services import CP

POLICIES = """\
fast: &fast
  maxAttempts: 3
  delay: 1s
jittery: &jittery
  delay: 5s
  jitter: full
one:
  <<: *fast
  delay: 2s
both:
  <<: [*fast, *jittery]
after:
  maxAttempts: 9
  <<: *jittery
"""


def test_keys_beside_a_merge_key_override_and_the_first_merged_object_wins() -> None:
    data = parse_text(POLICIES, "p.yaml").data
    assert data["one"] == {"maxAttempts": 3, "delay": "2s"}
    assert data["both"] == {"maxAttempts": 3, "delay": "1s", "jitter": "full"}
    assert data["after"] == {"maxAttempts": 9, "delay": "5s", "jitter": "full"}
    assert list(data["after"]) == ["maxAttempts", "delay", "jitter"]  # in the order written


def test_a_merged_value_is_located_where_it_was_written() -> None:
    positions = parse_text(POLICIES, "p.yaml").positions
    assert positions["one.delay"] == (9, 10)  # its own
    assert positions["one.maxAttempts"] == (2, 16)  # from the anchor `fast'
    assert positions["both.jitter"] == (6, 11)


def test_a_merge_source_may_merge_another() -> None:
    text = "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, z: 3}\n"
    assert parse_text(text, "m.yaml").data["c"] == {"x": 1, "y": 2, "z": 3}


@pytest.mark.parametrize("text, where, words", [
    ("a: &a {x: 1}\nb:\n  x: 1\n  <<: *a\n  x: 2\n", (5, 3), "duplicate key `x'"),
    ("a: &a {x: 1}\nb:\n  <<: *a\n  <<: *a\n", (4, 3), "a second merge key"),
    ("a: &a [1]\nb:\n  <<: *a\n", (1, 8), "takes an object"),
    ("b:\n  <<: 3\n", (2, 7), "not a plain value"),
])
def test_what_is_still_refused(text: str, where: tuple, words: str) -> None:
    with pytest.raises(InputError) as info:
        parse_text(text, "m.yaml")
    (problem,) = info.value.problems
    assert (problem.line, problem.column) == where and words in problem.message


def test_a_quoted_key_is_no_merge_key() -> None:
    assert parse_text("'<<': {x: 1}\n", "q.yaml").data == {"<<": {"x": 1}}


WORKFLOW = """\
api: 4.7.0
vars:
  - {id: a, value: x.txt}
actions:
  - type: execute
    id: first
    service: cp
    inputs: [{id: i, var: a}]
    outputs: [{id: o, var: b}]
    retries: &policy
      maxAttempts: 3
      delay: 5 parsecs
  - type: execute
    service: cp
    inputs: [{id: i, var: b}]
    outputs: [{id: o, var: c}]
    retries:
      <<: *policy
      delay: 1s
"""


def test_a_workflow_problem_in_a_merged_value_is_reported_at_its_anchor() -> None:
    services = {s["id"]: Service.from_json(s) for s in parse_text(CP, "s.yaml").data}
    with pytest.raises(InputError) as info:
        check_workflow(parse_text(WORKFLOW, "w.yaml"), services, {}, None)
    (problem,) = info.value.problems  # the second action overrides the bad delay
    assert (problem.line, problem.column, problem.path) == (12, 14, "actions[0].retries.delay")
    fixed = WORKFLOW.replace("5 parsecs", "2s")
    workflow = check_workflow(parse_text(fixed, "w.yaml"), services, {}, None)
    second = workflow.actions[1].retries
    assert (second.max_attempts, second.delay) == (3, 1000)
