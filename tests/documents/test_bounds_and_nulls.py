"""Values the database or the clock cannot hold are refused where they are written (durations
beyond 3650 days, priorities beyond 32 bits); explicit nulls of the fields Steep's model may
leave out are taken as left out; a yieldToOutput nothing produces is located."""

from __future__ import annotations

import pytest

from steepy.documents.loading import parse_workflow, read_services
from steepy.documents.validation import validate_workflow
from steepy.errors import InputError

LONG = "is longer than the longest duration steepy accepts, 3650d (about 10 years)"


def _problems(text: str) -> list[tuple[str, str]]:
    with pytest.raises(InputError) as info:
        parse_workflow(text, "w.yaml")
    return [(p.path, p.message) for p in info.value.problems]


def _execute(extra: str) -> str:
    return f"api: 4.7.0\nactions:\n  - type: execute\n    service: s\n{extra}"


@pytest.mark.parametrize("extra, path, given", [
    ("    retries: {maxAttempts: 2, delay: 9223372036854775807}\n", "retries.delay",
     "9223372036854775807"),
    ("    retries: {requeue: {exitCodes: [7], delay: 3000000d}}\n", "retries.requeue.delay",
     "3000000d"),
    ("    retries: {maxDelay: 3651d}\n", "retries.maxDelay", "3651d"),
    ("    retries: {maxElapsed: 87601h}\n", "retries.maxElapsed", "87601h"),
    ("    retries: {jitter: {add: 4000d}}\n", "retries.jitter.add", "4000d"),
    ("    retries: {waits: [{delay: 5000d}]}\n", "retries.waits[0].delay", "5000d"),
    ("    maxRuntime: {timeout: 3651d}\n", "maxRuntime.timeout", "3651d"),
    ("    deadline: 315360000001\n", "deadline", "315360000001"),
])
def test_a_duration_beyond_3650_days_is_refused_at_its_place(extra, path, given) -> None:
    assert _problems(_execute(extra)) == [(f"actions[0].{path}", f"`{given}' {LONG}")]


def test_a_chain_retry_delay_beyond_3650_days_is_refused_and_3650_days_is_not() -> None:
    text = "api: 4.7.0\nretries: {processChains: {maxAttempts: 5, delay: 3000000d}}\nactions: []\n"
    assert _problems(text) == [("retries.processChains.delay", f"`3000000d' {LONG}")]
    workflow, _ = parse_workflow(text.replace("3000000d", "3650d"), "w.yaml")
    assert workflow.retries.delay == 3650 * 86_400_000


def test_a_service_duration_beyond_3650_days_is_refused(tmp_path) -> None:
    (tmp_path / "s.yaml").write_text(
        "- {id: s, name: s, description: s, path: s, runtime: other, parameters: [],\n"
        "   deadline: 4000d}\n")
    with pytest.raises(InputError) as info:
        read_services(str(tmp_path / "s.yaml"))
    assert [(p.line, p.message) for p in info.value.problems] == [(2, f"`4000d' {LONG}")]


@pytest.mark.parametrize("priority", ["99999999999999999999999", "2147483648", "-2147483648"])
def test_a_priority_beyond_32_bits_is_refused(priority) -> None:
    (problem,) = _problems(f"api: 4.7.0\npriority: {priority}\nactions: []\n")
    assert problem[0] == "priority" and "2147483647" in problem[1]


def test_the_largest_priorities_are_accepted() -> None:
    for priority in (2147483647, -2147483647):
        workflow, _ = parse_workflow(f"api: 4.7.0\npriority: {priority}\nactions: []\n")
        assert workflow.priority == priority


