"""What an idle `steepy worker` costs, and how fast it still answers (issue 31: at most 0.5%
of a core idle, a submission's first tool within 50 ms).

One worker (`--agents 2`) on a fresh SQLite database in a temporary folder settles for a few
seconds, then is left alone for --seconds (default 60). Printed:
- its CPU time (user + system of the worker and its children, psutil) over that wall time,
  as a percentage of one core;
- wake-ups per second: voluntary context switches of all its threads and its children's
  (each is a thread that slept and was woken; Linux only, from /proc);
- what the machine charges a heartbeat right after 2 s asleep, against back to back (on
  some virtual machines tens of times more: idle CPU is then mostly the machine's);
- then --latency (default 5) submissions of one `touch`, each after a few idle seconds:
  the time from the submission's `accepted` event (its commit) to the file the tool made
  (its modification time); the median and every value.

Usage: .venv/bin/python bench/idle.py [--seconds 60] [--latency 5] [--db URL]
                                      [--baseline DIR]
--db URL runs the worker on that (empty) database instead, e.g. PostgreSQL. --baseline DIR
also runs the steepy package in DIR (an earlier commit: `mkdir DIR && git archive HEAD steepy
| tar -x -C DIR`) beside this one, each on its own SQLite file, idle over the same seconds:
a before/after in one run that the machine's other work disturbs alike. The machine's load
is printed first. Nothing here is asserted: it prints.
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

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.throughput import SERVICES, _steepy, first_tool_seconds  # noqa: E402 - the same
from bench.throughput import _env as throughput_env  # noqa: E402 - touch, command and timing

ONE_TOUCH = """api: 4.7.0
actions:
  - {id: t, type: execute, service: touch, outputs: [{id: out, var: o}]}
"""
SETTLE_S = 6.0  # imports, the first heartbeat and sweep


def _env(work: Path, package: Path) -> dict[str, str]:
    return dict(throughput_env(work), PYTHONPATH=str(package))


def _family(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return [proc]


def cpu_seconds(proc: psutil.Process) -> float:
    """User + system time of the process and its children now."""
    total = 0.0
    for p in _family(proc):
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


def context_switches(proc: psutil.Process) -> int | None:
    """Voluntary context switches of every thread of the process and its children (None:
    not Linux)."""
    total = 0
    for p in _family(proc):
        tasks = Path(f"/proc/{p.pid}/task")
        if not tasks.is_dir():
            return None
        for status in tasks.glob("*/status"):
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
            except OSError:
                pass  # the thread ended
    return total


def first_tool_ms(work: Path, db: str, package: Path) -> float:
    """Milliseconds from one submission's commit to the file its one `touch` made."""
    from steepy.registry import open_registry

    return first_tool_seconds(work, db, open_registry(db), _env(work, package)) * 1000


class Worker:
    """An idle `steepy worker` of the steepy package in `package`, in a folder of its own."""

    def __init__(self, package: Path, db: str | None):
        self.package = package
        self.tmp = tempfile.TemporaryDirectory(prefix="steepy-idle-")
        self.work = Path(self.tmp.name)
        (self.work / "services.yaml").write_text(SERVICES)
        (self.work / "w.yaml").write_text(ONE_TOUCH)
        self.db = db or f"sqlite:///{self.work / 'steepy.db'}"
        self.proc = subprocess.Popen(_steepy(self.work, self.db, "worker", "--agents", "2"),
                                     env=_env(self.work, package), cwd=self.work,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.ps = psutil.Process(self.proc.pid)

    def sample(self) -> tuple[float, int | None]:
        return cpu_seconds(self.ps), context_switches(self.ps)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        self.tmp.cleanup()


def measure(packages: list[Path], seconds: float, latency: int, db: str | None) -> list[dict]:
    """Each package's worker, idle over the same `seconds` (side by side: the machine's
    other work disturbs them alike), then `latency` submissions to each in turn."""
    workers: list[Worker] = []
    try:
        for package in packages:
            workers.append(Worker(package, db))
        time.sleep(SETTLE_S)
        before, began = [w.sample() for w in workers], time.monotonic()
        time.sleep(seconds)
        after, wall = [w.sample() for w in workers], time.monotonic() - began
        results = []
        for w, (cpu0, switches0), (cpu1, switches1) in zip(workers, before, after):
            wakes = None if switches0 is None or switches1 is None \
                else (switches1 - switches0) / wall
            results.append({"wall": wall, "cpu": 100 * (cpu1 - cpu0) / wall, "wakes": wakes,
                            "first": []})
            print(f"idle ({w.package}): {results[-1]['cpu']:.2f}% of a core, "
                  f"{'n/a' if wakes is None else f'{wakes:.1f}'} wake-ups/s", flush=True)
        for i in range(latency):
            for w, result in zip(workers, results):
                time.sleep(1.0 + 0.7 * i)  # idle again, at another point of its heartbeat
                result["first"].append(first_tool_ms(w.work, w.db, w.package))
        return results
    finally:
        for w in workers:
            w.close()


def report(name: str, m: dict) -> None:
    wakes = "n/a" if m["wakes"] is None else f"{m['wakes']:.1f}"
    first = (f"median {statistics.median(m['first']):.0f} ms "
             f"({', '.join(f'{w:.0f}' for w in m['first'])})" if m["first"] else "not measured")
    print(f"{name}: {m['cpu']:.2f}% of a core over {m['wall']:.0f} s idle, "
          f"{wakes} wake-ups/s; submit -> first tool: {first}", flush=True)


def wake_charge_ms(rounds: int = 4, asleep_s: float = 2.0) -> tuple[float, float]:
    """What this machine charges an engine's heartbeat (`Leases.beat' on a scratch SQLite
    database), in ms of CPU: back to back, and right after sleeping `asleep_s' as an idle
    engine does between heartbeats. On some virtual machines the second is tens of times
    the first (measured here: 1 ms against 40-64 ms of user time, no page faults): an idle
    process's CPU then says more about the machine than about steepy."""
    from steepy.registry import open_registry

    with tempfile.TemporaryDirectory(prefix="steepy-charge-") as folder:
        registry = open_registry(f"sqlite:///{folder}/charge.db")
        rows = [{"id": f"a{i}", "capabilities": [], "host": "h", "pid": 1, "chain_id": None}
                for i in range(2)]

        def beat() -> float:
            begin = time.thread_time()
            registry.leases.beat("charge", rows, 10, True)
            return (time.thread_time() - begin) * 1000

        beat()
        warm = statistics.median(beat() for _ in range(rounds))
        cold = []
        for _ in range(rounds):
            time.sleep(asleep_s)
            cold.append(beat())
        registry.engine.dispose()
    return warm, statistics.median(cold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--latency", type=int, default=5)
    parser.add_argument("--db", default=None, help="an empty database (default: SQLite)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a folder with an earlier steepy package, measured first")
    args = parser.parse_args()
    if args.db is not None and args.baseline is not None:
        parser.error("--baseline needs a database of its own: leave out --db")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} cores", flush=True)
    warm, cold = wake_charge_ms()
    print(f"this machine charges a heartbeat {warm:.1f} ms of CPU back to back, {cold:.1f} ms "
          "right after 2 s asleep (an idle process's CPU is mostly its wake-ups times that)",
          flush=True)
    packages = ([args.baseline.resolve()] if args.baseline is not None else []) + [ROOT]
    results = measure(packages, args.seconds, args.latency, args.db)
    names = ([f"baseline ({args.baseline})"] if args.baseline is not None else []) + ["this tree"]
    for name, result in zip(names, results):
        report(name, result)


if __name__ == "__main__":
    main()
