"""Start-up time of the commands that do not run an engine: `steepy --help`, a command's
`--help`, `list`, `show`, `status`, `logs`, `events` and `validate`, each the whole process a
user starts (interpreter start included), median of --repeats runs, against the target of
issue 31 (0.25 s). The database is a fresh SQLite file with a few finished submissions, made by
`steepy run` before the timing starts. Beside each wall time: the command's CPU time (user +
system, less disturbed by other work on a busy machine), and which heavy libraries it
imported (`-X importtime`); above the table, the machine's load, a bare `python -c pass` and
the floor of a command that reads the database: the libraries alone (`FLOORS`).

Usage: .venv/bin/python bench/startup.py [--repeats 10] [--markdown] [--baseline DIR]
--baseline DIR also times the steepy package in DIR (e.g. an earlier commit:
`git archive HEAD steepy | tar -x -C DIR`), alternating with this one, for a before/after
in one run. Nothing here is asserted: it prints (tests/cli/test_import_budget.py checks the
imports).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.25  # seconds, issue 31
# what the commands cannot go below (wall): the interpreter with the libraries they use,
# imported and nothing else. `list', `show', `status' and `logs' read an SQLite file with
# Python's sqlite3 (steepy/registry/quick.py); validate checks the configuration's model
# (pydantic) and the schemas (jsonschema); SQLAlchemy, what every reading command imported
# before, for comparison
FLOORS = {"click + sqlite3": "import click, sqlite3",
          "validate's: click + pydantic + jsonschema + yaml":
              "import click, pydantic.main, jsonschema, yaml",
          "click + sqlalchemy (before)": "import click, sqlalchemy"}
HEAVY = ("sqlalchemy", "pydantic", "fastapi", "starlette", "jsonschema", "jinja2", "rich",
         "httpx", "yaml", "asyncio")

SERVICES = """
- id: say
  name: say
  description: prints its word
  path: echo
  runtime: other
  parameters:
    - {id: word, name: word, description: word, type: input, cardinality: 1..1,
       dataType: string}
"""

WORKFLOW = """api: 4.7.0
vars: [{id: words, value: [a, b, c]}]
actions:
  - type: for
    input: words
    enumerator: w
    actions:
      - {type: execute, service: say, inputs: [{id: word, var: w}]}
