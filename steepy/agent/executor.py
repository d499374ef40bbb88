"""The executor: one small process per engine process that spawns every tool and owns them.

Why. A tool runs in a session of its own (a signal to its engine's process group must not
reach it), so nothing ends it when its engine dies. The executor does: it is the tools' parent
and their *subreaper* (`PR_SET_CHILD_SUBREAPER`), so every descendant of a tool, also one that
double-forks or calls `setsid`, stays below it: when a process's parent dies, the process is
re-parented to the executor, not to init. The executor therefore knows every process of every
attempt by walking its own process tree (`/proc/<pid>/task/<tid>/children`, with no scan of
other processes' environments, which read empty while a process is inside `execve`), and once
it has exited nothing it ran is left: it exits only when `waitpid` says it has no child left.

It dies with its engine: it reads a socket from the engine, and when that socket closes (the
engine exited or was killed, `kill -9` of its pid or of its whole process group: the executor
is in a session of its own) it sends SIGTERM to everything below it, waits the longest kill
grace period of the open attempts, sends SIGKILL to what is left, reaps it all and exits.
`PR_SET_PDEATHSIG` (SIGTERM) backs the socket up; since it fires when the *thread* that
started the executor ends, the executor believes it only once its parent has changed.

Which process belongs to which attempt (needed when one attempt ends while others run): a
tool and everything below it are the tool's attempt's, a process re-parented to the executor
is the attempt's whose session it is in, or, when that is unknown, of every attempt that was
open when it started (executor_tree.py says how and why).

When an attempt is over (`R`), whatever is left of it is ended, also a daemon that let go of
the tool's output after the tool exited by itself (SIGTERM, the grace period, SIGKILL). When
the tool exits and nothing was re-parented to the executor, nothing of the attempt can be
left, and the executor says so with the exit (`clean`), which spares the engine its checks.

The engine creates each tool's output pipe and passes its write end with the spawn request;
it reads the output itself (every line goes to its log and its timers anyway: forwarding it
through the executor would only add a copy), while spawning, waiting for the exit and
finding the attempt's processes cost the engine nothing. Should the executor die alone, the
engine hears it at once (its channel closes), ends each running tool's process group itself
(what left the group was re-parented to init and is beyond reach) and fails the attempts
(`run_process`); the next attempt starts a new executor.

The executor process is executor_process.py, run as a script (`python -I -S
executor_process.py FD ENGINE_PID`): it imports only the standard library, so it starts in a
few tens of milliseconds; the frames between the engine and the executor (the protocol) are
executor_wire.py's. The engine's side is here: `start`, `Attempt` and `identity` below.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading
import time

from steepy.errors import SteepyError
from steepy.agent.executor_wire import HEADER, MAX_FDS, _enc, _frame, _frames  # noqa: F401

LOST = "the executor process died"
# the executor process's script (leftovers.orphaned_executors knows it by this name)
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "executor_process.py")


class ExecutorLost(SteepyError):
    """The executor died while an attempt ran (or the attempt's spawn was answered by none)."""


class SpawnError(SteepyError):
    """The tool could not be started; the message is the agent's `cannot run ...`."""


class Attempt:
    """One tool run by the executor, seen from the engine's event loop."""

    def __init__(self, channel: "Channel", ident: int) -> None:
        self.channel = channel
        self.id = ident
        loop = channel.loop
        self.spawned = loop.create_future()  # -> pid, or SpawnError / ExecutorLost
        self.exited = loop.create_future()  # -> returncode (negative: signal)
        self.lost = loop.create_future()  # -> None when the executor died meanwhile
        self.pid: int | None = None
        self.returncode: int | None = None
        self.clean = False  # the tool exited and nothing of the attempt was left then
        self.replies: list = []  # futures of `K' requests, in order

    async def signal(self, sig: int) -> tuple[int, int]:
        """Send `sig` (0: none) to the attempt's process group and to every process of it;
        returns how many of them were alive before (in its group, in all)."""
        if self.lost.done():
            raise ExecutorLost(LOST)
        future = self.channel.loop.create_future()
        self.replies.append(future)
        self.channel.send(b"K", str(self.id).encode(), str(int(sig)).encode())
        done, _ = await _first(future, self.lost)
        if future not in done:
            raise ExecutorLost(LOST)
        return future.result()

    def release(self, grace_ms: int) -> None:
        """The attempt is over: the executor ends what is left of it and forgets it."""
        self.channel.attempts.pop(self.id, None)
        if not self.lost.done() and not self.clean:  # (clean: the executor is done with it)
            self.channel.send(b"R", str(self.id).encode(), str(max(int(grace_ms), 0)).encode())

    # called by the channel
    def _message(self, kind: bytes, fields: list[bytes]) -> None:
        if kind == b"p":
            self.pid = int(fields[0])
            if self.spawned.cancelled():  # its caller was cancelled meanwhile: end it now
                self.release(0)
            _set(self.spawned, self.pid)
        elif kind == b"e":
            _fail(self.spawned, SpawnError(os.fsdecode(fields[0])))
            self.channel.attempts.pop(self.id, None)
        elif kind == b"x":
            self.returncode = int(fields[0])
            self.clean = fields[1] == b"1"
            _set(self.exited, self.returncode)
        elif kind == b"k":
            while self.replies:
                future = self.replies.pop(0)
                if not future.done():
                    future.set_result((int(fields[0]), int(fields[1])))
                    break

    def _lost(self) -> None:
        try:
            _set(self.lost, None)
            _fail(self.spawned, ExecutorLost(LOST))
        except RuntimeError:  # its loop is closed: nobody waits
            pass


async def _first(*futures):
    import asyncio

    return await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)


def _set(future, value) -> None:
    if not future.done():
        future.set_result(value)


