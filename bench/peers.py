"""Peer workflow systems on the same N independent tiny jobs (`touch <dir>/<i>`), each
against `xargs -P <cores>` doing the same touches in the same run:

- xargs:         `seq N | xargs -P <cores> -I{} touch dir/{}` (the baseline)
- snakemake:     one wildcard rule `out/{i}` via `touch {output}`, N jobs requested by rule
                 `all`, `snakemake --cores <cores> --quiet all` (default scheduler); the whole
                 command is timed
- parsl-threads: N `bash_app`s on `ThreadPoolExecutor(max_threads=<cores>)`
- parsl-htex:    N `bash_app`s on `HighThroughputExecutor` with <cores> workers from a
                 `LocalProvider`, bound to 127.0.0.1
- prefect:       `python flow.py N out <cores>` (PREFECT_FLOW below): a `@flow` with
                 `ThreadPoolTaskRunner(max_workers=<cores>)` that `.map`s a `@task` running
                 `subprocess.run(["touch", path])` over the N paths and waits for all results.
                 Prefect's default local mode: no API URL, so the flow call starts a temporary
                 Prefect server (a subprocess) whose state is a SQLite database. PREFECT_HOME is
                 a fresh directory inside the run's temporary directory (database, profiles and
                 storage land there, nothing in ~/.prefect); other PREFECT_* variables are
                 dropped (no Prefect Cloud). Set: PREFECT_SERVER_EPHEMERAL_ENABLED=true (what
                 Prefect's default profile sets; a PREFECT_HOME without profiles.toml does not
                 have it), PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=120 (default 20, too
                 short on a loaded 2-core machine), DO_NOT_TRACK=1,
                 PREFECT_SERVER_ANALYTICS_ENABLED=false,
                 PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY=false,
                 PREFECT_TELEMETRY_ENABLE_RESOURCE_METRICS=false. Task runs reach the database
                 through the server's event recorder, after the task: "recorded" counts the
                 COMPLETED task runs in prefect.db once the command has exited.
For Parsl and Prefect both the wall time of a fresh python process and the in-process time
(Parsl: config load, submission of all apps, all results in; Prefect: the flow call, the
temporary server's start included) are given.

Each system runs `repeats` times alternating with xargs; the median is reported (min and max
beside it), and its ratio to the median of the xargs runs interleaved with it.

The peers are installed by this script, once, into their own venv (STEEPY_PEERS_VENV, default
~/.cache/steepy-peers-venv), never into the project's. A peer that fails to install or to run
gets one line saying why.

Usage: .venv/bin/python bench/peers.py [N]   (default: 1000)
`peer_figures(n)` returns the same figures for bench/throughput.py.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Callable

CORES = os.cpu_count() or 1
VENV = Path(os.environ.get("STEEPY_PEERS_VENV", "~/.cache/steepy-peers-venv")).expanduser()
PEERS = {"snakemake": "snakemake", "parsl": "parsl", "prefect": "prefect"}  # module -> pip

SNAKEFILE = """\
rule all:
    input: expand("out/{{i}}", i=range({n}))

rule touch:
    output: "out/{{i}}"
    shell: "touch {{output}}"
"""

PARSL_DRIVER = """\
import json, sys, time
import parsl
from parsl import bash_app
from parsl.config import Config

kind, n, out, run_dir, cores = sys.argv[1:]
n, cores = int(n), int(cores)
if kind == "threads":
    from parsl.executors import ThreadPoolExecutor
    executor = ThreadPoolExecutor(label="threads", max_threads=cores)
else:
    from parsl.executors import HighThroughputExecutor
    from parsl.providers import LocalProvider
    executor = HighThroughputExecutor(
        label="htex", address="127.0.0.1", loopback_address="127.0.0.1",
        max_workers_per_node=cores, cores_per_worker=1,
        provider=LocalProvider(init_blocks=1, min_blocks=1, max_blocks=1))
config = Config(executors=[executor], run_dir=run_dir, usage_tracking=0)


@bash_app
def touch(path):
    return f"touch {path}"


start = time.perf_counter()
dfk = parsl.load(config)
futures = [touch(f"{out}/{i}") for i in range(n)]
for future in futures:
    future.result()
elapsed = time.perf_counter() - start
dfk.cleanup()
print(json.dumps({"in_process": elapsed}))
"""

PREFECT_FLOW = """\
import json, subprocess, sys, time

from prefect import flow, task
from prefect.task_runners import ThreadPoolTaskRunner

n, out, cores = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])


@task
def touch(path):
    subprocess.run(["touch", path], check=True)


@flow(task_runner=ThreadPoolTaskRunner(max_workers=cores))
def touch_all(paths):
    touch.map(paths).result()


if __name__ == "__main__":
    start = time.perf_counter()
    touch_all([f"{out}/{i}" for i in range(n)])
    print(json.dumps({"in_process": time.perf_counter() - start}))
