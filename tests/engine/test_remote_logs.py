"""Logs from any machine: two workers in separate directories on one PostgreSQL; a chain's
log is read (and tailed while it runs) from a third directory that has no log files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from steepy.registry import open_registry
from tests.conftest import ROOT

LINES = 60  # a line every 0.1 s: the chains run for about 6 s
SERVICES = f"""
- id: ticker
  name: Ticker
  description: prints numbered lines slowly
  path: {ROOT / "services" / "bin" / "slowprint"}
  runtime: other
  parameters:
    - {{id: lines, name: lines, description: how many, type: input, cardinality: 1..1, dataType: integer, label: --lines}}
    - {{id: interval, name: interval, description: seconds, type: input, cardinality: 1..1, dataType: float, label: --interval}}
"""
WORKFLOW = f"""
api: 4.7.0
actions:
  - {{type: execute, service: ticker, inputs: [{{id: lines, value: {LINES}}}, {{id: interval, value: 0.1}}]}}
  - {{type: execute, service: ticker, inputs: [{{id: lines, value: {LINES}}}, {{id: interval, value: 0.1}}]}}
"""


def _steepy(*args: str, cwd: Path, env: dict, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "steepy.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, **kw)


def test_logs_of_chains_run_elsewhere_are_read_and_tailed(tmp_path: Path, postgres_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEEPY_")}
    env.update(STEEPY_DB_URL=postgres_url, PYTHONPATH=str(ROOT))
    services = tmp_path / "services.yaml"
    services.write_text(SERVICES)
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    places = {name: tmp_path / name for name in ("a", "b", "reader")}
    for place in places.values():
        place.mkdir()
    workers = [subprocess.Popen([sys.executable, "-m", "steepy.cli", "worker", "--agents", "1",
                                 "--services", str(services)], cwd=places[name], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for name in ("a", "b")]
    reader = places["reader"]
    try:
        made = _steepy("submit", str(tmp_path / "w.yaml"), "--services", str(services),
                       cwd=reader, env=env)
        assert made.returncode == 0, made.stderr
        sid = made.stdout.split()[-1]
        registry = open_registry(postgres_url)
        chains: list[str] = []
        end = time.monotonic() + 60
        while len(chains) < 2:  # both started, one on each worker
            assert time.monotonic() < end, "the chains did not start"
            found, _ = registry.views.list_chains(sid, status="RUNNING")
            chains = [c.chain.id for c in found]
            time.sleep(0.05)
        tail = subprocess.Popen([sys.executable, "-m", "steepy.cli", "logs", chains[0],
                                 "--follow"], cwd=reader, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        first = tail.stdout.readline()
        assert first.startswith("slowprint: line 1 of"), first + tail.stderr.read()
        # the line came while the chain ran elsewhere
        assert registry.views.get_chain(chains[0]).status == "RUNNING"
        rest = tail.stdout.read()  # (not communicate: it would skip what readline buffered)
        assert tail.wait(60) == 0, tail.stderr.read()
        assert len((first + rest).splitlines()) == LINES
        for chain_id in chains:
            files = [p for name in ("a", "b")
                     for p in (places[name] / "logs" / "processchains").glob(f"{chain_id}.log")]
            assert len(files) == 1  # it ran on one of the workers, not here
            printed = _steepy("logs", chain_id, cwd=reader, env=env)
            assert printed.returncode == 0, printed.stderr
            assert printed.stdout == files[0].read_text()
        # a server that ran nothing serves them too
        server = subprocess.Popen([sys.executable, "-m", "steepy.cli", "serve", "--port", "0",
                                   "--no-agents"], cwd=reader, env=env, stderr=subprocess.PIPE,
                                  text=True)
        try:
            url = server.stderr.readline().split()[2]
            for chain_id in chains:
                served = httpx.get(f"{url}/logs/processchains/{chain_id}", timeout=30)
                assert served.status_code == 200
                assert served.text == _steepy("logs", chain_id, cwd=reader, env=env).stdout
                last = f"slowprint: line {LINES} of {LINES}\n"
                tail = httpx.get(f"{url}/logs/processchains/{chain_id}", timeout=30,
                                 headers={"x-range": f"bytes=-{len(last)}"})
                assert tail.text == last
        finally:
            server.terminate()
            server.wait(30)
        assert not (reader / "logs").exists()
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(30)
