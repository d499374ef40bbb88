"""What each command that runs no engine imports (issue 31: they start in 0.25 s). The
commands run in a fresh interpreter under `python -X importtime`, and the modules it names
are checked against the libraries and wings the command must not load. Structural on
purpose: bench/startup.py measures the seconds, no test asserts a time."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from steepy.agent.logsource import log_path
from steepy.cli.group import COMMANDS
from steepy.model.attempt import AttemptRecord
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.engine.test_engine import _submit
from tests.registry.chains import store_chains

pytestmark = pytest.mark.process

# none of the commands below needs these: the web server, the engine, templates, tables
# for a terminal (the output here is piped), the HTTP client
NEVER = {"fastapi", "starlette", "uvicorn", "jinja2", "httpx", "rich", "steepy.engine",
         "steepy.http", "steepy.generator", "steepy.agent.local", "steepy.notifications",
         "steepy.api.client", "steepy.api.inprocess"}
# `--help' reads nothing: no database, no configuration, no YAML, no schemas
HELP = NEVER | {"sqlalchemy", "pydantic", "jsonschema", "yaml", "asyncio", "steepy.registry",
                "steepy.config", "steepy.documents"}
# list, show, status and logs read an SQLite database through Python's sqlite3 (not SQLAlchemy,
# a fifth of a second: steepy/registry/quick.py) and the configuration's `db' and `logs'
# (without pydantic when their values are plain text, steepy.config.storage_plain), but no
# plugins, no schemas, none of the workflow checks, and no asyncio (they wait for nothing)
READS = NEVER | {"jsonschema", "steepy.documents.checking", "steepy.documents.submissions",
                 "steepy.plugins", "steepy.runtimes", "sqlalchemy", "asyncio"}
PYDANTIC = {"pydantic", "pydantic_core", "steepy.config.section", "steepy.config.storage",
            "steepy.config.values", "steepy.config.problems"}
# in one interpreter, what they load beside: of the configuration they check `db' and `logs'
# alone (plain, so not even their models), so neither the whole model (its other groups,
# the notifications', the retries', the webhooks' event patterns) nor YAML (no file here), nor
# the plugins' and runtimes' sections, nor the documents wing; of the registry, the parts
# they use (not how a writer's commit wakes the engine: they wait for none)
LIGHT = READS | PYDANTIC | {
                 "yaml", "steepy.documents", "steepy.config.model", "steepy.config.reading",
                 "steepy.config.notifications", "steepy.config.retries",
                 "steepy.events.webhooks", "steepy.config.plugin_files",
                 "steepy.config.runtime_sections", "steepy.registry.queue",
                 "steepy.registry.requests", "steepy.registry.outbox",
                 "steepy.registry.schedules", "steepy.registry.search",
                 "steepy.registry.wakeups"}
# validate reads files and checks them against the plugins' runtimes (loaded to know their
# names and settings, none run: no asyncio): no database
VALIDATE = NEVER | {"sqlalchemy", "steepy.registry", "asyncio"}

WORKFLOW = "api: 4.7.0\nname: budget\nactions: []\n"

# every command's --help (and each `schedule' subcommand's), in one interpreter
ALL_HELP = """
from click.testing import CliRunner
from steepy.cli import main
runner = CliRunner()
assert runner.invoke(main, ["--help"]).exit_code == 0
for name in main.list_commands(None):
    command = main.get_command(None, name)
    assert runner.invoke(main, [name, "--help"]).exit_code == 0, name
    for sub in getattr(command, "commands", {}):
        assert runner.invoke(main, [name, sub, "--help"]).exit_code == 0, (name, sub)
import sys
print(*sys.modules, sep=chr(10))
"""

# a command in one interpreter: its exit code, whether the configuration's whole model was
# built (pydantic's `__pydantic_complete__'; `absent': not even imported), whether it asked
# to end without the interpreter's teardown (steepy/cli/ending.py), its output; then every
# module loaded
IN_PROCESS = """
import sys
from click.testing import CliRunner
from steepy.cli import ending, main
result = CliRunner().invoke(main, sys.argv[1:])
names = list(sys.modules)
model = sys.modules.get("steepy.config.model")
built = "absent" if model is None else model.Config.__pydantic_complete__
print(result.exit_code, built, ending._quick_exit, repr(result.output))
print(*names, sep=chr(10))
"""


def imported(args: list[str], cwd: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    """The modules a Python run imports (`-X importtime`), with the run itself."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
             if line.startswith("import time:")}
    return names, done