"""

PREFECT_SETTINGS = {
    "PREFECT_SERVER_EPHEMERAL_ENABLED": "true",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
    "PREFECT_TELEMETRY_ENABLE_RESOURCE_METRICS": "false",
}


class PeerError(Exception):
    """An expected failure of a peer (install or run): reported on one line, no traceback."""


def _peer_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a peer: the peers' venv first on PATH, no other venv, no PREFECT_*
    setting of the user's (no Prefect Cloud, no API URL), then `extra`."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
           and not key.startswith("PREFECT_")}
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **(extra or {})}


def _run(cmd: list[str], timeout: float, extra_env: dict[str, str] | None = None,
         **kwargs) -> subprocess.CompletedProcess:
    """Run `cmd` in _peer_env(extra_env), in its own session so that a timeout also ends
    what it started (Parsl's interchange and worker pool, Prefect's temporary server)."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=_peer_env(extra_env), start_new_session=True, **kwargs)
    except OSError as error:
        raise PeerError(str(error)) from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise PeerError(f"{Path(cmd[0]).name} timed out after {timeout:.0f} s") from None
    result = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if result.returncode != 0:
        tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-3:]
        raise PeerError(f"{Path(cmd[0]).name} exited {result.returncode}: {' | '.join(tail)}")
    return result


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def ensure_peers(log: Callable[[str], None] = _stderr) -> dict[str, str]:
    """Create the peers' venv and pip-install each peer that is not importable there yet.
    Returns module -> version, or -> "error: why" for a peer that could not be installed."""
    python = VENV / "bin" / "python"
    versions: dict[str, str] = {}
    try:
        if not python.exists():
            log(f"creating venv {VENV}")
            _run(["python3", "-m", "venv", str(VENV)], timeout=300)
    except PeerError as error:
        return {module: f"error: venv: {error}" for module in PEERS}
    for module, requirement in PEERS.items():
        try:
            if subprocess.run([str(python), "-c", f"import {module}"], env=_peer_env(),
                              capture_output=True).returncode != 0:
                log(f"installing {requirement} into {VENV} ...")
                start = time.perf_counter()
                _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                      requirement], timeout=1800)
                log(f"installed {requirement} in {time.perf_counter() - start:.0f} s")
            query = f"import importlib.metadata as m; print(m.version({requirement!r}))"
            versions[module] = _run([str(python), "-c", query], timeout=60).stdout.strip()
        except PeerError as error:
            versions[module] = f"error: install: {error}"
    return versions


def _check_outputs(target: Path, n: int) -> None:
    made = sum(1 for _ in target.iterdir()) if target.is_dir() else 0
    if made != n:
        raise PeerError(f"{made} of {n} files made")


def xargs(n: int) -> float:
    with tempfile.TemporaryDirectory(prefix="peers-xargs-") as tmp:
        target = Path(tmp) / "out"
        target.mkdir()
        start = time.perf_counter()
        subprocess.run(f"seq 0 {n - 1} | xargs -P {CORES} -I{{}} touch {target}/{{}}", shell=True,
                       check=True)
        elapsed = time.perf_counter() - start
        _check_outputs(target, n)
        return elapsed


def snakemake(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="peers-snakemake-") as tmp:
        work = Path(tmp)
        (work / "Snakefile").write_text(SNAKEFILE.format(n=n))
        start = time.perf_counter()
        _run([str(VENV / "bin" / "snakemake"), "--cores", str(CORES), "--quiet", "all"], cwd=work,
             timeout=max(300, n))
        elapsed = time.perf_counter() - start
        _check_outputs(work / "out", n)
        return {"seconds": elapsed}


def parsl(kind: str) -> Callable[[int], dict[str, float]]:
    def measure(n: int) -> dict[str, float]:
        with tempfile.TemporaryDirectory(prefix=f"peers-parsl-{kind}-") as tmp:
            work = Path(tmp)
            (work / "driver.py").write_text(PARSL_DRIVER)
            (work / "out").mkdir()
            start = time.perf_counter()
            result = _run([str(VENV / "bin" / "python"), str(work / "driver.py"), kind, str(n),
                           str(work / "out"), str(work / "runinfo"), str(CORES)], cwd=work,
                          timeout=max(300, n))
            elapsed = time.perf_counter() - start
            _check_outputs(work / "out", n)
            return {"seconds": elapsed, "in_process": _in_process(result)}
    return measure


def _in_process(result: subprocess.CompletedProcess) -> float:
    """The in-process seconds a driver prints as its last line of output."""
    try:
        return float(json.loads(result.stdout.strip().splitlines()[-1])["in_process"])
    except (ValueError, IndexError, KeyError, TypeError):
        raise PeerError(f"driver printed no timing: {result.stdout[-200:]!r}") from None


