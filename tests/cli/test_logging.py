"""`-v`, `--log-level` and `--log-file` of run, worker and serve: what the workers do, one
line per event (claims, ends, retries, a submission's end); without them, today's output."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.cli.logsetup import setup_logging

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (INFO|WARNING|ERROR|DEBUG) steepy\.[a-z.]+: \S")


@pytest.fixture
def reset_logging():
    yield
    setup_logging(0, None, None)  # what a command without the options leaves


def test_a_log_file_gets_one_line_per_event(tmp_path: Path, reset_logging) -> None:
    setup_logging(1, None, str(tmp_path / "steepy.log"))
    logging.getLogger("steepy.engine.scheduler").info("claimed chain %s", "c1")
    logging.getLogger("steepy.engine.scheduler").debug("not at INFO")
    logging.getLogger("httpx").warning("not steepy's")
    [line] = (tmp_path / "steepy.log").read_text().splitlines()
    assert LINE.match(line) and line.endswith(" INFO steepy.engine.scheduler: claimed chain c1")


def test_levels_and_the_default(reset_logging) -> None:
    steepy = logging.getLogger("steepy")
    setup_logging(2, None, None)
    assert steepy.isEnabledFor(logging.DEBUG)
    setup_logging(0, "error", None)
    assert not steepy.isEnabledFor(logging.WARNING) and steepy.isEnabledFor(logging.ERROR)
    setup_logging(0, None, None)  # no option: nothing of ours is left, WARNING as before
    assert not [h for h in steepy.handlers if getattr(h, "steepy_cli", False)]
    assert steepy.getEffectiveLevel() == logging.getLogger().getEffectiveLevel()


@pytest.mark.parametrize("command", ["run", "worker", "serve"])
def test_the_options_are_on_the_commands_that_run_work(command: str) -> None:
    shown = CliRunner().invoke(main, [command, "--help"]).stdout
    assert "-v, --verbose" in shown and "--log-level" in shown and "--log-file PATH" in shown


def test_a_log_file_that_cannot_be_written_is_bad_input(tmp_path: Path, reset_logging) -> None:
    where = tmp_path / "no" / "such" / "worker.log"
    result = CliRunner().invoke(main, ["worker", "--log-file", str(where)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"--log-file: cannot write the log to {where}: ")
    assert "Traceback" not in result.output


SERVICES = """\
- id: fail
  name: fail
  description: exits with 3
  path: sh
  runtime: other
  parameters:
    - {id: c, name: c, description: c, type: input, cardinality: 1..1, dataType: string,
       default: "-c"}
    - {id: s, name: s, description: s, type: input, cardinality: 1..1, dataType: string,
       default: "exit 3"}
"""
WORKFLOW = """\
api: 4.7.0
name: fails
retries:
  processChains: {maxAttempts: 2, delay: 10ms}
actions:
  - type: execute
    service: fail
    retries: {maxAttempts: 2, delay: 10ms}
"""


@pytest.mark.process
def test_run_says_what_the_workers_do_at_info_and_nothing_more_by_default(tmp_path: Path) -> None:
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEEPY_")}

    def run(*options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "steepy.cli", "run", "w.yaml", "--services",
                               "services.yaml", *options], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)

    plain = run()
    assert plain.returncode == 1 and " INFO " not in plain.stderr
    verbose = run("-v", "--log-file", "run.log")
    assert verbose.returncode == 1 and " INFO " not in verbose.stderr
    lines = (tmp_path / "run.log").read_text().splitlines()
    assert all(LINE.match(line) for line in lines), lines
    said = [line.split(": ", 1)[1] for line in lines]
    expected = [r"claimed chain (\w+) \(submission (\w+)\) on agent [\w-]+, run 1",
                r"chain \w+: attempt 1 of fail failed with exit code 3; attempt 2 in 0\.0s "
                r"\(.+\)",
                r"chain \w+ ended ERROR after \d+\.\ds, run 1",
                r"chain \w+ retried in 0\.0s: attempt 2 of 2",
                r"claimed chain \w+ \(submission \w+\) on agent [\w-]+, run 2",
                r"chain \w+: attempt 1 of fail failed with exit code 3; attempt 2 in 0\.0s",
                r"chain \w+ ended ERROR after \d+\.\ds, run 2",
                r"chain \w+ is not retried: no attempts left",
                r"submission \w+ finished: ERROR \(.+\)"]
    assert len(said) == len(expected), said
    for line, pattern in zip(said, expected):
        assert re.match(pattern, line), (line, pattern)
