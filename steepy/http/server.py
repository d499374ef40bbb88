"""Running the API: uvicorn and the engine in one asyncio loop, stopped together."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import signal
import socket
from typing import Any, Callable

import uvicorn

from steepy.http.context import ApiContext

# WebSockets (Steep's event bus, /eventbus): the `websockets' package, through uvicorn's
# sans-I/O protocol where uvicorn has it (0.35 on), else its older one
WS = "websockets-sansio" if "websockets-sansio" in uvicorn.config.WS_PROTOCOLS else "websockets"


def is_loopback(host: str) -> bool:
    """True when every address `host` stands for is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0] for info in infos}
    try:
        return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback
                                       for a in addresses)
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); OSError if impossible."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: `serve' stops server and engine together."""

    @contextlib.contextmanager
    def capture_signals(self):  # newer uvicorn
        yield

    def install_signal_handlers(self) -> None:  # older uvicorn
        pass


async def serve(ctx: ApiContext, app: Any, sock: socket.socket,
                announce: Callable[[], None] = lambda: None) -> None:
    """Serve `app' on `sock' and run `ctx.engine' (if any) until SIGINT or SIGTERM, or until
    either of them stops; then stop the other and wait for both. `announce' is called once
    the engine's agents are registered (GET /agents lists them), unless something ended
    first."""
    loop = asyncio.get_running_loop()
    ctx.loop = loop
    config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False,
                            timeout_graceful_shutdown=5, http="h11", ws=WS)
    server = _Server(config)

    def shutdown() -> None:
        server.should_exit = True
        ctx.stopping.set()  # ends live streams, which would hold the server open
        if ctx.engine is not None:
            ctx.engine.stop.set()

    def on_signal() -> None:
        if server.should_exit:
            server.force_exit = True  # a second Ctrl-C: don't wait for open connections
        shutdown()

    signals = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
            signals.append(sig)
        except (ValueError, RuntimeError, NotImplementedError):
            pass  # not the main thread (tests): setting ctx.stopping stops everything
    tasks = [asyncio.create_task(server.serve(sockets=[sock]), name="http"),
             asyncio.create_task(ctx.stopping.wait(), name="stopping")]
    if ctx.engine is not None:
        tasks.append(asyncio.create_task(ctx.engine.run(), name="engine"))
    try:
        await _announce_when_ready(ctx, tasks, announce)
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        shutdown()  # whichever ended first, the other follows
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
            raise result


async def _announce_when_ready(ctx: ApiContext, tasks: list[asyncio.Task],
                               announce: Callable[[], None]) -> None:
    """Call `announce' once the engine is ready (at once without one), unless a task ended."""
    if ctx.engine is not None:
        ready = asyncio.ensure_future(ctx.engine.ready.wait())
        await asyncio.wait([ready, *tasks], return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if not ctx.engine.ready.is_set():
            return
    if not any(task.done() for task in tasks):
        announce()
