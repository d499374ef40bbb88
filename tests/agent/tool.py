"""A scriptable test tool: `tool.py SPEC COUNTER` does what call k of SPEC says.

SPEC is a JSON file `{"calls": [...]}`; COUNTER a file holding how often the tool has started
(k = that number before this start; the last call repeats). A call is "return" or an object
whose keys run in this order:

  env_file: path        write the environment as JSON
  ignore_term: true     ignore SIGTERM
  term_exit: code       exit with `code` on SIGTERM
  grandchild: path      fork a grandchild in a new session that sleeps 60 s; write its pid
  daemon: path          double-fork a daemon (new session, parent exits); write its pid
  drip: {text, count, every_ms}   write `text` without a newline, `count` times
  lines: {values | count, every_ms, then_block_ms, then_fail: {exit_code}}
  print: [lines]        print lines at once
  block_ms: N           sleep N ms silently
  fail: {exit_code}     exit with that code
  raise: message        print the message and exit 1

A real process cannot "fail" with exit code 0, so `then_fail: {exit_code: 0}` exits 1.

Times run on one schedule that starts when this process was forked (its start time in
/proc/self/stat, rounded up), not when Python got round to reading the spec: `block_ms: 300`
returns 300 ms after the agent started the tool, and `lines: {count: 3, every_ms: 100}` prints at
100, 200 and 300 ms, as the scenarios' simulated runtime does. The interpreter's start-up (tens
of ms idle, a few hundred on a loaded machine) is absorbed by the first wait instead of being
added to it; a tool that falls behind catches up instead of drifting. Nothing is ever early.
"""

import json
import os
import signal
import sys
import time


def _forked_at():
    """CLOCK_BOOTTIME seconds at which this process was forked (rounded up to the next clock
    tick, so never earlier than the real start), or now where /proc does not say."""
    now = time.clock_gettime(time.CLOCK_BOOTTIME)
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        started = (ticks + 1) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return started if now - 60 < started <= now else now


class Schedule:
    """Waits that add up from the moment the process was forked (see the module's doc)."""

    def __init__(self):
        self.due = _forked_at()

    def wait_ms(self, ms):
        self.due += ms / 1000
        delay = self.due - time.clock_gettime(time.CLOCK_BOOTTIME)
        if delay > 0:
            time.sleep(delay)


def count_call(path):
    try:
        with open(path) as f:
            k = int(f.read() or 0)
    except FileNotFoundError:
        k = 0
    with open(path, "w") as f:
        f.write(str(k + 1))
    return k


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def fork_sleeper(pid_file, double):
    pid = os.fork()
    if pid:
        if double:
            os.waitpid(pid, 0)
        return
    os.setsid()
    if double and os.fork():
        os._exit(0)
    with open(pid_file, "w") as f:
        f.write(str(os.getpid()))
    if double:  # a real daemon lets go of the output pipe
        os.closerange(0, 3)
    time.sleep(60)
    os._exit(0)


def wait_for_file(path):
    for _ in range(200):
        if os.path.exists(path) and open(path).read():
            return
        time.sleep(0.01)


def main():
    schedule = Schedule()
    with open(sys.argv[1]) as f:
        calls = json.load(f)["calls"]
    k = count_call(sys.argv[2])
    call = calls[min(k, len(calls) - 1)]
    if call == "return":
        return 0
    if "env_file" in call:
        with open(call["env_file"], "w") as f:
            json.dump(dict(os.environ), f)
    if call.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "term_exit" in call:
        code = call["term_exit"]
        signal.signal(signal.SIGTERM, lambda *_: os._exit(code))
    for key, double in (("grandchild", False), ("daemon", True)):
        if key in call:
            fork_sleeper(call[key], double)
            wait_for_file(call[key])
    if "drip" in call:
        d = call["drip"]
        for _ in range(d.get("count", 1)):
            schedule.wait_ms(d.get("every_ms", 0))
            sys.stdout.write(d.get("text", "."))
            sys.stdout.flush()
    if "lines" in call:
        spec = call["lines"]
        values = spec.get("values") or [str(i) for i in range(1, spec.get("count", 0) + 1)]
        for value in values:
            schedule.wait_ms(spec.get("every_ms", 0))
            say(str(value))
        schedule.wait_ms(spec.get("then_block_ms", 0))
        if "then_fail" in spec:
            return spec["then_fail"].get("exit_code") or 1
    for line in call.get("print", []):
        say(line)
    if "block_ms" in call:
        schedule.wait_ms(call["block_ms"])
    if "fail" in call:
        return call["fail"]["exit_code"]
    if "raise" in call:
        say(call["raise"])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
