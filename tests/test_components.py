"""The real components of `.ci/` work as the tests of later features will use them: a job
through the single-node SLURM, a container through dockerd, a local page in Chromium driven
by Playwright. Each is skipped with one line where its component cannot be had (a failure
under CI=true); see tests/components.py and docs/dev/components.md."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.components import component, environment, unavailable

# The first start of a component may install Debian packages (Chromium: 30 s to 2 min,
# longer while another apt holds the lock); a warm start takes 0.1-2 s.
pytestmark = [pytest.mark.timeout(900), pytest.mark.process]

FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}


def _job_fields(job: str, env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(["scontrol", "show", "job", "-o", job], env=env, capture_output=True,
                         text=True, timeout=30, check=True).stdout
    return dict(f.split("=", 1) for f in out.split() if "=" in f)


@pytest.mark.slurm
def test_slurm_runs_a_batch_job_and_srun(tmp_path: Path) -> None:
    info = component("slurm")
    env = {**os.environ, **environment(info)}
    out = tmp_path / "job.out"
    job = subprocess.run(
        ["sbatch", "--parsable", "-p", info["partition"], "-J", "steepy-component-test",
         "-o", str(out), "--wrap", "echo hi from $SLURM_JOB_ID; exit 3"],
        env=env, capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    assert job.isdigit()
    deadline = time.monotonic() + 60
    while (fields := _job_fields(job, env))["JobState"] not in FINAL:
        assert time.monotonic() < deadline, f"job {job} still {fields['JobState']}"
        time.sleep(0.05)
    assert (fields["JobState"], fields["ExitCode"]) == ("FAILED", "3:0")
    assert out.read_text() == f"hi from {job}\n"
    # srun streams the task's output and passes its exit code through.
    run = subprocess.run(["srun", "--quiet", "-p", info["partition"], "sh", "-c", "echo srun-ok; exit 4"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert (run.stdout, run.returncode) == ("srun-ok\n", 4)
    # scancel ends a running job and its processes; squeue -t all still lists it.
    mark = f"{os.getpid()}.{time.monotonic_ns() % 10**6}"
    started = tmp_path / "started"
    job = subprocess.run(
        ["sbatch", "--parsable", "-p", info["partition"], "-o", "/dev/null",
         "--wrap", f"touch {started}; sleep 300 {mark}"],
        env=env, capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline, f"job {job} did not start"
        time.sleep(0.05)
    subprocess.run(["scancel", job], env=env, timeout=30, check=True)
    while (state := subprocess.run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], env=env,
                                   capture_output=True, text=True, timeout=30).stdout.strip()) != "CANCELLED":
        assert time.monotonic() < deadline, f"job {job} still {state}"
        time.sleep(0.05)
    while _running(mark):
        assert time.monotonic() < deadline, f"the sleep of job {job} outlived scancel"
        time.sleep(0.05)


def _running(mark: str) -> bool:
    """Whether a process with `mark` among its arguments runs (zombies do not count)."""
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if mark.encode() in args:
            return True
    return False


@pytest.mark.docker
def test_docker_runs_a_local_image_without_network() -> None:
    info = component("docker")
    env = {**os.environ, **environment(info)}
    name = f"steepy-component-test-{os.getpid()}-{time.monotonic_ns()}"
    run = subprocess.run(
        [info["docker"], "run", "--rm", "--name", name, "--network", "none", info["image"],
         "sh", "-c", "echo hi from busybox; exit 5"],
        env=env, capture_output=True, text=True, timeout=60)
    assert (run.stdout, run.returncode) == ("hi from busybox\n", 5), run.stderr
    left = subprocess.run([info["docker"], "ps", "-aq", "--filter", f"name={name}"], env=env,
                          capture_output=True, text=True, timeout=30, check=True).stdout
    assert left == ""  # --rm removed it


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.browser
def test_chromium_shows_a_local_page_through_playwright(tmp_path: Path) -> None:
    info = component("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        unavailable(f"Playwright not available: {e} (pip install -e '.[test]')")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<!doctype html><title>steepy check</title><h1 id=greeting>Hello from steepy</h1>")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=info["executable"], headless=True)
            try:
                page = browser.new_page(viewport={"width": 640, "height": 360})
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
                assert page.title() == "steepy check"
                assert page.text_content("#greeting") == "Hello from steepy"
                shot = page.screenshot(path=str(tmp_path / "page.png"))
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    assert shot.startswith(b"\x89PNG") and len(shot) > 1000


def _ephemeral() -> range:
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    return range(low, high + 1)


def _ports(spec: str) -> range:
    first, _, last = spec.partition("-")
    return range(int(first), int(last or first) + 1)


@pytest.mark.slurm
def test_the_components_listen_below_the_ephemeral_range(postgres_server: str) -> None:
    """A client's TIME_WAIT on a port blocks a listener's bind() there for 60 s, and the suite
    makes thousands of loopback connections: slurmd on 56818 failed to start in CI."""
    from sqlalchemy.engine import make_url

    ephemeral = _ephemeral()
    conf = dict(line.split("=", 1) for line in
                (Path(component("slurm")["dir"]) / "slurm.conf").read_text().splitlines()
                if "=" in line and not line.startswith(("#", "NodeName", "PartitionName")))
    ports = {"postgres": _ports(str(make_url(postgres_server).port))}
    ports |= {key: _ports(conf[key]) for key in ("SlurmctldPort", "SlurmdPort", "SrunPortRange")}
    inside = {name: f"{r[0]}-{r[-1]}" for name, r in ports.items()
              if r[0] <= ephemeral[-1] and r[-1] >= ephemeral[0]}
    assert inside == {}, f"ephemeral range {ephemeral[0]}-{ephemeral[-1]}"


@pytest.mark.parametrize("spec", ["{low}", "{high}", "{below}-{low}", "{high}-{above}"])
def test_a_fixed_port_in_the_ephemeral_range_is_refused_with_its_reason(spec: str) -> None:
    ephemeral = _ephemeral()
    values = {"low": ephemeral[0], "high": ephemeral[-1],
              "below": ephemeral[0] - 10, "above": ephemeral[-1] + 10}
    first, _, last = spec.format(**values).partition("-")
    script = f'die() {{ echo "$*"; exit 1; }}; . .ci/ports.sh; fixed_port slurmd {first} {last}; echo fine'
    out = subprocess.run(["bash", "-c", script], cwd=Path(__file__).parent.parent,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1
    assert "slurmd port" in out.stdout and "ephemeral range" in out.stdout
    free = subprocess.run(["bash", "-c", script.replace(f"{first} {last}", f"{ephemeral[0] - 1000}")],
                          cwd=Path(__file__).parent.parent, capture_output=True, text=True, timeout=30)
    assert (free.returncode, free.stdout) == (0, "fine\n")


# How tests/components.py treats a component: with small real scripts in place of .ci/.

FAKE = """#!/bin/sh
here=$(dirname "$0")
case "$1" in
start) echo "installing ..." >&2; [ -n "$FAIL" ] && { echo "$FAIL" >&2; exit 1; }
       echo "FAKE_HOME=/srv/fake"; echo "port=5"; echo "a line that is no pair" ;;
