"""A chain's log handed to a sink in order, without gaps, also when the sink fails for a
while (the database is away): nothing is lost or sent twice. A failure of the database is said
in its words and waited out; anything else the sink raises is a bug, and raised."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest
from sqlalchemy.exc import IntegrityError

from steepy.agent.logs import ChainLog
from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from tests.registry.chains import store_chains


class Flaky:
    """A LogSink that refuses its first `failures` chunks."""

    def __init__(self, failures: int):
        self.failures = failures
        self.chunks: list[tuple[int, bytes]] = []

    def append(self, chain_id: str, run_number: int, offset: int, data: bytes) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise sqlite3.OperationalError("database is locked")  # as the driver raises it
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


async def test_a_failure_of_the_database_is_said_in_its_words(tmp_path, caplog) -> None:
    sink = Flaky(failures=1)
    log = ChainLog(tmp_path / "c.log", sink, "c", 1)
    log.write_lines(["one"])
    with caplog.at_level(logging.DEBUG, logger="steepy.agent.logs"):
        await log.ship()
    assert sink.chunks == []
    [said] = caplog.records
    assert said.levelno == logging.WARNING
    message = said.getMessage()
    assert message.startswith("log of process chain c not stored (database ")
    assert message.endswith(": database is locked); kept for the next try")
    await log.ship()
    assert sink.chunks == [(0, b"one\n")]


async def test_a_bug_of_the_sink_is_raised_not_retried(tmp_path, caplog) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    store_chains(registry, "s", [ProcessChain(id="c")])
    registry.logs.append("c", 1, 0, b"stored already\n")  # the chunk the log ships again
    log = ChainLog(tmp_path / "c.log", registry.logs, "c", 1)
    log.write_lines(["again"])
    done = asyncio.Event()
    with caplog.at_level(logging.DEBUG, logger="steepy.agent.logs"):
        with pytest.raises(IntegrityError):
            async with asyncio.timeout(5):
                await log.ship_until(done, every_s=0.01)
    assert caplog.records == []
    registry.close()