def prefect(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="peers-prefect-") as tmp:
        work = Path(tmp)
        (work / "flow.py").write_text(PREFECT_FLOW)
        (work / "out").mkdir()
        home = work / "prefect-home"
        start = time.perf_counter()
        result = _run([str(VENV / "bin" / "python"), str(work / "flow.py"), str(n),
                       str(work / "out"), str(CORES)], cwd=work, timeout=max(300, n),
                      extra_env={**PREFECT_SETTINGS, "PREFECT_HOME": str(home)})
        elapsed = time.perf_counter() - start
        _check_outputs(work / "out", n)
        figures = {"seconds": elapsed, "in_process": _in_process(result)}
        recorded = _recorded_task_runs(home / "prefect.db")
        if recorded is not None:
            figures["recorded"] = recorded
        return figures


def _recorded_task_runs(database: Path) -> int | None:
    """COMPLETED task runs in Prefect's SQLite database, or None if it cannot be read."""
    try:
        with closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as connection:
            row = connection.execute(
                "SELECT count(*) FROM task_run WHERE state_type = 'COMPLETED'").fetchone()
    except sqlite3.Error:
        return None
    return int(row[0])


def _spread(values: list[float], n: int, prefix: str = "") -> dict[str, float]:
    median = statistics.median(values)
    return {f"{prefix}seconds": median, f"{prefix}min": min(values), f"{prefix}max": max(values),
            f"{prefix}ms_per_job": median / n * 1000}


def _entry(label: str, version: str, runs: list[dict[str, float]], bare: list[float],
           n: int) -> dict:
    """One peer's figures from its runs and the xargs runs interleaved with them."""
    entry = {"label": label, "version": version, **_spread([r["seconds"] for r in runs], n)}
    entry["ratio"] = entry["seconds"] / statistics.median(bare)
    if "in_process" in runs[0]:
        entry.update(_spread([r["in_process"] for r in runs], n, "in_process_"))
    if any("recorded" in r for r in runs):
        entry["recorded"] = [int(r["recorded"]) for r in runs if "recorded" in r]
    return entry


def peer_figures(n: int, repeats: int = 3) -> dict[str, dict]:
    """Measure every peer on `n` touches, `repeats` times each alternating with xargs.

    Returns name -> {"label", "seconds" (median), "min", "max", "ms_per_job", "ratio" (to the
    median of the xargs runs interleaved with it), "version"}, plus "in_process_seconds",
    "in_process_min", "in_process_max", "in_process_ms_per_job" for Parsl and Prefect, and
    "recorded" (completed task runs in its database after each run, a list) for Prefect; or ->
    {"label", "error"} (and "version" once installed) for a peer that failed. Name "xargs" is
    the baseline over all its runs. Installs the peers first where needed (see ensure_peers)."""
    versions = ensure_peers()
    systems = [("snakemake", "snakemake", "", snakemake),
               ("parsl-threads", "parsl", " threads", parsl("threads")),
               ("parsl-htex", "parsl", " htex", parsl("htex")),
               ("prefect", "prefect", " threads", prefect)]
    figures: dict[str, dict] = {}
    all_bare: list[float] = []
    for name, module, kind, measure in systems:
        if versions[module].startswith("error: "):
            figures[name] = {"label": module + kind, "error": versions[module][len("error: "):]}
            continue
        label = f"{module} {versions[module]}{kind}"
        bare: list[float] = []
        runs: list[dict[str, float]] = []
        try:
            for _ in range(repeats):
                bare.append(xargs(n))
                runs.append(measure(n))
        except PeerError as error:
            figures[name] = {"label": label, "version": versions[module], "error": f"run: {error}"}
            continue
        finally:
            all_bare.extend(bare)
        figures[name] = _entry(label, versions[module], runs, bare, n)
    if not all_bare:
        all_bare = [xargs(n) for _ in range(repeats)]
    baseline = {"label": f"xargs -P {CORES}", "version": "", **_spread(all_bare, n), "ratio": 1.0}
    return {"xargs": baseline, **figures}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=1000, help="jobs (default: 1000)")
    n = parser.parse_args().n
    print(f"N={n} touches, cores: {CORES}, peers venv: {VENV}")
    figures = peer_figures(n)
    versions = {name.split("-")[0]: entry["version"] for name, entry in figures.items()
                if entry.get("version")}
    listed = ", ".join(f"{peer} {version}" for peer, version in versions.items())
    print(f"versions: {listed or 'none'}")
    for entry in figures.values():
        if "error" in entry:
            print(f"{entry['label']:<26} failed: {entry['error']}")
            continue
        line = (f"{entry['label']:<26} {entry['seconds']:7.2f} s (min {entry['min']:6.2f}, "
                f"max {entry['max']:6.2f}) {entry['ms_per_job']:7.2f} ms/job, "
                f"ratio {entry['ratio']:6.1f}")
        if "in_process_seconds" in entry:
            line += (f"; in-process {entry['in_process_seconds']:.2f} s (min "
                     f"{entry['in_process_min']:.2f}, max {entry['in_process_max']:.2f}) "
                     f"{entry['in_process_ms_per_job']:.2f} ms/job")
        if "recorded" in entry:
            counts = ", ".join(str(count) for count in entry["recorded"])
            line += f"; task runs COMPLETED in its database at exit: {counts} of {n}"
        print(line)


if __name__ == "__main__":
    main()
