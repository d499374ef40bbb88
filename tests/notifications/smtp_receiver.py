"""A real SMTP receiver for the tests (aiosmtpd, in a thread of the test on loopback): keeps
every message, and with `password` wants AUTH (LOGIN or PLAIN) with user `steepy`."""

from __future__ import annotations

import time
from email import message_from_bytes
from email.message import Message

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

USER = "steepy"


class _Keep:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        message = message_from_bytes(envelope.original_content or envelope.content)
        self.messages.append(message)
        return "250 OK"


class SmtpReceiver:
    def __init__(self, port: int, password: str | None = None):
        self.handler = _Keep()
        self.logins: list[tuple[str, str]] = []
        options: dict = {}
        if password is not None:
            def authenticate(server, session, envelope, mechanism, auth_data) -> AuthResult:
                assert isinstance(auth_data, LoginPassword)
                login = (auth_data.login.decode(), auth_data.password.decode())
                self.logins.append(login)
                return AuthResult(success=login == (USER, password), handled=False)

            options = {"authenticator": authenticate, "auth_required": True,
                       "auth_require_tls": False}
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=port, **options)

    @property
    def messages(self) -> list[Message]:
        return self.handler.messages

    def wait_for(self, count: int, timeout_s: float = 30) -> list[Message]:
        end = time.monotonic() + timeout_s
        while len(self.messages) < count:
            assert time.monotonic() < end, f"{len(self.messages)} of {count} messages arrived"
            time.sleep(0.02)
        return list(self.messages)

    def __enter__(self) -> "SmtpReceiver":
        self.controller.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.controller.stop()
