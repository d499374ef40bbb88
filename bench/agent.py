"""Agent benchmark (not a test): overhead per executable and timer precision.

    PYTHONPATH=. python bench/agent.py [--n 1000]

1. 1,000 executables of `true` through the agent (100 chains of 10; per-chain log files on),
   on one agent and on two concurrent agents (sharing one event loop), against spawning `true`
   bare from Python (subprocess.run, sequential / two threads). Overhead = (agent - bare) /
   executables; target < 0.3 ms. Each is measured --repeat times, interleaved, best kept.
2. Timer precision: maxRuntime 500 ms on `sleep 10` and maxInactivity 500 ms on a silent tool.
   "late" = how long after the limit the timer fired (measured inside the agent) and when the
   chain had ended (process killed and reaped); target < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from steepy.agent import AgentConfig, LocalAgent  # noqa: E402
from steepy.agent.cancel import CancelToken  # noqa: E402
from steepy.agent.process import Limits, run_process  # noqa: E402
from steepy.model.policies import TimeoutPolicy  # noqa: E402
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain  # noqa: E402
from steepy.model.submission import ProcessChainStatus  # noqa: E402

PER_CHAIN = 10


def bare(n: int, threads: int) -> float:
    def run(count: int) -> None:
        for _ in range(count):
            subprocess.run(["true"], check=True)

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, [n // threads] * threads))
    return time.perf_counter() - start


def chains(prefix: str, n: int) -> list[ProcessChain]:
    return [ProcessChain(f"{prefix}-{c}", [Executable(f"e{i}", "true", "true")
                                           for i in range(PER_CHAIN)])
            for c in range(n // PER_CHAIN)]


async def through_agents(n: int, agents: int, log_dir: Path) -> float:
    async def drive(agent: LocalAgent, work: list[ProcessChain]) -> None:
        for chain in work:
            outcome = await agent.execute(chain)
            assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message

    config = AgentConfig(log_dir=log_dir)
    pool = [LocalAgent(f"agent-{i}", config) for i in range(agents)]
    start = time.perf_counter()
    await asyncio.gather(*(drive(a, chains(a.id, n // agents)) for a in pool))
    return time.perf_counter() - start


async def timer_lateness(kind: str, rounds: int) -> tuple[list[float], list[float]]:
    """(timer fired late, chain ended late) in ms for a 500 ms limit."""
    fired, ended = [], []
    silent = [sys.executable, "-S", "-c", "import time; time.sleep(10)"]
    for _ in range(rounds):
        if kind == "maxRuntime":
            argv, limits = ["sleep", "10"], Limits(runtime_ms=500)
            exe = Executable("e", "sleep", "sleep", [Argument("a", ArgumentVariable("v", "10"), "input")],
                             max_runtime=TimeoutPolicy(500))
        else:
            argv, limits = silent, Limits(inactivity_ms=500)
            exe = Executable("e", silent[0], "silent",
                             [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
                              for i, v in enumerate(silent[1:])],
                             max_inactivity=TimeoutPolicy(500))
        token = CancelToken(asyncio.get_running_loop())
        result = await run_process(argv, env={"PATH": "/usr/bin:/bin"}, cwd=None, limits=limits,
                                   token=token)
        fired.append(result.late_ms)
        agent = LocalAgent("timer", AgentConfig(log_dir=None))
        start = time.monotonic()
        outcome = await agent.execute(ProcessChain("t", [exe]))
        ended.append((time.monotonic() - start) * 1000 - 500)
        assert outcome.status == ProcessChainStatus.CANCELLED
    return fired, ended


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} ms, max {max(values):6.2f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement; best kept")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    n = args.n
    bare(50, 1)  # warm up
    with tempfile.TemporaryDirectory() as tmp:
        await through_agents(100, 1, Path(tmp) / "warm")
        # (label, agents, bare threads): agents sharing one event loop spawn one tool at a
        # time, so two agents are compared with sequential bare spawns as well
        setups = [("1 agent", 1, 1), ("2 agents", 2, 1), ("2 agents", 2, 2)]
        for label, agents, threads in setups:
            # interleaved and best-of-N: the machine may be shared, noise only adds time
            plain, agent = [], []
            for r in range(args.repeat):
                plain.append(bare(n, threads))
                logs = Path(tmp) / f"logs-{label}-{threads}-{r}"
                agent.append(await through_agents(n, agents, logs))
            best_plain, best_agent = min(plain), min(agent)
            print(f"{n} x true, {label}: bare ({threads} thread{'s' if threads > 1 else ''}) "
                  f"{best_plain:6.3f} s, through the agent {best_agent:6.3f} s, overhead "
                  f"{(best_agent - best_plain) / n * 1000:+.3f} ms per executable "
                  f"(best of {args.repeat})", flush=True)
    for kind in ("maxRuntime", "maxInactivity"):
        fired, ended = await timer_lateness(kind, args.rounds)
        print(f"{kind} 500 ms: timer fired late {summary(fired)}; chain ended late "
              f"{summary(ended)} ({args.rounds} rounds)", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
