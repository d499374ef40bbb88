"""A cancellation flag that any thread may raise and the agent's event loop reacts to at once."""

from __future__ import annotations

import asyncio
import threading
from typing import Callable

from steepy.errors import SteepyError
from steepy.model.clock import SYSTEM, Clock


class Cancelled(SteepyError):
    """The chain was cancelled: never retried, ends the retry loop without another pause."""


class CancelToken:
    """Set once by `cancel()` (from any thread); callbacks run on the owning event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._cancelled = False
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
        try:
            self._loop.call_soon_threadsafe(self._fire)
        except RuntimeError:  # loop already closed: nothing is running any more
            pass

    def _fire(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the loop when cancelled (soon, if that already happened)."""
        self._callbacks.append(callback)
        if self._cancelled:
            self._loop.call_soon(self._fire)

    def remove_callback(self, callback: Callable[[], None]) -> None:
        try:
            self._callbacks.remove(callback)
        except ValueError:
            pass

    async def sleep(self, seconds: float, clock: Clock = SYSTEM) -> None:
        """Sleep on `clock`, but raise `Cancelled` as soon as the token is cancelled."""
        if self._cancelled:
            raise Cancelled()
        if seconds <= 0:
            return
        woken = asyncio.Event()
        self.add_callback(woken.set)
        try:
            await clock.wait(woken, seconds)
        finally:
            self.remove_callback(woken.set)
        if self._cancelled:
            raise Cancelled()
