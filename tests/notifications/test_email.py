"""E-mail notifications through a real SMTP receiver (aiosmtpd on loopback), sent by the
engine's notifier from a real outbox: the default subject and text, AUTH with the password
from the environment (never in a log line, an error or the deliveries), a server that is
down and then up (tried again, delivered once), and a template that cannot render (FAILED at
once, nothing sent, nothing crashed)."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from pathlib import Path

import pytest

from steepy.events.email import Email
from steepy.notifications.delivery import DeliverySettings, Notifier
from steepy.registry import open_registry
from steepy.registry.offload import call
from tests.notifications.receiver import free_port
from tests.notifications.smtp_receiver import USER, SmtpReceiver
from tests.notifications.test_notifier import _pending, _until

PASSWORD = "pw-9f3c1e-never-shown"
# the receiver wants AUTH without TLS (loopback, a test): aiosmtpd warns about that
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")


def _email(port: int, **options) -> Email:
    return Email(host="127.0.0.1", port=port, sender="steepy@example.org",
                 to=("ops@example.org", "me@example.org"), **options)


def _text(message) -> str:
    return message.get_payload(decode=True).decode().replace("\r\n", "\n")  # SMTP's lines


async def _send_all(tmp_path: Path, email: Email, count: int = 1,
                    max_attempts: int = 3) -> list[dict]:
    """`count` submissions cancelled, their e-mail sent (one round, as `steepy run` does
    before it exits); the deliveries."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}", [email])
    try:
        await call(_pending, registry, count)
        settings = DeliverySettings(subscribers=(email,), max_attempts=max_attempts,
                                    timeout_s=5.0)
        await Notifier(registry.outbox, "engine-1", settings).flush()
        return (await call(registry.outbox.deliveries, size=100))[0]
    finally:
        registry.engine.dispose()


async def test_a_message_with_the_default_subject_and_text(tmp_path: Path) -> None:
    port = free_port()
    with SmtpReceiver(port) as receiver:
        [delivery] = await _send_all(tmp_path, _email(port))
        [message] = receiver.messages
    assert delivery["status"] == "DELIVERED" and delivery["attempts"] == 1
    assert delivery["url"] == "mailto:ops@example.org,me@example.org"
    assert message["Subject"] == "steepy: submission s0 s0: CANCELLED"
    assert (message["From"], message["To"]) == ("steepy@example.org",
                                                "ops@example.org, me@example.org")
    assert message["Message-ID"] == f"<{delivery['key']}@steepy>"
    assert message["X-Steepy-Event"] == "submission.status"
    text = _text(message)
    assert text.startswith("Submission s0 (s0) is CANCELLED.\n")
    assert "  status: CANCELLED\n" in text


async def test_templates_make_subject_and_text(tmp_path: Path) -> None:
    port = free_port()
    email = _email(port, subject="[{{ submission.status }}] {{ submission.name }}\nnext line",
                   template="{{ event.kind }} of {{ submission.id }} ({{ steepy.version }})")
    with SmtpReceiver(port) as receiver:
        await _send_all(tmp_path, email)
        [message] = receiver.messages
    from steepy import __version__

    assert message["Subject"] == "[CANCELLED] s0 next line"  # one line, always
    assert _text(message).strip() == (
        f"submission.status of s0 ({__version__})")


async def test_auth_with_the_password_from_the_environment(tmp_path: Path, monkeypatch,
                                                           caplog) -> None:
    port = free_port()
    email = _email(port, username=USER, password_env="SMTP_PASSWORD")
    monkeypatch.setenv("SMTP_PASSWORD", PASSWORD)
    caplog.set_level(logging.DEBUG)
    with SmtpReceiver(port, password=PASSWORD) as receiver:
        [delivery] = await _send_all(tmp_path / "right", email)
        assert delivery["status"] == "DELIVERED" and len(receiver.messages) == 1
        assert receiver.logins == [(USER, PASSWORD)]
        # a password the server does not take: tried, FAILED, said without the password
        monkeypatch.setenv("SMTP_PASSWORD", PASSWORD + "-old")
        (tmp_path / "wrong").mkdir()
        [refused] = await _send_all(tmp_path / "wrong", email, max_attempts=1)
        assert len(receiver.messages) == 1
    assert refused["status"] == "FAILED"
    assert refused["lastError"].startswith("SMTPAuthenticationError: (535")
    monkeypatch.delenv("SMTP_PASSWORD")
    (tmp_path / "unset").mkdir()
    [unset] = await _send_all(tmp_path / "unset", email, max_attempts=1)
    assert unset["lastError"] == ("the environment variable SMTP_PASSWORD (passwordEnv) is "
                                  "not set")
    assert "SMTPAuthenticationError" in caplog.text
    assert PASSWORD not in caplog.text and PASSWORD not in str([delivery, refused, unset])


