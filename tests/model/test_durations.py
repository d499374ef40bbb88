"""Duration parsing: replay durations.yaml from the conformance corpus, plus property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steepy.model.durations import DurationError, format_duration, model_duration, parse_duration
from steepy.model.policies import RetryPolicy
from tests.conftest import conformance_params


def _entries(*keys: str) -> list:
    return conformance_params("durations.yaml", *keys, id=lambda e: repr(e["input"]))


def _check(func, entry: dict) -> None:
    """Check one vector: `expected_ms`, an exact `message`, or `message_contains` fragment(s)."""
    if "expected_ms" in entry:
        assert func(entry["input"]) == entry["expected_ms"]
        return
    with pytest.raises(DurationError) as info:
        func(entry["input"])
    if "message" in entry:
        assert str(info.value) == entry["message"]
    elif "message_contains" in entry:
        fragments = entry["message_contains"]
        for fragment in [fragments] if isinstance(fragments, str) else fragments:
            assert fragment in str(info.value)
    else:
        pytest.fail(f"vector without expectation: {entry}")


@pytest.mark.parametrize("entry", _entries("parse_duration", "valid"))
def test_parse_duration_valid(entry):
    _check(parse_duration, entry)


@pytest.mark.parametrize("entry", _entries("parse_duration", "invalid"))
def test_parse_duration_invalid(entry):
    _check(parse_duration, entry)


@pytest.mark.parametrize("entry", _entries("parse_duration", "derived"))
def test_parse_duration_derived(entry):
    _check(parse_duration, entry)


@pytest.mark.parametrize("entry", _entries("model_duration", "derived"))
def test_model_duration_derived(entry):
    _check(model_duration, entry)


_FIELDS = {"maxAttempts": "max_attempts", "delay": "delay",
           "exponentialBackoff": "exponential_backoff", "maxDelay": "max_delay"}


@pytest.mark.parametrize("entry", _entries("model_duration", "upstream"))
def test_model_duration_upstream_retry_policy(entry):
    policy = RetryPolicy.from_json(entry["input"])
    assert entry["expected"], "vector without expectation"
    for key, value in entry["expected"].items():
        assert getattr(policy, _FIELDS[key]) == value, key


def test_parse_duration_wants_a_unit_but_model_duration_does_not():
    with pytest.raises(DurationError, match="Expected unit at position 3"):
        parse_duration("100")
    assert model_duration("100") == 100
    assert model_duration(100) == 100


@pytest.mark.parametrize("text, ms", [("-5", -5), ("+5", 5), ("007", 7), ("-0", 0)])
def test_model_duration_follows_kotlin_to_long_or_null(text, ms):
    assert model_duration(text) == ms


@pytest.mark.parametrize("value", [True, False, None, 1.5, 1000.0, [1], {"a": 1}])
def test_model_duration_rejects_non_durations(value):
    with pytest.raises(DurationError, match="expected a duration such as `5s' or a number of milliseconds"):
        model_duration(value)


def test_out_of_range_values_are_duration_errors():
    with pytest.raises(DurationError):
        model_duration(2**63)
    with pytest.raises(DurationError):
        parse_duration("99999999999999999999s")
    with pytest.raises(DurationError):
        parse_duration("9223372036854775807d")
    # Like toLongOrNull, an overlong integer string goes to the plain parser (which wants a unit).
    with pytest.raises(DurationError, match="Expected unit at position 20"):
        model_duration("99999999999999999999")
    # Leading zeros do not make a number "large", and never reach Python's int() digit limit.
    assert parse_duration("0" * 10000 + "1s") == 1000


def test_positions_are_offsets_into_the_original_string():
    with pytest.raises(DurationError, match=r"^Expected number at position 4$"):
        parse_duration("1s  x")
    with pytest.raises(DurationError, match=r"^Expected unit at position 6$"):
        parse_duration(" 1s  5")


@pytest.mark.parametrize("ms, text", [(0, "0ms"), (250, "250ms"), (5400000, "1h 30m"),
                                      (90061001, "1d 1h 1m 1s 1ms")])
def test_format_duration(ms, text):
    assert format_duration(ms) == text


@settings(max_examples=300)
@given(st.text())
def test_parse_duration_only_raises_duration_error(text):
    try:
        result = parse_duration(text)
    except DurationError:
        return
    assert isinstance(result, int) and result >= 0


@settings(max_examples=300)
@given(st.one_of(st.integers(), st.text(), st.none(), st.floats(), st.booleans()))
def test_model_duration_only_raises_duration_error(value):
    try:
        result = model_duration(value)
    except DurationError:
        return
    assert isinstance(result, int) and not isinstance(result, bool)


@settings(max_examples=200)
@given(st.from_regex(r"\A\s*([0-9]{1,6}\s*(ms|s|m|h|d|days|hours|secs)\s*){1,4}\Z"))
def test_grammar_strings_parse(text):
    assert parse_duration(text) >= 0


@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_format_parse_round_trip(ms):
    assert parse_duration(format_duration(ms)) == ms


# -- the longest duration (3650 days) -------------------------------------------------------------


def test_the_longest_duration_and_what_is_too_long() -> None:
    from steepy.model.durations import MAX_DURATION_MS, too_long

    assert MAX_DURATION_MS == parse_duration("3650d")
    assert not too_long(MAX_DURATION_MS) and not too_long(-MAX_DURATION_MS)
    assert too_long(MAX_DURATION_MS + 1) and too_long(2**63 - 1)


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_later_never_overflows_and_takes_at_most_the_longest_duration(ms) -> None:
    from datetime import datetime, timedelta, timezone

    from steepy.model.durations import MAX_DURATION_MS, later

    now = datetime(2026, 11, 27, tzinfo=timezone.utc)
    bounded = max(-MAX_DURATION_MS, min(MAX_DURATION_MS, ms))
    assert later(now, ms) == now + timedelta(milliseconds=bounded)
