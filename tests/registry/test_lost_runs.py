"""SqlLeases.lost_runs: the open runs of lost agents, with where each of their attempts'
processes ran (host, executor pid and start time, process group), on SQLite and PostgreSQL."""

from __future__ import annotations

import socket
import time

from sqlalchemy import insert

from steepy.model.common import utcnow
from steepy.registry import open_registry
from steepy.registry.tables import attempts
from tests.engine.test_twins import _lost_run


def test_lost_runs_name_the_executors_and_groups_of_their_attempts(database_url,
                                                                   tmp_path) -> None:
    registry = open_registry(database_url)
    chain_id, run = _lost_run(registry, tmp_path, engine_pid=4242)
    started = utcnow()
    with registry.db.write() as conn:
        conn.execute(insert(attempts).values(  # an attempt of old: nothing recorded
            chain_id=chain_id, run_number=run, executable_id="e", service_id="sleep",
            attempt=1, ordinal=1, start_time=started, outcome="FAILED"))
        conn.execute(insert(attempts).values(
            chain_id=chain_id, run_number=run, executable_id="e", service_id="sleep",
            attempt=2, ordinal=2, start_time=started, outcome="RUNNING",
            host=socket.gethostname(), executor_pid=77, executor_started=1.5e9 + 0.25,
            pgid=78))
    time.sleep(0.3)  # the ghost's heartbeat is older than its lease now
    (lost,) = registry.leases.lost_runs([])
    assert (lost["chainId"], lost["runNumber"], lost["agentId"]) == (chain_id, run, "ghost")
    assert (lost["host"], lost["enginePid"]) == (socket.gethostname(), 4242)
    old, recorded = lost["attempts"]
    assert (old["executorPid"], old["executorStarted"], old["pgid"], old["outcome"]) == (
        None, None, None, "FAILED")
    assert recorded["host"] == socket.gethostname()
    assert (recorded["executorPid"], recorded["executorStarted"], recorded["pgid"]) == (
        77, 1.5e9 + 0.25, 78)
    assert abs(recorded["startTime"] - started.timestamp()) < 1 and recorded["outcome"] == "RUNNING"
    assert registry.leases.lost_runs(["ghost"]) == []  # its agent is alive: not lost
