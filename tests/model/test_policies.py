"""Retry and timeout policies: retry-delays.yaml replay, steepy's extensions, JSON round trips."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steepy.errors import InputError
from steepy.model.backoff import AddJitter, RatioJitter
from steepy.model.policies import RetryCondition, RetryPolicy, TimeoutPolicy
from tests.conftest import conformance_params


def _problems(func, data) -> dict[str, str]:
    """path -> message of every problem func(data) reports."""
    with pytest.raises(InputError) as info:
        func(data)
    return {p.path: p.message for p in info.value.problems}


# -- retry-delays.yaml, Part 1 ------------------------------------------------------------------

@pytest.mark.parametrize("entry", conformance_params("retry-delays.yaml", "delay_after_attempts",
                                                    id=lambda e: str(e["policy"])))
def test_delay_after_attempts(entry):
    policy = RetryPolicy.from_json(entry["policy"])
    assert entry["expected"]
    for step in entry["expected"]:
        assert policy.delay_after_attempts(step["performed"]) == step["delay_ms"], step
        # without jitter the randomised delay is the same
        assert policy.retry_delay(step["performed"]) == step["delay_ms"]


# -- retry-delays.yaml, Part 2 (the delays and the attempt decisions) ---------------------------

def _replay_loop(policy: RetryPolicy, outcomes: list[str], cancel_after_ms: int | None) -> dict:
    """A retry loop driven only by the policy's decisions, with simulated (not real) waits."""
    calls, waits, elapsed = 0, [], 0
    if not policy.attempts_left(0):
        return {"calls": 0, "result": "skipped"}
    while True:
        outcome = outcomes[calls]
        calls += 1
        if outcome == "ok":
            return {"calls": calls, "result": "ok", "waits_ms": waits}
        cancelled = outcome == "cancel"
        retry, _reason = policy.should_retry(None, [], None, cancelled=cancelled)
        if cancelled and not retry:
            return {"calls": calls, "result": "cancelled", "message": f"Cancel {calls}", "waits_ms": waits}
        if not retry or not policy.attempts_left(calls):
            return {"calls": calls, "result": "error", "message": f"Attempt {calls}", "waits_ms": waits}
        wait = policy.delay_after_attempts(calls)
        if cancel_after_ms is not None and elapsed + wait > cancel_after_ms:
            # the caller is cancelled during the wait; the wait is interrupted
            return {"calls": calls, "result": "cancelled", "message": "CANCELLED!",
                    "total_ms": cancel_after_ms}
        waits.append(wait)
        elapsed += wait


@pytest.mark.parametrize("entry", conformance_params("retry-delays.yaml", "retry_loop",
                                                    id=lambda e: e["name"]))
def test_retry_loop_delays(entry):
    data = entry["policy"]
    policy = RetryPolicy.from_json(data) if data is not None else RetryPolicy()
    expected = entry["expected"]
    got = _replay_loop(policy, entry["outcomes"], entry.get("external_cancel_after_ms"))

    assert got["calls"] == expected["calls"]
    assert got["result"] == expected["result"]
    if "message" in expected:
        assert got["message"] == expected["message"]
    if "waits_ms" in expected:
        # the pause before call k+1 is exactly the policy's delay after k attempts
        assert expected["waits_ms"] == [policy.delay_after_attempts(k) for k in range(1, expected["calls"])]
        assert got["waits_ms"] == expected["waits_ms"]
    if "max_total_ms" in expected:
        assert got["total_ms"] <= expected["max_total_ms"]
        assert policy.delay_after_attempts(1) > expected["max_total_ms"]


def test_zero_attempts_means_no_call():
    policy = RetryPolicy.from_json({"maxAttempts": 0})
    assert not policy.attempts_left(0)


@pytest.mark.parametrize("max_attempts, performed, left", [
    (1, 0, True), (1, 1, False), (3, 2, True), (3, 3, False), (-1, 10**9, True), (0, 0, False)])
def test_attempts_left(max_attempts, performed, left):
    assert RetryPolicy(max_attempts=max_attempts).attempts_left(performed) is left


# -- strategies ---------------------------------------------------------------------------------

