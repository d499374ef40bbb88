"""The configuration (steepy.yaml, Steep's steep.yaml, STEEPY_*/STEEP_* variables) is checked
like workflows are: every bad value is a located problem, ignored keys are located warnings,
and no command stores or starts anything with a bad configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.cli.common import engine_settings
from steepy.config import DEFAULTS, load_config
from steepy.errors import InputError
from steepy.plugins.pluginset import load_plugins
from steepy.runtimes.docker import DockerSettings
from tests.conftest import ROOT

WORKFLOW = str(ROOT / "workflows" / "linear.yaml")
FILES = ["--services", str(ROOT / "services"), "--macros", str(ROOT / "workflows" / "macros")]


def _load(directory: Path, environ: dict | None = None):
    """load_config() of `directory` with these variables set."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (environ or {}).items():
            patch.setenv(name, value)
        return load_config(directory)


def _problems(directory: Path, text: str | None = None, environ: dict | None = None) -> list:
    if text is not None:
        (directory / "steepy.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        _load(directory, environ)
    return caught.value.problems


def _where(problem) -> tuple:
    return Path(problem.file).name, problem.line, problem.column, problem.path


# ---------------------------------------------------------------- problems, located


@pytest.mark.parametrize("text, where, words", [
    ("agent:\n  instances: many\n", (2, 14, "agent.instances"), "whole number"),
    ("scheduler.lookupInterval: 2\n", (1, 27, "scheduler.lookupInterval"), "needs a unit"),
    ("steep:\n  controller:\n    leaseTimeout: soon\n", (3, 19, "controller.leaseTimeout"),
     "not a duration"),
    ("steep.agent.killGracePeriod: -1s\n", (1, 30, "agent.killGracePeriod"), "not a duration"),
    ("agent:\n  instances: 0\n", (2, 14, "agent.instances"), "at least 1"),
    ("agent:\n  instances: true\n", (2, 14, "agent.instances"), "boolean"),
    ("agent:\n  capabilities: [gpu, [x]]\n", (2, 23, "agent.capabilities[1]"), "string"),
    ("http:\n  port: 70000\n", (2, 9, "http.port"), "at most 65535"),
    ("http.postMaxSize: 10 XB\n", (1, 19, "http.postMaxSize"), "not a size"),
    ("tmpPath: ''\n", (1, 10, "tmpPath"), "empty"),
    ("services: {a: b}\n", (1, 11, "services"), "file, folder or glob"),
    ("agent: 5\n", (1, 8, "agent"), "expected an object"),
    ("controller:\n  heartbeatInterval: 20s\n  leaseTimeout: 5s\n",
     (3, 17, "controller.leaseTimeout"), "longer than controller.heartbeatInterval"),
    # the default leaseTimeout (10s) is too short for this heartbeat: shown where that is set
    ("controller.heartbeatInterval: 1m\n", (1, 31, "controller.leaseTimeout"), "longer than"),
    ("agent.instances: 2\nsteep:\n  agent:\n    instances: 3\n", (4, 16, "agent.instances"),
     "second time (first at"),
])
def test_a_bad_value_is_a_problem_at_its_place(tmp_path, text, where, words) -> None:
    problems = _problems(tmp_path, text)
    assert len(problems) == 1, problems
    assert _where(problems[0]) == ("steepy.yaml", *where)
    assert words in problems[0].message


@pytest.mark.parametrize("text, where, words", [
    ("runtimes:\n  docker:\n    pull: sometimes\n", (3, 11, "runtimes.docker.pull"),
     "auto, always, missing or never"),
    ("runtimes.docker.volumes: {a: b}\n", (1, 26, "runtimes.docker.volumes"), "list"),
    ("runtimes:\n  slurm:\n    timeLimit: 2\n", (3, 16, "runtimes.slurm.timeLimit"),
     "needs a unit"),
    ("runtimes:\n  slurm:\n    capabilities:\n      gpu: [--gres=gpu:1, {a: b}]\n",
     (4, 27, "runtimes.slurm.capabilities.gpu[1]"), "string"),
    ("runtimes.slurm.partiton: long\n", (1, 26, "runtimes.slurm.partiton"),
     "runtime `slurm' has no setting `partiton'; did you mean partition?"),
    ("runtimes:\n  docker: 5\n", (2, 11, "runtimes.docker"), "expected an object"),
])
def test_a_bad_runtime_setting_is_a_problem_at_its_place(tmp_path, text, where, words) -> None:
    """Each runtime's section is checked against the settings class the runtime declares,
    when the plugins are loaded with the configuration (every command that runs or checks
    workflows loads them): located like every other key, an unknown key an error."""
    (tmp_path / "steepy.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        load_plugins(_load(tmp_path))
    problems = caught.value.problems
    assert len(problems) == 1, problems
    assert _where(problems[0]) == ("steepy.yaml", *where)
    assert words in problems[0].message


def test_a_runtime_setting_from_a_variable(tmp_path) -> None:
    problems = _problems_of_plugins(tmp_path, {"STEEPY_RUNTIMES_DOCKER_PULL": "sometimes"})
    assert [(p.file, p.line, p.path) for p in problems] == [
        ("$STEEPY_RUNTIMES_DOCKER_PULL", None, "runtimes.docker.pull")]
    (tmp_path / "steepy.yaml").write_text("runtimes.slurm.extraArgs: [--exclusive]\n")
    settings = load_plugins(_load(tmp_path, {"STEEP_RUNTIMES_SLURM_EXTRAARGS": "--qos=low"}))
    assert settings.runtime_settings("slurm")["extraArgs"] == ["--qos=low"]  # over the file's
    # a list that is no YAML is the variable's problem, not the text `[--qos=low'
    problems = _problems_of_plugins(tmp_path, {"STEEPY_RUNTIMES_SLURM_EXTRAARGS": "[--qos=low"})
    assert [(p.file, p.path) for p in problems] == [
        ("$STEEPY_RUNTIMES_SLURM_EXTRAARGS", "runtimes.slurm.extraArgs")]
    assert problems[0].message.startswith("not valid YAML: ")


def _problems_of_plugins(directory: Path, environ: dict) -> list:
    with pytest.raises(InputError) as caught:
        load_plugins(_load(directory, environ))
    return caught.value.problems


def test_every_problem_is_reported_at_once(tmp_path) -> None:
    problems = _problems(tmp_path, "agent:\n  instances: many\nscheduler:\n  lookupInterval: 2\n")
    assert sorted(_where(p) for p in problems) == [
        ("steepy.yaml", 2, 14, "agent.instances"), ("steepy.yaml", 4, 19, "scheduler.lookupInterval")]
    assert str(problems[0]).startswith(f"{tmp_path / 'steepy.yaml'}:2:14: agent.instances: ")


def test_a_configuration_that_is_not_an_object(tmp_path) -> None:
    problems = _problems(tmp_path, "- agent.instances: 2\n")
    assert _where(problems[0])[:3] == ("steepy.yaml", 1, 1)


def test_an_empty_file_means_the_defaults(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("# nothing yet\n\n")
    assert _load(tmp_path).flat() == DEFAULTS


@pytest.mark.parametrize("variable, value, path", [
    ("STEEPY_AGENT_INSTANCES", "many", "agent.instances"),
    ("STEEP_SCHEDULER_LOOKUPINTERVAL", "2", "scheduler.lookupInterval"),
    ("STEEPY_AGENT_CAPABILITIES", "[gpu, {a: b}]", "agent.capabilities[1]"),
    # a list (an object) that is no YAML was the text: an agent offering `[gpu' (a review)
    ("STEEPY_AGENT_CAPABILITIES", "[gpu, x", "agent.capabilities"),
])
def test_a_bad_variable_is_a_problem_named_by_the_variable(tmp_path, variable, value, path) -> None:
    problems = _problems(tmp_path, environ={variable: value})
    assert [(p.file, p.line, p.path) for p in problems] == [(f"${variable}", None, path)]
    assert str(problems[0]).startswith(f"${variable}: {path}: ")


def test_a_variable_replaces_a_bad_value_of_the_file(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("agent:\n  instances: many\n")
    assert _load(tmp_path, {"STEEPY_AGENT_INSTANCES": "3"}).agent.instances == 3


# ---------------------------------------------------------------- warnings


def test_an_unknown_key_is_a_warning_with_a_suggestion(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("agent:\n  instances: 2\n  capabilites: [gpu]\n")
    config = _load(tmp_path)
    assert config.agent.instances == 2 and config.agent.capabilities == []
    [warning] = config.warnings
    assert _where(warning) == ("steepy.yaml", 3, 16, "agent.capabilites")
    assert "did you mean agent.capabilities?" in warning.message


def test_keys_of_steep_that_steepy_lacks_are_warnings(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "steep:\n  cloud:\n    enabled: true\n    driver: openstack\n  db:\n    driver: postgresql\n"
        "  agent.busyTimeout: 1m\n  tmpPath: /tmp/x\n")
    config = _load(tmp_path)
    assert config.tmp_path == "/tmp/x"
    found = {w.path: w for w in config.warnings}
    assert set(found) == {"cloud.enabled", "db.driver", "agent.busyTimeout"}
    assert all("steepy does not implement" in w.message for w in found.values())
    assert "cloud.driver" in found["cloud.enabled"].message  # one warning for cloud.*
    assert _where(found["db.driver"]) == ("steepy.yaml", 6, 13, "db.driver")


def test_warnings_come_with_the_problems(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("agent:\n  instances: many\n  capabilites: [gpu]\n")
    with pytest.raises(InputError) as caught:
        _load(tmp_path)
    assert [w.path for w in caught.value.warnings] == ["agent.capabilites"]


# ---------------------------------------------------------------- where values come from


def test_steep_yaml_is_read_when_there_is_no_steepy_yaml(tmp_path) -> None:
    (tmp_path / "steep.yaml").write_text("steep:\n  agent:\n    instances: 7\n")
    config = _load(tmp_path)
    assert config.agent.instances == 7 and config.source == str(tmp_path / "steep.yaml")
    (tmp_path / "steep.yaml").write_text("steep.agent.instances: lots\n")
    with pytest.raises(InputError) as caught:
        _load(tmp_path)
    assert _where(caught.value.problems[0]) == ("steep.yaml", 1, 24, "agent.instances")


def test_steepy_yaml_wins_over_steep_yaml(tmp_path) -> None:
    (tmp_path / "steep.yaml").write_text("steep:\n  agent:\n    instances: lots\n  tmpPath: /a\n")
    (tmp_path / "steepy.yaml").write_text("outPath: /b\n")
    config = _load(tmp_path)  # steep.yaml is not read at all: no problem
    assert (config.tmp_path, config.out_path, config.agent.instances) == (".steepy/tmp", "/b", None)
    assert config.source == str(tmp_path / "steepy.yaml")


def test_variables_are_read_as_yaml_and_override_the_file(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("agent:\n  instances: 2\n  outputLinesToCollect: 5\n"
                                          "http.token: from-file\n")
    config = _load(tmp_path, {"STEEPY_AGENT_INSTANCES": "4", "STEEP_AGENT_INSTANCES": "9",
                                    "STEEP_AGENT_OUTPUTLINESTOCOLLECT": "50",
                                    "STEEPY_SCHEDULER_LOOKUPINTERVAL": "1m 30s",
                                    "STEEPY_HTTP_TOKEN": "00123",
                                    "STEEPY_RUNTIMES_DOCKER_VOLUMES": "[/a:/b, /c:/d]"})
    assert config.agent.instances == 4  # STEEPY_ before STEEP_
    assert config.agent.output_lines_to_collect == 50
    assert config.scheduler.lookup_interval == 90_000
    assert config.http.token == "00123"  # a string key keeps the text, not the number 123
    assert config.runtime_settings("docker", DockerSettings).volumes == ["/a:/b", "/c:/d"]


def test_the_process_environment_is_read(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STEEPY_AGENT_INSTANCES", "6")
    assert load_config(tmp_path).agent.instances == 6


@pytest.mark.parametrize("written, expected", [
    ("gpu", ["gpu"]), ("gpu,docker", ["gpu", "docker"]), ("gpu, docker", ["gpu", "docker"]),
    ("[gpu, docker]", ["gpu", "docker"]), ("[]", []),
])
def test_capabilities_as_a_list_or_comma_separated(tmp_path, written, expected) -> None:
    from_env = _load(tmp_path, {"STEEPY_AGENT_CAPABILITIES": written})
    assert from_env["agent.capabilities"] == expected
    (tmp_path / "steepy.yaml").write_text(f"agent.capabilities: {written}\n")
    assert _load(tmp_path).agent.capabilities == expected


def test_sizes_and_durations(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("http.postMaxSize: 10 MB\nagent.killGracePeriod: 250ms\n")
    config = _load(tmp_path, {"STEEPY_CONTROLLER_LEASETIMEOUT": "1h"})
    assert config.http.post_max_size == 10_000_000 and config["agent.killGracePeriod"] == 250
    assert config.controller.lease_timeout == 3_600_000
    assert _load(tmp_path, {"STEEPY_HTTP_POSTMAXSIZE": "2MiB"}).http.post_max_size == 2**21


def test_dotted_access_as_before(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("steep:\n  tmpPath: /t\n  http:\n    token: abc\n")
    config = _load(tmp_path)
    assert config["tmpPath"] == "/t" and config.get("http.token") == "abc"
    assert config.get("steep.http.port") == 8080 and config.get("no.such.key", "x") == "x"
    assert "outPath" in config and "nothing" not in config
    with pytest.raises(KeyError):
        config["agent.nothing"]
    assert DEFAULTS["services"] == "services" and DEFAULTS["http.postMaxSize"] == 10485760


def test_docker_settings_reach_the_agents(tmp_path, monkeypatch) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "runtimes:\n  docker:\n    command: podman\n    pull: never\n    env: [A=1]\n    volumes:\n"
        "      - /data:/data:ro\nagent:\n  capabilities: docker\n  killGracePeriod: 3s\n"
        "tmpPath: t\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STEEPY_RUNTIMES_DOCKER_ENV", "C=3")
    settings = engine_settings(None)
    agent = settings.agent
    docker = agent.runtime_settings("docker")
    assert (docker.pull, docker.env, docker.volumes) == ("never", ["C=3"], ["/data:/data:ro"])
    assert docker.command == "podman"  # a drop-in client
    assert agent.kill_grace_period_ms == 3000 and agent.tmp_path == str(tmp_path / "t")
    assert settings.capabilities == ["docker"] and settings.sweep_s == 2.0


# ---------------------------------------------------------------- commands


def _invoke(tmp_path, monkeypatch, config: str, *args: str):
    (tmp_path / "steepy.yaml").write_text(config)
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _stored(tmp_path) -> list[Path]:
    return list(tmp_path.rglob("*.db"))


BAD = [pytest.param("agent:\n  instances: many\n", "steepy.yaml:2:14: agent.instances: ",
                    id="instances-many"),
       pytest.param("scheduler.lookupInterval: 2\n", "steepy.yaml:1:27: scheduler.lookupInterval: ",
                    id="bare-duration"),
       pytest.param("runtimes:\n  docker:\n    pull: sometimes\n",
                    "steepy.yaml:3:11: runtimes.docker.pull: ", id="runtime-setting")]
GIVEN_DB = ["--db", "sqlite:///given.db"]


@pytest.mark.parametrize("config, line", BAD)
@pytest.mark.parametrize("command", [
    pytest.param(["run", WORKFLOW, *FILES], id="run"),
    pytest.param(["run", WORKFLOW, *FILES, *GIVEN_DB], id="run-db"),
    pytest.param(["submit", WORKFLOW, *FILES], id="submit"),
    pytest.param(["submit", WORKFLOW, *FILES, *GIVEN_DB], id="submit-db"),
    pytest.param(["worker", *FILES, "--exit-when-idle", *GIVEN_DB], id="worker"),
    pytest.param(["serve", "--port", "0", *FILES, *GIVEN_DB], id="serve"),
])
def test_a_bad_configuration_stops_every_command_before_anything_is_stored(
        tmp_path, monkeypatch, command, config, line) -> None:
    result = _invoke(tmp_path, monkeypatch, config, *command)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[0].startswith(line), result.output
    assert "1 problem in 1 file" in result.output and "Traceback" not in result.output
    assert _stored(tmp_path) == []  # no database was even opened


def test_a_command_prints_each_warning_once(tmp_path, monkeypatch) -> None:
    result = _invoke(tmp_path, monkeypatch, "agent:\n  capabilites: [gpu]\ncloud.enabled: true\n",
                     "submit", WORKFLOW, *FILES)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines.count("steepy.yaml:2:16: warning: agent.capabilites: unknown key (ignored); "
                       "did you mean agent.capabilities?") == 1, result.output
    assert sum("cloud.enabled" in line and "does not implement" in line for line in lines) == 1
    assert lines[-1].startswith("submitted ") and len(_stored(tmp_path)) == 1
