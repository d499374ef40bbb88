"""Where the engine's floor is: what `steepy run` costs before its first chain, what every
chain costs in CPU, and what that allows against `xargs -P <cores>`.

Measured, side by side, on N one-tool chains (`touch`, as bench/throughput.py):
- xargs:        `seq N | xargs -P <cores> touch` (wall and CPU, the touches included)
- python spawn: the same touches from Python itself, `subprocess.run` on <cores> threads
                (what spawning costs a Python program, with no bookkeeping at all)
- imports:      `python -c pass`, `import sqlalchemy`, `import steepy.cli.engine`
- steepy 1:     `steepy run` of one chain: the fixed cost of an engine, start to exit
- steepy N:     `steepy run` of N chains; its CPU beyond the fixed cost and beyond the
                touches themselves is the engine's CPU per chain

The engine's bookkeeping of a chain (claim, end, attempts, events, the tool's supervision)
runs in one process under one interpreter lock, so it adds up, one chain after another:
wall >= fixed + N x (CPU per chain). The floor printed is that bound against xargs.

Usage: .venv/bin/python bench/floor.py [N] [--repeats 3]     (default N: 1000)
Nothing is asserted: it prints.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.peers import CORES  # noqa: E402
from bench.throughput import Measured, fan_out, steepy_run  # noqa: E402

SPAWN = """
import subprocess, sys
from concurrent.futures import ThreadPoolExecutor
n, cores, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with ThreadPoolExecutor(cores) as pool:
    list(pool.map(lambda i: subprocess.run(["touch", f"{out}/{i}"], check=True), range(n)))
"""


def _timed(argv: list[str] | str, **kwargs) -> Measured:
    """Wall and CPU (its own and its children's, by wait4) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, **kwargs)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed")
    return Measured(time.perf_counter() - start, usage.ru_maxrss / 1024,
                    usage.ru_utime + usage.ru_stime)


def xargs(n: int) -> Measured:
    with tempfile.TemporaryDirectory(prefix="floor-xargs-") as tmp:
        return _timed(f"seq 0 {n - 1} | xargs -P {CORES} -I{{}} touch {tmp}/{{}}", shell=True)


def python_spawn(n: int) -> Measured:
    with tempfile.TemporaryDirectory(prefix="floor-spawn-") as tmp:
        return _timed([sys.executable, "-c", SPAWN, str(n), str(CORES), tmp])


def imports(module: str | None) -> Measured:
    return _timed([sys.executable, "-c", f"import {module}" if module else "pass"], cwd=ROOT)


def median(runs: list[Measured], what: str = "seconds") -> float:
    return statistics.median(getattr(m, what) for m in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = args.n
    runs: dict[str, list[Measured]] = {k: [] for k in
                                       ("xargs", "spawn", "steepy1", "steepyN", "python",
                                        "sqlalchemy", "steepy-import")}
    for _ in range(args.repeats):  # in turns, so that a slow minute hurts all alike
        runs["xargs"].append(xargs(n))
        runs["spawn"].append(python_spawn(n))
        runs["steepy1"].append(steepy_run(fan_out(1)))
        runs["steepyN"].append(steepy_run(fan_out(n)))
        runs["python"].append(imports(None))
        runs["sqlalchemy"].append(imports("sqlalchemy"))
        runs["steepy-import"].append(imports("steepy.cli.engine"))
    x_wall, x_cpu = median(runs["xargs"]), median(runs["xargs"], "cpu_s")
    fixed = median(runs["steepy1"])
    per_chain_cpu = (median(runs["steepyN"], "cpu_s") - median(runs["steepy1"], "cpu_s")
                     - x_cpu) / max(n - 1, 1)
    print(f"N = {n}, {CORES} cores, median of {args.repeats}")
    print(f"{'':34s} {'wall':>9s} {'CPU':>9s}")
    for key, label in (("xargs", f"xargs -P {CORES}"), ("spawn", f"python spawn, {CORES} threads"),
                       ("python", "python -c pass"), ("sqlalchemy", "import sqlalchemy"),
                       ("steepy-import", "import steepy.cli.engine"),
                       ("steepy1", "steepy run, 1 chain"), ("steepyN", f"steepy run, {n} chains")):
        print(f"{label:34s} {median(runs[key]):8.2f}s {median(runs[key], 'cpu_s'):8.2f}s")
    print(f"engine CPU per chain (beyond the fixed cost and the tools): {per_chain_cpu * 1000:.2f} ms;"
          f" xargs: {x_wall / n * CORES * 1000:.2f} ms of wall per job and core")
    for size in (1000, 10000):
        floor = fixed + size * per_chain_cpu
        print(f"floor at {size}: {floor:.1f} s = {floor / (x_wall / n * size):.1f}x xargs "
              f"(fixed {fixed:.2f} s + {size} x {per_chain_cpu * 1000:.2f} ms)")


if __name__ == "__main__":
    main()
