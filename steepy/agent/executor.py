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

Which process belongs to which attempt (needed when one attempt ends while others run):
- a tool (a child the executor spawned) and everything below it: the tool's attempt;
- a process re-parented to the executor (its parent died) and everything below it: the
  attempt whose session it is in. Each tool leads a session of its own, and a process can
  leave a session only for a new one of its own (`setsid`), so the session of such a process
  is a tool's (exact), or one seen earlier below a tool (learnt on every walk), or unknown:
  a daemon that called `setsid` and whose parents all exited before any walk saw them;
- such an unknown one belongs to every attempt that was open when it was started (its start
  time against the attempts' spans), and it is ended with the first of those that ends (when
  two attempts overlap, a daemon of one may be ended with the other: never an orphan, never a
  process that outlives its attempt; exactly one candidate in the usual case, and before a
  new attempt starts, re-parented processes that only one open attempt can have made are
  pinned to it). A process no attempt's span covers belongs to any attempt that ends.

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

Protocol: frames of a 4-byte big-endian length and fields separated by NUL, over stream
sockets. A control socket (from the executor's start) carries only new channels (a socket
passed with SCM_RIGHTS), one per event loop of the engine process, so that each loop reads its
own replies. On a channel, the engine sends
  S id grace_ms cwd argc argv... env...   with the write end of the tool's output pipe attached
  K id signal      signal the attempt's group and every process of it (0: count only)
  R id grace_ms    the attempt is over: end whatever is left of it (TERM, grace, KILL)
and the executor answers
  p id pid         spawned (pid = process group = session)
  e id text        cannot run it (the message the agent reports)
  x id status clean  the tool exited: its exit code, or minus the signal that ended it; clean
                   1: nothing of the attempt was left then (the executor forgot it, no R)
  k id group all   alive processes of the attempt in its process group, and in all, before
                   the signal was sent

Run as a script (`python executor.py FD ENGINE_PID`) it imports only the standard library, so
it starts in a few tens of milliseconds; the engine's side is `start`, `Attempt` and
`identity` below.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
import threading
import time

HEADER = struct.Struct("!I")
MAX_FDS = 16
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
LOST = "the executor process died"
SIGDEF = (signal.SIGPIPE, signal.SIGXFSZ)  # ignored by Python, default again in a tool


def _frame(*fields: bytes) -> bytes:
    payload = b"\0".join(fields)
    return HEADER.pack(len(payload)) + payload


def _frames(buf: bytearray) -> list[list[bytes]]:
    """Complete frames taken off the front of `buf`."""
    out = []
    while len(buf) >= 4:
        (size,) = HEADER.unpack_from(buf)
        if len(buf) < 4 + size:
            break
        out.append(bytes(buf[4:4 + size]).split(b"\0"))
        del buf[:4 + size]
    return out


def _enc(text: str) -> bytes:
    return os.fsencode(text)


# -- the engine's side ---------------------------------------------------------------------------


class ExecutorLost(Exception):
    """The executor died while an attempt ran (or the attempt's spawn was answered by none)."""


class SpawnError(Exception):
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

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.control = ours
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), str(theirs.fileno()),
             str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, pass_fds=[theirs.fileno()])
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


def start(loop, argv: list[str], env: dict[str, str], cwd, grace_ms: int,
          write_fd: int) -> Attempt:
    """Ask the executor to start `argv` with stdout and stderr on `write_fd` (which may be
    closed as soon as this returns); `Attempt.spawned` gives its pid, or raises SpawnError
    or ExecutorLost. Raises ExecutorLost when no executor can be reached."""
    fields = [b"S", b"", str(max(int(grace_ms), 0)).encode(),
              b"" if cwd is None else os.fsencode(cwd), str(len(argv)).encode()]
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


# -- the executor process ------------------------------------------------------------------------


