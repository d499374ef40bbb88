"""Shared test set-up: where Steep's conformance data lives, and the databases to test on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    """Steep's conformance corpus: $STEEP_CONFORMANCE_DIR, else ../shared/conformance/steep."""
    env = os.environ.get("STEEP_CONFORMANCE_DIR")
    path = Path(env) if env else ROOT.parent / "shared" / "conformance" / "steep"
    if not path.is_dir():
        raise RuntimeError(f"conformance directory not found: {path} (set STEEP_CONFORMANCE_DIR)")
    return path


def load_conformance(name: str):
    """Parse one YAML file of the conformance corpus (relative path)."""
    with open(conformance_dir() / name, encoding="utf-8") as f:
        return yaml.safe_load(f)


def load_conformance_all(name: str) -> list:
    """Parse every YAML document of a multi-document conformance file."""
    with open(conformance_dir() / name, encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))


@pytest.fixture
def conformance() -> Path:
    return conformance_dir()


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """URL of the test PostgreSQL server: $STEEPY_TEST_PG_URL, else the one `.ci/postgres`
    installs and starts (a failure there fails the tests, it does not skip them)."""
    import subprocess

    url = os.environ.get("STEEPY_TEST_PG_URL")
    if url:
        return url
    result = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True,
                            text=True, timeout=600)
    if result.returncode != 0:
        pytest.fail(f".ci/postgres start failed:\n{result.stderr}", pytrace=False)
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture
def postgres_url(postgres_server: str):
    """A fresh, empty database on the test server for one test, dropped afterwards."""
    import psycopg
    from sqlalchemy.engine import make_url

    from steepy.ids import unique_id

    server = make_url(postgres_server)
    name = f"t_{unique_id().lower()}"
    admin = server.set(drivername="postgresql", database="postgres").render_as_string(
        hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield server.set(database=name).render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    """A new empty database of each kind steepy supports."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'steepy.db'}"
    return request.getfixturevalue("postgres_url")
