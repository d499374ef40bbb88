"""`notifications.*' in the configuration: typed, defaults, located problems (exit 2), event
patterns that name only kinds of the catalogue (steepy/events/), and neither the configuration
nor the registry importing the sender (steepy/notifications/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.config import load_config
from steepy.events import EventKind
from steepy.events.webhooks import FINISHED, Webhook, parse_pattern
from tests.test_imports import import_graph

STEEPY = Path(__file__).resolve().parents[2] / "steepy"


def test_defaults_and_a_webhook(tmp_path: Path) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "notifications:\n  webhooks:\n    - url: https://example.org/hook\n"
        "    - {url: 'http://127.0.0.1:9000/x', events: 'chain.*', secret: s}\n"
        "  maxAttempts: 4\n  timeout: 3s\n")
    config = load_config(tmp_path, environ={})
    n = config.notifications
    assert (n.max_attempts, n.delay, n.max_delay, n.timeout) == (4, 1000, 300000, 3000)
    first, second = (w.webhook() for w in n.webhooks)
    assert first == Webhook("https://example.org/hook", (FINISHED,), None)
    assert second == Webhook("http://127.0.0.1:9000/x", ("chain.*",), "s")
    assert config.warnings == []  # no longer "not implemented yet"
    assert load_config(tmp_path / "none", environ={}).notifications.webhooks == []


def test_bad_values_are_located_lines_and_exit_2(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "notifications:\n"
        "  webhooks:\n"
        "    - url: http://127.0.0.1:9/hook\n"
        "      events: [submission.finished, chain.finshed]\n"
        "    - {url: 'ftp://x', secret: ''}\n"
        "    - {url: 'http://a/b', events: 'chain.*:DONE'}\n"
        "  maxAttempts: 0\n")
    monkeypatch.chdir(tmp_path)
    # (a command that writes events: those that only read check `db' and `logs' alone)
    result = CliRunner().invoke(main, ["cancel", "x"], env={"STEEPY_DB_URL": None})
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[:-1] == [
        "steepy.yaml:4:37: notifications.webhooks[0].events[1]: `chain.finshed' matches no "
        "kind of event; did you mean `chain.finished'?",
        "steepy.yaml:5:13: notifications.webhooks[1].url: `ftp://x' is not an http:// or "
        "https:// URL",
        "steepy.yaml:5:32: notifications.webhooks[1].secret: must not be empty",
        "steepy.yaml:6:35: notifications.webhooks[2].events[0]: `DONE' is not a list of "
        "statuses such as `ERROR,CANCELLED' (unknown: DONE)",
        "steepy.yaml:7:16: notifications.maxAttempts: must be at least 1, got 0"]
    # a receiver is named by its URL in the outbox: each once
    (tmp_path / "steepy.yaml").write_text(
        "notifications.webhooks: [{url: 'http://a/b'}, {url: 'http://a/b', events: '*'}]\n")
    result = CliRunner().invoke(main, ["cancel", "x"], env={"STEEPY_DB_URL": None})
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "steepy.yaml:1:25: notifications.webhooks: `http://a/b' is given twice; give each "
        "webhook once, with all the events it wants")


def test_a_variable_sets_the_webhooks(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={
        "STEEPY_NOTIFICATIONS_WEBHOOKS": "[{url: 'http://h/x', events: [chain.finished:ERROR]}]"})
    [webhook] = [w.webhook() for w in config.notifications.webhooks]
    assert webhook.wants("chain.finished", {"status": "ERROR"})
    assert not webhook.wants("chain.finished", {"status": "SUCCESS"})


@pytest.mark.parametrize(("pattern", "kind", "data", "wanted"), [
    (FINISHED, "submission.status", {"status": "SUCCESS"}, True),
    (FINISHED, "submission.status", {"status": "CANCELLED"}, True),
    (FINISHED, "submission.status", {"status": "RUNNING"}, False),
    (FINISHED, "chain.finished", {"status": "SUCCESS"}, False),
    ("submission.status", "submission.status", {"status": "ACCEPTED"}, True),
    ("chain.*", "chain.started", {}, True),
    ("chain.*", "submission.status", {"status": "ERROR"}, False),
    ("*", "agent.left", {}, True),
    ("*:ERROR,PARTIAL_SUCCESS", "submission.status", {"status": "PARTIAL_SUCCESS"}, True),
    ("*:ERROR", "chain.started", {}, False),
])
def test_patterns(pattern: str, kind: str, data: dict, wanted: bool) -> None:
    assert parse_pattern(pattern).matches(kind, data) is wanted


def test_every_kind_of_the_catalogue_can_be_named_and_no_other() -> None:
    """Patterns are checked against the catalogue (tests/events/test_events.py checks that the
    code writes no kind it does not have)."""
    for kind in EventKind:
        assert parse_pattern(str(kind)).matches(kind, {}), kind
        assert parse_pattern(f"{kind.group}.*").matches(kind, {}), kind
    with pytest.raises(ValueError, match="did you mean `chain.attemptFailed'"):
        parse_pattern("chain.attemptfailed")
    with pytest.raises(ValueError, match="matches no kind of event; the kinds are "
                                         "submission.finished, agent.arrived, "):
        parse_pattern("attempt.*")


def test_the_guide_example_is_a_valid_configuration(tmp_path: Path) -> None:
    guide = (STEEPY.parent / "docs" / "guide" / "notifications.md").read_text()
    example = re.search(r"```yaml\n(notifications:\n.*?)```", guide, re.S)
    assert example is not None
    (tmp_path / "steepy.yaml").write_text(example[1])
    config = load_config(tmp_path, environ={})
    assert config.warnings == []
    secret, failures = (w.webhook() for w in config.notifications.webhooks)
    assert secret.secret and secret.wants("submission.status", {"status": "CANCELLED"})
    assert failures.wants("submission.status", {"status": "PARTIAL_SUCCESS"})
    assert not failures.wants("submission.status", {"status": "SUCCESS"})


def test_the_registry_and_the_configuration_do_not_import_the_sender() -> None:
    """What a webhook wants and is sent is pure (steepy.events.webhooks); only the engine's
    delivery loop is in steepy.notifications, above the registry."""
    graph = import_graph(STEEPY.parent, "steepy")
    below = {name: sorted(t for t in targets if t.startswith("steepy.notifications"))
             for name, targets in graph.items()
             if name.startswith(("steepy.registry", "steepy.config", "steepy.model"))}
    assert "steepy.registry.outbox" in below and "steepy.config.values" in below
    assert below == {name: [] for name in below}
    assert "steepy.events.webhooks" in graph["steepy.registry.outbox"]
