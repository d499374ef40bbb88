"""The kept C encoder writes the same text as `json.dumps` (steepy/model/jsontext.py): every
stored chain and event and every reuse key depends on it staying so."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import pytest
from hypothesis import given, strategies as st

from steepy.model.jsontext import compact_encoder

plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(plain)
def test_the_text_of_json_dumps(value) -> None:
    assert compact_encoder()(value) == json.dumps(value, separators=(",", ":"))
    assert compact_encoder(sort_keys=True)(value) == json.dumps(
        value, separators=(",", ":"), sort_keys=True)


def test_kept_between_calls_and_default_used() -> None:
    encode = compact_encoder(sort_keys=True, default=str)
    moment = datetime(2026, 11, 28, tzinfo=timezone.utc)
    assert encode({"b": moment, "a": [1.5, math.inf]}) == \
        '{"a":[1.5,Infinity],"b":"2026-11-28 00:00:00+00:00"}'
    assert encode({"b": 1}) == '{"b":1}'
    with pytest.raises(TypeError):
        compact_encoder()(moment)
