"""Peer workflow systems on the same N independent tiny jobs (`touch <dir>/<i>`), each
against `xargs -P <cores>` doing the same touches in the same run:

- xargs:         `seq N | xargs -P <cores> -I{} touch dir/{}` (the baseline)
- snakemake:     one wildcard rule `out/{i}` via `touch {output}`, N jobs requested by rule
                 `all`, `snakemake --cores <cores> --quiet all` (default scheduler); the whole
                 command is timed
- parsl-threads: N `bash_app`s on `ThreadPoolExecutor(max_threads=<cores>)`
- parsl-htex:    N `bash_app`s on `HighThroughputExecutor` with <cores> workers from a
                 `LocalProvider`, bound to 127.0.0.1
For Parsl both the wall time of a fresh python process and the in-process time (config load,
submission of all apps, all results in) are given.

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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

CORES = os.cpu_count() or 1
VENV = Path(os.environ.get("STEEPY_PEERS_VENV", "~/.cache/steepy-peers-venv")).expanduser()
PEERS = {"snakemake": "snakemake", "parsl": "parsl"}  # module -> pip requirement

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


class PeerError(Exception):
    """An expected failure of a peer (install or run): reported on one line, no traceback."""


def _peer_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """Run `cmd` with the peers' venv first on PATH, in its own session so that a timeout
    also ends what it started (Parsl's interchange and worker pool)."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=_peer_env(), start_new_session=True, **kwargs)
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
            try:
                in_process = json.loads(result.stdout.strip().splitlines()[-1])["in_process"]
            except (ValueError, IndexError, KeyError):
                raise PeerError(f"driver printed no timing: {result.stdout[-200:]!r}") from None
            return {"seconds": elapsed, "in_process": in_process}
    return measure


def _spread(values: list[float], n: int, prefix: str = "") -> dict[str, float]:
    median = statistics.median(values)
    return {f"{prefix}seconds": median, f"{prefix}min": min(values), f"{prefix}max": max(values),
            f"{prefix}ms_per_job": median / n * 1000}


def peer_figures(n: int, repeats: int = 3) -> dict[str, dict]:
    """Measure every peer on `n` touches, `repeats` times each alternating with xargs.

    Returns name -> {"label", "seconds" (median), "min", "max", "ms_per_job", "ratio" (to the
    median of the xargs runs interleaved with it), "version"}, plus "in_process_seconds",
    "in_process_min", "in_process_max", "in_process_ms_per_job" for Parsl; or -> {"label",
    "error"} (and "version" once installed) for a peer that failed. Name "xargs" is the
    baseline over all its runs. Installs the peers first where needed (see ensure_peers)."""
    versions = ensure_peers()
    systems = [("snakemake", "snakemake", "", snakemake),
               ("parsl-threads", "parsl", " threads", parsl("threads")),
               ("parsl-htex", "parsl", " htex", parsl("htex"))]
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
        entry = {"label": label, "version": versions[module],
                 **_spread([r["seconds"] for r in runs], n)}
        entry["ratio"] = entry["seconds"] / statistics.median(bare)
        if "in_process" in runs[0]:
            entry.update(_spread([r["in_process"] for r in runs], n, "in_process_"))
        figures[name] = entry
    if not all_bare:
        all_bare = [xargs(n) for _ in range(repeats)]
    baseline = {"label": f"xargs -P {CORES}", "version": "", **_spread(all_bare, n), "ratio": 1.0}
    return {"xargs": baseline, **figures}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
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
        print(line)


if __name__ == "__main__":
    main()
