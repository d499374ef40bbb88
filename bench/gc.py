"""The garbage collector on SUBMISSIONS old finished submissions (each with a chain, a run,
two attempts, four events and a log chunk) beside NEW recent ones, on SQLite and PostgreSQL.
Prints the time it takes, the database's size before, after and after a VACUUM (SQLite's
pages in use, which the collector frees for reuse; pg_database_size, which only VACUUM FULL
shrinks: autovacuum makes the space reusable), the longest
single transaction of the collector and the longest wait of another process's small write
transactions (an engine's heartbeat, every 20 ms) while it runs.

Usage: .venv/bin/python bench/gc.py [--submissions 100000] [--new 1000] [--batch 500]
       [--postgres URL]  (default: the test server of .ci/postgres, in a new database)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from sqlalchemy import insert, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from steepy.engine.housekeeping import GcSettings, collect_garbage  # noqa: E402
from steepy.model.common import utcnow  # noqa: E402
from steepy.registry import Registry, open_registry  # noqa: E402
from steepy.registry.tables import (attempts, events, log_chunks, process_chains, runs,  # noqa: E402
                                    submissions)

WORKFLOW = '{"api":"4.7.0","name":"bench","actions":[{"type":"execute","id":"a","service":"cp"}]}'


def fill(registry: Registry, count: int, days_ago: float, prefix: str, chunk: int = 5000) -> None:
    """`count' finished submissions that ended `days_ago' days ago, with everything of theirs."""
    end = utcnow() - timedelta(days=days_ago)
    for start in range(0, count, chunk):
        ids = [f"{prefix}{i:09d}" for i in range(start, min(count, start + chunk))]
        with registry.db.write() as conn:
            conn.execute(insert(submissions), [dict(
                id=i, name="bench", priority=0, workflow_priority=0, status="SUCCESS",
                workflow=WORKFLOW, source=None, required_capabilities="[]", created_time=end,
                start_time=end, end_time=end, state_round=0, cancel_requested=False)
                for i in ids])
            conn.execute(insert(process_chains), [dict(
                id=f"c{i}", submission_id=i, status="SUCCESS", priority=0,
                required_capabilities="[]", chain='{"id":"x","executables":[]}',
                created_time=end, cancel_requested=False) for i in ids])
            conn.execute(insert(runs), [dict(chain_id=f"c{i}", run_number=1, agent_id="a",
                                             start_time=end, end_time=end, status="SUCCESS")
                                        for i in ids])
            conn.execute(insert(attempts), [dict(
                chain_id=f"c{i}", run_number=1, executable_id="a", service_id="cp", attempt=n,
                start_time=end, end_time=end, outcome="SUCCESS", exit_code=0)
                for i in ids for n in (1, 2)])
            conn.execute(insert(events), [dict(submission_id=i, chain_id=None, time=end,
                                               kind=k, data="{}")
                                          for i in ids for k in ("a", "b", "c", "d")])
            conn.execute(insert(log_chunks), [dict(chain_id=f"c{i}", run_number=1, offset=0,
                                                   data=b"x" * 200, time=end) for i in ids])


def size(registry: Registry) -> int:
    """Bytes the database uses (SQLite: pages in use; PostgreSQL: pg_database_size)."""
    with registry.db.read() as conn:
        if registry.db.dialect.postgres:
            return conn.execute(text("SELECT pg_database_size(current_database())")).scalar()
        pages = conn.execute(text("PRAGMA page_count")).scalar()
        free = conn.execute(text("PRAGMA freelist_count")).scalar()
        page = conn.execute(text("PRAGMA page_size")).scalar()
        return (pages - free) * page


def vacuum(registry: Registry) -> None:
    raw = registry.engine.raw_connection()
    try:
        if registry.db.dialect.postgres:
            raw.driver_connection.autocommit = True
        cursor = raw.cursor()
        cursor.execute("VACUUM FULL" if registry.db.dialect.postgres else "VACUUM")
        cursor.close()
    finally:
        raw.close()


def bench(name: str, url: str, old: int, new: int, batch: int, work: Path) -> None:
    registry = open_registry(url)
    began = time.monotonic()
    fill(registry, old, 30, "o")
    fill(registry, new, 0.5, "n")
    print(f"{name}: filled {old} old + {new} new submissions in {time.monotonic() - began:.0f} s")
    before = size(registry)
    engine = open_registry(url)  # another process's writes, e.g. an engine's heartbeat
    waits: list[float] = []
    done = threading.Event()

    def heartbeat() -> None:
        while not done.is_set():
            t = time.monotonic()
            engine.leases.heartbeat("bench", [{"id": "bench", "capabilities": [], "chain_id": None,
                                               "host": "h", "pid": 1}], 10)
            waits.append(time.monotonic() - t)
            time.sleep(0.02)

    beats = threading.Thread(target=heartbeat)
    beats.start()
    time.sleep(3)  # the machine's own noise first
    baseline, waits[:] = max(waits), []
    settings = GcSettings(retention_submissions_ms=7 * 86400_000, tmp_path=str(work / "tmp"),
                          out_path=str(work / "out"), log_dir=str(work / "logs"), batch=batch)
    try:
        report = collect_garbage(registry, settings)
    finally:
        done.set()
        beats.join()
    after = size(registry)
    vacuum(registry)
    vacuumed = size(registry)
    left = registry.views.count_submissions()
    print(f"{name}: {report.summary()}")
    print(f"{name}: {report.seconds:.1f} s for {report.counts['submissions']} submissions "
          f"({report.counts['submissions'] / max(report.seconds, 1e-9):.0f}/s); longest "
          f"transaction {report.longest_transaction_s * 1000:.0f} ms; heartbeats during GC: "
          f"{len(waits)}, longest {max(waits) * 1000:.0f} ms (before it: {baseline * 1000:.0f} ms); "
          f"submissions left {left}")
    print(f"{name}: database {before / 1e6:.1f} MB before, {after / 1e6:.1f} MB after, "
          f"{vacuumed / 1e6:.1f} MB after VACUUM{' FULL' if 'postgres' in name else ''} "
          "(SQLite: pages in use; PostgreSQL: pg_database_size)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submissions", type=int, default=100_000)
    parser.add_argument("--new", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--postgres", help="a PostgreSQL server URL (default: .ci/postgres)")
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.only != "postgresql":
            bench("sqlite", f"sqlite:///{work / 'gc.db'}", args.submissions, args.new,
                  args.batch, work)
        if args.only != "sqlite":
            server = args.postgres or subprocess.run(
                [str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True,
                check=True).stdout.strip().splitlines()[-1]
            import psycopg
            from sqlalchemy.engine import make_url

            base = make_url(server)
            name = f"bench_gc_{int(time.time())}"
            admin = base.set(drivername="postgresql", database="postgres").render_as_string(
                hide_password=False)
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            try:
                bench("postgresql", base.set(database=name).render_as_string(hide_password=False),
                      args.submissions, args.new, args.batch, work)
            finally:
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
