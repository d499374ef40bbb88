"""How the process chain generator scales with the size of a for-each.

For a for-each over N items whose body holds two dependent actions, prints the time to
generate every chain (first call: N chains of two executables; then the results are fed back
until nothing is left) and the peak memory of the same run measured with tracemalloc.

    python bench/generator.py [N ...]     (default: 1000 10000 100000)

Each figure is the best of three runs in fresh interpreters (the machine may be busy).
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
import tracemalloc

from steepy.generator import ProcessChainGenerator, simulated_results
from steepy.model.ids import CounterIds
from steepy.model import Service, Workflow


def services() -> dict[str, Service]:
    def copy_service(service_id: str) -> Service:
        return Service.from_json({
            "id": service_id, "name": service_id, "description": "copy", "path": "cp",
            "runtime": "other",
            "parameters": [
                {"id": "input", "name": "in", "description": "", "type": "input",
                 "cardinality": "1..1"},
                {"id": "output", "name": "out", "description": "", "type": "output",
                 "cardinality": "1..1", "fileSuffix": ".txt"}]})
    return {s.id: s for s in (copy_service("first"), copy_service("second"))}


def workflow(n: int) -> Workflow:
    return Workflow.from_json({
        "vars": [{"id": "items", "value": [f"/data/file{i}.txt" for i in range(n)]}],
        "actions": [{
            "type": "for", "id": "loop", "input": "items", "enumerator": "i",
            "output": "collected", "yieldToOutput": "y",
            "actions": [
                {"id": "a", "type": "execute", "service": "first",
                 "inputs": [{"id": "input", "var": "i"}],
                 "outputs": [{"id": "output", "var": "x"}]},
                {"id": "b", "type": "execute", "service": "second",
                 "inputs": [{"id": "input", "var": "x"}],
                 "outputs": [{"id": "output", "var": "y"}]}]}]})


def run(n: int) -> tuple[int, float]:
    """Generate everything; returns the number of chains and the CPU seconds spent inside
    generate() (simulating the results in between is the harness's work, not counted)."""
    generator = ProcessChainGenerator(workflow(n), "/tmp", "/out", services(),
                                      id_generator=CounterIds())
    total = 0
    spent = 0.0
    results: dict = {}
    executed: set = set()
    while True:
        start = time.process_time()
        chains = generator.generate(results, executed)
        spent += time.process_time() - start
        if not chains:
            break
        total += len(chains)
        results, executed = simulated_results(chains)
    assert generator.is_finished()
    return total, spent


def measure(n: int) -> tuple[float, float, float, int]:
    """(wall seconds of the whole run, CPU seconds in generate(), peak MiB, chains)."""
    gc.collect()
    wall = time.perf_counter()
    chains, cpu = run(n)
    wall = time.perf_counter() - wall
    gc.collect()
    tracemalloc.start()
    run(n)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return wall, cpu, peak / 2**20, chains


def measure_fresh(n: int, repeat: int) -> tuple[float, float, float, int]:
    """Best of `repeat` runs, each in a fresh interpreter (no heap left over from others)."""
    best = None
    for _ in range(repeat):
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], check=True,
                             capture_output=True, text=True).stdout
        wall, cpu, peak, chains = json.loads(out)
        best = (wall, cpu, peak, chains) if best is None else (
            min(best[0], wall), min(best[1], cpu), min(best[2], peak), chains)
    return best


def main(argv: list[str]) -> None:
    if argv[:1] == ["--one"]:
        print(json.dumps(measure(int(argv[1]))))
        return
    sizes = [int(a) for a in argv] or [1_000, 10_000, 100_000]
    print("best of 3 runs in fresh interpreters; generate s = CPU time inside generate() "
          "(all calls); run s = wall time of the whole replay incl. simulating results")
    print(f"{'items':>8} {'chains':>8} {'run s':>8} {'generate s':>11} {'us/item':>8} "
          f"{'peak MiB':>9}")
    previous = None
    for n in sizes:
        wall, cpu, peak, chains = measure_fresh(n, 3)
        growth = "" if previous is None else (
            f"   x{cpu / previous[1]:.1f} generate time, x{peak / previous[2]:.1f} memory "
            f"for x{n / previous[0]:.0f} items")
        print(f"{n:>8} {chains:>8} {wall:>8.3f} {cpu:>11.3f} {cpu / n * 1e6:>8.1f} "
              f"{peak:>9.1f}{growth}")
        previous = (n, cpu, peak)


if __name__ == "__main__":
    main(sys.argv[1:])