@pytest.mark.parametrize("data, delays", [
    ({"strategy": "linear", "maxAttempts": 4, "delay": 100}, [0, 100, 200, 300, 400, 400]),
    ({"strategy": "linear", "maxAttempts": 4, "delay": 100, "maxDelay": 250}, [0, 100, 200, 250, 250, 250]),
    ({"strategy": "linear", "maxAttempts": -1, "delay": "1s"}, [0, 1000, 2000, 3000, 4000, 5000]),
    ({"strategy": "linear", "maxAttempts": 0, "delay": 100}, [0, 0, 0]),
    ({"strategy": "fixed", "maxAttempts": 4, "delay": 100, "exponentialBackoff": 3}, [0, 100, 100, 100, 100, 100]),
    ({"strategy": "fixed", "maxAttempts": -1, "delay": 100, "maxDelay": 50}, [0, 50, 50, 50]),
    ({"strategy": "exponential", "maxAttempts": 5, "delay": 10, "exponentialBackoff": 3}, [0, 10, 30, 90, 270, 810, 810]),
])
def test_strategies(data, delays):
    policy = RetryPolicy.from_json(data)
    assert [policy.delay_after_attempts(k) for k in range(len(delays))] == delays


def test_huge_attempt_numbers_saturate_quickly():
    policy = RetryPolicy(max_attempts=-1, delay=100, exponential_backoff=2)
    assert policy.delay_after_attempts(10**9) == 2**63 - 1
    policy.max_delay = 60000
    assert policy.delay_after_attempts(10**9) == 60000


# -- jitter -------------------------------------------------------------------------------------

class _EdgeRng:
    """An injected rng that always picks the lowest or the highest value."""

    def __init__(self, high: bool):
        self.high = high

    def randint(self, a: int, b: int) -> int:
        return b if self.high else a


@pytest.mark.parametrize("jitter, d, low, high", [
    ("full", 800, 0, 800), ("equal", 800, 400, 800), ("equal", 5, 3, 5), ("none", 800, 800, 800)])
def test_jitter_edges_with_injected_rng(jitter, d, low, high):
    policy = RetryPolicy(max_attempts=4, delay=d, jitter=jitter)
    assert policy.retry_delay(1, _EdgeRng(high=False)) == low
    assert policy.retry_delay(1, _EdgeRng(high=True)) == high


@pytest.mark.parametrize("jitter", ["full", "equal"])
def test_jitter_with_seeded_rng_stays_in_bounds_and_varies(jitter):
    policy = RetryPolicy(max_attempts=-1, delay=100, exponential_backoff=2, max_delay=1000, jitter=jitter)
    rng = random.Random(42)
    for performed in range(1, 12):
        d = policy.delay_after_attempts(performed)
        samples = [policy.retry_delay(performed, rng) for _ in range(50)]
        low = 0 if jitter == "full" else d / 2
        assert all(low <= s <= d <= 1000 for s in samples), (performed, samples)
        assert len(set(samples)) > 1
    # same seed, same delays (reproducible tests)
    assert [policy.retry_delay(3, random.Random(7)) for _ in range(3)] == [policy.retry_delay(3, random.Random(7))] * 3


def test_jitter_uses_module_random_by_default():
    policy = RetryPolicy(max_attempts=3, delay=1000, jitter="full")
    assert all(0 <= policy.retry_delay(2) <= 1000 for _ in range(20))
    assert RetryPolicy(delay=0, jitter="full").retry_delay(1) == 0


@settings(max_examples=200)
@given(delay=st.integers(0, 10**7), backoff=st.integers(1, 5), max_attempts=st.integers(-1, 20),
       max_delay=st.one_of(st.none(), st.integers(0, 10**7)), strategy=st.sampled_from(["exponential", "linear", "fixed"]),
       jitter=st.sampled_from(["full", "equal"]), performed=st.integers(0, 40), seed=st.integers(0, 2**32))
def test_jitter_never_exceeds_the_capped_delay(delay, backoff, max_attempts, max_delay, strategy, jitter, performed, seed):
    policy = RetryPolicy(max_attempts=max_attempts, delay=delay, exponential_backoff=backoff,
                         max_delay=max_delay, strategy=strategy, jitter=jitter)
    d = policy.delay_after_attempts(performed)
    got = policy.retry_delay(performed, random.Random(seed))
    assert 0 <= got <= d
    if max_delay is not None:
        assert got <= max_delay
    if jitter == "equal":
        assert got >= d / 2


