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
"""

import json
import os
import signal
import sys
import time


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
            time.sleep(d.get("every_ms", 0) / 1000)
            sys.stdout.write(d.get("text", "."))
            sys.stdout.flush()
    if "lines" in call:
        spec = call["lines"]
        values = spec.get("values") or [str(i) for i in range(1, spec.get("count", 0) + 1)]
        for value in values:
            time.sleep(spec.get("every_ms", 0) / 1000)
            say(str(value))
        time.sleep(spec.get("then_block_ms", 0) / 1000)
        if "then_fail" in spec:
            return spec["then_fail"].get("exit_code") or 1
    for line in call.get("print", []):
        say(line)
    if "block_ms" in call:
        time.sleep(call["block_ms"] / 1000)
    if "fail" in call:
        return call["fail"]["exit_code"]
    if "raise" in call:
        say(call["raise"])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
