"""Unique, time-sortable identifiers in the spirit of Steep's UniqueID.

Twelve bytes like a MongoDB ObjectId (seconds since 2020, per-process random bytes, a
counter), written as 20 base32 characters. The alphabet is in ASCII order, so ids sort by
creation time as plain strings.
"""

from __future__ import annotations

import itertools
import os
import threading
import time

_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
_EPOCH = 1577836800  # 2020-01-01T00:00:00Z keeps 32 bits of seconds usable far ahead
_random = os.urandom(5)
_counter = itertools.count(int.from_bytes(os.urandom(3), "big"))
_lock = threading.Lock()


def _encode(raw: bytes) -> str:
    number = int.from_bytes(raw, "big")
    bits = len(raw) * 8
    chars = -(-bits // 5)
    number <<= chars * 5 - bits
    return "".join(_ALPHABET[(number >> (5 * i)) & 31] for i in reversed(range(chars)))


# The 20 characters hold 100 bits: the 96 of the id, then 4 zero bits. The first 14 (70 bits)
# depend only on the seconds and the random bytes, so they are made once a second; the last 6
# (30 bits) are the random bytes' last 2 bits, the 24 bits of the counter and the 4 zero bits,
# made from two characters at a time (a third of the work for 20,000 ids of 10,000 chains).
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]
_LOW = (_random[-1] & 3) << 28
_prefix: tuple[int, str] = (-1, "")


def _id(seconds: int, count: int) -> str:
    """The id of `count` (24 bits) in second `seconds` (32 bits since _EPOCH)."""
    global _prefix
    prefix = _prefix  # read once: another thread may put another second's there meanwhile
    if prefix[0] != seconds:
        prefix = _prefix = (seconds, _encode(seconds.to_bytes(4, "big") + _random)[:14])
    low = _LOW | count << 4
    return prefix[1] + _PAIRS[low >> 20] + _PAIRS[(low >> 10) & 1023] + _PAIRS[low & 1023]


def unique_id() -> str:
    """A new 20-character id; later ids compare greater than earlier ones (per second)."""
    with _lock:
        count = next(_counter) & 0xFFFFFF
    return _id(max(0, int(time.time()) - _EPOCH) & 0xFFFFFFFF, count)


class CounterIds:
    """Deterministic ids "0", "1", "2"... as Steep's generator fixtures expect."""

    def __init__(self, start: int = 0):
        self._next = start

    def __call__(self) -> str:
        value = str(self._next)
        self._next += 1
        return value
