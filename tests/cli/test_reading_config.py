"""The commands that only read the database check `db` and `logs` of the configuration alone
(steepy.cli.setup.ReadingSetup, issue 31): a problem there stops them with its place and exit
code 2, a problem elsewhere is left to the commands that use that key."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.registry import open_registry


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    """An empty database where steepy expects it, as the working directory."""
    monkeypatch.chdir(tmp_path)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL", "STEEPY_LOGS_PROCESSCHAINS_GROUPBYPREFIX"):
        monkeypatch.delenv(key, raising=False)
    open_registry(f"sqlite:///{tmp_path / '.steepy' / 'steepy.db'}").close()
    return tmp_path


@pytest.mark.parametrize("args", [["list"], ["show", "x"], ["logs", "x"], ["events", "x"],
                                  ["wait", "x"]], ids=" ".join)
def test_a_problem_in_another_group_does_not_stop_a_reading_command(here, args) -> None:
    (here / "steepy.yaml").write_text("agent:\n  instances: 0\nhttp.port: many\n")
    result = CliRunner().invoke(main, args)
    assert "steepy.yaml" not in result.output, result.output
    assert result.exit_code == (0 if args == ["list"] else 2)  # (2: no such id)


@pytest.mark.parametrize("args", [["list"], ["show", "x"], ["logs", "x"]], ids=" ".join)
def test_a_problem_in_logs_stops_a_reading_command_with_its_place(here, args) -> None:
    (here / "steepy.yaml").write_text("logs:\n  processChains:\n    groupByPrefix: -1\n")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("steepy.yaml:3:20: logs.processChains.groupByPrefix: "
                                    "must be at least 0, got -1"), result.output


def test_the_same_problem_elsewhere_stops_submit(here) -> None:
    (here / "steepy.yaml").write_text("agent:\n  instances: 0\n")
    result = CliRunner().invoke(main, ["submit", "w.yaml"])
    assert result.exit_code == 2 and "steepy.yaml:2:14: agent.instances: " in result.output