# -- jitter forms with a parameter: ratio and add (extensions 1) --------------------------------

def test_ratio_and_add_are_read_and_written_back():
    ratio = RetryPolicy.from_json({"maxAttempts": 3, "delay": "1s", "jitter": {"ratio": [0.75, 1]}})
    assert ratio.jitter == RatioJitter(0.75, 1.0)
    assert ratio.to_json() == {"maxAttempts": 3, "delay": 1000, "jitter": {"ratio": [0.75, 1.0]}}
    add = RetryPolicy.from_json({"maxAttempts": 3, "delay": 100, "jitter": {"add": "500ms"}})
    assert add.jitter == AddJitter(500)
    assert RetryPolicy.from_json(add.to_json()) == add


@pytest.mark.parametrize("jitter, path, fragment", [
    ({"ratio": [1, 0.5]}, "jitter.ratio", "0 <= a <= b <= 1"),
    ({"ratio": [0.5, 2]}, "jitter.ratio", "0 <= a <= b <= 1"),
    ({"ratio": [0.5]}, "jitter.ratio", "two numbers"),
    ({"ratio": ["a", "b"]}, "jitter.ratio", "two numbers"),
    ({"add": "5 parsecs"}, "jitter.add", "Unknown duration unit"),
    ({"ratio": [0.5, 1], "add": 5}, "jitter", "jitter must be one of none, full, equal"),
    ("random", "jitter", "{ratio: [a, b]}, {add: DURATION}"),
])
def test_bad_jitter_forms_are_located(jitter, path, fragment):
    problems = _problems(RetryPolicy.from_json, {"jitter": jitter})
    assert fragment in problems[path], problems


@pytest.mark.parametrize("jitter, d, low, high", [
    (RatioJitter(0.75, 1.0), 800, 600, 800), (RatioJitter(0, 0.5), 801, 0, 400),
    (AddJitter(250), 800, 800, 1050)])
def test_ratio_and_add_edges(jitter, d, low, high):
    class Edge:
        def __init__(self, high):
            self.high = high

        def randint(self, a, b):
            return b if self.high else a

        def uniform(self, a, b):
            return b if self.high else a

    policy = RetryPolicy(max_attempts=4, delay=d, jitter=jitter)
    assert policy.retry_delay(1, Edge(False)) == low
    assert policy.retry_delay(1, Edge(True)) == high


@settings(max_examples=200)
@given(delay=st.integers(0, 10**7), low=st.floats(0, 1), width=st.floats(0, 1),
       extra=st.integers(0, 10**6), max_delay=st.one_of(st.none(), st.integers(0, 10**7)),
       performed=st.integers(1, 20), seed=st.integers(0, 2**32))
def test_ratio_and_add_stay_in_their_bounds(delay, low, width, extra, max_delay, performed, seed):
    high = min(1.0, low + width)
    for jitter, lowest, highest in ((RatioJitter(low, high), lambda d: math.floor(d * low),
                                     lambda d: math.floor(d * high)),
                                    (AddJitter(extra), lambda d: d, lambda d: d + extra)):
        policy = RetryPolicy(max_attempts=-1, delay=delay, exponential_backoff=2,
                             max_delay=max_delay, jitter=jitter)
        d = policy.delay_after_attempts(performed)
        got = policy.retry_delay(performed, random.Random(seed))
        if d > 0:
            cap = max_delay if max_delay is not None else highest(d)
            assert min(lowest(d), cap) <= got <= min(highest(d), cap)
        if max_delay is not None:
            assert got <= max_delay


def test_the_recorded_rule_names_the_jitter():
    assert RetryPolicy(delay=100, exponential_backoff=2, jitter=RatioJitter(0.75, 1.0)) \
        .describe_delay_rule() == "exponential 100ms*2^(n-1), jitter ratio 0.75..1"
    assert RetryPolicy(delay=100, strategy="fixed", jitter=AddJitter(1500)) \
        .describe_delay_rule() == "fixed 100ms, jitter add up to 1s 500ms"


# -- retryOn / abortOn --------------------------------------------------------------------------

