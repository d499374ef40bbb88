"""The executor process (see steepy.agent.executor for what it is for): run as a script,
`python -I -S executor_process.py FD ENGINE_PID`, it imports only the standard library, so it
starts in a few tens of milliseconds. It spawns the tools it is asked to on the channels from
its engine, reaps them, and ends what is left of an attempt when it is over, and of every
attempt when its engine is gone; which process belongs to which attempt is executor_tree.py's,
the frames it reads and writes are executor_wire.py's.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
import time

if __package__:  # imported as steepy.agent.executor_process
    from steepy.agent.executor_tree import _Run, _ticks, _Tree
    from steepy.agent.executor_wire import MAX_FDS, _enc, _frame, _frames
else:  # run as a script: `-I` left this file's directory off sys.path (appended: stdlib first)
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from executor_tree import _Run, _ticks, _Tree
    from executor_wire import MAX_FDS, _enc, _frame, _frames

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# every disposition back to default in a tool: Python ignores SIGPIPE and SIGXFSZ, and an
# engine started under `nohup` (or by anything that ignores signals) passes SIGHUP and the
# like on as ignored; a tool behaves the same however its engine was started
SIGDEF = tuple(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP})


def _prctl(option: int, value: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


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


class _Executor(_Tree):
    def __init__(self, control: socket.socket, engine_pid: int) -> None:
        super().__init__()  # the attempts (runs, by_pid, history, sessions) and the tree
        self.engine_pid = engine_pid
        self.home = os.getcwd()  # it never changes its directory
        self.control = _Chan(control)
        self.chans: dict[int, _Chan] = {}
        self.devnull = os.open(os.devnull, os.O_RDONLY)
        self.quit = False
        self.killing = 0  # released attempts whose leftovers are being ended

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
            if cwd is None or cwd == self.home:  # posix_spawn costs half of subprocess
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
