"""`--agents` takes 0 (the configuration's number, else one per core) or more: a negative
number started no agent, and the chain waited for ever."""

from __future__ import annotations

from click.testing import CliRunner

from steepy.cli import main


def test_a_negative_number_of_agents_is_refused(tmp_path) -> None:
    (tmp_path / "wf.yaml").write_text("api: 4.7.0\nactions: []\n")
    for command in (["run", "wf.yaml"], ["worker"]):
        result = CliRunner().invoke(main, [*command, "--agents", "-1", "--db",
                                           f"sqlite:///{tmp_path / 'steepy.db'}"])
        assert result.exit_code == 2, result.output
        assert "--agents" in result.output and "-1" in result.output
    assert not (tmp_path / "steepy.db").exists()  # nothing stored