def test_retry_on_exit_codes_and_ranges():
    policy = RetryPolicy.from_json({"maxAttempts": 3, "retryOn": {"exitCodes": [1, "3..5"]}})
    assert policy.should_retry(1, [], None) == (True, "retryOn matched exit code 1")
    for code in (3, 4, 5):
        retry, reason = policy.should_retry(code, [], None)
        assert retry and "range 3..5" in reason
    for code in (0, 2, 6, None):
        retry, reason = policy.should_retry(code, [], None)
        assert not retry and "retryOn did not match" in reason


def test_retry_on_output_regex_searches_the_last_lines():
    cond = RetryCondition.from_json({"output": r"^Connection (reset|refused)"})
    assert cond.matches(1, ["starting", "Connection refused by host"], None)
    assert not cond.matches(1, ["starting", "no Connection refused"], None)  # ^ anchors at each line
    assert not cond.matches(1, [], None)
    policy = RetryPolicy(retry_on=cond)
    assert policy.should_retry(1, ["Connection reset"], None)[0]
    assert not policy.should_retry(1, ["Segmentation fault"], None)[0]


def test_retry_on_timeouts():
    policy = RetryPolicy.from_json({"retryOn": {"timeouts": ["maxInactivity"]}})
    assert policy.should_retry(None, [], "maxInactivity") == (True, "retryOn matched timeout maxInactivity")
    assert not policy.should_retry(None, [], "maxRuntime")[0]
    assert not policy.should_retry(137, [], None)[0]


def test_abort_on_wins_over_retry_on():
    policy = RetryPolicy.from_json({"maxAttempts": 5, "retryOn": {"exitCodes": ["1..10"]},
                                    "abortOn": {"exitCodes": [3], "output": "out of memory"}})
    assert policy.should_retry(3, [], None) == (False, "abortOn matched exit code 3")
    retry, reason = policy.should_retry(2, ["java: out of memory"], None)
    assert not retry and reason.startswith("abortOn matched output")
    assert policy.should_retry(2, ["disk busy"], None) == (True, "retryOn matched exit code 2 (range 1..10)")


def test_abort_on_alone_keeps_everything_else_retryable():
    policy = RetryPolicy.from_json({"abortOn": {"exitCodes": [2], "timeouts": ["maxRuntime"]}})
    assert not policy.should_retry(2, [], None)[0]
    assert not policy.should_retry(None, [], "maxRuntime")[0]
    assert policy.should_retry(1, [], None) == (True, "every failure is retried (no retryOn)")
    assert policy.should_retry(None, [], "maxInactivity")[0]


@pytest.mark.parametrize("data", [{}, {"retryOn": {"timeouts": ["maxRuntime", "maxInactivity"], "exitCodes": [1]}}])
def test_deadline_and_cancellation_are_never_retried(data):
    policy = RetryPolicy.from_json(data)
    retry, reason = policy.should_retry(None, [], "deadline")
    assert not retry and "deadline" in reason
    retry, reason = policy.should_retry(1, [], None, cancelled=True)
    assert not retry and "cancel" in reason


def test_default_policy_retries_every_failure():
    assert RetryPolicy().should_retry(1, [], "maxRuntime")[0]
    assert RetryPolicy().should_retry(None, [], None)[0]


# -- timeout policies ---------------------------------------------------------------------------

@pytest.mark.parametrize("data, timeout, error_on_timeout", [
    ("5m", 300000, False), ("1h 30m", 5400000, False), (1000, 1000, False), ("1000", 1000, False),
    ({"timeout": "2s"}, 2000, False), ({"timeout": 500, "errorOnTimeout": True}, 500, True),
    ({"timeout": "1 min", "errorOnTimeout": False}, 60000, False)])
def test_timeout_policy_forms(data, timeout, error_on_timeout):
    policy = TimeoutPolicy.from_json(data)
    assert (policy.timeout, policy.error_on_timeout) == (timeout, error_on_timeout)
    expected = {"timeout": timeout} | ({"errorOnTimeout": True} if error_on_timeout else {})
    assert policy.to_json() == expected
    assert TimeoutPolicy.from_json(policy.to_json()) == policy


