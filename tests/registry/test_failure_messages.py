"""What a command says when the database cannot be used: the URL without any password (also
one given as `?password='), and no full disk where there is none (a pseudo file system)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.registry import open_registry
from steepy.registry.failures import EXIT_DATABASE, DatabaseUnavailable, describe, disk_problem

PASSWORD = "DBPASS-6-never-shown"


def test_a_password_in_the_query_of_a_database_url_is_not_shown() -> None:
    url = f"postgresql+psycopg://u@127.0.0.1:1/db?password={PASSWORD}&sslmode=disable"
    done = CliRunner().invoke(main, ["list"], env={"STEEPY_DB_URL": url})
    assert done.exit_code == EXIT_DATABASE, done.output
    assert "postgresql+psycopg://u@127.0.0.1:1/db?password=***&sslmode=disable" in done.output
    assert PASSWORD not in done.output
    said = describe(RuntimeError(f"cannot connect to {url}"), url)
    assert PASSWORD not in said and said.startswith("database postgresql+psycopg://u@127.0.0.1")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_database_under_a_pseudo_file_system_is_not_on_a_full_disk() -> None:
    url = "sqlite:////proc/no-such-folder/steepy.db"
    assert disk_problem(url) is None  # /proc has no blocks at all: not a full disk
    with pytest.raises(DatabaseUnavailable) as raised:
        open_registry(url)
    said = str(raised.value)
    assert said.startswith("database /proc/no-such-folder/steepy.db: ") and "full" not in said
