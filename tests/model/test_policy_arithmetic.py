"""The arithmetic of retry policies (issue 29): how each jitter rounds, capAfterJitter,
fractional exponentialBackoff, composed waits, maxElapsed and stop, and the maxDelay warning.
Pure functions with stub rngs; hypothesis for bounds over many draws."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steepy.errors import InputError
from steepy.model.backoff import RatioJitter, scaled
from steepy.model.policies import RetryPolicy


class Draws(random.Random):
    """An rng whose `random()' returns the given draws in turn (uniform/randint build on it
    in Python's own way: uniform(a, b) = a + (b - a) * random())."""

    def __init__(self, *draws: float) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0)


class Edge:
    """randint and uniform at their lowest or highest value."""

    def __init__(self, high: bool) -> None:
        self.high = high

    def randint(self, a: int, b: int) -> int:
        return b if self.high else a

    def uniform(self, a: float, b: float) -> float:
        return b if self.high else a


def problems(data) -> dict[str, str]:
    with pytest.raises(InputError) as info:
        RetryPolicy.from_json(data)
    return {p.path: p.message for p in info.value.problems}


# -- how each jitter rounds ---------------------------------------------------------------------

def test_ratio_jitter_floors_as_stevora_does():
    policy = RetryPolicy.from_json({"maxAttempts": 3, "delay": "1s", "jitter": {"ratio": [0.75, 1]}})
    assert [policy.retry_delay(1, Draws(x)) for x in (0, 0.5, 0.999999)] == [750, 875, 999]
    assert policy.retry_delay(1, Edge(True)) == 1000  # U's upper end itself: d


@pytest.mark.parametrize("jitter, d, low, high", [
    ("full", 7, 0, 7), ("equal", 7, 4, 7), ("equal", 1, 1, 1), ({"add": 5}, 7, 7, 12),
    ({"ratio": [0.5, 0.5]}, 7, 3, 3)])
def test_whole_millisecond_ends_of_every_jitter(jitter, d, low, high):
    policy = RetryPolicy.from_json({"maxAttempts": 2, "delay": d, "jitter": jitter})
    assert (policy.retry_delay(1, Edge(False)), policy.retry_delay(1, Edge(True))) == (low, high)


@settings(max_examples=300)
@given(d=st.integers(1, 10**9), low=st.floats(0, 1), width=st.floats(0, 1), seed=st.integers(0, 2**32))
def test_ratio_stays_within_its_floors_over_many_draws(d, low, width, seed):
    high = min(1.0, low + width)
    rng = random.Random(seed)
    for _ in range(20):
        got = RatioJitter(low, high).apply(d, rng)
        assert isinstance(got, int) and math.floor(d * low) <= got <= math.floor(d * high)


# -- capAfterJitter (Exosphere) -----------------------------------------------------------------

EXOSPHERE = {"maxAttempts": 5, "delay": "2s", "exponentialBackoff": 2, "maxDelay": "3s",
             "jitter": "equal"}


def test_cap_after_jitter_makes_retry_three_exactly_the_cap():
    policy = RetryPolicy.from_json({**EXOSPHERE, "capAfterJitter": True})
    rng = random.Random(1)
    assert {policy.retry_delay(3, rng) for _ in range(200)} == {3000}  # raw 8 s, equal: 4-8 s
    assert all(1000 <= policy.retry_delay(1, rng) <= 2000 for _ in range(200))
    today = RetryPolicy.from_json(EXOSPHERE)  # the default order: cap, then jitter
    assert {today.retry_delay(3, Edge(False)), today.retry_delay(3, Edge(True))} == {1500, 3000}
    assert policy.to_json()["capAfterJitter"] is True
    assert policy.describe_delay_rule().endswith("jitter equal, capped after jitter")
    assert problems({"capAfterJitter": "yes"}) == {
        "capAfterJitter": "capAfterJitter must be true or false, not 'yes'"}


@settings(max_examples=200)
@given(delay=st.integers(0, 10**6), backoff=st.integers(1, 4), max_delay=st.integers(0, 10**6),
       jitter=st.sampled_from(["full", "equal", {"ratio": [0.5, 1]}, {"add": 300}]),
       performed=st.integers(1, 12), seed=st.integers(0, 2**32))
def test_cap_after_jitter_never_exceeds_the_cap(delay, backoff, max_delay, jitter, performed, seed):
    policy = RetryPolicy.from_json({"maxAttempts": -1, "delay": delay, "exponentialBackoff": backoff,
                                    "maxDelay": max_delay, "jitter": jitter, "capAfterJitter": True})
    got = policy.retry_delay(performed, random.Random(seed))
    assert 0 <= got <= max_delay
    if jitter == "equal":  # the jitter's lower end is half the raw delay
        assert got >= min(math.ceil(policy.raw_delay(performed) / 2), max_delay)


# -- fractional exponentialBackoff --------------------------------------------------------------

def test_a_fractional_backoff_multiplies_and_rounds_down():
    policy = RetryPolicy.from_json({"maxAttempts": 6, "delay": "1s", "exponentialBackoff": 1.5})
    assert [policy.retry_delay(n) for n in range(1, 6)] == [1000, 1500, 2250, 3375, 5062]
    assert policy.describe_delay_rule() == "exponential 1s*1.5^(n-1), jitter none"
    assert policy.to_json() == {"maxAttempts": 6, "delay": 1000, "exponentialBackoff": 1.5}
    assert RetryPolicy.from_json(policy.to_json()) == policy
    # exact in decimal: 1.7 ** 2 is 2.8899999999999997 in binary, 289 ms here
    assert scaled(100, 1.7, 2) == 289 and scaled(1000, 1.1, 2) == 1210


def test_integers_keep_their_meaning():
    two = RetryPolicy.from_json({"maxAttempts": 4, "delay": 100, "exponentialBackoff": 2.0})
    assert two.exponential_backoff == 2 and isinstance(two.exponential_backoff, int)
    assert [two.retry_delay(n) for n in (1, 2, 3)] == [100, 200, 400]
    assert two.to_json()["exponentialBackoff"] == 2


@pytest.mark.parametrize("value", [0.5, 0, True, "1.5", float("inf"), float("nan")])
def test_backoffs_below_one_or_not_numbers_are_refused(value):
    assert "exponentialBackoff must be a number of at least 1" in problems(
        {"exponentialBackoff": value})["exponentialBackoff"]


@settings(max_examples=200)
@given(delay=st.integers(0, 10**7), backoff=st.floats(1, 10), performed=st.integers(1, 200))
def test_fractional_backoff_grows_and_saturates(delay, backoff, performed):
    policy = RetryPolicy(max_attempts=-1, delay=delay, exponential_backoff=backoff)
    d, before = policy.delay_after_attempts(performed), policy.delay_after_attempts(performed - 1)
    assert before <= d <= 2**63 - 1
    if delay * backoff ** (performed - 1) < 2**50:  # well inside a float's precision
        assert abs(d - delay * backoff ** (performed - 1)) <= 1 + d * 1e-9


def test_huge_attempt_numbers_saturate_with_a_fraction():
    assert RetryPolicy(max_attempts=-1, delay=100, exponential_backoff=1.0001) \
        .delay_after_attempts(10**9) == 2**63 - 1


# -- composed waits -----------------------------------------------------------------------------

WAITS = [{"strategy": "fixed", "delay": "1s"},
         {"strategy": "exponential", "delay": "1s", "exponentialBackoff": 2}]


def test_waits_are_summed_then_capped_and_jittered():
    policy = RetryPolicy.from_json({"maxAttempts": 6, "waits": WAITS})
    assert [policy.retry_delay(n) for n in range(1, 6)] == [2000, 3000, 5000, 9000, 17000]
    assert policy.describe_delay_rule() == "fixed 1s + exponential 1s*2^(n-1), jitter none"
    capped = RetryPolicy.from_json({"maxAttempts": 6, "waits": WAITS, "maxDelay": "4s",
                                    "jitter": {"ratio": [0.5, 1]}})
    assert [capped.retry_delay(n, Edge(False)) for n in (1, 2, 3)] == [1000, 1500, 2000]
    assert RetryPolicy.from_json(capped.to_json()) == capped
    linear = RetryPolicy.from_json({"maxAttempts": 4, "waits": [
        {"strategy": "linear", "delay": 10}, {"delay": 5, "exponentialBackoff": 1.5}]})
    assert [linear.retry_delay(n) for n in (1, 2, 3)] == [15, 27, 41]  # 10+5, 20+7, 30+11


def test_waits_beside_delay_strategy_or_backoff_are_refused_where_they_stand():
    found = problems({"delay": "1s", "strategy": "fixed", "waits": WAITS})
    assert set(found) == {"delay", "strategy"}
    assert found["delay"] == ("delay cannot be given beside waits: each wait in the list has "
                              "its own strategy, delay and exponentialBackoff")


@pytest.mark.parametrize("waits, path, fragment", [
    ([], "waits", "waits must be a non-empty list"),
    ("1s", "waits", "waits must be a non-empty list"),
    ([{"strategy": "fixed"}], "waits[0].delay", "delay is required in a wait"),
    ([{"delay": 1, "strategy": "random"}], "waits[0].strategy", "strategy must be one of"),
    ([{"delay": 1, "exponentialBackoff": 0.5}], "waits[0].exponentialBackoff", "at least 1"),
    ([{"delay": 1}, {"delay": 1, "maxDelay": 5}], "waits[1].maxDelay", "unknown key `maxDelay'"),
])
def test_bad_waits_are_located(waits, path, fragment):
    found = problems({"waits": waits})
    assert fragment in found[path], found


