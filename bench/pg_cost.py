"""What a chain costs PostgreSQL: bench/throughput.py's workload (N one-`touch` chains through
`steepy run`) on SQLite and on PostgreSQL, alternating, with the server's side counted.

Usage: .venv/bin/python bench/pg_cost.py [N] [--repeats 3] [--pg scratch|URL] [--port 25478]
                                         [--trees DIR ...]

Prints, per chain: statements by kind (the 10 most called, from pg_stat_statements; those the
clients sent, and apart those run inside them: foreign key checks), transactions (COMMIT and
ROLLBACK calls), round trips and NOTIFYs (read from the protocol by a proxy between the engine
and the server, in a run of its own: a round trip is the client sending after the server
answered; pg_stat_statements misses a NOTIFY psycopg has prepared), the server's CPU seconds (the postmaster, its children and the children it
reaped, from psutil, before and after), how many chains per second one server core could
carry at that cost, and the PostgreSQL/SQLite time ratio (medians).

`--pg scratch` (the default) starts a PostgreSQL cluster of its own in a temporary directory
(initdb and pg_ctl, as `.ci/postgres` does, with pg_stat_statements loaded) and removes it
afterwards; a URL must name a local server that has pg_stat_statements in its
shared_preload_libraries. `--trees A B` compares the steepy of two source trees (copies of
steepy/ before and after a change), their runs taken in turns. Nothing here is asserted: it
prints.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.throughput import Postgres, fan_out, steepy_run  # noqa: E402 - the same workload


@contextmanager
def scratch_cluster(port: int) -> Iterator[str]:
    """A throwaway cluster with pg_stat_statements (fsync off, as `.ci/postgres`'s)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    initdb = found[-1] if found else Path(shutil.which("initdb") or "initdb")
    bin_dir = initdb.parent
    as_user = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
    data = Path(tempfile.mkdtemp(prefix="steepy-pgcost-"))
    if as_user:
        shutil.chown(data, "postgres")
    options = (f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off "
               "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300 "
               "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all")
    subprocess.run([*as_user, str(initdb), "-D", str(data / "d"), "-U", "postgres",
                    "--auth=trust", "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data / "d"), "-l",
                    str(data / "log"), "-w", "-t", "60", "-o", options, "start"], check=True,
                   stdout=subprocess.DEVNULL)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data / "d"), "-m", "fast",
                        "stop"], stdout=subprocess.DEVNULL)
        shutil.rmtree(data, ignore_errors=True)


