"""The process chain generator alone over a for-each of N items, driven as the engine drives
it: the oldest 1,000 chains in flight end each round, and the state is stored (as JSON)
with every batch of chains made. Prints the time, the stored state's largest size and the
process's peak memory (one process per size, so that each peak is its own).

Usage: .venv/bin/python bench/generator_window.py [N ...] [--window W|none]
Default: 100000 1000000, the engine's window. Nothing here is asserted: it prints.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def measure(n: int, window: int | None, batch: int = 1000) -> str:
    from steepy.generator import ProcessChainGenerator, simulated_results
    from steepy.model import Service, Workflow
    from steepy.model.ids import CounterIds

    touch = Service.from_json({
        "id": "touch", "name": "touch", "description": "touch", "path": "touch",
        "runtime": "other", "parameters": [{"id": "out", "name": "out", "description": "out",
                                            "type": "output", "cardinality": "1..1"}]})
    workflow = Workflow.from_json({
        "api": "4.7.0", "vars": [{"id": "items", "value": [str(i) for i in range(n)]}],
        "actions": [{"type": "for", "input": "items", "enumerator": "i", "actions": [
            {"id": "t", "type": "execute", "service": "touch",
             "outputs": [{"id": "out", "var": "o"}]}]}]})
    start = time.perf_counter()
    generator = ProcessChainGenerator(workflow, "/tmp", "/out", {"touch": touch},
                                      id_generator=CounterIds())
    generator.window = window
    flight: deque = deque()
    results, executed, ended = {}, set(), []
    stores, largest = 0, 0
    while True:
        chains = generator.generate(results, executed, ended_chains=ended)
        if chains:
            stores += 1
            largest = max(largest, len(json.dumps(generator.persist_state())))
        flight.extend(chains)
        if not flight:
            break
        done = [flight.popleft() for _ in range(min(batch, len(flight)))]
        results, executed = simulated_results(done)
        ended = [c.id for c in done]
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (f"generator alone, for-each over {n}, window {window}: {seconds:.1f} s, state "
            f"stored {stores} times, at most {largest / 1e6:.2f} MB, peak {peak:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--window", default="engine", help="chains in flight, or none")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        if args.window == "engine":
            from steepy.generator import CHAIN_WINDOW

            window = CHAIN_WINDOW
        else:
            window = None if args.window == "none" else int(args.window)
        print(measure(args.sizes[0], window), flush=True)
        return
    for n in args.sizes:
        subprocess.run([sys.executable, __file__, str(n), "--window", args.window, "--one"],
                       check=True)


if __name__ == "__main__":
    main()
