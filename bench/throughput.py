"""Throughput of the engine: N independent one-executable chains (`touch`) through
`steepy run`, against `xargs -P <cores>` running the same commands, alternating in one run
(median of --repeats), on SQLite and on PostgreSQL; the engine's peak memory; a chain of 200
dependent executables; the time from `steepy submit` to the first executable under an idle
`steepy worker`; with --peers, Snakemake, Parsl and Prefect on the same 1,000 jobs
(bench/peers.py).

Usage: .venv/bin/python bench/throughput.py [N ...] [--repeats 3] [--pg URL|auto|none]
                                            [--memory N ...] [--memory-only] [--peers]
                                            [--markdown]
Default sizes: 1000 10000. --pg auto asks `.ci/postgres start` for a server (skipped with
one line if there is none). --memory N runs one for-each over N items (e.g. 100000 1000000)
for the engine's peak memory, its time and CPU time (the tools' included) per item;
--memory-only runs nothing else. Nothing here is asserted: it prints.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.peers import CORES, xargs as xargs_seconds  # noqa: E402 - the same baseline

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


@dataclass
class Measured:
    seconds: float
    peak_mb: float = 0.0  # the engine's peak resident memory
    cpu_s: float = 0.0  # user and system time of the command and the tools it waited for


def _env(work: Path) -> dict[str, str]:
    return dict(os.environ, STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"),
                STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"))


def _steepy(work: Path, db: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "steepy.cli", *args, "--services", str(work / "services.yaml"),
            "--db", db]


def timed(argv: list[str], work: Path) -> Measured:
    """Wall time and peak memory (its own rusage, by wait4) of one command."""
    with open(work / "stderr.txt", "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=_env(work), cwd=work, stdout=subprocess.DEVNULL,
                                stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[3:5])} failed:\n"
                         f"{(work / 'stderr.txt').read_text()[-2000:]}")
    return Measured(elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def steepy_run(text: str, db: str | None = None) -> Measured:
    with tempfile.TemporaryDirectory(prefix="steepy-bench-") as tmp:
        work = Path(tmp)
        (work / "services.yaml").write_text(SERVICES)
        (work / "w.yaml").write_text(text)
        return timed(_steepy(work, db or f"sqlite:///{work / 'db.sqlite'}", "run", "w.yaml",
                             "--json"), work)


def xargs(n: int) -> Measured:
    return Measured(xargs_seconds(n))


class Postgres:
    """A fresh database per run on a PostgreSQL server (dropped afterwards)."""

    def __init__(self, url: str):
        from sqlalchemy.engine import make_url

        self.server = make_url(url)
        self.admin = self.server.set(drivername="postgresql", database="postgres") \
            .render_as_string(hide_password=False)
        self.count = 0

    @staticmethod
    def find(choice: str) -> "Postgres | None":
        if choice == "none":
            return None
        url = choice if choice != "auto" else os.environ.get("STEEPY_TEST_PG_URL")
        if url is None:
            found = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True,
                                   text=True)
            if found.returncode != 0:
                print(f"PostgreSQL: skipped ({(found.stderr.strip().splitlines() or ['?'])[-1]})")
                return None
            url = found.stdout.strip().splitlines()[-1]
        return Postgres(url)

    def run(self, text: str) -> Measured:
        import psycopg

        self.count += 1
        name = f"bench_{os.getpid()}_{self.count}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            return steepy_run(text, self.server.set(database=name)
                              .render_as_string(hide_password=False))
        finally:
            with psycopg.connect(self.admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def first_tool_seconds(work: Path, db: str, registry, env: dict[str, str]) -> float:
    """Seconds from the commit of one `steepy submit` of `w.yaml` (its `accepted` event) to
    the moment its one `touch` ran (the file's modification time), under a running worker."""
    sid = subprocess.run(_steepy(work, db, "submit", "w.yaml"), env=env, cwd=work,
                         capture_output=True, text=True, check=True).stdout.split()[-1]
    deadline = time.monotonic() + 30
    while registry.views.submission_status(sid) not in ("SUCCESS", "ERROR", "CANCELLED"):
        if time.monotonic() > deadline:
            raise SystemExit(f"submission {sid} did not end in 30 s")
        time.sleep(0.05)
    accepted = datetime.fromisoformat(registry.views.events(sid)[0]["time"]).timestamp()
    made = next((p for place in ("tmp", "out") for p in (work / place / sid).rglob("*")
                 if p.is_file()), None)
    if made is None:
        raise SystemExit(f"submission {sid} made no file")
    return made.stat().st_mtime - accepted


def first_start_latencies(times: int = 5) -> list[float]:
    """Seconds from the commit of a `steepy submit` (its `accepted` event) to the moment its
    one `touch` ran (the file's modification time), under an idle `steepy worker`."""
    from steepy.registry import open_registry

    with tempfile.TemporaryDirectory(prefix="steepy-latency-") as tmp:
        work = Path(tmp)
        (work / "services.yaml").write_text(SERVICES)
        (work / "w.yaml").write_text(fan_out(1))
        db = f"sqlite:///{work / 'db.sqlite'}"
        worker = subprocess.Popen(_steepy(work, db, "worker", "--agents", "1"), env=_env(work),
                                  cwd=work, stderr=subprocess.DEVNULL)
        registry = open_registry(db)
        latencies = []
        try:
            time.sleep(3)  # let the worker settle (imports, first sweep)
            for _ in range(times):
                latencies.append(first_tool_seconds(work, db, registry, _env(work)))
                time.sleep(1)  # idle again
        finally:
            worker.terminate()
            worker.wait()
        return latencies


def measure_sizes(sizes: list[int], repeats: int, pg: Postgres | None) -> list[dict]:
    rows = []
    for n in sizes:
        text = fan_out(n)
        lite, bare, post = [], [], []
        for _ in range(repeats):  # alternating, so that a slow minute hurts both
            lite.append(steepy_run(text))
            bare.append(xargs(n))
            if pg is not None:
                post.append(pg.run(text))
        base = statistics.median(m.seconds for m in bare)
        for name, runs in (("SQLite", lite), ("PostgreSQL", post)):
            if not runs:
                continue
            seconds = statistics.median(m.seconds for m in runs)
            row = {"n": n, "db": name, "seconds": seconds, "min": min(m.seconds for m in runs),
                   "max": max(m.seconds for m in runs), "xargs": base, "ratio": seconds / base,
                   "ms_per_chain": seconds / n * 1000,
                   "peak_mb": max(m.peak_mb for m in runs)}
            rows.append(row)
            print(f"N={n:>6} {name:<10}: steepy run {seconds:7.2f} s (min {row['min']:.2f}, "
                  f"max {row['max']:.2f}; {row['ms_per_chain']:5.2f} ms/chain, peak "
                  f"{row['peak_mb']:.0f} MB), xargs -P {CORES} {base:5.2f} s, "
                  f"ratio {row['ratio']:5.2f}", flush=True)
    return rows


def measure_memory(sizes: list[int]) -> None:
    """One for-each over each number of items: time, CPU and the engine's peak memory."""
    for n in sizes:
        big = steepy_run(fan_out(n))
        print(f"for-each over {n}: {big.seconds:.0f} s ({big.seconds / n * 1000:.2f} ms/item), "
              f"CPU {big.cpu_s:.0f} s ({big.cpu_s / n * 1000:.2f} ms/item), engine peak "
              f"{big.peak_mb:.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pg", default="auto", help="URL, auto (.ci/postgres) or none")
    parser.add_argument("--memory", type=int, nargs="+", default=[],
                        help="peak memory of a for-each over N items (several: each)")
    parser.add_argument("--memory-only", action="store_true", help="only the --memory runs")
    parser.add_argument("--peers", action="store_true", help="Snakemake/Parsl/Prefect, 1,000 jobs")
    parser.add_argument("--markdown", action="store_true", help="also print a README table")
    args = parser.parse_args()
    if args.memory_only:
        measure_memory(args.memory)
        return
    print(f"cores: {CORES}, median of {args.repeats}, steepy and xargs alternating")
    rows = measure_sizes(args.sizes, args.repeats, Postgres.find(args.pg))
    chain = steepy_run(pipeline(200))
    print(f"chain of 200 dependent executables: {chain.seconds:.2f} s", flush=True)
    latencies = first_start_latencies()
    latency_ms = statistics.median(latencies) * 1000
    print(f"submit -> first executable under an idle worker: median {latency_ms:.0f} ms "
          f"(of {', '.join(f'{x * 1000:.0f}' for x in latencies)} ms)", flush=True)
    measure_memory(args.memory)
    peers = {}
    if args.peers:
        from bench.peers import peer_figures

        peers = peer_figures(1000)
        for entry in peers.values():
            if "error" in entry:
                print(f"{entry['label']:<28} failed: {entry['error']}")
            else:
                print(f"{entry['label']:<28} {entry['seconds']:7.2f} s, ratio {entry['ratio']:5.1f}")
    if args.markdown:
        print("\n| work | steepy | xargs -P %d | ratio | peak memory |\n|---|---|---|---|---|" % CORES)
        for r in rows:
            print(f"| {r['n']:,} chains, {r['db']} | {r['seconds']:.2f} s | {r['xargs']:.2f} s | "
                  f"{r['ratio']:.1f}× | {r['peak_mb']:.0f} MB |")
        for entry in peers.values():
            if "error" not in entry and not entry["label"].startswith("xargs"):
                print(f"| 1,000 jobs, {entry['label']} | {entry['seconds']:.2f} s | | "
                      f"{entry['ratio']:.1f}× | |")


if __name__ == "__main__":
    main()