class RoundTrips:
    """A TCP proxy in a thread of its own that reads PostgreSQL's protocol as it passes
    (clients must connect with sslmode=disable): round trips (each time a client sends after
    the server last spoke on that connection, or first, one), NOTIFY statements executed and
    notifications delivered."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.count = 0
        self.notifies = 0  # NOTIFY statements the clients executed
        self.delivered = 0  # notifications the server sent to listeners
        self.trace: list[tuple[str, bytes, bytes]] | None = None  # a list: every message
        self.shapes: Counter[str] = Counter()  # what the client sent in each round trip
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.port = 0

        async def start() -> None:
            server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()

        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(start(), self.loop)
        ready.wait()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter):
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        turn = ["server"]  # who spoke last on this connection
        notifying: set[bytes] = set()  # names of prepared statements that are NOTIFYs
        prepared: dict[bytes, str] = {}  # this connection's prepared statements: name -> text
        sent: list[str] = []  # the statements of the client's turn so far

        def seen(side: str, kind: bytes, body: bytes) -> None:
            if side == "client" and turn[0] == "server":
                self.count += 1
                if sent:
                    self.shapes[" | ".join(sent)] += 1
                    sent.clear()
            turn[0] = side
            if kind == b"Q" and side == "client":
                sent.append(_short(body.rstrip(b"\0")))
            elif kind == b"P":
                name, text = body.split(b"\0")[:2]
                prepared[name] = _short(text)
            elif kind == b"B" and side == "client":
                sent.append(prepared.get(body.split(b"\0")[1], "?"))
            if self.trace is not None:
                self.trace.append((side, kind, body[:60]))
            if side == "server":
                self.delivered += kind == b"A"
            elif kind == b"Q":  # (a NOTIFY may follow another statement in one query)
                self.notifies += body.upper().count(b"NOTIFY")
            elif kind == b"P":  # Parse: name, query
                name, query = body.split(b"\0")[:2]
                (notifying.add if b"NOTIFY" in query.upper()  # (NOTIFY, or pg_notify())
                 else notifying.discard)(name)
            elif kind == b"B":  # Bind: portal, statement
                self.notifies += body.split(b"\0")[1] in notifying

        async def pump(reader, writer, side: str) -> None:
            try:
                if side == "client":  # the startup message has no kind
                    size = await reader.readexactly(4)
                    writer.write(size + await reader.readexactly(int.from_bytes(size) - 4))
                while True:
                    head = await reader.readexactly(5)
                    body = await reader.readexactly(int.from_bytes(head[1:]) - 4)
                    seen(side, head[:1], body)
                    writer.write(head + body)
                    await writer.drain()
            except (ConnectionError, OSError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        await asyncio.gather(pump(client_r, server_w, "client"),
                             pump(server_r, client_w, "server"))


def _short(sql: bytes) -> str:
    """The first words of a statement, to tell it in a table."""
    return " ".join(sql.decode(errors="replace").split()[:6])


class Server:
    """The PostgreSQL server's side: pg_stat_statements and the CPU of its processes."""

    def __init__(self, url: str):
        import psutil
        import psycopg

        self.pg = Postgres(url)
        self.admin = psycopg.connect(self.pg.admin, autocommit=True)
        self.admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        backend = self.admin.execute("SELECT pg_backend_pid()").fetchone()[0]
        self.postmaster = psutil.Process(backend).parent()
        self.own_db = self.admin.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]

    def cpu(self) -> float:
        """User and system seconds of the server so far: the postmaster, its live children
        and those it reaped."""
        import psutil

        t = self.postmaster.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        for child in self.postmaster.children():
            try:
                c = child.cpu_times()
                total += c.user + c.system
            except psutil.NoSuchProcess:
                pass
        return total

    def statements(self, toplevel: bool) -> list[tuple[str, int, float]]:
        """(query, calls, milliseconds executing) of every database but the admin's, most
        called first: those the clients sent (`toplevel`), or those run inside them (foreign
        key checks)."""
        return self.admin.execute(
            "SELECT regexp_replace(query, '\\s+', ' ', 'g'), sum(calls)::bigint, "
            "sum(total_exec_time)::float "
            "FROM pg_stat_statements WHERE dbid <> %s AND toplevel = %s GROUP BY 1 "
            "ORDER BY 2 DESC", (self.own_db, toplevel)).fetchall()

    def run(self, text: str, url: str | None = None) -> dict:
        """One `steepy run` of `text` on a fresh database (through `url`'s server, a proxy
        of this one, if given): its seconds, the server's CPU and statements."""
        self.admin.execute("SELECT pg_stat_statements_reset()")
        before = self.cpu()
        measured = (Postgres(url) if url else self.pg).run(text)
        time.sleep(0.5)  # the backends of the engine exit and are reaped
        return {"seconds": measured.seconds, "cpu": self.cpu() - before,
                "engine_cpu": measured.cpu_s,
                "statements": self.statements(True), "nested": self.statements(False)}


def kind(query: str) -> str:
    return " ".join(query.split()[:1]).upper()


