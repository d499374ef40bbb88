"""What the screenshot scripts share: Debian's Chromium (`.ci/chromium start`), a `steepy
serve` in a temporary directory with this repository's services and workflows linked in, the
API through urllib, and waiting for a condition."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]


def chromium_executable() -> str:
    out = subprocess.run([str(ROOT / ".ci" / "chromium"), "start"], check=True,
                         capture_output=True, text=True).stdout
    match = re.search(r"executable=(\S+)", out)
    if not match:
        sys.exit(f"no executable in .ci/chromium's answer: {out!r}")
    return match.group(1)


def start_server(workdir: Path, config: dict | None = None,
                 args: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """`steepy serve --port 0 --agents 2` in `workdir` (steepy.yaml from `config`); the
    process and its address. Exits the script with the server's output if it does not
    start within a minute."""
    (workdir / "services").symlink_to(ROOT / "services")
    (workdir / "workflows").symlink_to(ROOT / "workflows")
    (workdir / "steepy.yaml").write_text(json.dumps(config or {}) + "\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    log = open(workdir / "serve.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "steepy.cli", "serve", "--port", "0", "--agents", "2",
         "--services", "services", *args],
        cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = re.search(r"serving on (http://\S+)", (workdir / "serve.log").read_text())
        if match:
            return proc, match.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.terminate()
    sys.exit(f"steepy serve did not start:\n{(workdir / 'serve.log').read_text()}")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def api(base: str, path: str, method: str = "GET", body: bytes | None = None) -> Any:
    request = urllib.request.Request(base + path, data=body, method=method,
                                     headers={"accept": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
    return json.loads(text) if text else None


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}")


def chains_of(base: str, submission_id: str) -> list[dict]:
    return api(base, f"/processchains?submissionId={submission_id}&size=100")
