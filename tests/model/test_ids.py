"""Unique ids: 20 base32 characters of 12 bytes (seconds since 2020, per-process random
bytes, a counter); the quick path (a prefix made once a second, the rest from a table) gives
exactly the characters of the plain encoding."""

from __future__ import annotations

from hypothesis import given, strategies as st

from steepy.model import ids


def _plain(seconds: int, count: int) -> str:
    """The encoding written out: 96 bits, 4 zero bits after them, 5 bits a character."""
    raw = seconds.to_bytes(4, "big") + ids._random + count.to_bytes(3, "big")
    number = int.from_bytes(raw, "big") << 4
    return "".join(ids._ALPHABET[(number >> (5 * i)) & 31] for i in range(19, -1, -1))


@given(st.integers(0, 0xFFFFFFFF), st.integers(0, 0xFFFFFF))
def test_the_quick_path_writes_the_plain_encoding(seconds: int, count: int) -> None:
    assert ids._id(seconds, count) == _plain(seconds, count) == ids._encode(
        seconds.to_bytes(4, "big") + ids._random + count.to_bytes(3, "big"))


def test_ids_sort_by_second_then_counter() -> None:
    made = [ids._id(s, c) for s in (5, 6, 300) for c in (0, 1, 0xFFFFFF)]
    assert made == sorted(made) and len(set(made)) == len(made)
    assert all(len(i) == 20 and set(i) <= set(ids._ALPHABET) for i in made)


def test_unique_ids_differ_and_grow() -> None:
    made = [ids.unique_id() for _ in range(1000)]
    assert len(set(made)) == 1000
