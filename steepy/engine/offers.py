"""What the engine read for a part (the scheduler, the timekeeper) after the commits that
woke it, held for the part's next round instead of a read of its own (engine/looks.py);
void once something woke the part since the engine began that read."""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Offered(Generic[T]):
    def __init__(self) -> None:
        self.wakes = 0  # the part's wake-ups so far
        self._held: tuple[T] | None = None  # (a value held: `None' may be one)

    def void(self) -> None:
        """The part was woken: what the engine read before is not for it."""
        self.wakes += 1
        self._held = None

    def put(self, value: T, wakes: int) -> None:
        """The engine read `value` when the part had been woken `wakes` times."""
        self._held = (value,) if wakes == self.wakes else None

    def take(self) -> tuple[T] | None:
        """What is held (once), as a 1-tuple; None when nothing is."""
        held, self._held = self._held, None
        return held
