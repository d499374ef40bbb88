"""Run one attempt of a tool as a supervised subprocess.

The tool runs in its own session and process group, with stdout and stderr merged into one
pipe that is split into lines as data arrives. Timers (maximum runtime, maximum inactivity,
deadline) use the event loop's monotonic clock; whichever expires first decides the outcome at
the moment it fires, and only then is the process tree killed: SIGTERM to the group, a grace
period, SIGKILL to the group and to descendants that left it (extensions sections 7 and 8).

Descendants that left the group are found two ways: the tool's process tree just before the
kill, and every process carrying this attempt's `STEEPY_TREE_TOKEN` environment variable (which
also finds double-forked daemons whose parent has already exited).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal as signals
import subprocess
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from steepy.agent.cancel import CancelToken
from steepy.agent.guardian import guardian
from steepy.agent.tree import (POLL_S, TOKEN_VAR, is_alive, group_exists, kill_all,
                               kill_and_wait, pgid, signal_group, tree_of)

__all__ = ["Limits", "RunResult", "run_process", "RUNTIME", "INACTIVITY", "DEADLINE", "TOKEN_VAR"]

RUNTIME = "maxRuntime"
INACTIVITY = "maxInactivity"
DEADLINE = "deadline"

MAX_LINE = 1 << 20  # a longer line without newline is cut into pieces
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
    timeout_kind: str | None = None  # RUNTIME | INACTIVITY | DEADLINE
    cancelled: bool = False
    spawn_error: str | None = None  # the tool could not be started at all
    last_lines: list[str] = field(default_factory=list)
    late_ms: float | None = None  # how late the timer that ended the attempt fired

    @property
    def ok(self) -> bool:
        return (self.exit_code == 0 and self.timeout_kind is None and not self.cancelled
                and self.spawn_error is None)


class _Watch:
    """Reads the tool's output and notices its exit; keeps the timers; records the first
    decision. The exit is watched through a pidfd where the OS has one (no thread per tool)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limits: Limits, keep: int,
                 on_lines: Callable[[list[str]], None] | None) -> None:
        self.loop = loop
        self.limits = limits
        self.lines: deque[str] = deque(maxlen=max(keep, 0))
        self.on_lines = on_lines
        self.partial = b""
        self.started = loop.time()
        self.last_line = self.started
        self.decided: asyncio.Future = loop.create_future()  # "exit" | "cancel" | (kind, late_ms)
        self.exited: asyncio.Future = loop.create_future()
        self.pipe_closed: asyncio.Future = loop.create_future()
        self.timer: asyncio.TimerHandle | None = None
        self.proc: subprocess.Popen | None = None
        self.read_fd = -1
        self.pid_fd = -1

    def attach(self, proc: subprocess.Popen, read_fd: int) -> None:
        self.proc, self.read_fd = proc, read_fd
        os.set_blocking(read_fd, False)
        self.loop.add_reader(read_fd, self._readable)
        try:
            self.pid_fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):  # no pidfd: a thread waits instead
            self.loop.run_in_executor(None, proc.wait).add_done_callback(
                lambda _: self.loop.call_soon_threadsafe(self._process_exited))
        else:
            self.loop.add_reader(self.pid_fd, self._process_exited)

    def detach(self) -> None:
        """Stop watching and close our descriptors (idempotent)."""
        for attr in ("read_fd", "pid_fd"):
            fd = getattr(self, attr)
            if fd >= 0:
                self.loop.remove_reader(fd)
                os.close(fd)
                setattr(self, attr, -1)

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
        texts = [(p[:-1] if p.endswith(b"\r") else p).decode("utf-8", "replace") for p in pieces]
        self.lines.extend(texts)
        if self.on_lines is not None:
            self.on_lines(texts)

    def _pipe_lost(self) -> None:
        if self.partial:
            pieces, self.partial = [self.partial], b""
            self._emit(pieces)
        if not self.pipe_closed.done():
            self.pipe_closed.set_result(None)

    def _process_exited(self) -> None:
        if self.exited.done() or self.proc is None:
            return
        if self.pid_fd >= 0:
            self.loop.remove_reader(self.pid_fd)
        if self.proc.poll() is None:  # not really gone yet (cannot happen with a pidfd)
            return
        self.exited.set_result(None)
        self._decide("exit")

    # -- timers and cancellation -----------------------------------------------------------------

    def _decide(self, decision: object) -> None:
        if not self.decided.done():
            self.decided.set_result(decision)
            self.disarm()

    def on_cancel(self) -> None:
        self._decide("cancel")

    def _expiries(self) -> list[tuple[float, int, str]]:
        # rank breaks ties from the outside in: deadline, maximum runtime, maximum inactivity
        limits, out = self.limits, []
        if limits.deadline_at is not None:
            out.append((limits.deadline_at, 0, DEADLINE))
        if limits.runtime_ms is not None:
            out.append((self.started + limits.runtime_ms / 1000, 1, RUNTIME))
        if limits.inactivity_ms is not None:
            out.append((self.last_line + limits.inactivity_ms / 1000, 2, INACTIVITY))
        return out

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


