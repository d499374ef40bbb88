"""`steepy.run(workflow)`: an engine in the calling process, as `steepy run` has, for scripts
and notebooks. It runs in a thread of its own with its own event loop, so it needs neither
the main thread nor a free event loop (a notebook has one running). Ctrl-C
(KeyboardInterrupt) in the caller cancels the submission (in a database outage, once the
database is back), waits until it has ended and is raised again (a second Ctrl-C stops the
engine at once); in the main thread, a SIGINT handler of its own counts them while the
engine runs (`_Interrupts`; also in place of an `asyncio.run`'s), the one before is back
afterwards."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from steepy.api.arguments import agents_number, given_vars
from steepy.api.client import Client, Paths, database_url
from steepy.api.errors import EngineFailed
from steepy.api.guard import GuardedBackend, database_failures
from steepy.api.local import LocalBackend
from steepy.api.setup import LocalSetup
from steepy.api.submission import Submission
from steepy.api.workflow import Workflow, workflow_document

if TYPE_CHECKING:
    from steepy.engine.engine import Engine, EngineSettings
    from steepy.registry import Registry

JOIN_S = 0.1  # how often the caller looks up from waiting (Ctrl-C arrives in between)
STOP_S = 10.0  # how long a stopped engine may take to end, besides its tools' kill grace period


def run(workflow: Workflow, *, services: Paths = None, macros: Paths = None,
        vars: Mapping[str, Any] | None = None, db: str | os.PathLike | None = None,
        agents: int | None = None, resume: bool | None = None) -> Submission:
    """Check `workflow` (a path, YAML or JSON text, or a dict; `vars` sets the values of its
    variables that have a default value, by id), store it in the database `db` (a URL or an
    SQLite file's path; default: steepy.yaml's `db.url`, else .steepy/steepy.db) and run it
    to its end here, with `agents` chains at once (None or 0: `agent.instances`, else one
    per core). Returns the finished submission, whatever its status; it keeps the database
    open to read it again while it (or a chain of it) is referenced. InputError (nothing
    stored) for bad input, or a database in memory; DatabaseUnavailable for a database that
    cannot be used before the engine starts; EngineFailed when the engine stopped by itself.
    Whatever is raised while it runs, the engine is stopped (and waited for) first. `resume`
    reuses the work of earlier submissions (default: the configuration's
    `cache.enabled`)."""
    setup = LocalSetup(services, macros)
    settings = setup.engine_settings(agents_number(agents))  # the configuration first
    document = workflow_document(workflow)
    given = given_vars(vars)
    url = None if db is None else database_url(os.fspath(db), "db")
    _not_in_memory(url, setup)
    backend = GuardedBackend(LocalBackend(url, setup), url)
    try:
        submission, service_map, macro_map = backend.prepare(document, given=given)
        backend.store(submission, resume)
        with database_failures(url):  # nothing of the database's raw, whatever happens
            drive(backend.registry, service_map, macro_map, settings, submission.id)
        finished = Client(backend).submission(submission.id)
        # open while the submission or a chain of it is referenced, no longer (a notebook's
        # loop of runs kept every database's files open, about ten a run, until it ended)
        weakref.finalize(backend, _closing(backend.registry))
        return finished
    except BaseException:
        backend.close()
        raise


def _closing(registry: "Registry") -> Callable[[], None]:
    """What closes `registry` once nothing reads it any more, quietly: a database gone by
    then has nothing left to tell anybody."""
    def close() -> None:
        from steepy.registry.failures import is_database_failure

        try:
            registry.close()
        except Exception as e:
            if not is_database_failure(e):
                raise
    return close


def _not_in_memory(url: str | None, setup: LocalSetup) -> None:
    """An SQLite database in memory is one per thread: the engine's thread would see an
    empty one (InputError)."""
    from steepy.errors import InputError, Problem
    from steepy.registry.database import in_memory

    url, where = (url, "db") if url else (setup.config.get("db.url"), "db.url")
    if url and in_memory(url):
        raise InputError(Problem(f"`{url}' is an SQLite database in memory, which each thread "
                                 "sees empty: steepy.run needs a file, e.g. sqlite:///steepy.db "
                                 "or a path", file=where))


class _Driver:
    """The engine's thread: it makes the engine in its own event loop and runs it."""

    def __init__(self, registry: "Registry", services: dict, macros: dict,
                 settings: "EngineSettings", submission_id: str):
        self.args = (registry, services, macros, settings)
        self.submission_id = submission_id
        self.engine: "Engine | None" = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping = False
        self.cancel_asked = False
        self.cancelling: asyncio.Task | None = None  # held: a task nobody holds may be collected
        self.error: BaseException | None = None
        # waited for instead of the thread: a join that Ctrl-C interrupts takes the thread
        # for ended on Python 3.11 (it releases the lock the running thread holds)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True,
                                       name=f"steepy engine {submission_id}")

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as e:  # handed to the caller
            self.error = e
        finally:
            self.done.set()

    async def _run(self) -> None:
        from steepy.engine.engine import Engine

        self.loop = asyncio.get_running_loop()
        self.engine = Engine(*self.args, kind="run")
        if self.stopping:  # asked before there was an engine
            self._stop_engine()
        if self.cancel_asked:
            self._start_cancel()
        await self.engine.run(until_submission=self.submission_id)

    def cancel(self) -> None:
        """Cancel the submission (the engine ends it as CANCELLED), in the engine's event loop:
        in a database outage it is stored once the database is back (`cancel_when_stored`)."""
        self.cancel_asked = True
        self.call(self._start_cancel)

    def _start_cancel(self) -> None:
        if self.engine is not None and self.cancelling is None:
            self.cancelling = asyncio.create_task(self._cancel(self.engine))

    async def _cancel(self, engine: "Engine") -> None:
        from steepy.api.cancelling import cancel_when_stored

        try:
            await cancel_when_stored(self.args[0], self.submission_id, engine)
        except Exception as e:  # a bug: the engine stops (EngineFailed) instead of running on
            engine.crash(e)

    def stop(self) -> None:
        """Stop the engine at once (its tools are stopped; the submission is left as it is)."""
        self.stopping = True
        self.call(self._stop_engine)

    def _stop_engine(self) -> None:
        if self.engine is not None:
            self.engine.stop.set()

    def call(self, function: Any, *args: Any) -> None:
        """`function(*args)` in the engine's event loop (if it is still running)."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(function, *args)
            except RuntimeError:  # closed meanwhile: the engine has ended
                pass


class _Interrupts:
    """Ctrl-C while the engine runs, counted. In the main thread, while SIGINT goes to
    Python's own handler or to that of an `asyncio.run` the call is made in, a handler of ours
    counts them, and the one found is back afterwards: a KeyboardInterrupt raised anywhere in
    the waiting loop, between two statements, would escape it without cancelling, and
    asyncio's handler only cancels its main task, which waits here until the run has ended
    (the tools ran on to their end). Elsewhere (another handler, another thread) the loop
    counts the KeyboardInterrupts it catches."""

    def __init__(self) -> None:
        self.count = 0
        self._found: Any = None

    def __enter__(self) -> "_Interrupts":
        if threading.current_thread() is threading.main_thread():
            found = signal.getsignal(signal.SIGINT)
            if found is signal.default_int_handler or _asyncio_runners(found):
                signal.signal(signal.SIGINT, self._count)
                self._found = found
        return self

    def _count(self, signum: int, frame: Any) -> None:
        self.count += 1

    def __exit__(self, *exc: Any) -> None:
        if self._found is not None:
            signal.signal(signal.SIGINT, self._found)


def _asyncio_runners(handler: Any) -> bool:
    """Whether `handler` is the SIGINT handler of an `asyncio.run` (asyncio.Runner's, given
    its main task with functools.partial)."""
    method = getattr(handler, "func", handler)
    return isinstance(getattr(method, "__self__", None), asyncio.Runner)


def drive(registry: "Registry", services: dict, macros: dict, settings: "EngineSettings",
          submission_id: str) -> None:
    """Run an engine on one submission until it has finished. Whatever is raised while it
    waits (a KeyboardInterrupt of another SIGINT handler), the engine is stopped and
    waited for before it is raised again: nothing runs on unwatched."""
    driver = _Driver(registry, services, macros, settings, submission_id)
    driver.thread.start()
    try:
        interrupted = _wait(driver)
    except BaseException:
        driver.stop()
        driver.done.wait(settings.agent.kill_grace_period_ms / 1000 + STOP_S)
        raise
    if interrupted:
        raise KeyboardInterrupt
    if driver.error is not None:
        raise EngineFailed(f"the engine failed: {driver.error!r}") from driver.error
    failure = None if driver.engine is None else driver.engine.failure
    if failure is not None:
        from steepy.registry.failures import describe, is_database_failure

        if is_database_failure(failure):
            raise EngineFailed(f"cannot use the {describe(failure)}") from failure
        raise EngineFailed(f"the engine stopped after an internal error: {failure!r}") \
            from failure


def _wait(driver: _Driver) -> int:
    """Until the engine has ended; how many times Ctrl-C was pressed meanwhile."""
    interrupted = 0
    with _Interrupts() as interrupts:
        while not driver.done.is_set():
            try:
                driver.done.wait(JOIN_S)
            except KeyboardInterrupt:
                interrupts.count += 1
            while interrupted < interrupts.count:
                interrupted += 1
                _interrupt(driver, first=interrupted == 1)
    return interrupted


def _interrupt(driver: _Driver, first: bool) -> None:
    """The first Ctrl-C cancels the submission (the engine ends it as CANCELLED); another
    stops the engine at once."""
    if first:
        driver.cancel()
    else:
        driver.stop()