"""


def _steepy(*args: str) -> list[str]:
    """The console script next to this Python (what users type), else `python -m`."""
    script = Path(sys.executable).with_name("steepy")
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "steepy.cli", *args]


def _env(work: Path, tree: Path | None = None) -> dict[str, str]:
    """`tree`: the folder whose `steepy` package runs (None: the installed one). Python may
    write its bytecode (.pyc) there, as it does for users: without, every module changed
    since the last written .pyc (or every one of a fresh --baseline tree) is compiled again
    at each run, tens of milliseconds that are not the command's."""
    env = dict(os.environ, STEEPY_TMPPATH=str(work / "tmp"), STEEPY_OUTPATH=str(work / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"), COLUMNS="100")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def prepare(work: Path, tree: Path | None) -> dict[str, str]:
    """Services, a workflow and a database with three finished submissions of three chains
    each (made by the steepy that is timed here); the ids `show`, `status` and `logs` are
    given."""
    (work / "services").mkdir()
    (work / "services" / "say.yaml").write_text(SERVICES)
    (work / "hello.yaml").write_text(WORKFLOW)
    env = _env(work, tree)
    for _ in range(3):
        subprocess.run(_steepy("run", "hello.yaml", "--agents", "1"), cwd=work, env=env,
                       check=True, capture_output=True)
    found = subprocess.run(_steepy("list"), cwd=work, env=env, check=True,
                           capture_output=True, text=True).stdout
    submission = found.splitlines()[1].split("\t")[0]
    shown = subprocess.run(_steepy("show", submission, "--json"), cwd=work, env=env,
                           check=True, capture_output=True, text=True).stdout
    import json

    chain = json.loads(shown)["processChains"][0]["id"]
    return {"submission": submission, "chain": chain}


def commands(ids: dict[str, str]) -> list[tuple[str, list[str]]]:
    return [("--help", ["--help"]),
            ("list --help", ["list", "--help"]),
            ("run --help", ["run", "--help"]),
            ("list", ["list"]),
            ("show SUBMISSION", ["show", ids["submission"]]),
            ("status CHAIN", ["status", ids["chain"]]),
            ("logs CHAIN", ["logs", ids["chain"]]),
            ("events SUBMISSION", ["events", ids["submission"]]),
            ("validate hello.yaml", ["validate", "hello.yaml"])]


def timed(argv: list[str], work: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def python_wall(code: str, repeats: int, work: Path) -> float:
    """The median wall time of `python -c code`."""
    return statistics.median(timed([sys.executable, "-c", code], work, dict(os.environ))[0]
                             for _ in range(repeats))


def heavy_imports(args: list[str], work: Path, env: dict[str, str]) -> list[str]:
    """The heavy libraries a command imports (its `-X importtime` lines)."""
    found = subprocess.run([sys.executable, "-X", "importtime", "-m", "steepy.cli", *args],
                           cwd=work, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True).stderr
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in found.splitlines()
             if line.startswith("import time:")}
    return sorted(names & set(HEAVY))


def measure(trees: dict[str, Path | None], repeats: int, tmp: Path) -> list[tuple]:
    """(command, tree label, median wall, median CPU, heavy imports) for every command and
    tree; the trees' runs alternate, so that both see the same load."""
    works = {label: tmp / (label or "this") for label in trees}
    ids = {}
    for label, tree in trees.items():
        works[label].mkdir()
        ids[label] = prepare(works[label], tree)
    rows = []
    for index, (name, _) in enumerate(commands(ids[next(iter(trees))])):
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
        for label, tree in trees.items():  # once untimed: the modules' .pyc are written
            timed(_steepy(*commands(ids[label])[index][1]), works[label],
                  _env(works[label], tree))
        for _ in range(repeats):
            for label, tree in trees.items():
                args = commands(ids[label])[index][1]
                runs[label].append(timed(_steepy(*args), works[label], _env(works[label], tree)))
        for label, tree in trees.items():
            args = commands(ids[label])[index][1]
            rows.append((name, label, statistics.median(w for w, _ in runs[label]),
                         statistics.median(c for _, c in runs[label]),
                         heavy_imports(args, works[label], _env(works[label], tree))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--markdown", action="store_true", help="A Markdown table.")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="Also time the steepy package in DIR (before/after in one run).")
    options = parser.parse_args()
    trees: dict[str, Path | None] = {"": None}
    if options.baseline is not None:
        trees = {"before": options.baseline.resolve(), "after": None}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="steepy-startup-") as tmp:
        bare = python_wall("pass", options.repeats, Path(tmp))
        floors = {name: python_wall(code, options.repeats, Path(tmp))
                  for name, code in FLOORS.items()}
        rows = measure(trees, options.repeats, Path(tmp))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"median of {options.repeats} runs; load average {load} (at the start "
          f"{load_before[0]:.2f}) on {os.cpu_count()} cores; `python -c pass` {bare:.3f} s; "
          f"target {TARGET} s (wall)")
    print("floor (the libraries alone): " + "; ".join(f"{name} {wall:.3f} s"
                                                      for name, wall in floors.items()))
    line = ("| {} | {} | {} | {} | {} |" if options.markdown
            else "{:<36} {:>7} {:>7} {:>6}  {}")
    print(line.format("command", "wall s", "CPU s", "target", "heavy imports"))
    if options.markdown:
        print("|---|---|---|---|---|")
    for name, label, wall, cpu, heavy in rows:
        verdict = "ok" if wall <= TARGET else "over"
        shown = f"steepy {name}" + (f" ({label})" if label else "")
        print(line.format(shown, f"{wall:.3f}", f"{cpu:.3f}", verdict, ", ".join(heavy) or "-"))


if __name__ == "__main__":
    main()