async def _terminate(pid: int, watch: _Watch, token: str, since: float, grace_s: float,
                     on_kill: Callable[[], Awaitable[None]] | None) -> None:
    """SIGTERM to the group, wait up to `grace_s` for it to end, SIGKILL to whatever is left."""
    loop = watch.loop
    victims = tree_of(pid, token, since)  # before SIGTERM: children are still below the tool
    in_group = [p for p in victims if pgid(p) == pid]
    signal_group(pid, signals.SIGTERM)
    extra = asyncio.ensure_future(on_kill()) if on_kill is not None else None
    end = loop.time() + grace_s
    if not watch.exited.done():
        await asyncio.wait([watch.exited], timeout=grace_s)
    # zombies keep a group id in use (orphans may never be reaped here), so ask the members
    while (loop.time() < end and group_exists(pid)
           and any(is_alive(p) for p in in_group)):
        await asyncio.sleep(POLL_S)
    if not watch.exited.done() or group_exists(pid):
        signal_group(pid, signals.SIGKILL)
    await kill_and_wait(victims)
    if not watch.exited.done():
        await asyncio.wait([watch.exited], timeout=2.0)  # SIGKILL cannot be ignored
    if not watch.pipe_closed.done():
        await asyncio.wait([watch.pipe_closed], timeout=POLL_S * 5)
    if extra is not None:
        done, _ = await asyncio.wait([extra], timeout=max(grace_s, 1.0))
        if not done:
            extra.cancel()


async def _clean_up_after_exit(pid: int, watch: _Watch, token: str, since: float,
                               grace_s: float) -> None:
    """The tool exited by itself: end what it left behind and read the rest of its output."""
    if group_exists(pid):  # background children still in its group (or their zombies)
        victims = tree_of(pid, token, since)
        in_group = [p for p in victims if pgid(p) == pid]
        if in_group:
            signal_group(pid, signals.SIGTERM)
            end = watch.loop.time() + grace_s
            while watch.loop.time() < end and any(is_alive(p) for p in in_group):
                await asyncio.sleep(POLL_S)
        signal_group(pid, signals.SIGKILL)
        await kill_and_wait(victims)
    if not watch.pipe_closed.done():
        await asyncio.wait([watch.pipe_closed], timeout=PIPE_LINGER_S)
        if not watch.pipe_closed.done():  # a descendant that left the group holds the pipe
            await kill_and_wait(tree_of(pid, token, since))
            await asyncio.wait([watch.pipe_closed], timeout=PIPE_LINGER_S)


async def run_process(argv: list[str], *, env: dict[str, str], cwd: str | os.PathLike | None,
                      limits: Limits, token: CancelToken,
                      on_lines: Callable[[list[str]], None] | None = None,
                      keep_lines: int = 100, grace_ms: int = 5000,
                      on_kill: Callable[[], Awaitable[None]] | None = None) -> RunResult:
    """Run `argv` (never through a shell) until it exits, times out or is cancelled.

    `env` is the tool's whole environment; this function adds TOKEN_VAR to it (pass a fresh
    dict). `on_lines` gets every batch of complete output lines as it arrives; `on_kill` (e.g. `docker
    kill`) runs beside the SIGTERM when a timeout or cancellation ends the attempt.
    """
    loop = asyncio.get_running_loop()
    result = RunResult()
    if token.cancelled:
        result.cancelled = True
        return result
    tree_token = secrets.token_hex(8)
    env[TOKEN_VAR] = tree_token  # the caller's fresh dict: not copied again (hot path)
    since = time.time()
    watch = _Watch(loop, limits, keep_lines, on_lines)
    keeper = guardian()  # ends the attempt's processes should this process die
    keeper.watch(tree_token, grace_ms)
    read_fd, write_fd = os.pipe()  # not inheritable: only this tool gets the write end
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
                                env=env, cwd=cwd, start_new_session=True)
    except (OSError, ValueError, TypeError, subprocess.SubprocessError) as e:
        keeper.release(tree_token)
        os.close(read_fd)
        reason = getattr(e, "strerror", None) or str(e)
        filename = getattr(e, "filename", None)
        if filename is not None and str(filename) != argv[0]:  # e.g. the working directory
            reason += f": `{filename}'"
        result.spawn_error = f"cannot run `{argv[0]}': {reason}"
        return result
    finally:
        os.close(write_fd)
    pid = proc.pid
    keeper.started(tree_token, pid, grace_ms)
    grace_s = max(grace_ms, 0) / 1000
    watch.attach(proc, read_fd)
    watch.arm()
    token.add_callback(watch.on_cancel)
    try:
        decision = await watch.decided
        if decision == "exit":
            await _clean_up_after_exit(pid, watch, tree_token, since, grace_s)
        else:
            if decision == "cancel":
                result.cancelled = True
            else:
                result.timeout_kind, result.late_ms = decision
            await _terminate(pid, watch, tree_token, since, grace_s, on_kill)
    except asyncio.CancelledError:  # the caller's task was cancelled: no grace period
        signal_group(pid, signals.SIGKILL)
        kill_all(tree_of(pid, tree_token, since))
        raise
    finally:
        watch.disarm()
        token.remove_callback(watch.on_cancel)
        watch.detach()
        if proc.returncode is None:  # SIGKILLed just now: reap it, it cannot take long
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        keeper.release(tree_token)
    code = proc.returncode
    if code is not None:
        if code < 0:
            result.signal = -code
        else:
            result.exit_code = code
    result.last_lines = list(watch.lines)
    return result
