"""Sending one e-mail notification through SMTP (smtplib, blocking: the notifier runs it in a
thread). The password is read from its environment variable at each try and never put in a
log line or an error: an error that quotes it has it replaced by `***`."""

from __future__ import annotations

import os
import smtplib
import ssl
from email.message import EmailMessage
from typing import Mapping

from steepy.errors import SteepyError
from steepy.events.email import Email


class SmtpRefused(SteepyError):
    """A try that did not deliver; the message is safe to log and store. `final`: trying
    again would not help, or would send some recipients the message again."""

    def __init__(self, message: str, final: bool = False):
        super().__init__(message)
        self.final = final


def _connect(email: Email, timeout_s: float) -> smtplib.SMTP:
    if email.ssl:
        return smtplib.SMTP_SSL(email.host, email.port, timeout=timeout_s,
                                context=ssl.create_default_context())
    client = smtplib.SMTP(email.host, email.port, timeout=timeout_s)
    if email.starttls:
        try:
            client.starttls(context=ssl.create_default_context())
        except BaseException:
            client.close()
            raise
    return client


def send(email: Email, message: EmailMessage, timeout_s: float,
         environ: Mapping[str, str] = os.environ) -> None:
    """Hand `message` to the server; SmtpRefused says why not."""
    password = None
    if email.password_env is not None:
        password = environ.get(email.password_env)
        if not password:
            raise SmtpRefused(f"the environment variable {email.password_env} (passwordEnv) "
                              "is not set")
    try:
        with _connect(email, timeout_s) as client:
            if email.username is not None and password is not None:
                client.login(email.username, password)
            refused = client.send_message(message)
    except (smtplib.SMTPException, OSError, ValueError) as e:  # (a password no ASCII)
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        if password:
            text = text.replace(password, "***")
        raise SmtpRefused(text) from None
    if refused:  # some recipients took it: another try would send it to them again
        said = ", ".join(f"{to} ({code} {reply.decode(errors='replace')})"
                         for to, (code, reply) in sorted(refused.items()))
        raise SmtpRefused(f"delivered to some recipients, refused for {said}", final=True)