def _prctl(option: int, value: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _ticks() -> int:
    """Now in the clock of /proc/<pid>/stat's start times (ticks since boot)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * CLK_TCK)


def _stat(pid: int) -> tuple[str, int, int, int, int] | None:
    """(state, ppid, process group, session, start time in ticks) of a process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            pass
    return out


def _children_by_scan() -> Callable[[int], list[int]]:
    """Without /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN): by every process's
    parent, read once per walk."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                parents.setdefault(st[1], []).append(int(name))
    return lambda pid: parents.get(pid, [])


class _Run:
    """An attempt, seen from the executor."""

    def __init__(self, ident: bytes, chan: "_Chan", grace_ms: int) -> None:
        self.id = ident
        self.chan = chan
        self.grace_ms = grace_ms
        self.pid = 0
        self.proc = None
        # processes of this attempt start at or after `start` and, unless re-parented to the
        # executor and unknown, before `end` (both in /proc's start-time ticks since boot)
        self.start = _ticks()
        self.end: int | None = None
        self.reaped = False
        self.kill_at: float | None = None  # released, leftovers get SIGKILL then


class _Chan:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.fds: list[int] = []

    def send(self, *fields: bytes) -> None:
        try:
            self.sock.sendall(_frame(*fields))
        except OSError:
            pass


class _Executor:
    def __init__(self, control: socket.socket, engine_pid: int) -> None:
        self.me = os.getpid()
        self.engine_pid = engine_pid
        self.control = _Chan(control)
        self.chans: dict[int, _Chan] = {}
        self.runs: dict[bytes, _Run] = {}  # open, or released with leftovers being ended
        self.by_pid: dict[int, _Run] = {}  # tools not reaped yet
        self.history: list[_Run] = []  # released attempts (for the spans of unknown orphans)
        self.sessions: dict[int, _Run] = {}  # session id -> attempt
        self.devnull = os.open(os.devnull, os.O_RDONLY)
        self.quit = False
        self.killing = 0  # released attempts whose leftovers are being ended
        self.children = _children if os.path.exists(
            f"/proc/{self.me}/task/{self.me}/children") else None
        if self.children is not None:  # our own children, read often: one pread each time
            mine = os.open(f"/proc/{self.me}/task/{self.me}/children", os.O_RDONLY)

            def children(pid: int) -> list[int]:
                if pid != self.me:
                    return _children(pid)
                data, chunk = b"", os.pread(mine, 65536, 0)
                while chunk:
                    data += chunk
                    chunk = os.pread(mine, 65536, len(data)) if len(chunk) == 65536 else b""
                return [int(c) for c in data.split()]
            self.children = children

    # -- attribution -----------------------------------------------------------------------------

    def walk(self, only: "_Run | None" = None) -> dict[int, tuple[tuple, list[_Run]]]:
        """Processes below the executor (with `only`, those that may be its): pid -> (its
        stat, the attempts it may belong to; empty: any attempt)."""
        children = self.children or _children_by_scan()
        found: dict[int, tuple[tuple, list[_Run]]] = {}
        for top in children(self.me):
            run = self.by_pid.get(top)
            if run is not None and only is not None and run is not only:
                continue  # another attempt's tool: its tree is that attempt's
            st = _stat(top)
            if st is None:
                continue
            owners = [run] if run is not None else self.owners_of(st)
            if only is not None and owners and only not in owners:
                continue
            stack = [(top, st)]
            while stack:
                pid, st = stack.pop()
                if run is not None:  # below a tool: its session is the tool's attempt's now
                    self.sessions[st[3]] = run
                elif len(owners) == 1 and owners[0].id in self.runs:
                    self.sessions.setdefault(st[3], owners[0])
                found[pid] = (st, owners)
                for c in children(pid):
                    cst = _stat(c)
                    if cst is not None and c not in found:
                        stack.append((c, cst))
        return found

    def pin(self) -> None:
        """Before a new attempt opens: an adopted process of an unknown session that only
        one open attempt can have made is that attempt's (the new one cannot have made it,
        even when it starts within the same clock tick)."""
        if self.children is None:
            return
        for top in self.children(self.me):
            if top not in self.by_pid:
                st = _stat(top)
                if st is not None and st[3] not in self.sessions:
                    owners = self.owners_of(st)
                    if len(owners) == 1 and owners[0].end is None:
                        self.sessions[st[3]] = owners[0]

    def owners_of(self, st: tuple) -> list[_Run]:
        run = self.sessions.get(st[3])
        if run is not None and run.id in self.runs:
            return [run]
        started = st[4]
        return [r for r in list(self.runs.values()) + self.history
                if r.start <= started and (r.end is None or started <= r.end)]

    def members(self, run: _Run) -> tuple[list[int], int]:
        """Alive processes of `run` and how many of them are in its process group."""
        pids, in_group = [], 0
        for pid, (st, owners) in self.walk(run).items():
            if st[0] in ("Z", "X"):
                continue
            pids.append(pid)
            in_group += st[2] == run.pid
        return pids, in_group

    def signal_run(self, run: _Run, sig: int) -> tuple[int, int]:
        pids, in_group = self.members(run)
        if sig:
            if run.pid and (not run.reaped or in_group):  # the group id is still taken
                try:
                    os.killpg(run.pid, sig)
                except OSError:
                    pass
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        return in_group, len(pids)

    # -- requests --------------------------------------------------------------------------------

    def spawn(self, chan: _Chan, fields: list[bytes], fd: int | None) -> None:
        # argv and environment stay bytes (os.posix_spawn and subprocess take them so)
        ident, grace = fields[1], int(fields[2])
        cwd = os.fsdecode(fields[3]) or None
        argc = int(fields[4])
        argv = fields[5:5 + argc]
        env = dict(item.split(b"=", 1) for item in fields[5 + argc:])
        self.pin()
        run = _Run(ident, chan, grace)
        if fd is None:
            chan.send(b"e", ident, b"cannot run: no output pipe")
            return
        proc = None
        try:
            if cwd is None:  # posix_spawn costs half of what subprocess does
                pid = self.spawn_fast(argv, env, fd)
            else:  # (posix_spawn cannot change the directory before Python 3.13)
                import subprocess

                proc = subprocess.Popen(argv, stdin=self.devnull, stdout=fd, stderr=fd, env=env,
                                        cwd=cwd, start_new_session=True)
                pid = proc.pid
        except Exception as e:  # noqa: BLE001 (whatever it is, the executor goes on)
            name = os.fsdecode(argv[0]) if argv else ""
            reason = getattr(e, "strerror", None) or str(e)
            filename = getattr(e, "filename", None)
            if filename is not None and os.fsdecode(filename) != name:  # e.g. the directory
                reason += f": `{os.fsdecode(filename)}'"
            chan.send(b"e", ident, _enc(f"cannot run `{name}': {reason}"))
            return
        finally:
            os.close(fd)
        run.pid, run.proc = pid, proc
        self.runs[ident] = run
        self.by_pid[pid] = run
        self.sessions[pid] = run
        chan.send(b"p", ident, str(pid).encode())

    def spawn_fast(self, argv: list[bytes], env: dict[bytes, bytes], fd: int) -> int:
        """As subprocess.Popen(argv, stdin=DEVNULL, stdout=fd, stderr=fd, env=env,
        start_new_session=True) would: the program is looked for on the PATH of `env`, the
        first error that is not `not found' is the one reported, SIGPIPE and SIGXFSZ are
        default again (every descriptor of the executor is close-on-exec)."""
        import errno

        name = argv[0]
        if b"/" in name:
            candidates = [name]
        else:
            candidates = [os.path.join(d, name) for d in
                          env.get(b"PATH", os.fsencode(os.defpath)).split(b":")]
        first, code = None, errno.ENOENT
        for path in candidates:
            if len(candidates) > 1 and not os.access(path, os.X_OK):
                # (a failed posix_spawn costs a process: look first, as cheaply as execve)
                if first is None and os.path.exists(path):
                    first = errno.EACCES
                continue
            try:
                return os.posix_spawn(path, argv, env, file_actions=[
                    (os.POSIX_SPAWN_DUP2, self.devnull, 0), (os.POSIX_SPAWN_DUP2, fd, 1),
                    (os.POSIX_SPAWN_DUP2, fd, 2)], setsid=True, setsigdef=SIGDEF)
            except OSError as e:
                code = e.errno
                if first is None and e.errno not in (errno.ENOENT, errno.ENOTDIR):
                    first = e.errno
        code = first or code
        raise OSError(code, os.strerror(code), name)

    def request(self, chan: _Chan, fields: list[bytes]) -> None:
        kind = fields[0]
        if kind == b"S":
            self.spawn(chan, fields, chan.fds.pop(0) if chan.fds else None)
        elif kind == b"C":
            if chan.fds:
                fd = chan.fds.pop(0)
                self.chans[fd] = _Chan(socket.socket(fileno=fd))
        elif kind == b"K":
            run = self.runs.get(fields[1])
            counts = (0, 0) if run is None else self.signal_run(run, int(fields[2]))
            chan.send(b"k", fields[1], str(counts[0]).encode(), str(counts[1]).encode())
        elif kind == b"R":
            run = self.runs.get(fields[1])
            if run is not None:
                self.release(run, int(fields[2]))

    def release(self, run: _Run, grace_ms: int) -> None:
        if run.end is None:
            run.end = _ticks()
            self.history.append(run)
            del self.history[:-1024]
        if run.reaped and self.children is not None and all(
                c in self.by_pid for c in self.children(self.me)):
            self.forget(run)  # its tool is gone and nothing was re-parented to us: no leftover
        elif self.signal_run(run, signal.SIGTERM if grace_ms > 0 else signal.SIGKILL)[1]:
            run.kill_at = time.monotonic() + grace_ms / 1000
            self.killing += 1
        else:
            self.forget(run)

    def forget(self, run: _Run) -> None:
        self.runs.pop(run.id, None)
        if run.kill_at is not None:
            run.kill_at = None
            self.killing -= 1
        for sid in [s for s, r in self.sessions.items() if r is run]:
            del self.sessions[sid]

    def timers(self) -> float | None:
        now = time.monotonic()
        due = None
        for run in list(self.runs.values()):
            if run.kill_at is None:
                continue
            if run.kill_at <= now:
                if not self.signal_run(run, signal.SIGKILL)[1]:
                    self.forget(run)
                else:
                    run.kill_at = now + 0.1  # again until none is left
            due = run.kill_at if due is None or (run.kill_at or due) < due else due
        return None if due is None else max(due - now, 0)

    def reap(self) -> bool:
        """Reap every child that ended; False when none is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            run = self.by_pid.pop(pid, None)
            if run is not None:
                code = os.waitstatus_to_exitcode(status)
                run.reaped = True
                if run.proc is not None:
                    run.proc.returncode = code  # subprocess must never wait for it itself
                # nothing was re-parented to us: nothing of the attempt is left (what the
                # tool left would be our child now), so it is over here and now
                clean = self.children is not None and all(
                    c in self.by_pid for c in self.children(self.me))
                if clean:
                    run.end = _ticks()
                    self.history.append(run)
                    del self.history[:-1024]
                    self.forget(run)
                run.chan.send(b"x", run.id, str(code).encode(), b"1" if clean else b"0")

    # -- the loop --------------------------------------------------------------------------------

    def read(self, chan: _Chan) -> bool:
        try:
            data, anc, _, _ = chan.sock.recvmsg(65536, socket.CMSG_SPACE(4 * MAX_FDS),
                                                socket.MSG_CMSG_CLOEXEC)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                n = len(payload) // 4
                chan.fds.extend(struct.unpack(f"{n}i", payload[:4 * n]))
        if not data:
            return False
        chan.buf += data
        for fields in _frames(chan.buf):
            try:
                self.request(chan, fields)
            except Exception:  # noqa: BLE001 (a malformed request must not end every tool)
                if fields[0] in (b"S", b"K") and len(fields) > 1:
                    chan.send(b"e" if fields[0] == b"S" else b"k", fields[1],
                              *([b"cannot run: bad request"] if fields[0] == b"S"
                                else [b"0", b"0"]))
        return True

    def run(self) -> None:
        import select

        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        # caught, not ignored: an ignored signal would stay ignored in the tools
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: None)  # PR_SET_PDEATHSIG, or anyone's
        signal.signal(signal.SIGINT, lambda *_: None)  # Ctrl-C: the engine decides
        poller = select.poll()
        poller.register(wake_r, select.POLLIN)
        poller.register(self.control.sock.fileno(), select.POLLIN)
        registered = set()
        control = self.control.sock.fileno()
        while not self.quit:
            if len(registered) != len(self.chans):
                for fd in self.chans.keys() - registered:
                    poller.register(fd, select.POLLIN)
                    registered.add(fd)
            wait = self.timers() if self.killing else None
            for fd, _ in poller.poll(None if wait is None else wait * 1000 + 1):
                if fd == wake_r:  # SIGCHLD, or SIGTERM
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except OSError:
                        pass
                    self.reap()
                    if os.getppid() != self.engine_pid:  # the engine died (PDEATHSIG)
                        self.quit = True
                elif fd == control:
                    if not self.read(self.control):
                        self.quit = True
                else:
                    chan = self.chans.get(fd)
                    if chan is not None and not self.read(chan):
                        self.drop(chan, fd, poller, registered)
        self.shutdown()

    def drop(self, chan: _Chan, fd: int, poller, registered: set) -> None:
        """A loop's channel closed: its open attempts are over."""
        poller.unregister(fd)
        registered.discard(fd)
        del self.chans[fd]
        for passed in chan.fds:
            os.close(passed)
        for run in list(self.runs.values()):
            if run.chan is chan and run.end is None:
                self.release(run, run.grace_ms)
        chan.sock.close()

    def shutdown(self) -> None:
        """The engine is gone: SIGTERM to every process below, the longest grace period of the
        open attempts, SIGKILL to what is left; exit once no child is left."""
        for chan in [self.control, *self.chans.values()]:
            chan.sock.close()
        now = time.monotonic()
        # the open attempts' grace periods, and those of attempts being ended already
        kill_at = max([now + r.grace_ms / 1000 for r in self.runs.values() if r.end is None]
                      + [r.kill_at for r in self.runs.values() if r.kill_at is not None],
                      default=now)
        groups = {r.pid for r in self.runs.values() if r.pid and not r.reaped}
        for sig, end in ((signal.SIGTERM, kill_at), (signal.SIGKILL, None)):
            told: set[int] = set()
            pause = 0.01
            while True:
                if not self.reap():
                    os._exit(0)
                if end is not None and time.monotonic() >= end:
                    break
                for g in groups:
                    try:
                        os.killpg(g, sig)
                    except OSError:
                        pass
                groups = set()  # the groups' members are below us anyway; once is enough
                alive = {pid for pid, (st, _) in self.walk().items() if st[0] not in ("Z", "X")}
                for pid in alive - told:
                    try:
                        os.kill(pid, sig)
                    except OSError:
                        pass
                told |= alive
                if sig == signal.SIGKILL and pause < 1.0:
                    pause = min(pause * 1.5, 1.0)
                    if pause >= 0.5:
                        told = set()  # still there: SIGKILL again
                time.sleep(pause if sig == signal.SIGKILL else 0.01)


def main() -> None:
    fd, engine_pid = int(sys.argv[1]), int(sys.argv[2])
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    control = socket.socket(fileno=fd)
    control.set_inheritable(False)  # no tool may hold it (posix_spawn closes no descriptor)
    ex = _Executor(control, engine_pid)
    if os.getppid() != engine_pid:  # the engine died before PR_SET_PDEATHSIG was set
        ex.shutdown()
    ex.run()


if __name__ == "__main__":
    main()
