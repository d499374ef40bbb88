"""Latency of the HTTP API with many submissions stored: 100,000 finished submissions (two
process chains and a run each) are inserted directly, then `steepy serve` answers
`GET /workflows?size=50`, `GET /workflows/{id}` and `GET /processchains?submissionId=...`
over a keep-alive connection. Prints p50/p99 per request (target: p99 < 20 ms on SQLite).

Usage: .venv/bin/python bench/api.py [SUBMISSIONS] [--requests N] [--no-agents] [--db URL]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
from sqlalchemy import insert

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from steepy.model.ids import unique_id  # noqa: E402
from steepy.documents.loading import parse_workflow  # noqa: E402
from steepy.registry import open_registry  # noqa: E402
from steepy.registry.tables import process_chains, runs, submissions  # noqa: E402

BATCH = 5000
STATUSES = ["SUCCESS"] * 8 + ["ERROR", "CANCELLED"]  # finished: an engine has nothing to do


def populate(url: str, count: int) -> list[str]:
    """Insert `count` submissions with two chains and one run each; returns their ids."""
    registry = open_registry(url)
    source = (ROOT / "workflows" / "linear.yaml").read_text()
    workflow, _ = parse_workflow(source)
    workflow_json = json.dumps(workflow.to_json(), separators=(",", ":"))
    chain_json = json.dumps({"id": "x", "executables": [{
        "id": "copy_words", "path": "cp", "serviceId": "cp", "arguments": [
            {"id": "input_file", "variable": {"id": "words", "value": "workflows/data/words.txt"},
             "type": "input", "dataType": "string"}], "runtime": "other"}],
        "requiredCapabilities": []}, separators=(",", ":"))
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    ids = []
    random.seed(1)
    with registry.engine.begin() as conn:
        for first in range(0, count, BATCH):
            subs, chains, chain_runs = [], [], []
            for i in range(first, min(count, first + BATCH)):
                sid = unique_id()
                ids.append(sid)
                status = random.choice(STATUSES)
                began = start + timedelta(seconds=i)
                subs.append({"id": sid, "name": workflow.name, "priority": 0,
                             "workflow_priority": 0, "status": status, "workflow": workflow_json,
                             "source": source, "required_capabilities": "[]",
                             "created_time": began, "start_time": began,
                             "end_time": began + timedelta(seconds=2),
                             "error_message": "All process chains failed"
                             if status == "ERROR" else None,
                             "results": '{"sorted_words":["/tmp/out/x.txt"]}'
                             if status == "SUCCESS" else None,
                             "cancel_requested": status == "CANCELLED"})
                for _ in range(2):
                    cid = unique_id()
                    chains.append({"id": cid, "submission_id": sid, "status": status,
                                   "priority": 0, "required_capabilities": "[]",
                                   "chain": chain_json.replace('"id":"x"', f'"id":"{cid}"', 1),
                                   "results": None, "cancel_requested": False,
                                   "created_time": began})
                    chain_runs.append({"chain_id": cid, "run_number": 1, "agent_id": "bench",
                                       "start_time": began, "status": status,
                                       "end_time": began + timedelta(seconds=1)})
            conn.execute(insert(submissions), subs)
            conn.execute(insert(process_chains), chains)
            conn.execute(insert(runs), chain_runs)
    if registry.engine.dialect.name == "postgresql":
        # a long-lived database has been vacuumed: index-only counts, fresh statistics
        with registry.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")
    registry.engine.dispose()
    return ids


def serve(url: str, work: Path, no_agents: bool) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"))
    env.pop("STEEPY_HTTP_TOKEN", None)
    args = [sys.executable, "-m", "steepy.cli", "serve", "--port", "0", "--db", url]
    args += ["--no-agents"] if no_agents else ["--agents", "2"]
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    if not line.startswith("serving on"):
        proc.kill()
        raise SystemExit(f"steepy serve did not start: {line}{proc.stderr.read()}")
    return proc, line.split()[2]


def measure(client: httpx.Client, paths: list[str]) -> list[float]:
    times = []
    for path in paths:
        began = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"GET {path}: {response.status_code} {response.text[:200]}")
    return times


def report(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{name:<42} p50 {statistics.median(ordered):6.2f} ms   p99 {p99:6.2f} ms   "
          f"max {ordered[-1]:6.2f} ms   ({len(ordered)} requests)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submissions", type=int, nargs="?", default=100_000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--no-agents", action="store_true", help="serve the API only")
    parser.add_argument("--db", help="database URL (default: SQLite in a temporary folder)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        url = options.db or f"sqlite:///{work / 'steepy.db'}"
        began = time.perf_counter()
        ids = populate(url, options.submissions)
        print(f"stored {len(ids)} submissions, {2 * len(ids)} chains and runs in "
              f"{time.perf_counter() - began:.1f} s ({url.split(':')[0]}, cores: {os.cpu_count()})")
        proc, base = serve(url, work, options.no_agents)
        try:
            rng = random.Random(2)
            n = options.requests
            with httpx.Client(base_url=base, timeout=30) as client:
                measure(client, ["/workflows?size=50"] * 50 + [f"/workflows/{ids[0]}"] * 50)
                first = client.get("/workflows?size=50")
                assert len(first.json()) == 50
                assert first.headers["x-page-total"] == str(len(ids))
                report("GET /workflows?size=50", measure(client, ["/workflows?size=50"] * n))
                report("GET /workflows?size=50&offset=<0..1000>",
                       measure(client, [f"/workflows?size=50&offset={rng.randrange(1000)}"
                                        for _ in range(n)]))
                report("GET /workflows?size=50&status=ERROR",
                       measure(client, ["/workflows?size=50&status=ERROR"] * n))
                report("GET /workflows/{id}",
                       measure(client, [f"/workflows/{rng.choice(ids)}" for _ in range(n)]))
                report("GET /processchains?submissionId=...",
                       measure(client, [f"/processchains?submissionId={rng.choice(ids)}"
                                        for _ in range(n)]))
                report("GET /processchains?size=50",
                       measure(client, ["/processchains?size=50"] * n))
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
