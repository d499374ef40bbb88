"""Group commit: the scheduler's writes of the hot path, several per transaction.

Every agent that finishes a run hands its end (and, if it goes on, its claim of the next
chain) to one writer. Whatever arrives while a transaction is under way goes together into
the next one, so no end waits longer than one transaction, and under load one commit serves
many agents (`ChainQueue.record`). Nothing is acted on before it is committed: an agent gets
its next chain, and the controller hears of the end, only once the transaction is done.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

from steepy.registry import ChainQueue, ClaimFor, RunEnd
from steepy.registry.interfaces import Claimed
from steepy.registry.offload import persist

_Waiting = tuple["RunEnd | None", "ClaimFor | None", asyncio.Future]


class GroupCommit:
    def __init__(self, queue: ChainQueue, give_up: Callable[[], bool],
                 give_back: Callable[[Claimed], Awaitable[None]]):
        self.queue = queue
        self.give_up = give_up  # while the database fails, when to stop trying
        self.give_back = give_back  # a chain claimed for a waiter that is gone
        self._waiting: list[_Waiting] = []
        self._writer: asyncio.Task | None = None

    async def submit(self, end: RunEnd | None, claim: ClaimFor | None) -> Claimed | None:
        """Record `end` and/or claim a chain for `claim` (what it got); raises what the
        transaction raised (a database failure once `give_up()`, or a bug)."""
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((end, claim, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write(), name="group commit")
        return await future

    async def _write(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            ends = [end for end, _, _ in batch if end is not None]
            claims = [claim for _, claim, _ in batch if claim is not None]
            what = (f"recording the end of process chain {ends[0].chain_id}" if len(ends) == 1
                    else f"recording the end of {len(ends)} process chains" if ends
                    else "claiming process chains")
            try:
                got = iter(await persist(what, self.give_up, self.queue.record, ends, claims))
            except asyncio.CancelledError:
                for _, _, future in batch:
                    future.cancel()
                raise
            except Exception as e:  # each waiter deals with it as if it were alone
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(e)
                continue
            unwanted = []
            for _, claim, future in batch:
                result = next(got) if claim is not None else None
                if not future.done():
                    future.set_result(result)
                elif result is not None:  # its agent was stopped meanwhile
                    unwanted.append(result)
            for claimed in unwanted:
                await self.give_back(claimed)
