"""The live feed under load: CLIENTS server-sent-event clients on GET /events of one
`steepy serve` while CHAINS one-executable chains run. Prints the delivery delay of the
events (from the event's time, taken in the committing transaction, to its arrival at a
client) as p50/p99 over all clients, whether every client got every event in order, and the
server process's CPU time.

Usage: .venv/bin/python bench/feed.py [--clients 200] [--chains 1000] [--agents 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.throughput import SERVICES, fan_out  # noqa: E402


async def client(url: str, received: list, stop: asyncio.Event, ready: asyncio.Event) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30, read=None)) as http:
        async with http.stream("GET", "/events") as response:
            ready.set()
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    received.append((event["id"], time.time(), event["time"], event["kind"],
                                     event.get("status")))
                    if event["kind"] == "submission.status" and event["status"] == "SUCCESS":
                        stop.set()
                        return


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--chains", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="steepy-feed-"))
    (work / "services.yaml").write_text(SERVICES)
    env = dict(os.environ, STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"),
               STEEPY_DB_URL=f"sqlite:///{work / 'steepy.db'}")
    server = subprocess.Popen([sys.executable, "-m", "steepy.cli", "serve", "--port", "0",
                               "--agents", str(args.agents), "--services",
                               str(work / "services.yaml")], cwd=work, env=env,
                              stderr=subprocess.PIPE, text=True)
    url = server.stderr.readline().split()[2]
    process = psutil.Process(server.pid)
    try:
        received = [[] for _ in range(args.clients)]
        stop = asyncio.Event()
        readies = [asyncio.Event() for _ in range(args.clients)]
        tasks = [asyncio.create_task(client(url, received[i], stop, readies[i]))
                 for i in range(args.clients)]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 120)
        cpu_before = process.cpu_times()
        began = time.monotonic()
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            answer = await http.post("/workflows", content=fan_out(args.chains))
            assert answer.status_code == 202, answer.text
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 3600)
        took = time.monotonic() - began
        cpu = process.cpu_times()
        cpu_s = (cpu.user + cpu.system) - (cpu_before.user + cpu_before.system)
    finally:
        server.terminate()
        server.wait(60)
    delays = sorted((arrived - datetime.fromisoformat(sent.replace("Z", "+00:00")).timestamp())
                    * 1000 for events in received for _, arrived, sent, _, _ in events)
    counts = {len(events) for events in received}
    ordered = all([e[0] for e in events] == sorted(e[0] for e in events) for events in received)
    if len(counts) > 1:
        fewest = min(received, key=len)
        most = max(received, key=len)
        missing = {e[0] for e in most} - {e[0] for e in fewest}
        print("a client missed:", [e for e in most if e[0] in missing][:5])
    print(f"{args.clients} clients, {args.chains} chains, {args.agents} agents: {took:.1f} s")
    print(f"events per client: {sorted(counts)} (all the same: {len(counts) == 1}); "
          f"in order: {ordered}")
    print(f"delivery delay: p50 {statistics.median(delays):.0f} ms, "
          f"p99 {delays[int(len(delays) * 0.99)]:.0f} ms, max {delays[-1]:.0f} ms "
          f"({len(delays)} deliveries)")
    print(f"server CPU: {cpu_s:.1f} s ({cpu_s / took * 100:.0f}% of one core)")


if __name__ == "__main__":
    asyncio.run(main())