async def test_a_server_down_then_up_gets_the_message_once(tmp_path: Path) -> None:
    port = free_port()
    email = _email(port)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}", [email])
    settings = DeliverySettings(subscribers=(email,), max_attempts=100, delay_ms=200,
                                max_delay_ms=200, timeout_s=2.0, sweep_s=600.0)
    notifier = Notifier(registry.outbox, "engine-1", settings)
    stop = asyncio.Event()
    task = asyncio.create_task(notifier.run(stop))
    try:
        await call(_pending, registry, 1)
        notifier.wake()
        [down] = await _until("refused twice", lambda found: found and
                              found[0]["attempts"] >= 2, registry, 30)
        assert "ConnectionRefusedError" in down["lastError"]
        with SmtpReceiver(port) as receiver:
            await _until("delivered", lambda found: found[0]["status"] == "DELIVERED",
                         registry, 20)
            await asyncio.sleep(0.5)  # nothing more comes
            assert len(receiver.messages) == 1
    finally:
        stop.set()
        notifier.wake()
        await asyncio.wait_for(task, 30)
        registry.engine.dispose()


async def test_a_template_that_cannot_render_fails_the_delivery_at_once(
        tmp_path: Path) -> None:
    port = free_port()
    email = _email(port, subject="{{ submission.nmae }}")  # a typo (of a name given)
    with SmtpReceiver(port) as receiver:
        [delivery] = await _send_all(tmp_path, email, max_attempts=5)
        assert receiver.messages == []
    assert (delivery["status"], delivery["attempts"]) == ("FAILED", 1)
    assert delivery["lastError"] == (
        "the template: UndefinedError: 'dict object' has no attribute 'nmae'")


async def test_a_server_that_never_answers_holds_up_none_of_the_engines_threads(
        tmp_path: Path) -> None:
    """smtplib blocks its thread until its time limit; in the event loop's own pool (which
    every database call of the engine uses: six threads on two cores) hung sends held the
    engine's reads and writes back for the whole time limit, again and again (twelve quick
    chains took 200 s). They have threads of their own."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def take() -> None:  # connections taken, never answered (no greeting)
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                pass

    taker = threading.Thread(target=take, daemon=True)
    taker.start()
    email = _email(port)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}", [email])
    try:
        await call(_pending, registry, 16)
        settings = DeliverySettings(subscribers=(email,), timeout_s=5.0)
        sending = asyncio.create_task(Notifier(registry.outbox, "engine-1", settings).flush())
        end = time.monotonic() + 4  # (before the first send's time limit)
        while len(accepted) < 8 and time.monotonic() < end:  # more than the loop's pool has
            await asyncio.sleep(0.02)
        assert len(accepted) >= 8
        began = time.monotonic()
        await asyncio.wait_for(asyncio.to_thread(time.sleep, 0), timeout=4)
        waited = time.monotonic() - began
        await sending
        deliveries = (await call(registry.outbox.deliveries, size=100))[0]
    finally:
        stop.set()
        taker.join(5)
        listener.close()
        for connection in accepted:
            connection.close()
        registry.engine.dispose()
    assert waited < 2.0  # (not behind the hung sends, which end after 5 s)
    assert len(deliveries) == 16 and {(d["status"], d["lastError"]) for d in deliveries} == {
        ("PENDING", "no answer within 5 s (TimeoutError)")}
