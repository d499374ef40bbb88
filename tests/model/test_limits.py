"""A site's retry limits (model/limits.py): ranges read, and a policy's values checked."""

from __future__ import annotations

import pytest

from steepy.model.limits import Bound, SiteRetries
from steepy.model.policies import RetryPolicy

SITE = SiteRetries(None, tuple(Bound.parse(k, v) for k, v in (
    ("maxAttempts", "1..20"), ("delay", "100ms.."), ("maxDelay", "..1h"),
    ("exponentialBackoff", "1..2.5"), ("maxElapsed", "..10m"))))


@pytest.mark.parametrize("data, expected", [
    ({"maxAttempts": 20, "delay": "100ms", "maxDelay": "1h", "exponentialBackoff": 2.5}, []),
    ({"maxAttempts": 21}, ["maxAttempts 21 is above this site's limit 20"]),
    ({"maxAttempts": 0}, ["maxAttempts 0 is below this site's limit 1"]),
    ({"maxAttempts": -1}, ["maxAttempts -1 (unlimited) is above this site's limit 20"]),
    ({"delay": 99}, ["delay 99ms is below this site's limit 100ms"]),
    ({"maxDelay": "61m"}, ["maxDelay 1h 1m is above this site's limit 1h"]),
    ({"exponentialBackoff": 3}, ["exponentialBackoff 3 is above this site's limit 2.5"]),
    ({"maxElapsed": "11m"}, ["maxElapsed 11m is above this site's limit 10m"]),
])
def test_each_given_value_is_checked_against_its_range(data: dict, expected: list) -> None:
    policy = RetryPolicy.from_json(data)
    found = [m.removesuffix(" (steepy.yaml retries.limits)")
             for _, m in SITE.problems(policy, data)]
    assert found == expected


def test_a_key_no_level_gave_is_not_checked() -> None:
    assert SITE.problems(RetryPolicy(), ["maxDelay", "maxElapsed"]) == []
    assert SITE.problems(RetryPolicy(), ["delay"]) != []  # delay 0, given


@pytest.mark.parametrize("key, text, words", [
    ("maxAttempts", "20", "expected a range of whole numbers such as `1..20'"),
    ("maxAttempts", "1.5..2", "is not a range of whole numbers"),
    ("delay", "1 parsec..", "is not a range of durations"),
    ("delay", "..", "bounds nothing"),
    ("exponentialBackoff", "3..2", "the low end is above the high end"),
    ("maxAttempts", "-1..20", "the ends of maxAttempts are 0 or more"),  # review D4
    ("maxAttempts", "-5..", "leave the high end out to allow it"),
])
def test_a_bad_range_says_what_is_wrong(key: str, text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Bound.parse(key, text)