@pytest.mark.parametrize("data, path, fragment", [
    ({}, "timeout", "timeout is required"),
    ({"timeout": "1 Elvis"}, "timeout", "Unknown duration unit: `Elvis'"),
    ({"timeout": 5, "errorOnTimout": True}, "errorOnTimout", "allowed keys: timeout, errorOnTimeout"),
    ({"timeout": 5, "errorOnTimeout": "yes"}, "errorOnTimeout", "true or false"),
    (True, "", "a timeout policy must be a duration"),
    (1.5, "", "a timeout policy must be a duration"),
    ("100 ", "", "Expected unit at position 4"),
])
def test_timeout_policy_errors(data, path, fragment):
    problems = _problems(TimeoutPolicy.from_json, data)
    assert fragment in problems[path]


# -- JSON and errors ----------------------------------------------------------------------------

def test_to_json_omits_defaults_and_writes_milliseconds():
    assert RetryPolicy().to_json() == {}
    assert RetryPolicy.from_json({"maxAttempts": 1, "delay": "0s", "strategy": "exponential"}).to_json() == {}
    assert RetryPolicy.from_json({"maxAttempts": 5, "delay": "5m 30s", "maxDelay": "1d", "jitter": "equal"}).to_json() == {
        "maxAttempts": 5, "delay": 330000, "maxDelay": 86400000, "jitter": "equal"}


def test_range_spelling_survives_a_round_trip():
    data = {"retryOn": {"exitCodes": [1, "3 .. 5", "7..7"], "output": "x", "timeouts": ["maxRuntime"]},
            "abortOn": {"exitCodes": ["-2..-1"]}}
    policy = RetryPolicy.from_json(data)
    assert policy.retry_on.exit_codes == [1, (3, 5), (7, 7)]
    assert policy.abort_on.exit_codes == [(-2, -1)]
    assert policy.to_json() == data
    # a range added in code gets the canonical spelling
    policy.retry_on.exit_codes.append((9, 12))
    assert policy.to_json()["retryOn"]["exitCodes"][-1] == "9..12"


def test_describe_delay_rule():
    assert RetryPolicy(delay=100, exponential_backoff=2, max_delay=1000).describe_delay_rule() == \
        "exponential 100ms*2^(n-1), max 1s, jitter none"
    assert RetryPolicy(delay=1500, strategy="linear", jitter="full").describe_delay_rule() == "linear 1s 500ms*n, jitter full"
    assert RetryPolicy(delay=60000, strategy="fixed").describe_delay_rule() == "fixed 1m, jitter none"


@pytest.mark.parametrize("data, path, fragment", [
    ({"delay": "1 Elvis"}, "delay", "Unknown duration unit: `Elvis'"),
    ({"maxDelay": " 100"}, "maxDelay", "Expected unit at position 4"),
    ({"delay": True}, "delay", "a number of milliseconds or a duration"),
    ({"delay": 1.5}, "delay", "a number of milliseconds or a duration"),
    ({"maxAttempts": "3"}, "maxAttempts", "must be an integer"),
    ({"maxAttempts": True}, "maxAttempts", "must be an integer"),
    ({"exponentialBackoff": 0}, "exponentialBackoff", "at least 1"),
    ({"strategy": "random"}, "strategy", "exponential, linear, fixed"),
    ({"jitter": "half"}, "jitter", "none, full, equal"),
    ({"retries": 3}, "retries", "allowed keys: maxAttempts, delay, exponentialBackoff, maxDelay"),
    ({"retryOn": [1]}, "retryOn", "must be an object with the keys exitCodes, output, timeouts"),
    ({"retryOn": {"exitCode": [1]}}, "retryOn.exitCode", "allowed keys: exitCodes, output, timeouts"),
    ({"retryOn": {"exitCodes": 1}}, "retryOn.exitCodes", "must be a list"),
    ({"retryOn": {"exitCodes": [1, "3-5"]}}, "retryOn.exitCodes[1]", "inclusive range such as \"3..5\""),
    ({"retryOn": {"exitCodes": [1, True]}}, "retryOn.exitCodes[1]", "integer"),
    ({"abortOn": {"exitCodes": ["5..3"]}}, "abortOn.exitCodes[0]", "is empty"),
    ({"retryOn": {"output": "(unclosed"}}, "retryOn.output", "not a valid regular expression"),
    ({"retryOn": {"output": 3}}, "retryOn.output", "a regular expression"),
    ({"retryOn": {"timeouts": ["maxRuntime", "deadline"]}}, "retryOn.timeouts[1]", "never retried"),
    ({"abortOn": {"timeouts": ["soon"]}}, "abortOn.timeouts[0]", "`maxInactivity' or `maxRuntime'"),
    ({"abortOn": {"timeouts": "maxRuntime"}}, "abortOn.timeouts", "must be a list"),
    ([], "", "a retry policy must be an object"),
    ({"requeue": {"exitCodes": [75], "delay": "5 parsecs"}}, "requeue.delay", "Unknown duration unit"),
    ({"requeue": {"output": "(unclosed"}}, "requeue.output", "not a valid regular expression"),
    ({"requeue": {"delay": "1s"}}, "requeue", "needs exitCodes or output"),
    ({"requeue": {"exitCodes": [75], "timeouts": ["maxRuntime"]}}, "requeue.timeouts",
     "allowed keys: exitCodes, output, delay"),
    ({"requeue": 75}, "requeue", "must be an object with the keys exitCodes, output, delay"),
])
def test_retry_policy_errors_carry_the_json_path(data, path, fragment):
    problems = _problems(RetryPolicy.from_json, data)
    assert path in problems, problems
    assert fragment in problems[path]


