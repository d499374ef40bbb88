"""kill -9 of the engine at random moments, and how often the tool really ran.

Each round submits one executable with `retries: {maxAttempts: M, delay: D}` whose tool
always fails after a random short while, then starts `steepy worker` processes one after the
other and kills each (SIGKILL, its pid) at a random moment until the submission has ended.
The tool appends a line per real run, so the count is of what ran, not of what was recorded.
A round holds the promise when the tool ran at most M times, never twice at once, and no
attempt started before the due time its predecessor recorded.

    .venv/bin/python bench/chaos_attempts.py [--rounds 10] [--kills 3] [--max-attempts 3]

Prints one line per round and a summary; exits 1 if any round broke the promise.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from steepy.registry import open_registry  # noqa: E402

TOOL = """#!/bin/sh
exec 9>>"$1.lock"
if ! flock -n 9; then echo twin >> "$1.twins"; fi
echo "start $(date +%s.%N) $STEEPY_ATTEMPT" >> "$1"
sleep "$2"
exit 1
"""
SERVICE = """
- id: failing
  name: Always fails
  description: Appends a line per run, then fails
  path: {tool}
  runtime: other
  parameters:
    - {{id: log, name: Log, description: The file, type: input, cardinality: 1..1, dataType: string}}
    - {{id: sleep, name: Sleep, description: Seconds, type: input, cardinality: 1..1, dataType: string}}
"""
WORKFLOW = """
api: 4.7.0
actions:
  - id: step
    type: execute
    service: failing
    inputs: [{{id: log, value: "{log}"}}, {{id: sleep, value: "{sleep}"}}]
    retries: {{maxAttempts: {max_attempts}, delay: {delay}ms}}
"""


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"),
               STEEPY_CONTROLLER_LEASETIMEOUT="2s", STEEPY_CONTROLLER_HEARTBEATINTERVAL="300ms",
               STEEPY_SCHEDULER_LOOKUPINTERVAL="300ms", STEEPY_AGENT_KILLGRACEPERIOD="1s")
    return env


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def one_round(work: Path, rng: random.Random, kills: int, max_attempts: int) -> dict:
    services = work / "services"
    services.mkdir(parents=True)
    tool = work / "failing"
    tool.write_text(TOOL)
    tool.chmod(0o755)
    (services / "s.yaml").write_text(SERVICE.format(tool=tool))
    log = work / "runs.log"
    delay_ms = rng.choice([300, 800, 1500])
    workflow = work / "w.yaml"
    workflow.write_text(WORKFLOW.format(log=log, sleep=round(rng.uniform(0.05, 0.8), 2),
                                        max_attempts=max_attempts, delay=delay_ms))
    db = f"sqlite:///{work / 'db.sqlite'}"
    base = [sys.executable, "-m", "steepy.cli"]
    common = ["--db", db, "--services", str(services)]
    env = _env(work)
    subprocess.run(base + ["submit", str(workflow)] + common, cwd=ROOT, env=env, check=True,
                   capture_output=True)
    registry = open_registry(db)
    killed = 0
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        (submission,), _ = registry.views.list_submissions()
        if submission.status.finished:
            break
        worker = subprocess.Popen(base + ["worker", "--agents", "1", "--exit-when-idle"] + common,
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        if killed < kills:
            try:
                worker.wait(timeout=rng.uniform(0.3, 4.0))
            except subprocess.TimeoutExpired:
                os.kill(worker.pid, signal.SIGKILL)
                killed += 1
        worker.wait()
    (submission,), _ = registry.views.list_submissions()
    (chain,), _ = registry.views.list_chains(submission.id)
    attempts = registry.views.attempts(chain.chain.id)
    registry.close()
    lines = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    starts = [(float(t), int(a)) for _, t, a in lines]
    # no attempt started before the due time its predecessor recorded (50 ms for the clocks)
    early = sum(1 for a in attempts if a.get("dueTime") for t, n in starts
                if n == a["attempt"] + 1 and t < _epoch(a["dueTime"]) - 0.05)
    twins = (work / "runs.log.twins").exists()
    return {"status": str(submission.status), "runs": len(starts), "kills": killed,
            "early": early, "twins": twins,
            "ok": len(starts) <= max_attempts and not twins and early == 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--kills", type=int, default=3, help="kills per round at the most")
    parser.add_argument("--max-attempts", type=int, default=3)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    broken = 0
    total_kills = 0
    for n in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="steepy-chaos-") as work:
            result = one_round(Path(work), rng, args.kills, args.max_attempts)
        total_kills += result["kills"]
        broken += not result["ok"]
        print(f"round {n + 1}: {result['kills']} kill(s), tool ran {result['runs']} time(s) "
              f"(maxAttempts {args.max_attempts}), started early {result['early']}, "
              f"twins {'yes' if result['twins'] else 'no'}, ended {result['status']}"
              + ("" if result["ok"] else "  <-- BROKEN"), flush=True)
    print(f"{args.rounds} rounds, {total_kills} kill -9 in all, {broken} broke the promise")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
