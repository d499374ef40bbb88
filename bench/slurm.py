"""N one-second tools through the local single-node SLURM (`.ci/slurm start`, 8 CPUs
declared): steepy with `runtime: slurm` (one `srun` per tool, `--agents 8`) against the same
jobs submitted by a plain `sbatch` loop and waited for (one `squeue` per 0.5 s), and, when it
installs, Snakemake's SLURM executor plugin (in /tmp/steepy-peers-venv). Prints wall time and
the overhead per job over the ideal N / 8 seconds.

Usage: .venv/bin/python bench/slurm.py [--jobs 200] [--seconds 1] [--no-snakemake]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPUS = 8
PEERS = Path("/tmp/steepy-peers-venv")
SNAKEMAKE_TIMEOUT_S = 300


def cluster() -> dict[str, str]:
    out = subprocess.run([str(ROOT / ".ci" / "slurm"), "start"], capture_output=True, text=True,
                         check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def workflow(jobs: int, seconds: float) -> str:
    items = json.dumps([str(i) for i in range(jobs)])
    return (f"api: 4.7.0\nvars:\n  - {{id: items, value: {items}}}\nactions:\n"
            "  - type: for\n    input: items\n    enumerator: i\n    actions:\n"
            f"      - {{type: execute, service: sleep, inputs: [{{id: seconds, value: {seconds}}}]}}\n")


def run_steepy(info: dict, jobs: int, seconds: float, work: Path) -> float:
    (work / "w.yaml").write_text(workflow(jobs, seconds))
    env = {**os.environ, "SLURM_CONF": info["SLURM_CONF"], "STEEPY_RUNTIMES_DEFAULT": "slurm",
           "STEEPY_RUNTIMES_SLURM_PARTITION": info["partition"],
           "STEEPY_TMPPATH": str(work / "tmp"), "STEEPY_OUTPATH": str(work / "out"),
           "STEEPY_LOGS_PROCESSCHAINS_PATH": str(work / "logs")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "steepy", "run", str(work / "w.yaml"), "--db",
                           f"sqlite:///{work / 'steepy.db'}", "--agents", str(CPUS), "--json",
                           "--services", str(ROOT / "services")], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    took = time.monotonic() - started
    status = json.loads(done.stdout)["status"] if done.returncode == 0 else done.stderr[-300:]
    assert status == "SUCCESS", status
    return took


def run_sbatch_loop(info: dict, jobs: int, seconds: float, work: Path) -> float:
    env = {**os.environ, "SLURM_CONF": info["SLURM_CONF"]}
    started = time.monotonic()
    ids = []
    for i in range(jobs):
        out = subprocess.run(["sbatch", "--parsable", f"--partition={info['partition']}",
                              "--job-name=bench-sbatch", f"--output={work}/sbatch-%j.out",
                              "--wrap", f"sleep {seconds}"], env=env, capture_output=True,
                             text=True, check=True).stdout
        ids.append(out.strip().split(";")[0])
    while subprocess.run(["squeue", "--noheader", "--name=bench-sbatch", "--format=%i"], env=env,
                         capture_output=True, text=True).stdout.strip():
        time.sleep(0.5)
    return time.monotonic() - started


SNAKEFILE = """
rule all:
    input: expand("done/{{i}}.txt", i=range({jobs}))

rule one:
    output: "done/{{i}}.txt"
    resources: slurm_partition="{partition}", runtime=5
    shell: "sleep {seconds} && touch {{output}}"
"""


def run_snakemake(info: dict, jobs: int, seconds: float, work: Path) -> float | str:
    snakemake = PEERS / "bin" / "snakemake"
    if not snakemake.exists():
        return "not installed (pip install snakemake snakemake-executor-plugin-slurm into " \
               f"{PEERS} first)"
    (work / "Snakefile").write_text(SNAKEFILE.format(jobs=jobs, seconds=seconds,
                                                     partition=info["partition"]))
    env = {**os.environ, "SLURM_CONF": info["SLURM_CONF"]}
    started = time.monotonic()
    try:
        done = subprocess.run([str(snakemake), "--executor", "slurm", "--jobs", str(CPUS),
                               "--latency-wait", "5", "--default-resources",
                               "slurm_account=none"], cwd=work, env=env, capture_output=True,
                              text=True, timeout=SNAKEMAKE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"did not finish within {SNAKEMAKE_TIMEOUT_S} s"
    if done.returncode != 0:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:200]
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--no-snakemake", action="store_true")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    info = cluster()
    ideal = args.jobs * args.seconds / CPUS
    print(f"{args.jobs} jobs of {args.seconds:g} s on {CPUS} CPUs: ideal {ideal:.1f} s")
    runs = [("steepy (runtime: slurm)", run_steepy), ("sbatch loop + squeue", run_sbatch_loop)]
    if not args.no_snakemake:
        runs.append(("Snakemake SLURM executor", run_snakemake))
    for name, runner in runs:
        with tempfile.TemporaryDirectory(prefix="bench-slurm-") as work:
            took = runner(info, args.jobs, args.seconds, Path(work))
        if isinstance(took, str):
            print(f"  {name:28s} {took}")
        else:
            print(f"  {name:28s} {took:7.1f} s   overhead per job "
                  f"{(took - ideal) / args.jobs * 1000:6.0f} ms")


if __name__ == "__main__":
    main()