def _fail(future, error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
        future.exception()  # retrieved: nobody may be waiting any more


class Channel:
    """One event loop's connection to the executor: the loop reads its replies itself."""

    def __init__(self, executor: "Executor", loop, sock: socket.socket) -> None:
        self.executor = executor
        self.loop = loop
        self.sock = sock
        self.buf = bytearray()
        self.attempts: dict[int, Attempt] = {}
        self.closed = False
        self._lock = threading.Lock()
        loop.add_reader(sock.fileno(), self._readable)

    def send(self, *fields: bytes, fds: list[int] | None = None) -> None:
        data = _frame(*fields)
        with self._lock:
            if fds:
                sent = self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                   struct.pack(f"{len(fds)}i", *fds))])
                if sent < len(data):
                    self.sock.sendall(data[sent:])
            else:
                self.sock.sendall(data)

    def _readable(self) -> None:
        try:
            data = self.sock.recv(65536, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._dead()
            return
        self.buf += data
        for fields in _frames(self.buf):
            attempt = self.attempts.get(int(fields[1]))
            if attempt is not None:
                attempt._message(fields[0], fields[2:])

    def _dead(self) -> None:
        """The executor closed the channel: it died (it closes channels only when it exits)."""
        if self.closed:
            return
        self.close()
        self.executor.died()
        for attempt in list(self.attempts.values()):
            attempt._lost()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                if not self.loop.is_closed():
                    self.loop.remove_reader(self.sock.fileno())
            except (ValueError, OSError, RuntimeError):
                pass
            self.sock.close()


class Executor:
    """The engine's handle on its executor process."""

    def __init__(self) -> None:
        import subprocess

        from steepy.agent.environment import hide_this_process, kept_from_tools

        hide_this_process()  # (before the first tool: a tool could read the engine's secrets)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.control = ours
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", SCRIPT, str(theirs.fileno()),
             str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, pass_fds=[theirs.fileno()], env=kept_from_tools())
        theirs.close()
        self.pid = self.proc.pid
        self.started = _create_time(self.pid)
        self.parent = os.getpid()  # a forked child of the engine needs its own
        self.alive = True
        self.channels: dict[object, Channel] = {}
        self._lock = threading.Lock()

    def channel(self, loop) -> Channel:
        with self._lock:
            for other in [k for k, c in self.channels.items() if k.is_closed() or c.closed]:
                self.channels.pop(other).close()
            found = self.channels.get(loop)
            if found is None:
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    self.control.sendmsg([_frame(b"C")], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                           struct.pack("i", theirs.fileno()))])
                finally:
                    theirs.close()
                found = self.channels[loop] = Channel(self, loop, ours)
            return found

    def died(self) -> None:
        self.alive = False
        try:
            self.proc.poll()  # reap it
        except OSError:
            pass

    def is_alive(self) -> bool:
        return self.alive and self.parent == os.getpid() and self.proc.poll() is None

    def close(self, wait_s: float = 2.0) -> None:
        """Close the sockets (the executor ends what is left and exits) and reap it. Attempts
        still open through it are lost."""
        with self._lock:
            channels = list(self.channels.values())
            self.channels.clear()
            self.control.close()
        for c in channels:
            c._dead()
        try:
            self.proc.wait(wait_s)
        except Exception:
            pass


def _create_time(pid: int) -> float:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return time.time()


_current: Executor | None = None
_current_lock = threading.Lock()


def executor() -> Executor:
    """This process's executor, started if there is none or it died."""
    global _current
    with _current_lock:
        if _current is None or not _current.is_alive():
            if _current is not None and _current.parent == os.getpid():
                _current.close(0)
            _current = Executor()
            if not _registered:
                _register_exit()
        return _current


def identity() -> tuple[int, float] | None:
    """(pid, start time in seconds since the epoch) of the current executor, None before it
    started."""
    current = _current
    return None if current is None else (current.pid, current.started)


_registered = False


def _register_exit() -> None:
    global _registered
    import atexit

    _registered = True

    def close() -> None:
        if _current is not None:
            _current.close()
    atexit.register(close)


def channel(loop) -> Channel:
    """The current executor's channel for `loop` (the executor is started when needed)."""
    ex = executor()
    try:
        return ex.channel(loop)
    except OSError:  # it died just now: another one
        ex.died()
        return executor().channel(loop)


_ids = iter(range(1, 1 << 62))


def _here() -> str:
    try:
        return os.getcwd()
    except OSError:  # the directory was removed: the executor's own is as good as any
        return ""


def start(loop, argv: list[str], env: dict[str, str], cwd, grace_ms: int,
          write_fd: int) -> Attempt:
    """Ask the executor to start `argv` with stdout and stderr on `write_fd` (which may be
    closed as soon as this returns); `Attempt.spawned` gives its pid, or raises SpawnError
    or ExecutorLost. Raises ExecutorLost when no executor can be reached."""
    # the engine's directory now, not the executor's (where the engine was when it started
    # the executor: a program using the Python API may have changed it since)
    fields = [b"S", b"", str(max(int(grace_ms), 0)).encode(),
              os.fsencode(_here() if cwd is None else cwd), str(len(argv)).encode()]
    fields += [os.fsencode(a) for a in argv]
    fields += [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
    for tries in range(2):
        ch = channel(loop)
        ident = next(_ids)
        attempt = Attempt(ch, ident)
        ch.attempts[ident] = attempt
        fields[1] = str(ident).encode()
        try:
            ch.send(*fields, fds=[write_fd])
        except OSError:  # the executor died: a new one (nothing was started)
            ch.attempts.pop(ident, None)
            ch._dead()
            continue
        return attempt
    raise ExecutorLost(LOST)
