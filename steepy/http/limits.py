"""Request bodies larger than `http.postMaxSize` are refused with 413, whether the client
announced the size (Content-Length) or streams the body in chunks."""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from steepy.http.errors import ApiError, error_response


class _TooLarge(ApiError):
    def __init__(self, max_size: int):
        super().__init__(413, f"Request body too large (more than {max_size} bytes)",
                         headers={"Connection": "close"})


class BodyLimit:
    def __init__(self, app: ASGIApp, max_size: int):
        self.app = app
        self.max_size = max_size

    def _refuse(self, scope: Scope):
        error = _TooLarge(self.max_size)
        return error_response(Request(scope), error.status, error.message, headers=error.headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            try:
                too_large = int(length) > self.max_size
            except ValueError:
                too_large = False  # the server rejects a malformed length itself
            if too_large:
                await self._refuse(scope)(scope, receive, send)
                return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_size:
                    raise _TooLarge(self.max_size)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._refuse(scope)(scope, receive, send)
