"""`runtimes.<name>' sections, read before their runtimes are known and checked against each
runtime's settings class: a key below a setting keeps its dots, their problems come out with
the rest of the configuration's, and a class that requires a key says so in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.config import Config, load_config
from steepy.errors import InputError
from steepy.plugins.loaded import PluginSet
from steepy.plugins.loading import declared_plugins
from steepy.plugins.pluginset import load_plugins
from steepy.runtimes import Launch, RuntimeSettings
from steepy.runtimes.docker import DockerSettings
from steepy.runtimes.slurm import SlurmSettings
from tests.conftest import ROOT

WORKFLOW = str(ROOT / "workflows" / "linear.yaml")
HERE = __name__  # plugins of steepy.yaml below are this module's classes


class QueueSettings(RuntimeSettings):
    queue: str  # no default: steepy.yaml must give it
    slots: int = 1


class QueueRuntime:
    supported_runtime = "queue"
    settings_class = QueueSettings

    def command(self, executable, context):
        return Launch(["true"])


class BareRuntime:  # declares no settings
    def command(self, executable, context):
        return Launch(["true"])


def _settings(directory: Path, text: str, model: type, name: str, environ=None):
    (directory / "steepy.yaml").write_text(text)
    return load_config(directory, environ or {}).runtime_settings(name, model)


def _problems(directory: Path, text: str, model: type, name: str, environ=None) -> list[str]:
    with pytest.raises(InputError) as caught:
        _settings(directory, text, model, name, environ)
    return [str(p).replace(f"{directory}/", "") for p in caught.value.problems]


# ---------------------------------------------------------------- dotted names


CUDA = {"cuda11.8": ["--gres=gpu:1"]}


@pytest.mark.parametrize("text", [
    "runtimes:\n  slurm:\n    capabilities:\n      cuda11.8: [--gres=gpu:1]\n",
    "runtimes.slurm.capabilities.cuda11.8: [--gres=gpu:1]\n",
    "steep:\n  runtimes.slurm:\n    capabilities.cuda11.8: [--gres=gpu:1]\n",
])
def test_a_capability_keeps_the_dots_of_its_name(tmp_path, text) -> None:
    """Only the settings class's own keys split a dotted key; below a setting (a mapping of
    capabilities) every key is a name."""
    assert _settings(tmp_path, text, SlurmSettings, "slurm").capabilities == CUDA


def test_a_bad_value_below_a_dotted_name_is_located(tmp_path) -> None:
    text = "runtimes:\n  slurm:\n    capabilities:\n      cuda11.8: [--gres=gpu:1, {a: b}]\n"
    assert _problems(tmp_path, text, SlurmSettings, "slurm") == [
        "steepy.yaml:4:32: runtimes.slurm.capabilities.cuda11.8[1]: expected a string, got an "
        "object"]


def test_a_variable_gives_a_mapping_whole_and_its_problems_are_its_own(tmp_path) -> None:
    text = "runtimes:\n  slurm:\n    partition: long\n    capabilities:\n      old.gpu: [x]\n"
    given = {"STEEPY_RUNTIMES_SLURM_CAPABILITIES": "{cuda11.8: [--gres=gpu:1]}"}
    settings = _settings(tmp_path, text, SlurmSettings, "slurm", given)
    assert (settings.capabilities, settings.partition) == (CUDA, "long")  # the file's others
    bad = {"STEEPY_RUNTIMES_SLURM_CAPABILITIES": "{cuda11.8: [--gres=gpu:1, {a: b}]}"}
    assert _problems(tmp_path, text, SlurmSettings, "slurm", bad) == [
        "$STEEPY_RUNTIMES_SLURM_CAPABILITIES: runtimes.slurm.capabilities.cuda11.8[1]: expected "
        "a string, got an object"]  # not at the file's section


def test_docker_lists_keep_their_entries(tmp_path) -> None:
    text = "runtimes.docker:\n  env: [A.B=1]\n  volumes: [/data.v1:/data:ro]\n"
    docker = _settings(tmp_path, text, DockerSettings, "docker")
    assert (docker.env, docker.volumes) == (["A.B=1"], ["/data.v1:/data:ro"])
    assert _problems(tmp_path, "runtimes.docker.env: {A.B: 1}\n", DockerSettings, "docker") == [
        "steepy.yaml:1:22: runtimes.docker.env: expected a list, got an object"]


def test_a_key_below_a_plain_setting_is_a_problem_not_a_traceback(tmp_path) -> None:
    text = "runtimes:\n  slurm:\n    partition: long\nruntimes.slurm.partition.x: short\n"
    assert _problems(tmp_path, text, SlurmSettings, "slurm") == [
        "steepy.yaml:4:29: runtimes.slurm.partition.x: set a second time (first at "
        "steepy.yaml:3:16)"]


# ---------------------------------------------------------------- every problem at once


def _invoke(tmp_path: Path, monkeypatch, config: str, *args: str):
    (tmp_path / "steepy.yaml").write_text(config)
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_the_configurations_and_the_runtimes_problems_come_out_together(
        tmp_path, monkeypatch) -> None:
    result = _invoke(tmp_path, monkeypatch, "agent: {instances: 0}\n"
                     "runtimes: {slurm: {timeLimit: 2}}\n", "validate", WORKFLOW)
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines[0] == "steepy.yaml:1:20: agent.instances: must be at least 1, got 0"
    assert lines[1].startswith("steepy.yaml:2:31: runtimes.slurm.timeLimit: `2' is not a "
                               "duration"), result.output
    assert lines[2:] == ["2 problems in 1 file"] and "Traceback" not in result.output


def test_a_declared_runtimes_problems_come_out_with_the_configurations(
        tmp_path, monkeypatch) -> None:
    """The runtimes of steepy.yaml's `plugins' are loaded to check their sections too; a
    plugin that cannot be loaded is one more problem."""
    config = (f"plugins:\n  - {{name: queue, type: runtime, object: '{HERE}:QueueRuntime'}}\n"
              "http.port: 70000\nruntimes.queue.slots: many\n")
    result = _invoke(tmp_path, monkeypatch, config, "validate", WORKFLOW)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        "steepy.yaml:3:12: http.port: must be at most 65535, got 70000",
        "steepy.yaml:4:23: runtimes.queue.queue: is required",  # where its section is
        "steepy.yaml:4:23: runtimes.queue.slots: expected a whole number, got a string `many'",
        "3 problems in 1 file"]
    gone = config.replace("QueueRuntime", "Missing")
    result = _invoke(tmp_path, monkeypatch, gone, "validate", WORKFLOW)
    assert result.output.splitlines() == [
        f"steepy.yaml:2:5: plugins[0]: plugin `queue' (runtime): `{HERE}' has no attribute "
        "`Missing'", "steepy.yaml:3:12: http.port: must be at most 65535, got 70000",
        "2 problems in 1 file"]


def test_a_runtime_without_a_settings_class_takes_no_keys(tmp_path) -> None:
    """(docs/guide/plugins.md, Migration: its section was once handed over as it was.)"""
    (tmp_path / "steepy.yaml").write_text(
        f"plugins:\n  - {{name: bare, type: runtime, object: '{HERE}:BareRuntime'}}\n"
        "runtimes.bare.queue: long\n")
    with pytest.raises(InputError) as caught:
        load_plugins(load_config(tmp_path, {}))
    assert [str(p).replace(f"{tmp_path}/", "") for p in caught.value.problems] == [
        "steepy.yaml:3:22: runtimes.bare.queue: runtime `bare' has no setting `queue' (its "
        "settings: none)"]


# ---------------------------------------------------------------- defaults


REQUIRED = ["steepy.yaml: runtimes.queue.queue: is required (runtime `queue' has no default "
            "for it)"]


def test_a_required_key_without_a_configuration_is_one_line() -> None:
    """A Config made in code, and plugins loaded without one, take a runtime's defaults the
    same way: a key the class requires is a problem, not pydantic's traceback."""
    with pytest.raises(InputError) as caught:
        Config().runtime_settings("queue", QueueSettings)
    assert [str(p) for p in caught.value.problems] == REQUIRED
    declared = Config.model_validate({"plugins": [
        {"name": "queue", "type": "runtime", "object": f"{HERE}:QueueRuntime"}]})
    for load in (lambda: load_plugins(declared), lambda: PluginSet(declared_plugins(declared))):
        with pytest.raises(InputError) as caught:
            load()
        assert [str(p) for p in caught.value.problems] == REQUIRED
