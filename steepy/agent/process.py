"""Run one attempt of a tool as a supervised subprocess.

The tool is spawned by this process's executor (steepy.agent.executor), in a session and
process group of its own, with stdout and stderr merged into one pipe that this process reads
and splits into lines as data arrives; the executor reports the tool's exit. Timers (maximum
runtime, maximum inactivity, deadline) use the event loop's monotonic clock; whichever expires
first decides the outcome at the moment it fires, and only then is the process tree killed:
SIGTERM to the group and to every other process of the attempt, a grace period, SIGKILL to
what is left (extensions sections 7 and 8).

The executor is the subreaper of every tool, so it knows every process of an attempt, also
those that left the group (a double-forked daemon whose parent has exited included).
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal as signals
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from steepy.agent import executor
from steepy.agent.cancel import CancelToken
from steepy.agent.executor import LOST, Attempt, ExecutorLost, SpawnError
from steepy.agent.leftovers import end_run_leftovers
from steepy.agent.tree import POLL_S, group_exists, signal_group
from steepy.model.timeouts import TimeoutKind

__all__ = ["Limits", "RunResult", "run_process"]

MAX_LINE = 1 << 20  # a longer line without line end (\n, \r or \r\n) is cut into pieces
PIPE_LINGER_S = 0.2  # after the tool exited, how long someone else may keep its output open


@dataclass
class Limits:
    runtime_ms: int | None = None  # per attempt
    inactivity_ms: int | None = None  # per attempt, restarted by every complete line
    deadline_at: float | None = None  # loop.time() at which the executable's deadline passes


@dataclass
class RunResult:
    exit_code: int | None = None
    signal: int | None = None
    timeout_kind: TimeoutKind | None = None  # the timeout that ended it
    cancelled: bool = False
    spawn_error: str | None = None  # the tool could not be started at all
    last_lines: list[str] = field(default_factory=list)
    late_ms: float | None = None  # how late the timer that ended the attempt fired
    executor_lost: bool = False  # the executor died while it ran (spawn_error says so)

    @property
    def ok(self) -> bool:
        return (self.exit_code == 0 and self.timeout_kind is None and not self.cancelled
                and self.spawn_error is None)


class _Watch:
    """Reads the tool's output and hears of its exit from the executor; keeps the timers;
    records the first decision."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limits: Limits, keep: int,
                 on_lines: Callable[[list[str]], None] | None) -> None:
        self.loop = loop
        self.limits = limits
        self.lines: deque[str] = deque(maxlen=max(keep, 0))
        self.on_lines = on_lines
        self.partial = b""
        self.after_cr = False  # the last read ended with \r: a \n next is part of its line end
        self.started = loop.time()
        self.last_line = self.started
        # "exit" | "cancel" | "lost" (the executor died) | (kind, late_ms)
        self.decided: asyncio.Future = loop.create_future()
        self.exited: asyncio.Future = loop.create_future()
        self.pipe_closed: asyncio.Future = loop.create_future()
        self.timer: asyncio.TimerHandle | None = None
        self.attempt: Attempt | None = None
        self.read_fd = -1

    def attach(self, attempt: Attempt, read_fd: int) -> None:
        self.attempt, self.read_fd = attempt, read_fd
        os.set_blocking(read_fd, False)
        self.loop.add_reader(read_fd, self._readable)
        self.exited = attempt.exited
        attempt.exited.add_done_callback(lambda _: self._decide("exit"))
        attempt.lost.add_done_callback(lambda _: self._decide("lost"))

    def detach(self) -> None:
        """Stop watching and close our descriptor (idempotent)."""
        if self.read_fd >= 0:
            self.loop.remove_reader(self.read_fd)
            os.close(self.read_fd)
            self.read_fd = -1

    # -- output ----------------------------------------------------------------------------------

    def _readable(self) -> None:
        try:
            data = os.read(self.read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._data(data)
        else:
            self.loop.remove_reader(self.read_fd)
            self._pipe_lost()

    def _data(self, data: bytes) -> None:
        # A line ends at \n, \r or \r\n, as for Steep's readLine: a progress bar that
        # rewrites its line with \r (curl, wget, tqdm) is active, each state a line of its own.
        if self.after_cr:  # the \n of a \r\n split between two reads ends no second line
            self.after_cr = False
            if data.startswith(b"\n"):
                data = data[1:]
                if not data:
                    return
        if b"\r" in data:
            self.after_cr = data.endswith(b"\r")
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\n" not in data:
            self.partial += data
            if len(self.partial) <= MAX_LINE:
                return  # a partial line is no activity
            pieces, self.partial = [self.partial], b""
        else:
            pieces = (self.partial + data).split(b"\n")
            self.partial = pieces.pop()
        self.last_line = self.loop.time()
        self._emit(pieces)

    def _emit(self, pieces: list[bytes]) -> None:
        texts = [p.decode("utf-8", "replace") for p in pieces]
        self.lines.extend(texts)
        if self.on_lines is not None:
            self.on_lines(texts)

    def _pipe_lost(self) -> None:
        if self.partial:
            pieces, self.partial = [self.partial], b""
            self._emit(pieces)
        if not self.pipe_closed.done():
            self.pipe_closed.set_result(None)

    # -- timers and cancellation -----------------------------------------------------------------

    def _decide(self, decision: object) -> None:
        if not self.decided.done():
            self.decided.set_result(decision)
            self.disarm()

    def on_cancel(self) -> None:
        self._decide("cancel")

    def _expiries(self) -> list[tuple[float, int, TimeoutKind]]:
        # rank breaks ties from the outside in: deadline, maximum runtime, maximum inactivity
        limits, due = self.limits, []
        if limits.deadline_at is not None:
            due.append((limits.deadline_at, TimeoutKind.DEADLINE))
        if limits.runtime_ms is not None:
            due.append((self.started + limits.runtime_ms / 1000, TimeoutKind.MAX_RUNTIME))
        if limits.inactivity_ms is not None:
            due.append((self.last_line + limits.inactivity_ms / 1000, TimeoutKind.MAX_INACTIVITY))
        return [(when, kind.rank, kind) for when, kind in due]

    def arm(self) -> None:
        expiries = self._expiries()
        if expiries and not self.decided.done():
            self.timer = self.loop.call_at(min(expiries)[0], self._check)

    def disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _check(self) -> None:
        # Inactivity is not re-armed per line: when its timer fires early we just look again.
        self.timer = None
        if self.decided.done():
            return
        now = self.loop.time()
        due = [e for e in self._expiries() if e[0] <= now]
        if due:
            when, _, kind = min(due)
            self._decide((kind, (now - when) * 1000))
        else:
            self.arm()


async def _gone(attempt: Attempt, timeout_s: float = 1.0) -> None:
    """Wait until no process of the attempt is left (SIGKILL is not delivered at once)."""
    end = asyncio.get_running_loop().time() + timeout_s
    while (await attempt.signal(0))[1] and asyncio.get_running_loop().time() < end:
        await asyncio.sleep(POLL_S / 5)


async def _terminate(attempt: Attempt, watch: _Watch, grace_s: float,
                     on_kill: Callable[[], Awaitable[None]] | None) -> None:
    """SIGTERM to the group and every other process of the attempt, wait up to `grace_s` for
    them to end, SIGKILL to whatever is left."""
    loop = watch.loop
    extra = asyncio.ensure_future(on_kill()) if on_kill is not None else None
    try:
        await attempt.signal(signals.SIGTERM)
        end = loop.time() + grace_s
        if not watch.exited.done():
            await asyncio.wait([watch.exited, attempt.lost], timeout=grace_s,
                               return_when=asyncio.FIRST_COMPLETED)
        # what the tool left (its group's members, or descendants that left the group)
        while loop.time() < end and (await attempt.signal(0))[1]:
            await asyncio.sleep(POLL_S)
        if not watch.exited.done() or (await attempt.signal(0))[1]:
            await attempt.signal(signals.SIGKILL)
            await _gone(attempt)
        if not watch.exited.done():  # SIGKILL cannot be ignored
            await asyncio.wait([watch.exited, attempt.lost], timeout=2.0,
                               return_when=asyncio.FIRST_COMPLETED)
        if not watch.pipe_closed.done():
            await asyncio.wait([watch.pipe_closed], timeout=POLL_S * 5)
    finally:
        if extra is not None:
            done, _ = await asyncio.wait([extra], timeout=max(grace_s, 1.0))
            if not done:
                extra.cancel()


async def _clean_up_after_exit(attempt: Attempt, watch: _Watch, grace_s: float) -> None:
    """The tool exited by itself: end what it left behind and read the rest of its output."""
    # background children still in its group (the executor has reaped the tool itself)
    if not attempt.clean and group_exists(attempt.pid) and (await attempt.signal(0))[0]:
        await attempt.signal(signals.SIGTERM)
        end = watch.loop.time() + grace_s
        while watch.loop.time() < end and (await attempt.signal(0))[0]:
            await asyncio.sleep(POLL_S)
        await attempt.signal(signals.SIGKILL)
        await _gone(attempt)
    if not watch.pipe_closed.done():
        await asyncio.wait([watch.pipe_closed], timeout=PIPE_LINGER_S)
        if not watch.pipe_closed.done():  # a descendant that left the group holds the pipe
            await attempt.signal(signals.SIGKILL)
            await _gone(attempt)
            await asyncio.wait([watch.pipe_closed], timeout=PIPE_LINGER_S)


@functools.cache
def _scanner() -> ThreadPoolExecutor:
    """The thread that looks for what an executor that died left (made when first needed)."""
    return ThreadPoolExecutor(1, thread_name_prefix="leftovers")


async def _end_group(pgid: int, watch: _Watch, grace_s: float) -> None:
    """The executor died: end the tool's process group from here (its other processes were
    re-parented to init; only the group is known)."""
    signal_group(pgid, signals.SIGTERM)
    end = watch.loop.time() + grace_s
    while watch.loop.time() < end and group_exists(pgid):
        await asyncio.sleep(POLL_S)
    signal_group(pgid, signals.SIGKILL)
    if not watch.pipe_closed.done():
        await asyncio.wait([watch.pipe_closed], timeout=PIPE_LINGER_S)


async def run_process(argv: list[str], *, env: dict[str, str], cwd: str | os.PathLike | None,
                      limits: Limits, token: CancelToken,
                      on_lines: Callable[[list[str]], None] | None = None,
                      keep_lines: int = 100, grace_ms: int = 5000,
                      on_kill: Callable[[], Awaitable[None]] | None = None,
                      on_started: Callable[[int], None] | None = None) -> RunResult:
    """Run `argv` (never through a shell) until it exits, times out or is cancelled.

    `env` is the tool's whole environment. `on_lines` gets every batch of complete output
    lines as it arrives; `on_kill` (e.g. `docker kill`) runs beside the SIGTERM when a timeout
    or cancellation ends the attempt; `on_started` gets the tool's pid (= its process group)
    as soon as it runs. Should the executor die meanwhile, the tool's group is ended from here
    and the attempt fails (`spawn_error`, `executor_lost`).
    """
    result = RunResult()
    if token.cancelled:
        result.cancelled = True
        return result
    # the timers count from here, before the spawn
    watch = _Watch(asyncio.get_running_loop(), limits, keep_lines, on_lines)
    attempt = await _spawn(argv, env, cwd, grace_ms, watch, result)
    if attempt is None:
        return result
    watch.arm()
    token.add_callback(watch.on_cancel)
    run = (env.get("STEEPY_PROCESS_CHAIN_ID"), env.get("STEEPY_RUN_NUMBER"))
    await _supervise(attempt, watch, token, result, grace_ms, on_kill, on_started,
                     run if all(run) else None)
    code = attempt.returncode
    if code is not None:
        if code < 0:
            result.signal = -code
        else:
            result.exit_code = code
    result.last_lines = list(watch.lines)
    return result


async def _spawn(argv: list[str], env: dict[str, str], cwd: str | os.PathLike | None,
                 grace_ms: int, watch: _Watch, result: RunResult) -> Attempt | None:
    """The tool started by the executor, its output read by `watch`; None when it could not
    be started (`result` says why)."""
    read_fd, write_fd = os.pipe()  # not inheritable: only this tool gets the write end
    try:
        attempt = executor.start(watch.loop, argv, env, cwd, grace_ms, write_fd)
        await attempt.spawned  # cancelled: the tool is ended as soon as its pid arrives
    except (SpawnError, ExecutorLost) as e:
        os.close(read_fd)
        result.spawn_error = str(e)
        result.executor_lost = isinstance(e, ExecutorLost)
        return None
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    watch.attach(attempt, read_fd)
    return attempt


async def _supervise(attempt: Attempt, watch: _Watch, token: CancelToken, result: RunResult,
                     grace_ms: int, on_kill: Callable[[], Awaitable[None]] | None,
                     on_started: Callable[[int], None] | None,
                     run: tuple[str, str] | None = None) -> None:
    """Act on what ends the attempt first (its exit, a timeout, a cancel, the executor's
    death), then let go of it. `run`: the chain and run number in the tool's environment,
    by which what left its process group is found when the executor died."""
    grace_s = max(grace_ms, 0) / 1000
    release_grace = grace_ms
    try:
        if on_started is not None:
            on_started(attempt.pid)
        decision = await watch.decided
        if decision == "exit":
            await _clean_up_after_exit(attempt, watch, grace_s)
        elif decision == "lost":
            raise ExecutorLost(LOST)
        else:
            if decision == "cancel":
                result.cancelled = True
            else:
                result.timeout_kind, result.late_ms = decision
            await _terminate(attempt, watch, grace_s, on_kill)
    except ExecutorLost:
        await _end_group(attempt.pid, watch, grace_s)
        if run is not None:  # what left the group (`setsid'), re-parented to init: a scan
            # of every process, in a thread of its own (not the pool registry calls use)
            await asyncio.get_running_loop().run_in_executor(
                _scanner(), end_run_leftovers, run[0], int(run[1]), grace_s)
        if attempt.returncode is None:
            result.spawn_error = f"{LOST} while the tool ran (it was ended)"
            result.executor_lost = True
    except asyncio.CancelledError:  # the caller's task was cancelled: no grace period
        release_grace = 0
        raise
    finally:
        watch.disarm()
        token.remove_callback(watch.on_cancel)
        watch.detach()
        if attempt.returncode is None and not attempt.lost.done() and release_grace:
            # SIGKILLed just now: its exit is on its way, it cannot take long
            await asyncio.wait([attempt.exited, attempt.lost], timeout=1.0,
                               return_when=asyncio.FIRST_COMPLETED)
        attempt.release(release_grace)