def test_nulls_of_steeps_nullable_fields_are_taken_as_absent() -> None:
    workflow, _ = parse_workflow(
        "api: 4.7.0\nname:\nretries: {processChains: null}\nactions:\n"
        "  - type: execute\n    service: s\n    retries: null\n    maxRuntime: null\n"
        "    maxInactivity: ~\n    deadline:\n    outputs: [{id: o, var: x, prefix: null}]\n"
        "  - type: for\n    input: x\n    enumerator: i\n    output: null\n"
        "    yieldToOutput: null\n    actions: []\n", "w.yaml")
    execute, each = workflow.actions
    assert workflow.name is None and workflow.retries is None
    assert (execute.retries, execute.max_runtime, execute.max_inactivity, execute.deadline) \
        == (None, None, None, None)
    assert each.output is None and each.yield_to_output is None


def test_a_null_where_steeps_field_is_not_nullable_is_still_refused() -> None:
    assert sorted(_problems(_execute("    retries: {maxAttempts: null}\n").replace(
        "service: s", "service: null"))) == [
        ("actions[0].retries.maxAttempts", "expected integer, got null `null'"),
        ("actions[0].service", "expected string, got null `null'")]


def test_nulls_in_service_metadata_are_taken_as_absent(tmp_path) -> None:
    (tmp_path / "s.yaml").write_text(
        "- {id: s, name: s, description: s, path: s, runtime: other, retries: null,\n"
        "   deadline: null, parameters: [{id: p, name: p, description: p, type: input,\n"
        "   cardinality: 1..1, label: null, default: null, fileSuffix: null}]}\n")
    (service,) = read_services(str(tmp_path / "s.yaml")).values()
    assert service.retries is None and service.deadline is None


YIELD = """\
api: 4.7.0
vars: [{id: items, value: [a, b]}, {id: outs}]
actions:
  - type: for
    input: items
    enumerator: it
    output: outs
    yieldToOutput: YIELDED
    actions:
      - type: execute
        service: s
        inputs: [{id: word, var: it}]
        outputs: [{id: out, var: st}]
      - type: for
        input: items
        enumerator: inner
        output: nested
        yieldToOutput: inner
        actions: []
"""


def test_a_yield_to_output_nothing_produces_is_located() -> None:
    workflow, _ = parse_workflow(YIELD.replace("YIELDED", "stt"), "w.yaml")
    (problem,) = validate_workflow(workflow)
    assert problem.path == "actions[0].yieldToOutput"
    assert problem.message == ("yieldToOutput `stt' is not an output of any action in this "
                               "for-each's actions, so the for-each has nothing to collect. "
                               "Did you mean `st'?")


@pytest.mark.parametrize("yielded", ["st", "it", "nested", "items"])
def test_a_yield_to_output_something_produces_or_that_has_a_value_is_valid(yielded) -> None:
    workflow, _ = parse_workflow(YIELD.replace("YIELDED", yielded), "w.yaml")
    assert validate_workflow(workflow) == []


FED_BACK = YIELD.replace("    yieldToOutput: YIELDED\n", "    yieldToInput: FED\n")


@pytest.mark.parametrize("fed", ["items", "outs"])
def test_a_yield_to_input_its_body_does_not_write_is_located(fed) -> None:
    """Fed back from outside the body (the loop's own input, a variable of the workflow), the
    same values come back every iteration: a loop without end, and the generator stopped the
    engine with a KeyError (the iterations shared one variable it waited for)."""
    workflow, _ = parse_workflow(FED_BACK.replace("FED", fed), "w.yaml")
    (problem,) = validate_workflow(workflow)
    assert problem.path == "actions[0].yieldToInput"
    assert problem.message.startswith(f"yieldToInput `{fed}' is not an output of any action in "
                                      "this for-each's actions: every iteration would feed the "
                                      "same values back into the loop, which would never end.")


@pytest.mark.parametrize("fed", ["st", "inner"])
def test_a_yield_to_input_its_body_writes_is_valid(fed) -> None:
    workflow, _ = parse_workflow(FED_BACK.replace("FED", fed), "w.yaml")
    assert validate_workflow(workflow) == []
