"""Reuse of unchanged work (issue 30, extensions 15): a workflow of N + 1 chains (a for-each
copying N input files, one chain each, and one chain joining the N copies) run with
`steepy run --resume` three times in one folder and one SQLite database:

1. the first run executes everything (N + 1 executions);
2. the second, nothing changed, executes nothing: every chain is reused (issue 30 asks it to
   be at least 20 times faster than the first);
3. after one input file changed, exactly the chains downstream of it run: its copy and the
   join (2 executions).

Each run is the whole `steepy run` process (interpreter start included): its wall time and
its CPU time (user and system, the tools' included; less disturbed by other work on a busy
machine). Each begins once the file system has written what the run before left in memory
(the first run's 10,000 outputs and database pages), as a rerun the next morning would.
Executions are counted by the tool itself (a line per execution in a file).

Below the table: what every run costs whatever its size (the same three runs of a workflow of
N = 1: interpreter start, imports, reading the files, the engine's start and end), and for
each size what each chain costs beyond that in the first run and in the second, and their
ratio: how much faster reuse makes a chain, apart from the start that any `steepy run` pays
(the ratio of whole runs tends to it as N grows).

Usage: .venv/bin/python bench/reuse.py [N ...] [--markdown]
Default sizes: 1000 10000. Nothing here is asserted: it prints.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TOOL = """\
#!/bin/sh
# copy (or join) its inputs into its output, and count the execution
echo x >> "$COUNTER"
out=$1
shift
cat "$@" > "$out"
"""
SERVICES = """\
- id: copy
  name: copy
  description: copies its inputs into its output
  path: {tool}
  runtime: other
  environment: {{COUNTER: {counter}}}
  parameters:
    - {{id: out, name: out, description: the copy, type: output, cardinality: 1..1}}
    - {{id: in, name: in, description: the inputs, type: input, cardinality: 1..n,
       dataType: file}}
"""


def workflow(n: int) -> str:
    files = ", ".join(f"in/{i}.txt" for i in range(n))
    return f"""api: 4.7.0
vars: [{{id: files, value: [{files}]}}]
actions:
  - type: for
    input: files
    enumerator: f
    output: copies
    actions:
      - {{type: execute, service: copy, inputs: [{{id: in, var: f}}],
         outputs: [{{id: out, var: copied}}]}}
    yieldToOutput: copied
  - {{type: execute, service: copy, inputs: [{{id: in, var: copies}}],
     outputs: [{{id: out, var: joined, store: true}}]}}
"""


@dataclass
class Run:
    seconds: float
    cpu: float  # user and system time of `steepy run` and the tools it waited for
    executions: int


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    return dict(env, STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"),
                STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"))


def run(work: Path) -> Run:
    counter = work / "counter"
    counter.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "steepy", "run", "wf.yaml", "-s", "services.yaml",
            "--resume", "--db", f"sqlite:///{work / 'steepy.db'}"]
    os.sync()  # (what the run before wrote goes to disk before this one is timed, not during)
    with open(work / "stderr.txt", "wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=work, env=_env(work), stdout=subprocess.DEVNULL,
                                   stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"steepy run failed:\n{(work / 'stderr.txt').read_text()[-2000:]}")
    lines = counter.read_text().count("\n") if counter.exists() else 0
    return Run(seconds, usage.ru_utime + usage.ru_stime, lines)


def bench(n: int) -> tuple[Run, Run, Run]:
    with tempfile.TemporaryDirectory(prefix="steepy-reuse-") as tmp:
        work = Path(tmp)
        tool = work / "copy.sh"
        tool.write_text(TOOL)
        tool.chmod(0o755)
        (work / "services.yaml").write_text(SERVICES.format(tool=tool, counter=work / "counter"))
        (work / "wf.yaml").write_text(workflow(n))
        (work / "in").mkdir()
        for i in range(n):
            (work / "in" / f"{i}.txt").write_text(f"{i}\n")
        first, second = run(work), run(work)
        (work / "in" / f"{n // 2}.txt").write_text("changed\n")
        return first, second, run(work)


def _time(run: Run) -> str:
    return f"{run.seconds:.1f} s (CPU {run.cpu:.1f} s)"


def _per_chain(n: int, runs: tuple[Run, Run, Run], fixed: tuple[Run, Run, Run]) -> str:
    """What a chain of the first and second run cost beyond the runs of N = 1, and the ratio."""
    first = (runs[0].seconds - fixed[0].seconds) / n
    second = (runs[1].seconds - fixed[1].seconds) / n
    ratio = f"{first / second:.0f}×" if second > 0 else "-"
    return (f"{n + 1:,} chains, beyond the start and end: first {first * 1e3:.2f} ms a chain, "
            f"second {second * 1e3:.3f} ms a chain ({ratio})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} cores, load {load:.1f} (a shared machine: times vary)")
    fixed = bench(1)  # (what any run pays: the start, the end)
    print(f"the start and end of any run (N = 1): first {_time(fixed[0])}, second "
          f"{_time(fixed[1])}", flush=True)
    measured = []
    header = ("chains", "first run", "second (unchanged)", "faster", "one input changed",
              "executions (1st, 2nd, 3rd)")
    rows = []
    for n in args.sizes:
        first, second, third = bench(n)
        measured.append((n, (first, second, third)))
        rows.append((f"{n + 1:,}", _time(first), _time(second),
                     f"{first.seconds / second.seconds:.0f}× ({first.cpu / second.cpu:.0f}× "
                     "CPU)", _time(third),
                     f"{first.executions:,}, {second.executions}, {third.executions}"))
        print("  ".join(rows[-1]), flush=True)
    for n, runs in measured:
        print(_per_chain(n, runs, fixed))
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
