"""Runtime settings given to an agent in code: one way, `AgentConfig(runtimes={name: {key:
value}})' by Steep's key names, over what the plugins were loaded with; no keyword of a
runtime's own (no daemon needed: only the settings a runtime would be told are looked at)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from steepy.agent import AgentConfig
from steepy.cli.common import engine_settings
from steepy.runtimes.docker import DockerSettings
from steepy.runtimes.slurm import SlurmSettings


def test_given_keys_go_over_the_defaults_of_the_runtimes_class() -> None:
    config = AgentConfig(runtimes={"docker": {"command": "podman", "pull": "never"},
                                   "slurm": {"partition": "big", "extraArgs": ["--exclusive"]}})
    docker = config.runtime_settings("docker")
    assert isinstance(docker, DockerSettings)
    assert (docker.command, docker.pull, docker.volumes) == ("podman", "never", [])
    slurm = config.runtime_settings("slurm")
    assert isinstance(slurm, SlurmSettings)  # by Steep's name `extraArgs', read either way
    assert (slurm.partition, slurm.extra_args, slurm["extraArgs"]) == ("big", ["--exclusive"],
                                                                      ["--exclusive"])
    assert slurm.command == "srun"  # not given: the class's default


def test_given_keys_go_over_steepy_yaml_and_the_rest_of_it_stays(tmp_path, monkeypatch) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "runtimes:\n  docker:\n    pull: always\n    volumes: [/data:/data:ro]\n")
    monkeypatch.chdir(tmp_path)
    loaded = engine_settings(None).agent
    config = replace(loaded, runtimes={"docker": {"pull": "never"}, "slurm": {"qos": "low"}})
    docker = config.runtime_settings("docker")
    assert (docker.pull, docker.volumes) == ("never", ["/data:/data:ro"])
    assert loaded.runtime_settings("docker").pull == "always"  # the loaded ones unchanged
    assert AgentConfig().runtime_settings("docker") == DockerSettings()  # nothing given


def test_a_key_the_runtime_lacks_is_refused() -> None:
    config = AgentConfig(runtimes={"docker": {"pul": "never"}})
    with pytest.raises(KeyError):
        config.runtime_settings("docker")


@pytest.mark.parametrize("keyword, value", [("docker_command", "podman"), ("docker_pull", "never"),
                                            ("docker_env", ["A=1"]), ("docker_volumes", []),
                                            ("slurm", {"partition": "big"})])
def test_the_keywords_of_earlier_versions_are_gone(keyword, value) -> None:
    with pytest.raises(TypeError, match=keyword):
        AgentConfig(**{keyword: value})


def test_given_values_are_checked_as_if_read() -> None:
    """A value given in code means what it means in steepy.yaml (a duration with a unit
    becomes milliseconds), and one steepy.yaml would refuse is refused here too."""
    from pydantic import ValidationError

    assert SlurmSettings().replaced({"timeLimit": "1h"}).get("timeLimit") == 3_600_000
    with pytest.raises(ValidationError):
        SlurmSettings().replaced({"timeLimit": "soon"})
    with pytest.raises(ValidationError):
        DockerSettings().replaced({"pull": "sometimes"})
