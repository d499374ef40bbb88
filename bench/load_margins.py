"""How late this machine delivers what the agent tests wait for (not a test).

    PYTHONPATH=. python bench/load_margins.py [--n 30]

Run it on an idle machine and under load (e.g. beside `stress-ng --cpu 2`) to see which margins
the timing tests need. Each row gives the median, 95th percentile and maximum in ms of:

  start-up       spawn of tests/agent/tool.py (python -S) -> its first output line, printed at
                 once: what a tool's start-up costs before it can say anything
  first line     the same tool printing 5 lines every 100 ms on its schedule from its fork: how
                 late its first line is (start-up absorbed by the first 100 ms)
  line gap       the largest gap between two of those lines, minus 100
  timer late     RunResult.late_ms of a 200 ms maxRuntime: how late the agent's timer fired
  kill           timer decision -> run_process returned (SIGTERM, the tool dies, reaped)
  sleep late     asyncio.sleep(0.1) in this process, minus 100 ms

The agent tests' margins (tests/agent/scenarios/extensions.yaml, TIME_SCALE in
tests/agent/test_conformance.py, services/demo.yaml) are chosen several times above the maxima
seen here under `stress-ng --cpu 2` plus a concurrent test run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from steepy.agent.cancel import CancelToken  # noqa: E402
from steepy.agent.process import Limits, run_process  # noqa: E402

TOOL = Path(__file__).resolve().parent.parent / "tests" / "agent" / "tool.py"


def _argv(directory: Path, name: str, call: dict) -> list[str]:
    spec = directory / f"{name}.json"
    spec.write_text(json.dumps({"calls": [call]}))
    return [sys.executable, "-S", str(TOOL), str(spec), str(directory / f"{name}.count")]


async def _line_times(argv: list[str]) -> tuple[float, list[float]]:
    loop = asyncio.get_running_loop()
    seen: list[float] = []
    start = loop.time()
    await run_process(argv, env={}, cwd=None, limits=Limits(), token=CancelToken(loop),
                      on_lines=lambda lines: seen.extend(loop.time() for _ in lines))
    return start, seen


async def lines_run(directory: Path, i: int) -> tuple[float, float, float]:
    start, seen = await _line_times(_argv(directory, f"p{i}", {"print": ["now"]}))
    startup = (seen[0] - start) * 1000
    start, seen = await _line_times(_argv(directory, f"l{i}", {"lines": {"count": 5, "every_ms": 100}}))
    first = (seen[0] - start) * 1000 - 100
    gap = max((b - a) * 1000 for a, b in zip(seen, seen[1:])) - 100
    return startup, first, gap


async def timeout_run(directory: Path, i: int) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    result = await run_process(_argv(directory, f"t{i}", {"block_ms": 5000}), env={}, cwd=None,
                               limits=Limits(runtime_ms=200), token=CancelToken(loop),
                               grace_ms=2000)
    assert result.timeout_kind is not None
    fired = start + (200 + result.late_ms) / 1000
    return result.late_ms, (loop.time() - fired) * 1000


async def sleep_late() -> float:
    start = time.monotonic()
    await asyncio.sleep(0.1)
    return (time.monotonic() - start) * 1000 - 100


def row(name: str, values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
    return f"{name:<12} median {statistics.median(values):7.1f}  p95 {p95:7.1f}  max {values[-1]:7.1f}"


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        startups, firsts, gaps, lates, kills, sleeps = [], [], [], [], [], []
        for i in range(n):
            startup, first, gap = await lines_run(directory, i)
            startups.append(startup)
            late, kill = await timeout_run(directory, i)
            firsts.append(first)
            gaps.append(gap)
            lates.append(late)
            kills.append(kill)
            sleeps.append(await sleep_late())
    print(f"{n} runs each, load average {open('/proc/loadavg').read().split()[0]}")
    for name, values in (("start-up", startups), ("first line", firsts), ("line gap", gaps), ("timer late", lates),
                         ("kill", kills), ("sleep late", sleeps)):
        print(row(name, values))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=30)
    asyncio.run(main(parser.parse_args().n))
