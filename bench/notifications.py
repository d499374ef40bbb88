"""Notifications under kill -9: N workflows end while `steepy worker` is killed with SIGKILL
every few seconds (K times) and a receiver on loopback answers each POST after a short
pause (so kills land mid-request too); then one last worker runs until every delivery is
DELIVERED. Prints events, deliveries, POSTs received, distinct keys, duplicates (the same key
received again: allowed, at least once), events with more than one key, and keys never
received (both must be 0).

Usage: .venv/bin/python bench/notifications.py [N [K]]   (default: 30 8)
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from steepy.registry import open_registry  # noqa: E402

WORKFLOW = """api: 4.7.0
name: nap
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 0}]}
"""


def receiver(pause_s: float) -> tuple[ThreadingHTTPServer, list[dict]]:
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.append({"key": self.headers["Idempotency-Key"],
                             "event": json.loads(body)["event"]["id"]})
            time.sleep(pause_s)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received


def main(n: int, kills: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="steepy-notify-"))
    db = f"sqlite:///{work / 'steepy.db'}"
    server, received = receiver(0.05)
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    env = dict(os.environ, STEEPY_DB_URL=db, STEEPY_TMPPATH=str(work / "tmp"),
               STEEPY_OUTPATH=str(work / "out"), STEEPY_LOGS_PROCESSCHAINS_PATH=str(work / "logs"),
               STEEPY_CONTROLLER_LEASETIMEOUT="2s", STEEPY_CONTROLLER_HEARTBEATINTERVAL="300ms",
               STEEPY_NOTIFICATIONS_WEBHOOKS=json.dumps(
                   [{"url": url, "secret": "s", "events": ["submission.finished",
                                                            "chain.finished"]}]),
               STEEPY_NOTIFICATIONS_DELAY="100ms", STEEPY_NOTIFICATIONS_MAXDELAY="1s",
               STEEPY_NOTIFICATIONS_TIMEOUT="1s")
    workflow = work / "nap.yaml"
    workflow.write_text(WORKFLOW)
    steepy = [sys.executable, "-m", "steepy.cli"]
    services = ["--services", str(ROOT / "services")]
    for _ in range(n):
        subprocess.run([*steepy, "submit", str(workflow), *services], env=env, cwd=work,
                       check=True, capture_output=True)
    start = time.monotonic()
    rng = random.Random(7)
    for _ in range(kills):
        worker = subprocess.Popen([*steepy, "worker", "--agents", "2", *services], env=env,
                                  cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(1.5, 3.0))
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
    worker = subprocess.Popen([*steepy, "worker", "--agents", "2", *services], env=env, cwd=work,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    registry = open_registry(db)
    try:
        while True:
            found, total = registry.outbox.deliveries(size=100_000)
            finished = sum(1 for s in registry.views.list_submissions(size=100_000)[0]
                           if s.status.finished)
            if finished == n and total == 2 * n and all(d["status"] == "DELIVERED"
                                                        for d in found):
                break
            time.sleep(0.2)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait()
    elapsed = time.monotonic() - start
    keys = Counter(r["key"] for r in received)
    keys_per_event = Counter(event for event in {(r["event"], r["key"]) for r in received})
    missing = {d["key"] for d in found} - set(keys)
    print(f"{n} workflows, {kills} kill -9 of the worker, then one more worker: {elapsed:.1f} s")
    print(f"events notified {total}, deliveries {len(found)} DELIVERED, POSTs received "
          f"{len(received)}, distinct keys {len(keys)}, duplicates {len(received) - len(keys)}, "
          f"events with more than one key {sum(1 for c in keys_per_event.values() if c > 1)}, "
          f"keys never received {len(missing)}")
    server.shutdown()


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*(args + [30, 8][len(args):]))