def loaded(modules: set[str], forbidden: set[str]) -> list[str]:
    """Those of `modules` that are one of `forbidden` or inside one of them."""
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in forbidden))


def test_help_of_every_command_loads_no_library_and_no_wing() -> None:
    names, done = imported(["-m", "steepy.cli", "--help"], ROOT)
    assert done.returncode == 0 and "validate" in done.stdout, done.stderr[-2000:]
    assert loaded(names, HELP) == []
    # the editable install (make) is a path in a .pth file (pyproject.toml's package-dir),
    # not setuptools' import hook, which every start of Python would import first (15 ms)
    hooks = [name for name in names if name.startswith("__editable__") and "steepy" in name]
    assert hooks == [], "an import hook of an older install: run `make' to install anew"
    done = subprocess.run([sys.executable, "-c", ALL_HELP], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    names = set(done.stdout.splitlines())  # (importtime does not see importlib's imports)
    assert {f"steepy.cli.{where.split(':')[0]}" for where, _ in COMMANDS.values()} <= names
    assert loaded(names, HELP) == []


@pytest.fixture
def stored(tmp_path) -> dict[str, str]:
    """A database where steepy expects it (.steepy/steepy.db here): a submission with a
    chain that ran once and wrote a log."""
    registry = open_registry(f"sqlite:///{tmp_path / '.steepy' / 'steepy.db'}")
    submission_id = _submit(registry, WORKFLOW)
    store_chains(registry, submission_id, [ProcessChain(id="budget-chain")])
    _, run = registry.queue.claim_chain("agent", only=submission_id)
    now = datetime.now(timezone.utc)
    registry.queue.finish_run("budget-chain", run, "SUCCESS", CS.SUCCESS,
                              submission_id=submission_id,
                              attempts=[AttemptRecord("e", "s", 1, now, now, "SUCCESS", 0)])
    registry.close()
    log = tmp_path / log_path(Path("logs/processchains"), "budget-chain", run)
    log.parent.mkdir(parents=True)
    log.write_text("hello from the tool\n")
    return {"submission": submission_id, "chain": "budget-chain"}


def _steepy(*args: str) -> list[str]:
    return ["-m", "steepy.cli", *args]


@pytest.mark.parametrize("command", [["list"], ["show", "{submission}"], ["status", "{chain}"],
                                     ["logs", "{chain}"]], ids=lambda c: c[0])
def test_reading_the_database_loads_neither_the_engine_nor_the_plugins(
        tmp_path, stored, command) -> None:
    names, done = imported(_steepy(*(arg.format(**stored) for arg in command)), tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert stored["submission"] in done.stdout or "hello from the tool" in done.stdout
    assert {"sqlite3", "steepy.registry.quick"} <= names  # the database is read, not skipped
    assert loaded(names, READS) == []
    # its connections were closed before the quick end: SQLite removed its -wal and -shm
    assert [p.name for p in (tmp_path / ".steepy").iterdir()] == ["steepy.db"]


@pytest.mark.parametrize("command", [["list"], ["show", "{submission}"], ["status", "{chain}"],
                                     ["logs", "{chain}"], ["events", "{submission}"]],
                         ids=lambda c: c[0])
def test_reading_checks_part_of_the_configuration_and_registry_and_skips_the_teardown(
        tmp_path, stored, command) -> None:
    args = [arg.format(**stored) for arg in command]
    done = subprocess.run([sys.executable, "-c", IN_PROCESS, *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    first, *names = done.stdout.splitlines()
    code, built, quick, output = first.split(" ", 3)
    assert code == "0" and ("budget" in output or "hello from the tool" in output), output
    assert built == "absent"  # of the configuration's model, only DbSettings and LogsSettings
    assert quick == "True"  # no teardown: 0.05 s
    assert {"steepy.registry.reads", "steepy.config.storage_plain"} <= set(names)
    assert loaded(set(names), LIGHT) == []


@pytest.mark.parametrize("text, checked", [
    ("db.url: sqlite:///.steepy/steepy.db\nagent.instances: 3\n", False),
    ("logs.processChains.groupByPrefix: 0\n", True)], ids=["plain", "a-number"])
def test_plain_values_of_db_and_logs_are_taken_without_pydantic(tmp_path, stored, text,
                                                                 checked) -> None:
    """A file whose `db' and `logs' keys have text values: no pydantic; a number is checked
    by their pydantic model (as a problem is: tests/cli/test_reading_config.py)."""
    (tmp_path / "steepy.yaml").write_text(text)
    names, done = imported(_steepy("list"), tmp_path)
    assert done.returncode == 0 and stored["submission"] in done.stdout, done.stderr[-2000:]
    assert "steepy.config.storage_plain" in names and "yaml" in names  # the file was read
    assert bool(loaded(names, PYDANTIC)) is checked
    assert loaded(names, READS) == []


def test_validate_loads_no_database(tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    names, done = imported(_steepy("validate", "w.yaml"), tmp_path)
    assert done.returncode == 0 and "valid" in done.stdout, done.stderr[-2000:]
    assert "jsonschema" in names  # the schemas are checked
    assert loaded(names, VALIDATE) == []
    done = subprocess.run([sys.executable, "-c", IN_PROCESS, "validate", "w.yaml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    code, built, quick, _ = done.stdout.splitlines()[0].split(" ", 3)
    assert (code, built, quick) == ("0", "True", "True")  # the whole configuration; no teardown


def test_a_piped_run_loads_no_terminal_view_and_no_web_server(tmp_path) -> None:
    """`steepy run` piped (a script, CI, the docs' examples) prints a line per event: it runs
    the engine but loads neither rich (the live view's, 30 ms of every run) nor the server."""
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    names, done = imported(_steepy("run", "w.yaml"), tmp_path)
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stderr[-2000:]
    assert "steepy.engine.engine" in names  # (it did run an engine)
    assert loaded(names, {"rich", "fastapi", "starlette", "uvicorn", "jinja2", "httpx"}) == []


def test_a_database_the_quick_way_leaves_is_read_as_ever(tmp_path, stored) -> None:
    """One that is not in WAL mode (steepy.registry.quick reads only what steepy wrote and
    migrated): SQLAlchemy opens it, as every other command does, and the answer is the same."""
    database = sqlite3.connect(tmp_path / ".steepy" / "steepy.db")
    database.execute("PRAGMA journal_mode=DELETE")
    database.close()
    names, done = imported(_steepy("list"), tmp_path)
    assert done.returncode == 0 and stored["submission"] in done.stdout, done.stderr[-2000:]
    assert "sqlalchemy" in names and "steepy.registry.quick" in names


def test_a_command_through_a_server_loads_the_client_not_the_server(tmp_path) -> None:
    """`--server': the HTTP client only (steepy.http's package loads its server when first
    asked for it: FastAPI and the routes were 1 s of every such command)."""
    names, done = imported(_steepy("list", "--server", "http://127.0.0.1:9"), tmp_path)
    assert done.returncode == 4 and "127.0.0.1:9" in done.stderr, done.stderr[-2000:]
    assert "steepy.http.client" in names
    assert loaded(names, {"fastapi", "starlette", "uvicorn", "steepy.http.app",
                          "sqlalchemy"}) == []


def test_wait_on_a_database_loads_no_http_client(tmp_path, stored) -> None:
    """`steepy wait' on a database never meets a server: it loads no HTTP client (httpx and
    what it loads, 0.1 s), though it would wait out a server's restart with `--server'."""
    registry = open_registry(f"sqlite:///{tmp_path / '.steepy' / 'steepy.db'}")
    registry.requests.cancel_submission(stored["submission"])  # (ended: the wait is short)
    registry.close()
    names, done = imported(_steepy("wait", stored["submission"]), tmp_path)
    assert done.returncode == 3 and stored["submission"] in done.stdout, done.stderr[-2000:]
    assert loaded(names, {"httpx", "steepy.http.client"}) == []
