"""Throughput of the engine: N independent one-executable chains through `steepy run`,
against `xargs -P <cores>` running the same commands. Also a chain of 200 dependent
executables, and the time from `steepy submit` to the first executable under `steepy worker`.

Usage: .venv/bin/python bench/throughput.py [N ...]   (default: 1000 10000)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVICES = """
- id: touch
  name: touch
  description: creates its output file
  path: touch
  runtime: other
  parameters:
    - {id: out, name: out, description: out, type: output, cardinality: 1..1}
- id: cp
  name: cp
  description: copy
  path: cp
  runtime: other
  parameters:
    - {id: i, name: i, description: i, type: input, cardinality: 1..1}
    - {id: o, name: o, description: o, type: output, cardinality: 1..1}
"""


def fan_out(n: int) -> str:
    items = ", ".join(f'"{i}"' for i in range(n))
    return f"""api: 4.7.0
vars: [{{id: items, value: [{items}]}}]
actions:
  - type: for
    input: items
    enumerator: i
    actions:
      - {{id: t, type: execute, service: touch, outputs: [{{id: out, var: o}}]}}
"""


def pipeline(n: int) -> str:
    lines = ["api: 4.7.0", "vars: [{id: v0, value: /etc/hostname}]", "actions:"]
    for i in range(n):
        lines.append(f"  - {{id: c{i}, type: execute, service: cp, inputs: [{{id: i, var: v{i}}}], "
                     f"outputs: [{{id: o, var: v{i + 1}}}]}}")
    return "\n".join(lines) + "\n"


def steepy(work: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"))
    return subprocess.run([sys.executable, "-m", "steepy.cli", *args, "--services",
                           str(work / "services.yaml"), "--db", f"sqlite:///{work / 'db.sqlite'}"],
                          env=env, cwd=work, capture_output=True, text=True, **kwargs)


def timed_run(work: Path, text: str) -> float:
    (work / "w.yaml").write_text(text)
    start = time.perf_counter()
    result = steepy(work, "run", "w.yaml", "--json")
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(result.stderr[-2000:])
    return elapsed


def xargs(work: Path, n: int) -> float:
    target = work / "xargs"
    target.mkdir()
    start = time.perf_counter()
    subprocess.run(f"seq {n} | xargs -P {os.cpu_count()} -I{{}} touch {target}/{{}}", shell=True,
                   check=True)
    return time.perf_counter() - start


def first_start_latency(work: Path) -> float:
    """Seconds from the commit of a `steepy submit` to its first executable's start under an
    idle worker (both times as recorded in the database)."""
    (work / "w.yaml").write_text(fan_out(1))
    env = dict(os.environ, STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"))
    worker = subprocess.Popen([sys.executable, "-m", "steepy.cli", "worker", "--services",
                               str(work / "services.yaml"), "--db", f"sqlite:///{work / 'db.sqlite'}"],
                              env=env, cwd=work, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)  # let the worker settle
        steepy(work, "submit", "w.yaml", check=True)
        from steepy.registry import open_registry

        registry = open_registry(f"sqlite:///{work / 'db.sqlite'}")
        while True:
            found, _ = registry.list_submissions()
            chains, _ = registry.list_chains(found[0].id)
            runs = registry.runs(chains[0].chain.id) if chains else []
            if runs:
                accepted = registry.events(found[0].id)[0]["time"]
                from datetime import datetime

                return (runs[0].start_time - datetime.fromisoformat(accepted)).total_seconds()
            time.sleep(0.005)
    finally:
        worker.terminate()
        worker.wait()


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    print(f"cores: {os.cpu_count()}")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "services.yaml").write_text(SERVICES)
            engine = timed_run(work, fan_out(n))
            bare = xargs(work, n)
            print(f"N={n:>6}: steepy run {engine:8.2f} s ({engine / n * 1000:6.2f} ms/chain), "
                  f"xargs -P {os.cpu_count()} {bare:6.2f} s, ratio {engine / bare:6.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "services.yaml").write_text(SERVICES)
        elapsed = timed_run(work, pipeline(200))
        print(f"chain of 200 dependent executables: {elapsed:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "services.yaml").write_text(SERVICES)
        print(f"submit -> first executable under worker: {first_start_latency(work) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