def report(n: int, pg_runs: list[dict], lite: list[float], proxy: RoundTrips) -> None:
    statements = pg_runs[-1]["statements"]
    per = lambda count: count / n  # noqa: E731
    total = sum(c for _, c, _ in statements)
    said = lambda word: sum(c for q, c, _ in statements if kind(q) == word)  # noqa: E731
    print(f"per chain, N={n} (statements of the last PostgreSQL run):")
    nested = pg_runs[-1]["nested"]
    print(f"  statements        {per(total):6.2f} sent by the clients, and "
          f"{per(sum(c for _, c, _ in nested)):.2f} run inside them (foreign key checks)")
    print(f"  executing         {per(sum(t for _, _, t in statements)):6.3f} ms (the server's "
          "time in the clients' statements, these checks included:")
    for query, count, ms in nested[:4]:
        print(f"    {per(count):6.2f} calls, {per(ms):.3f} ms  {query[:110]}")
    print("    )")
    print(f"  transactions      {per(said('COMMIT') + said('ROLLBACK')):6.2f} "
          f"(COMMIT {per(said('COMMIT')):.2f}, ROLLBACK {per(said('ROLLBACK')):.2f}, "
          f"BEGIN {per(said('BEGIN')):.2f})")
    print(f"  round trips       {per(proxy.count):6.2f} (a run of its own, through the proxy)")
    print("  round trips by what the client sent in them (per chain; `|` separates statements):")
    for shape, count in proxy.shapes.most_common(12):
        print(f"    {per(count):6.2f}  {shape[:200]}")
    print(f"  NOTIFYs           {per(proxy.notifies):6.2f} (notifications delivered to listeners: "
          f"{per(proxy.delivered):.2f})")
    cpu = statistics.median(r["cpu"] for r in pg_runs) / n
    print(f"  server CPU        {cpu * 1000:6.3f} ms -> one server core carries "
          f"{1 / cpu:,.0f} chains/s")
    engine = statistics.median(r["engine_cpu"] for r in pg_runs) / n
    print(f"  engine CPU        {engine * 1000:6.3f} ms (`steepy run` and its tools)")
    print("  the 10 most called statements (calls and executing ms per chain):")
    for query, count, ms in statements[:10]:
        print(f"    {per(count):6.2f} {per(ms):6.3f}  {query[:140]}")
    pg_times = [r["seconds"] for r in pg_runs]
    pg_s, lite_s = statistics.median(pg_times), statistics.median(lite)
    print(f"time: SQLite {lite_s:.2f} s, PostgreSQL {pg_s:.2f} s (runs: "
          f"{', '.join(f'{s:.2f}' for s in lite)} / {', '.join(f'{s:.2f}' for s in pg_times)}),"
          f" PostgreSQL/SQLite {pg_s / lite_s:.2f}")


@contextmanager
def source(tree: str | None) -> Iterator[None]:
    """The commands started inside run the steepy of `tree` (a directory holding a steepy/
    package; None: this one)."""
    before = os.environ.get("PYTHONPATH")
    if tree is not None:
        os.environ["PYTHONPATH"] = tree
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def measure(url: str, n: int, repeats: int, trees: list[str | None]) -> None:
    from sqlalchemy.engine import make_url

    server = Server(url)
    text = fan_out(n)
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min), N={n}, median of {repeats}", flush=True)
    lite: dict[str | None, list[float]] = {tree: [] for tree in trees}
    pg_runs: dict[str | None, list[dict]] = {tree: [] for tree in trees}
    for _ in range(repeats):  # alternating, so that a slow minute hurts each
        for tree in trees:
            with source(tree):
                lite[tree].append(steepy_run(text).seconds)
                pg_runs[tree].append(server.run(text))
            print(f"  {tree or 'steepy'}: SQLite {lite[tree][-1]:.2f} s, PostgreSQL "
                  f"{pg_runs[tree][-1]['seconds']:.2f} s (server CPU "
                  f"{pg_runs[tree][-1]['cpu']:.2f} s)", flush=True)
    for tree in trees:
        proxy = RoundTrips(make_url(url).port or 5432)
        proxied = make_url(url).set(port=proxy.port).update_query_dict(
            {"sslmode": "disable", "gssencmode": "disable"}).render_as_string(hide_password=False)
        with source(tree):
            server.run(text, proxied)
        print(f"\n{tree or 'steepy'}, load now {os.getloadavg()[0]:.2f} (1 min)")
        report(n, pg_runs[tree], lite[tree], proxy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pg", default="scratch", help="scratch, or a server's URL")
    parser.add_argument("--port", type=int, default=25478, help="the scratch cluster's port")
    parser.add_argument("--trees", nargs="+", default=[None],
                        help="compare the steepy of these directories (each holding steepy/)")
    args = parser.parse_args()
    if args.pg != "scratch":
        measure(args.pg, args.n, args.repeats, args.trees)
        return
    with scratch_cluster(args.port) as url:
        measure(url, args.n, args.repeats, args.trees)


if __name__ == "__main__":
    main()