def test_all_problems_are_reported_at_once():
    problems = _problems(RetryPolicy.from_json, {"delay": "x", "maxDelay": "1 Elvis", "jitter": 1,
                                                 "abortOn": {"exitCodes": ["a", 2, "b"]}})
    assert set(problems) == {"delay", "maxDelay", "jitter", "abortOn.exitCodes[0]", "abortOn.exitCodes[2]"}


# -- round trips (hypothesis) -------------------------------------------------------------------

_codes = st.one_of(st.integers(-300, 300),
                   st.tuples(st.integers(-300, 300), st.integers(0, 50)).map(lambda t: (t[0], t[0] + t[1])))
_conditions = st.builds(RetryCondition,
                        exit_codes=st.lists(_codes, max_size=4),
                        output=st.one_of(st.none(), st.sampled_from(["error", "^x$", r"\d+ failed", "a|b"])),
                        timeouts=st.lists(st.sampled_from(["maxRuntime", "maxInactivity"]), max_size=2))
_policies = st.builds(RetryPolicy,
                      max_attempts=st.integers(-1, 100), delay=st.integers(0, 10**9),
                      exponential_backoff=st.integers(1, 10),
                      max_delay=st.one_of(st.none(), st.integers(0, 10**9)),
                      strategy=st.sampled_from(["exponential", "linear", "fixed"]),
                      jitter=st.sampled_from(["none", "full", "equal"]),
                      retry_on=st.one_of(st.none(), _conditions), abort_on=st.one_of(st.none(), _conditions))


@settings(max_examples=200)
@given(_policies)
def test_retry_policy_round_trip(policy):
    data = policy.to_json()
    again = RetryPolicy.from_json(data)
    assert again == policy
    assert again.to_json() == data


@given(st.integers(0, 2**63 - 1), st.booleans())
def test_timeout_policy_round_trip(timeout, error_on_timeout):
    policy = TimeoutPolicy(timeout, error_on_timeout)
    assert TimeoutPolicy.from_json(policy.to_json()) == policy


# -- requeue (extensions 11) --------------------------------------------------------------------


def test_requeue_matches_exit_codes_and_output_but_never_a_timeout_or_cancel():
    policy = RetryPolicy.from_json({"requeue": {"exitCodes": ["75..76"], "output": "^rate limit",
                                                "delay": "2s"}})
    assert policy.requeue is not None and policy.requeue.delay == 2000
    assert policy.requeue_reason(76, [], None) == "requeue matched exit code 76 (range 75..76)"
    assert policy.requeue_reason(1, ["x", "rate limit hit"], None) == \
        "requeue matched output /^rate limit/"
    assert policy.requeue_reason(1, ["x"], None) is None
    assert policy.requeue_reason(75, [], "maxRuntime") is None
    assert policy.requeue_reason(75, [], None, cancelled=True) is None
    assert RetryPolicy().requeue_reason(75, [], None) is None
    data = {"maxAttempts": 2, "requeue": {"exitCodes": [75, "80..81"], "output": "x", "delay": 100}}
    assert RetryPolicy.from_json(data).to_json() == data
