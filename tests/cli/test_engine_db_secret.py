"""`run`, `worker` and `serve` refuse a `--db` URL with a password or token: the command line
of the engine is readable by every tool it runs and by every local user (`ps`,
/proc/PID/cmdline), where STEEPY_DB_URL stays with the engine (docs/guide/environment.md)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.cli.common import ENGINE_DB_OPTION

SECRET = "pw-SECRET-7q"


@pytest.mark.parametrize("command", [["run", "wf.yaml"], ["worker"], ["serve"]])
@pytest.mark.parametrize("url", [f"postgresql+psycopg://steepy:{SECRET}@127.0.0.1:1/steepy",
                                 f"postgresql+psycopg://steepy@127.0.0.1:1/steepy?password={SECRET}"])
def test_a_password_in_db_is_refused_before_anything_runs(command, url, tmp_path,
                                                           monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, [*command, "--db", url])
    assert done.exit_code == 2, done.output
    assert "STEEPY_DB_URL" in done.stderr and "--db" in done.stderr
    assert SECRET not in done.output + done.stderr
    assert not (tmp_path / ".steepy").exists()  # nothing opened, nothing stored


def test_a_url_without_a_secret_is_taken_and_reading_commands_take_any() -> None:
    @click.command()
    @ENGINE_DB_OPTION
    def probe(db: str | None) -> None:
        click.echo(f"db={db}")

    plain = "postgresql+psycopg://steepy@db.example.org:5432/steepy"
    assert CliRunner().invoke(probe, ["--db", plain]).output == f"db={plain}\n"
    # libpq's keys that name files or modes, not secrets (the review found them refused;
    # `passfile' is where the refusal sends the password)
    files = (plain + "?target_session_attrs=read-write&sslkey=/home/u/.postgresql/k.key"
             "&passfile=/home/u/.pgpass&require_auth=scram-sha-256&sslmode=verify-full")
    assert CliRunner().invoke(probe, ["--db", files]).output == f"db={files}\n"
    for secret in (f"{plain}?sslpassword={SECRET}", f"{plain}?pass%77ord={SECRET}",
                   f"postgresql+psycopg://steepy:{SECRET}@/steepy?host=/run/postgresql"):
        refused = CliRunner().invoke(probe, ["--db", secret])
        assert refused.exit_code == 2 and SECRET not in refused.output, secret
    assert CliRunner().invoke(probe, []).output == "db=None\n"
    # `list' (no tools) still takes a password: the option is the plain one there
    listed = CliRunner().invoke(main, ["list", "--db",
                                       f"postgresql+psycopg://u:{SECRET}@127.0.0.1:1/x"])
    assert listed.exit_code != 2 and SECRET not in listed.output + listed.stderr
