"""A chain's log handed to a sink in order, without gaps, also when the sink fails for a
while (the database is away): nothing is lost or sent twice."""

from __future__ import annotations

import asyncio

from steepy.agent.logs import ChainLog


class Flaky:
    """A LogSink that refuses its first `failures` chunks."""

    def __init__(self, failures: int):
        self.failures = failures
        self.chunks: list[tuple[int, bytes]] = []

    def append(self, chain_id: str, run_number: int, offset: int, data: bytes) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise OSError("database away")
        self.chunks.append((offset, data))


async def test_every_byte_once_in_order_despite_failures(tmp_path) -> None:
    sink = Flaky(failures=2)
    log = ChainLog(tmp_path / "c.log", sink, "c", 1)
    done = asyncio.Event()
    shipping = asyncio.create_task(log.ship_until(done, every_s=0.01))
    for i in range(50):
        log.write_lines([f"line {i}"])
        await asyncio.sleep(0.002)
    done.set()
    await shipping
    log.close()
    stored = b"".join(data for _, data in sink.chunks)
    assert stored == (tmp_path / "c.log").read_bytes()
    offsets = [offset for offset, _ in sink.chunks]
    assert offsets == [sum(len(d) for _, d in sink.chunks[:i]) for i in range(len(offsets))]