# -- maxElapsed and stop ------------------------------------------------------------------------

def test_max_elapsed_alone_leaves_attempts_unlimited():
    policy = RetryPolicy.from_json({"maxElapsed": "30s", "delay": "1s"})
    assert policy.max_attempts == -1 and policy.describe_stop_rule() == \
        "unlimited attempts, max elapsed 30s"
    assert policy.gives_up(100, 30_000) is None  # a retry due exactly then runs
    assert policy.gives_up(100, 30_001) == (
        "attempt 101 would begin 30s 1ms after the first began, past maxElapsed 30s")
    assert RetryPolicy.from_json(policy.to_json()) == policy


def test_stop_any_gives_up_at_the_first_limit_and_all_at_the_last():
    anyone = RetryPolicy.from_json({"maxAttempts": 3, "maxElapsed": "10s"})
    assert anyone.gives_up(3, 1000) == "all 3 attempts used"
    assert anyone.gives_up(1, 11_000).startswith("attempt 2 would begin 11s")
    assert anyone.gives_up(2, 10_000) is None
    every = RetryPolicy.from_json({"maxAttempts": 3, "maxElapsed": "10s", "stop": "all"})
    assert every.describe_stop_rule() == "3 attempts, max elapsed 10s, stop all"
    assert every.gives_up(3, 1000) is None and every.gives_up(1, 11_000) is None
    assert every.gives_up(3, 11_000) == ("all 3 attempts used; attempt 4 would begin 11s after "
                                         "the first began, past maxElapsed 10s")
    # with one limit given, all is any
    assert RetryPolicy.from_json({"maxAttempts": 2, "stop": "all"}).gives_up(2, 0) == \
        "all 2 attempts used"
    assert RetryPolicy.from_json({"maxAttempts": -1, "stop": "all"}).gives_up(10**6, 10**9) is None
    assert "stop must be any" in problems({"stop": "never"})["stop"]


