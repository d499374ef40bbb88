"""Group commit: the scheduler's writes of the hot path, several per transaction.

Every agent that finishes a run hands its end (and, if it goes on, its claim of the next
chain) to one writer. Whatever arrives while a transaction is under way goes together into
the next one, so no end waits longer than one transaction, and under load one commit serves
many agents (`ChainQueue.record`). Nothing is acted on before it is committed: an agent gets
its next chain, and the controller hears of the end, only once the transaction is done.

Attempts are stored as they happen, in the same transactions. One whose tool must not start
before it is stored (a retry policy counts it) is `durable`: its caller waits for the commit,
and it takes along what its chain has pending. Any other waits up to LAZY_S to go with
whatever commits next: the end of a short run carries its attempts itself, so most runs cost
no write of their own for them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

from steepy.registry import ChainQueue, ClaimFor, RunEnd
from steepy.model.attempt import AttemptRecord
from steepy.model.clock import SYSTEM, Clock
from steepy.registry.writes import AttemptWrite, Claimed
from steepy.registry.offload import persist
from steepy.registry.failures import describe, is_database_failure

log = logging.getLogger(__name__)
LAZY_S = 0.25  # how long an attempt's row may wait for a transaction to go with
_Waiting = tuple["RunEnd | None", "ClaimFor | None", "list[AttemptWrite]", asyncio.Future]
_Key = tuple[str, int, "int | None"]  # chain, run, the attempt's place in it


class GroupCommit:
    def __init__(self, queue: ChainQueue, give_up: Callable[[], bool],
                 give_back: Callable[[Claimed], Awaitable[None]], clock: Clock = SYSTEM):
        self.queue = queue
        self.clock = clock  # the waits while the database fails
        self.give_up = give_up  # while the database fails, when to stop trying
        self.give_back = give_back  # a chain claimed for a waiter that is gone
        self._waiting: list[_Waiting] = []
        self._writer: asyncio.Task | None = None
        # -> (ready at, the attempt): its row is taken when it goes, so it is the newest state
        self._lazy: dict[_Key, tuple[float, AttemptRecord]] = {}
        self._timer: asyncio.TimerHandle | None = None

    async def submit(self, end: RunEnd | None, claim: ClaimFor | None) -> Claimed | None:
        """Record `end` and/or claim a chain for `claim` (what it got); raises what the
        transaction raised (a database failure once `give_up()`, or a bug)."""
        if end is not None:  # its attempts go with it
            self._drop_lazy(lambda key: key[:2] == (end.chain_id, end.run_number))
        return await self._submit(end, claim, [])

    async def store_attempt(self, chain_id: str, run_number: int, record: AttemptRecord,
                            durable: bool) -> None:
        """Store an attempt's row: `durable`, as it is now, committed before this returns
        (with what its chain has pending); otherwise as it is when a transaction takes it,
        within LAZY_S."""
        key = (chain_id, run_number, record.ordinal)
        if not durable:
            loop = asyncio.get_running_loop()
            ready = self._lazy[key][0] if key in self._lazy else loop.time() + LAZY_S
            self._lazy[key] = (ready, record)  # stored again, it keeps its place
            if self._timer is None:
                self._timer = loop.call_later(LAZY_S, self._flush_lazy)
            return
        pending = self._drop_lazy(lambda k: k[:2] == key[:2])
        await self._submit(None, None, [*pending, AttemptWrite.of(chain_id, run_number, record)])

    def _drop_lazy(self, which: Callable[[_Key], bool]) -> list[AttemptWrite]:
        keys = [key for key in self._lazy if which(key)]
        return [AttemptWrite.of(key[0], key[1], self._lazy.pop(key)[1]) for key in keys]

    def _ready_lazy(self) -> list[AttemptWrite]:
        now = asyncio.get_running_loop().time()
        return self._drop_lazy(lambda key: self._lazy[key][0] <= now)

    def _flush_lazy(self) -> None:
        self._timer = None
        if self._lazy:
            self._start()
            self._timer = asyncio.get_running_loop().call_later(LAZY_S, self._flush_lazy)

    def _start(self) -> None:
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write(), name="group commit")

    async def _submit(self, end: RunEnd | None, claim: ClaimFor | None,
                      attempts: list[AttemptWrite]) -> Claimed | None:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((end, claim, attempts, future))
        self._start()
        return await future

    async def _write(self) -> None:
        while True:
            batch, self._waiting = self._waiting, []
            attempts = [a for _, _, written, _ in batch for a in written] + self._ready_lazy()
            if not batch and not attempts:
                return
            if not batch:  # rows nobody waits for: a failure is said, their run's end stores them
                await self._write_lazy(attempts)
                continue
            ends = [end for end, _, _, _ in batch if end is not None]
            claims = [claim for _, claim, _, _ in batch if claim is not None]
            what = (f"recording the end of process chain {ends[0].chain_id}" if len(ends) == 1
                    else f"recording the end of {len(ends)} process chains" if ends
                    else "claiming process chains" if claims else "storing attempts")
            try:
                got = iter(await persist(what, self.give_up, self.queue.record, ends, claims,
                                         attempts, clock=self.clock))
            except asyncio.CancelledError:
                for _, _, _, future in batch:
                    future.cancel()
                raise
            except Exception as e:  # each waiter deals with it as if it were alone
                for _, _, _, future in batch:
                    if not future.done():
                        future.set_exception(e)
                continue
            unwanted = []
            for _, claim, _, future in batch:
                result = next(got) if claim is not None else None
                if not future.done():
                    future.set_result(result)
                elif result is not None:  # its agent was stopped meanwhile
                    unwanted.append(result)
            for claimed in unwanted:
                await self.give_back(claimed)

    async def _write_lazy(self, attempts: list[AttemptWrite]) -> None:
        # a database that fails until the engine stops, or a write it refuses (an older copy
        # put back, a bug): said, and left to the run's end, which meets it again
        try:
            await persist("storing attempts", self.give_up, self.queue.record, [], [], attempts,
                          clock=self.clock)
        except Exception as e:
            log.error("%d attempt(s) not stored as they happened (%s); their run's end stores "
                      "them", len(attempts), describe(e) if is_database_failure(e) else e)

