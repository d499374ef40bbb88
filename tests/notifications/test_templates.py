"""Templates of notifications: checked when the configuration is read (a located problem,
exit 2), rendered in Jinja2's sandbox with the webhook's document, sent signed as rendered to
a real HTTP receiver, and a render error a FAILED delivery; the guide's chat examples render
to JSON whatever a name holds."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.config import load_config
from steepy.events.templates import TemplateProblem, render
from steepy.events.webhooks import Webhook, body, document
from steepy.notifications.delivery import DeliverySettings, Notifier
from steepy.registry import open_registry
from steepy.registry.offload import call
from tests.notifications.receiver import Receiver
from tests.notifications.test_notifier import _pending

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "notifications.md"
AWKWARD = 'a "quoted" name\nwith a new line, a \\ and </script>'


def _document(name: str = AWKWARD, status: str = "ERROR") -> dict:
    event = {"id": 7, "kind": "submission.status", "time": "2024-05-01T10:00:00Z",
             "submissionId": "abc", "status": status}
    return json.loads(body(document(event, {"id": "abc", "name": name, "status": status})))


def _problems(tmp_path: Path, text: str, monkeypatch) -> list[str]:
    (tmp_path / "steepy.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    # (a command that writes events: those that only read check `db' and `logs' alone)
    result = CliRunner().invoke(main, ["cancel", "x"], env={"STEEPY_DB_URL": None})
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.stderr.splitlines()[:-1]


def test_template_problems_are_located_when_the_configuration_is_read(
        tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "bad.j2").write_text('{"text": "ok"}\n{"more": {{ event.kind }\n')
    assert _problems(tmp_path, (
        "notifications:\n"
        "  webhooks:\n"
        "    - url: http://127.0.0.1:9/a\n"
        "      template: '{{ submission.name '\n"
        "    - url: http://127.0.0.1:9/b\n"
        "      templateFile: bad.j2\n"
        "    - url: http://127.0.0.1:9/c\n"
        "      templateFile: missing.j2\n"
        "    - {url: 'http://127.0.0.1:9/d', template: x, templateFile: bad.j2}\n"), monkeypatch
    ) == [
        "steepy.yaml:4:17: notifications.webhooks[0].template: line 1 of the template: "
        "unexpected end of template, expected 'end of print statement'.",
        "steepy.yaml:6:21: notifications.webhooks[1].templateFile: bad.j2: "
        "line 2 of the template: unexpected '}'",
        "steepy.yaml:8:21: notifications.webhooks[2].templateFile: cannot read missing.j2: "
        "No such file or directory",
        "steepy.yaml:9:64: notifications.webhooks[3].templateFile: give `template' or "
        "`templateFile', not both"]


def test_names_not_given_and_other_templates_are_refused_with_the_configuration(
        tmp_path: Path, monkeypatch) -> None:
    """A misspelt name passed every check and failed each delivery (its only notification a
    FAILED one); a webhook URL in an error shows no secret, and a port that is no number is
    refused (every try raised outside the delivery's error handling, retried for ever)."""
    assert _problems(tmp_path, (
        "notifications:\n"
        "  webhooks:\n"
        "    - url: http://127.0.0.1:9/a\n"
        "      template: '{\"text\": {{ submision.name | tojson }}}'\n"
        "    - url: http://127.0.0.1:9/b\n"
        "      template: '{% set n = 1 %}{% include \"x\" %}'\n"
        "    - url: 'htps://hook:SECRET_PW@127.0.0.1:9/c?token=SECRET_TOK'\n"
        "    - url: 'http://hook:SECRET_PW@127.0.0.1:abc/d?token=SECRET_TOK'\n"
        "  email: {host: localhost, from: a@b.org, to: [c@d.org], subject: '{{ sumbission }}'}\n"
    ), monkeypatch) == [
        "steepy.yaml:4:17: notifications.webhooks[0].template: line 1 of the template: "
        "`submision' is undefined (did you mean `submission'? a template is given `event', "
        "`submission' and `steepy')",
        "steepy.yaml:6:17: notifications.webhooks[1].template: line 1 of the template: it "
        "reads another template, and a notification's template is one text",
        "steepy.yaml:7:12: notifications.webhooks[2].url: `htps://hook:***@127.0.0.1:9/c?"
        "token=***' is not an http:// or https:// URL",
        "steepy.yaml:8:12: notifications.webhooks[3].url: `http://hook:***@127.0.0.1:abc/d?"
        "token=***' is no URL: Port could not be cast to integer value as 'abc'",
        "steepy.yaml:9:67: notifications.email.subject: line 1 of the template: `sumbission' "
        "is undefined (did you mean `submission'? a template is given `event', `submission' "
        "and `steepy')"]
    assert render("{% set n = 2 %}{{ n }} {{ range(2) | list }}", _document()) == "2 [0, 1]"


def test_email_problems_are_located(tmp_path: Path, monkeypatch) -> None:
    assert _problems(tmp_path, (
        "notifications:\n"
        "  email:\n"
        "    host: smtp.example.org\n"
        "    from: nobody\n"
        "    to: []\n"
        "    starttls: true\n"
        "    ssl: true\n"
        "    username: steepy\n"
        "    events: [chain.finshed]\n"
        "    subject: '{% if %}'\n"), monkeypatch) == [
        "steepy.yaml:4:11: notifications.email.from: `nobody' is not an e-mail address such "
        "as `me@example.org'",
        "steepy.yaml:5:9: notifications.email.to: is required with `host'",
        "steepy.yaml:7:10: notifications.email.ssl: give `ssl' (TLS from the start) or "
        "`starttls', not both",
        "steepy.yaml:8:15: notifications.email.username: give `username' and `passwordEnv' "
        "(the variable that holds the password) together",
        "steepy.yaml:9:14: notifications.email.events[0]: `chain.finshed' matches no kind of "
        "event; did you mean `chain.finished'?",
        "steepy.yaml:10:14: notifications.email.subject: line 1 of the template: Expected an "
        "expression, got 'end of statement block'"]


def test_a_template_file_is_read_beside_the_configuration(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "slack.j2").write_text('{"text": {{ submission.name | tojson }}}')
    (tmp_path / "conf" / "steepy.yaml").write_text(
        "notifications:\n  webhooks:\n    - {url: 'http://h/x', templateFile: slack.j2}\n"
        "  email: {host: h, from: a@b, to: c@d, ssl: true, username: u, passwordEnv: PW}\n")
    config = load_config(tmp_path / "conf", environ={})
    webhook, email = config.notifications.subscribers()
    assert json.loads(webhook.raw_body(json.dumps(_document()))) == {"text": AWKWARD}
    assert (email.url, email.port, email.password_env) == ("mailto:c@d", 465, "PW")
    assert config.notifications["webhooks"][0]["templateFile"] == "slack.j2"


def test_the_sandbox_and_strict_names() -> None:
    with pytest.raises(TemplateProblem, match="`submision' is undefined"):
        render("{{ submision.name }}", _document())
    with pytest.raises(TemplateProblem, match="'dict object' has no attribute 'nmae'"):
        render("{{ submission.nmae }}", _document())
    with pytest.raises(TemplateProblem, match="SecurityError"):  # no Python internals
        render("{{ event.__class__.__mro__ }}", _document())
    with pytest.raises(TemplateProblem, match="ZeroDivisionError"):
        render("{{ 1 / 0 }}", _document())
    assert render("{{ event.id + 1 }} {{ steepy.version | length > 0 }}", _document()) == (
        "8 True")


def _guide_templates() -> dict[str, str]:
    """The guide's template files (`templates/NAME`) -> their text."""
    return dict(re.findall(r'^```jinja title="templates/(.+?)"\n(.*?)^```', GUIDE.read_text(),
                           re.S | re.M))


def test_the_guide_has_a_template_for_each_chat_tool() -> None:
    assert sorted(_guide_templates()) == ["mattermost.json.j2", "slack.json.j2",
                                          "teams-adaptive.json.j2", "teams-messagecard.json.j2"]


@pytest.mark.parametrize("name", sorted(_guide_templates()))
def test_the_guide_chat_templates_render_to_json(name: str) -> None:
    """Rendered for an awkward name (quotes, a new line, a backslash), the result parses as
    JSON and holds the name as it is."""
    webhook = Webhook("http://h/x", template=_guide_templates()[name])
    for status in ("SUCCESS", "ERROR"):
        parsed = json.loads(webhook.raw_body(json.dumps(_document(status=status))))
        strings = json.dumps(parsed, ensure_ascii=False)
        assert json.dumps(AWKWARD, ensure_ascii=False)[1:-1] in strings, parsed
        assert status in strings


async def test_the_rendered_body_is_sent_and_signed_and_a_bad_one_fails(
        tmp_path: Path) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "notifications:\n  webhooks:\n"
        "    - url: http://127.0.0.1:{port}/hook\n"
        "      secret: s3\n"
        "      contentType: text/plain; charset=utf-8\n"
        "      template: 'Run {{ submission.name }} is {{ submission.status }}'\n"
        "    - url: http://127.0.0.1:{port}/typo\n"
        "      template: '{{ submission.nmae }}'\n")
    with Receiver() as receiver:
        port = receiver.server.server_address[1]
        text = (tmp_path / "steepy.yaml").read_text().replace("{port}", str(port))
        (tmp_path / "steepy.yaml").write_text(text)
        subscribers = load_config(tmp_path, environ={}).notifications.subscribers()
        registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}", subscribers)
        try:
            await call(_pending, registry, 1)
            settings = DeliverySettings(subscribers=subscribers, timeout_s=5.0)
            await Notifier(registry.outbox, "engine-1", settings).flush()
            typo, sent = (await call(registry.outbox.deliveries))[0]
        finally:
            registry.engine.dispose()
        [request] = receiver.requests
    assert request.body == b"Run s0 is CANCELLED"
    assert request.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert hmac.compare_digest(request.headers["X-Steepy-Signature"], "sha256=" + hmac.new(
        b"s3", request.body, hashlib.sha256).hexdigest())
    assert sent["status"] == "DELIVERED"
    assert (typo["url"], typo["status"], typo["attempts"]) == (
        f"http://127.0.0.1:{port}/typo", "FAILED", 1)
    assert typo["lastError"] == ("the template: UndefinedError: 'dict object' has no "
                                 "attribute 'nmae'")