status) [ -f "$here/up" ] ;;
stop) echo stopped >> "$here/stops" ;;
esac
"""


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from tests import components

    ci = tmp_path / "ci"
    ci.mkdir()
    (ci / "fake").write_text(FAKE)
    (ci / "fake").chmod(0o755)
    monkeypatch.setattr(components, "CI_DIR", ci)
    monkeypatch.setattr(components, "STATE_DIR", tmp_path / "state")
    monkeypatch.setattr(components, "_started", {})
    monkeypatch.setattr(components, "_failed", {})
    monkeypatch.delenv("FAIL", raising=False)
    monkeypatch.delenv("CI", raising=False)
    return ci


def test_a_component_started_by_tests_is_stopped_by_the_last_session(fake: Path) -> None:
    from tests.components import stop_started

    info = component("fake")
    assert info == {"FAKE_HOME": "/srv/fake", "port": "5"}
    assert environment(info) == {"FAKE_HOME": "/srv/fake"}
    assert component("fake") is info  # started once per process
    stop_started()
    assert (fake / "stops").read_text() == "stopped\n"


def test_a_component_another_session_uses_is_left_running(fake: Path, tmp_path: Path) -> None:
    from tests.components import stop_started

    component("fake")
    other = tmp_path / "state" / "fake.users" / str(os.getppid())  # a live process
    other.touch()
    stop_started()
    assert not (fake / "stops").exists()
    other.unlink()
    (tmp_path / "state" / "fake.users" / "999999999").touch()  # a session that died
    component("fake")
    stop_started()  # the last one to leave stops it
    assert (fake / "stops").read_text() == "stopped\n"


def test_a_component_a_person_started_is_left_running(fake: Path) -> None:
    from tests.components import stop_started

    (fake / "up").touch()  # running before any test session
    component("fake")
    stop_started()
    assert not (fake / "stops").exists()


def test_a_missing_component_skips_with_one_line_and_fails_under_ci(
        fake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIL", "Fake not available: not root, and installing needs root")
    with pytest.raises(pytest.skip.Exception, match=r"^Fake not available: not root, and"):
        component("fake")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"needs root \(CI=true, so this is a failure\)$"):
        component("fake")  # the failure is remembered: the script is not run again


def test_an_unexpected_error_is_named_after_its_script(fake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIL", "line 3: syntax error")
    with pytest.raises(pytest.skip.Exception) as e:
        component("fake")
    assert str(e.value.msg) == "fake not available: .ci/fake start: line 3: syntax error"
