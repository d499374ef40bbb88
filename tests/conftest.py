"""Shared test set-up: where Steep's conformance data lives, and the databases to test on."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
import yaml

from tests.floor import (pytest_collection_modifyitems, pytest_configure,  # noqa: F401 - hooks
                         pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown)

ROOT = Path(__file__).resolve().parent.parent

# The test modules as pytest rewrites their asserts are kept (tests/**/__pycache__/
# *-pytest-*.pyc) also where PYTHONDONTWRITEBYTECODE is set, as on CI machines: each `make
# test` worker rewrote every module again otherwise, 11 of its 20 s of collecting. Only this
# process: the processes the tests start keep the setting they are given.
sys.dont_write_bytecode = False

# A shell starts a background job (`make test &', a CI step's `cmd &') with Ctrl-C ignored,
# and every process it starts inherits that: the tools, CLIs and servers the tests send
# SIGINT to would not see it (a `steepy wait' waits on, `steepy list' is not interrupted).
# This process takes Python's own handler, so that what it starts gets the default again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


CORPUS_HINT = ("set STEEP_CONFORMANCE_DIR to the folder of Steep's conformance corpus "
               "(conformance/steep in the shared material)")


def _corpus_path() -> Path:
    env = os.environ.get("STEEP_CONFORMANCE_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "conformance" / "steep"


def corpus_required() -> bool:
    """Under CI, or when the user named the corpus, a missing corpus is a failure."""
    return os.environ.get("CI", "").lower() == "true" or "STEEP_CONFORMANCE_DIR" in os.environ


def corpus_missing_line() -> str | None:
    """The one line that says where the corpus was looked for, or None when it is there."""
    path = _corpus_path()
    if path.is_dir():
        return None
    return f"Steep's conformance corpus not found at {path}: its tests are skipped; {CORPUS_HINT}"


def conformance_dir() -> Path:
    """Steep's conformance corpus: $STEEP_CONFORMANCE_DIR, else ../shared/conformance/steep.
    Where it is missing (and may be), the calling test or module is skipped."""
    missing = corpus_missing_line()
    if missing is not None:
        pytest.skip(missing, allow_module_level=True)
    return _corpus_path()


def load_conformance(name: str):
    """Parse one YAML file of the conformance corpus (relative path)."""
    with open(conformance_dir() / name, encoding="utf-8") as f:
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def conformance_params(name: str, *keys: str, id=None) -> list:
    """The entries under `keys` of a corpus file as test parameters (ids from `id`), or, with
    the corpus missing, one skipped parameter: the module's other tests still run."""
    missing = corpus_missing_line()
    if missing is not None:
        return [pytest.param(None, id="corpus-missing", marks=pytest.mark.skip(reason=missing))]
    node = load_conformance(name)
    for key in keys:
        node = node[key]
    return [pytest.param(e, id=None if id is None else id(e)) for e in node]


def pytest_sessionstart(session) -> None:
    missing = corpus_missing_line()
    if missing is not None and corpus_required():
        why = "CI=true" if "STEEP_CONFORMANCE_DIR" not in os.environ else "STEEP_CONFORMANCE_DIR is set"
        pytest.exit(f"{missing.split(':')[0]} ({why}, so this is a failure); {CORPUS_HINT}",
                    returncode=1)


def pytest_report_header(config) -> str | None:
    return corpus_missing_line()


def pytest_terminal_summary(terminalreporter) -> None:
    missing = corpus_missing_line()
    if missing is not None:
        terminalreporter.write_line(missing)


@pytest.fixture
def conformance() -> Path:
    return conformance_dir()


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """URL of the test PostgreSQL server: $STEEPY_TEST_PG_URL, else the one `.ci/postgres`
    installs and starts as a component (tests/components.py: stopped when the last test
    session that uses it ends; a missing one skips with one line, fails under CI=true)."""
    from tests.components import component

    url = os.environ.get("STEEPY_TEST_PG_URL")
    if url:
        return url
    return component("postgres")["STEEPY_TEST_PG_URL"]


@pytest.fixture
def postgres_url(postgres_server: str):
    """A fresh, empty database on the test server for one test, dropped afterwards."""
    import psycopg
    from sqlalchemy.engine import make_url

    from steepy.model.ids import unique_id

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


def open_memory_registry():
    """A registry in memory (`sqlite://`): the same SQL, schema and migrations as a file, on
    one connection that every thread shares (SQLAlchemy's StaticPool). For logic that runs
    one thing at a time: concurrent transactions from several threads would share that
    connection, and a second open is a second, empty database."""
    from sqlalchemy.pool import StaticPool

    import steepy.registry.database as database
    from steepy.registry import Registry

    # open_engine gives `sqlite://' SQLAlchemy's default pool, one connection (and so one
    # empty database) per thread: the pool is chosen here, for the engine's creation only
    create_engine = database.create_engine
    database.create_engine = lambda url, **kw: create_engine(url, poolclass=StaticPool, **kw)
    try:
        return Registry(database.open_engine("sqlite://"))
    finally:
        database.create_engine = create_engine


@pytest.fixture
def memory_registry():
    """A new registry in memory (see `open_memory_registry`), closed after the test."""
    registry = open_memory_registry()
    yield registry
    registry.close()



@pytest.fixture(autouse=True)
def _collector_as_it_was():
    """`steepy run|worker|serve` run in-process (click's CliRunner) tune the cycle collector
    for the whole process (steepy.cli.collector): give the next test Python's own."""
    import gc

    thresholds = gc.get_threshold()
    yield
    if gc.get_threshold() != thresholds:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@pytest.fixture
def no_steepy_variables(monkeypatch) -> None:
    """No STEEPY_/STEEP_ variable of the machine (or of CI's scripts) reaches the commands a
    test runs: they read only the test's own configuration."""
    for name in list(os.environ):
        if name.startswith(("STEEPY_", "STEEP_")):
            monkeypatch.delenv(name)
