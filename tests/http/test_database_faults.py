"""`steepy serve` while its database fails: its SQLite file overwritten with garbage or
deleted, its disk full, its PostgreSQL server stopped. The server keeps answering: /health
503 with the cause (no password), other requests that need the database 503 with one line
of text, no traceback in its log; and once the database is back it recovers by itself."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.components import unavailable
from tests.conftest import ROOT
from tests.engine.test_disk import _fill, disk  # noqa: F401 - a fixture: a 4-MB tmpfs
from tests.http.conftest import Server

pytestmark = [pytest.mark.process]

QUICK = """
api: 4.7.0
name: quick
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 0.1}]}
"""
UNAVAILABLE = "The database is unavailable; try again later"


def _until(server: Server, condition, what: str, timeout_s: float = 30) -> httpx.Response:
    end = time.monotonic() + timeout_s
    while True:
        assert server.proc.poll() is None, f"the server stopped: {''.join(server.output)}"
        response = server.http.get("/health")
        if condition(response):
            return response
        assert time.monotonic() < end, (what, response.status_code, response.text)
        time.sleep(0.1)


def _failing(server: Server, *causes: str) -> dict:
    """The server says the database fails, and why (one of `causes'); requests that need it
    are 503."""
    health = _until(server, lambda r: r.status_code == 503, "health 503")
    body = health.json()
    assert body["health"] is False, body
    assert any(cause in body.get("database", {}).get("error", "") for cause in causes), body
    listed = server.http.get("/workflows")
    assert (listed.status_code, listed.text) == (503, UNAVAILABLE)
    assert listed.headers["content-type"].startswith("text/plain")
    submitted = server.http.post("/workflows", content=QUICK)
    assert (submitted.status_code, submitted.text) == (503, UNAVAILABLE)
    wanted = server.http.get("/workflows", headers={"Accept": "application/json"})
    assert (wanted.status_code, wanted.text) == (503, UNAVAILABLE)  # plain text, as Steep
    time.sleep(1.5)  # the engine meets the failure too (and backs off; it must not stop)
    assert server.proc.poll() is None, "".join(server.output)
    return body


def _recovered(server: Server, earlier: str) -> None:
    _until(server, lambda r: r.status_code == 200, "health 200 again", 60)
    assert server.http.get(f"/workflows/{earlier}").json()["status"] == "SUCCESS"
    again = server.submit(QUICK)
    assert server.wait(again, timeout_s=60)["status"] == "SUCCESS"


def _stopped_cleanly(server: Server) -> str:
    code = server.stop()
    log = "".join(server.output)
    assert code == 0, log
    assert "Traceback" not in log and "Internal server error" not in log, log
    assert "steepy failed" not in log, log
    return log


def _backup(db: Path, to: Path) -> None:
    with sqlite3.connect(db) as source, sqlite3.connect(to) as target:
        source.backup(target)
    source.close()
    target.close()


def _quiet_server(tmp_path: Path, db: Path) -> tuple[Server, str]:
    server = Server(tmp_path, "--agents", "1", env={"STEEPY_DB_URL": f"sqlite:///{db}"})
    first = server.submit(QUICK)
    assert server.wait(first)["status"] == "SUCCESS"
    assert server.http.get("/health").status_code == 200
    return server, first


def test_a_sqlite_file_overwritten_with_garbage(tmp_path) -> None:
    db = tmp_path / "steepy.db"
    server, first = _quiet_server(tmp_path, db)
    try:
        _backup(db, tmp_path / "backup.db")
        with sqlite3.connect(db) as conn:  # the file holds (nearly) all, the WAL little
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        conn.close()
        size = db.stat().st_size
        with open(db, "r+b") as file:  # the same file, its bytes garbage
            file.write(b"\xde\xad\xbe\xef" * (size // 4))
        # (what the engine's checkpoints copy from the WAL may make the first page whole
        # again: SQLite then finds the rest malformed)
        _failing(server, "its file is not a SQLite database", "its file is corrupted")
        db.write_bytes((tmp_path / "backup.db").read_bytes())  # restored in place
        _recovered(server, first)
    finally:
        log = _stopped_cleanly(server)
    assert f"database {db}: its file is" in log
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_sqlite_file_deleted_then_restored(tmp_path) -> None:
    db = tmp_path / "steepy.db"
    server, first = _quiet_server(tmp_path, db)
    try:
        _backup(db, tmp_path / "backup.db")
        db.unlink()
        _failing(server, "its file is gone")
        assert not db.exists()  # nobody made an empty one meanwhile
        shutil.copy(tmp_path / "backup.db", tmp_path / "restored.db")
        os.replace(tmp_path / "restored.db", db)  # another file at the path
        _recovered(server, first)
    finally:
        _stopped_cleanly(server)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_full_disk(tmp_path, disk) -> None:
    server, first = _quiet_server(tmp_path, disk / "steepy.db")
    try:
        _fill(disk)
        body = _until(server, lambda r: r.status_code == 503, "health 503").json()
        assert "the disk is full" in body.get("database", {}).get("error", ""), body
        # writes go on while the WAL has room it used before (SQLite reuses its file)
        for _ in range(200):
            submitted = server.http.post("/workflows", content=QUICK)
            if submitted.status_code != 202:
                break
        assert (submitted.status_code, submitted.text) == (503, UNAVAILABLE)
        assert server.http.get("/workflows").status_code == 200  # reading works
        time.sleep(1.5)
        assert server.proc.poll() is None, "".join(server.output)
        (disk / "filler").unlink()
        _recovered(server, first)
    finally:
        _stopped_cleanly(server)


# -- PostgreSQL: a server of its own, stopped and started again ---------------------------


def _free_port() -> int:
    """A free port below the kernel's ephemeral range (see .ci/ports.sh)."""
    for port in range(26000, 27000):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    unavailable("no free port for a PostgreSQL server of its own")


@pytest.fixture
def private_postgres():
    """A PostgreSQL server of this test (`.ci/postgres' with a data folder and port of its
    own), so that stopping it disturbs no other test; (URL with a password, start, stop)."""
    folder = Path(tempfile.mkdtemp(prefix="steepy-pg-faults-"))
    folder.rmdir()  # .ci/postgres makes it, for the postgres user
    env = dict(os.environ, STEEPY_PG_DIR=str(folder), STEEPY_PG_PORT=str(_free_port()))

    def run(what: str) -> str:
        done = subprocess.run([str(ROOT / ".ci" / "postgres"), what], capture_output=True,
                              text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1] if what == "start" else ""

    try:  # .ci/postgres installs PostgreSQL where it is missing
        first = run("start")
    except AssertionError as e:
        shutil.rmtree(folder, ignore_errors=True)
        unavailable(f"postgresql not available: .ci/postgres start: {str(e).strip()[-200:]}")
    url = make_url(first).set(password="s3cret-Pa55")  # trust: any password does
    try:
        yield url.render_as_string(hide_password=False), lambda: run("start"), \
            lambda: run("stop")
    finally:
        run("stop")
        shutil.rmtree(folder, ignore_errors=True)


def test_postgres_stopped_and_started_again(tmp_path, private_postgres) -> None:
    url, start, stop = private_postgres
    server = Server(tmp_path, "--agents", "1", env={"STEEPY_DB_URL": url})
    try:
        first = server.submit(QUICK)
        assert server.wait(first)["status"] == "SUCCESS"
        stop()
        body = _failing(server, "database postgresql+psycopg://postgres:***@127.0.0.1")
        assert "s3cret-Pa55" not in str(body)
        start()
        _recovered(server, first)
    finally:
        log = _stopped_cleanly(server)
    assert "s3cret-Pa55" not in log
