"""A webhook's URL is shown without its password and tokens (`http://hook:***@host/x?token=***')
by `steepy notifications', GET /notifications, the UI's /notifications page and the worker's
log lines; the delivery goes to the real URL."""

from __future__ import annotations

import asyncio
import json
import logging
import warnings

from click.testing import CliRunner

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.cli import main
from steepy.events.webhooks import Webhook
from steepy.http import ApiContext, create_app
from steepy.notifications.delivery import DeliverySettings, Notifier
from steepy.registry import open_registry
from steepy.registry.failures import masked
from tests.notifications.receiver import Receiver, free_port

PASSWORD, TOKEN = "PASSWORD-IN-URL-1", "TOKEN-IN-QUERY-2"
HTML = {"accept": "text/html"}


def test_a_url_is_shown_without_its_password_and_secret_query_values() -> None:
    assert masked(f"http://hookuser:{PASSWORD}@127.0.0.1:9/x?token={TOKEN}&channel=ops") == (
        "http://hookuser:***@127.0.0.1:9/x?token=***&channel=ops")
    assert masked("https://h/x?api_key=k1&Signature=s2&code=c3&sig=s4&a=1#access_token=t5") == (
        "https://h/x?api_key=***&Signature=***&code=***&sig=***&a=1#access_token=***")
    assert masked("postgresql+psycopg://u@127.0.0.1:1/db?password=DBPASS-6&sslmode=require") \
        == "postgresql+psycopg://u@127.0.0.1:1/db?password=***&sslmode=require"
    assert masked("postgresql://u:p@ss/word@h:5432/db") == "postgresql://u:***@h:5432/db"
    for shown in ("http://127.0.0.1:9/x", "http://user@h/x?a=1", "mailto:a@b.org",
                  "sqlite:///x.db", "http://h:8080/x?token=",
                  "sqlite:////home/me/a-folder-with-a-long-name/steepy.db"):
        assert masked(shown) == shown


def test_a_chat_tools_webhook_whose_secret_is_its_path_is_shown_without_it() -> None:
    """Slack's, Discord's and Teams' incoming webhooks are their URLs: `steepy notifications',
    the API and the UI showed the whole path to anyone who could read them."""
    assert masked("https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/XyZxyzXyZxyzXyZxyzXyZxyz"
                  ) == "https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/***"
    assert masked("https://discord.com/api/webhooks/123456789012345678/aBcDeFgHiJkLmNoPqRsT") \
        == "https://discord.com/api/webhooks/***/***"


async def _deliver(registry, hooks: list[Webhook]) -> None:
    """Cancel a submission (a delivery to each hook) and send until none is pending."""
    from steepy.model import Submission, Workflow

    registry.requests.add_submission(Submission(id="s1", workflow=Workflow(name="w"), name="w"))
    registry.requests.cancel_submission("s1")
    settings = DeliverySettings(subscribers=tuple(hooks), max_attempts=1, timeout_s=2.0)
    stop = asyncio.Event()
    notifier = Notifier(registry.outbox, "engine-1", settings)
    task = asyncio.create_task(notifier.run(stop))
    for _ in range(200):
        found = registry.outbox.deliveries(size=10)[0]
        if len(found) == len(hooks) and all(d["status"] != "PENDING" for d in found):
            break
        await asyncio.sleep(0.05)
    stop.set()
    notifier.wake()
    await asyncio.wait_for(task, 10)


async def test_deliveries_show_and_log_the_url_masked(tmp_path, caplog) -> None:
    up, down = free_port(), free_port()
    hooks = [Webhook(f"http://hookuser:{PASSWORD}@127.0.0.1:{port}/x?token={TOKEN}&n={port}")
             for port in (up, down)]
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(db, hooks)
    with Receiver(up) as receiver, caplog.at_level(logging.WARNING):
        await _deliver(registry, hooks)
    # the real URL was used: the receiver got the token, and the password as Basic auth
    (request,) = receiver.requests
    assert request.path == f"/x?token={TOKEN}&n={up}" and "Authorization" in request.headers
    statuses = {d["url"]: d["status"] for d in registry.outbox.deliveries(size=10)[0]}
    assert statuses == {masked(hooks[0].url): "DELIVERED", masked(hooks[1].url): "FAILED"}
    logged = "\n".join(r.getMessage() for r in caplog.records)
    shown = f"http://hookuser:***@127.0.0.1:{down}/x?token=***&n={down}"
    assert f"to {shown}, try 1:" in logged
    listed = CliRunner().invoke(main, ["notifications", "--db", db])
    as_json = CliRunner().invoke(main, ["notifications", "--db", db, "--json"])
    assert listed.exit_code == as_json.exit_code == 0, listed.output + as_json.output
    assert "hookuser:***@127.0.0.1" in listed.stdout
    assert {d["url"] for d in json.loads(as_json.stdout)} == {
        masked(hook.url) for hook in hooks}
    client = TestClient(create_app(ApiContext(registry)))
    answer = client.get("/notifications")
    assert answer.status_code == 200 and shown in {d["url"] for d in answer.json()}
    page = client.get("/notifications", headers=HTML)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert shown.replace("&", "&amp;") in page.text
    for text in (logged, listed.output, as_json.output, answer.text, page.text):
        assert PASSWORD not in text and TOKEN not in text
    registry.engine.dispose()
