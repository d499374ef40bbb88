"""The fast floor (`make test-fast`): the markers a fixture tells, set at collection, and the
guard that keeps processes out of a selection that leaves `process` tests out. Its hooks are
registered by tests/conftest.py, which imports them.

The markers are registered in pyproject.toml; those no fixture tells stand in `pytestmark`
lines at the top of the test modules. Under a `-m` expression that leaves out `process` tests,
no test may start a process: one that does fails and is told to be marked `process`.
"""

from __future__ import annotations

import itertools
import os
import re

import pytest

FIXTURE_MARKS = {  # "module.fixture" -> the markers of every test that uses it
    "tests.conftest.postgres_server": ("postgres", "database"),
    "tests.http.conftest.server": ("process",),
    "tests.schedules.test_api_schedules.server": ("process",),
    "tests.ui.conftest.ui": ("process",),
    "tests.ui.conftest.chromium": ("browser", "process"),
    "tests.runtimes.slurm.test_slurm_runtime.slurm": ("slurm", "process"),
    "tests.runtimes.slurm.test_slurm_engine.slurm": ("slurm", "process"),
    "tests.runtimes.docker.test_docker_runtime.docker": ("docker", "process"),
    "tests.agent.test_modules.lmod": ("lmod", "process"),
    "tests.runtimes.slurm.test_slurm_software.lmod": ("lmod", "process"),
    "tests.runtimes.slurm.test_slurm_software.slurm": ("slurm", "process"),
}
PARAM_MARKS = {("database_url", "sqlite"): ("database",),
               ("database_url", "postgresql"): ("postgres", "database")}


def _fixture_marks(item) -> set[str]:
    marks: set[str] = set()
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info else ()):
        for fixturedef in defs:
            func = fixturedef.func
            marks.update(FIXTURE_MARKS.get(f"{func.__module__}.{func.__name__}", ()))
    for name, value in getattr(getattr(item, "callspec", None), "params", {}).items():
        if isinstance(value, str):
            marks.update(PARAM_MARKS.get((name, value), ()))
    return marks


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by them
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        for name in sorted(_fixture_marks(item)):
            if item.get_closest_marker(name) is None:
                item.add_marker(name)


def _leaves_out_processes(config) -> bool:
    """Whether the `-m` expression selects no test marked `process`, whatever other markers
    (of those it names) the test has: `-m postgres` may run tests marked both."""
    from _pytest.mark.expression import Expression

    expression = config.option.markexpr
    if not expression:
        return False
    compiled = Expression.compile(expression)
    named = set(re.findall(r"[A-Za-z_][\w.]*", expression)) - {"and", "or", "not", "process"}
    for size in range(len(named) + 1):
        for others in itertools.combinations(sorted(named), size):
            marks = {"process", *others}
            if compiled.evaluate(lambda name, **_: name in marks):
                return False
    return True


def _forbid_processes(spawned: list[str]):
    """Make every way of starting a process record the attempt and raise; returns the undo."""
    import multiprocessing.util
    import subprocess

    def refuse(what: str, original):
        def refused(*args, **kwargs):
            if what == "subprocess" and _allowed(args[1]):
                return original(*args, **kwargs)
            spawned.append(f"{what} {_argv(args[1]) if what == 'subprocess' else ''}".strip())
            raise ProcessForbidden(f"{what}: {NO_PROCESS}")
        return refused

    patches = [(subprocess.Popen, "_execute_child", "subprocess"),
               (multiprocessing.util, "spawnv_passfds", "multiprocessing")]
    patches += [(os, name, f"os.{name}") for name in
                ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve",
                 "execvp", "execvpe", "spawnv", "spawnve", "spawnvp", "spawnvpe")
                if hasattr(os, name)]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for (owner, name, what), (_, _, original) in zip(patches, saved):
        setattr(owner, name, refuse(what, original))

    def undo() -> None:
        for owner, name, original in saved:
            setattr(owner, name, original)
    return undo


# GET / names the commit steepy runs from, looked up once per process with `git rev-parse`
# (steepy/http/system.py): which in-process test asks first is chance, so it may run
ALLOWED = (("git", "rev-parse"),)


def _argv(args) -> list[str]:
    return [os.fsdecode(a) for a in ([args] if isinstance(args, (str, bytes)) else args)]


def _allowed(args) -> bool:
    argv = _argv(args)
    return any(tuple(argv[:len(prefix)]) == prefix for prefix in ALLOWED)


NO_PROCESS = ("this test started a process, which the fast selection (`make test-fast`, "
              "-m \"not process ...\") forbids: mark the test or its module `process` "
              "(pytestmark = [pytest.mark.process]), or test it in-process")


class ProcessForbidden(RuntimeError):
    """A test of the fast floor tried to start a process."""


def _without_processes(item):
    """Runs one phase of a test (set-up, call, tear-down) with processes forbidden when the
    selection leaves `process` tests out; a test that tried fails, even if the attempt's
    error was caught by the code under test."""
    if not item.config.stash.get(_GUARDED, False):
        return (yield)
    spawned: list[str] = []
    undo = _forbid_processes(spawned)
    try:
        result = yield
    except BaseException:
        if spawned:
            pytest.fail(f"{item.nodeid}: {spawned[0]}: {NO_PROCESS}", pytrace=False)
        raise
    finally:
        undo()
    if spawned:
        pytest.fail(f"{item.nodeid}: {spawned[0]}: {NO_PROCESS}", pytrace=False)
    return result


_GUARDED = pytest.StashKey[bool]()


def pytest_configure(config) -> None:
    config.stash[_GUARDED] = _leaves_out_processes(config)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _without_processes(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _without_processes(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _without_processes(item))