@settings(max_examples=200)
@given(max_attempts=st.integers(-1, 10), max_elapsed=st.one_of(st.none(), st.integers(0, 10**5)),
       stop=st.sampled_from(["any", "all"]), performed=st.integers(1, 20),
       elapsed=st.integers(0, 2 * 10**5))
def test_stop_is_any_or_all_of_the_limits_given(max_attempts, max_elapsed, stop, performed, elapsed):
    policy = RetryPolicy(max_attempts=max_attempts, max_elapsed=max_elapsed, stop=stop)
    reached = []
    if max_attempts >= 0:
        reached.append(performed >= max_attempts)
    if max_elapsed is not None:
        reached.append(elapsed > max_elapsed)
    expected = bool(reached) and (any(reached) if stop == "any" else all(reached))
    assert (policy.gives_up(performed, elapsed) is not None) == expected


# -- the maxDelay warning (validate) ------------------------------------------------------------

@pytest.mark.parametrize("data, warned", [
    ({"delay": "1s", "maxDelay": "500ms"}, True),
    ({"delay": "1s", "maxDelay": "500ms", "strategy": "fixed", "exponentialBackoff": 2}, True),
    ({"delay": "1s", "maxDelay": "500ms", "exponentialBackoff": 2}, False),
    ({"delay": "1s", "maxDelay": "500ms", "exponentialBackoff": 1.5}, False),
    ({"delay": "1s", "maxDelay": "500ms", "strategy": "linear"}, False),
    ({"delay": "1s", "maxDelay": "1s"}, False),
    ({"delay": "1s"}, False),
])
def test_max_delay_below_a_delay_that_does_not_grow_is_warned(data, warned):
    warning = RetryPolicy.from_json({"maxAttempts": 3, **data}).cap_warning()
    assert (warning is not None) == warned
    if warned:
        assert warning.startswith("maxDelay (500ms) is below delay (1s) and there is no backoff: "
                                  "every pause is 500ms. steepy caps the delay as Steep's code does")
        # and it does: every pause is the cap
        policy = RetryPolicy.from_json({"maxAttempts": 3, **data})
        assert [policy.retry_delay(n) for n in (1, 2)] == [500, 500]


def test_one_attempt_is_said_as_one() -> None:
    """`all 1 attempts used' read as a plural of one (the chain page, `steepy show')."""
    policy = RetryPolicy(max_attempts=1)
    assert policy.gives_up(1, 0) == "maxAttempts is 1: its only attempt was used"
    assert RetryPolicy(max_attempts=2).attempts_used() == "all 2 attempts used"
