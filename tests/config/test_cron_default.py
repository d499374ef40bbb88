"""garbageCollector.cron: its default is not parsed at each start (that would load
APScheduler's parser, and asyncio, in every command that reads the configuration), so this
test parses it; a cron given is checked as ever."""

from __future__ import annotations

import pytest

from steepy.config.model import GarbageCollectorSettings
from steepy.model.triggers import quartz_cron


def test_the_default_is_a_quartz_expression() -> None:
    default = GarbageCollectorSettings.model_fields["cron"].default
    assert GarbageCollectorSettings().cron == default
    quartz_cron(default)  # raises if not


@pytest.mark.parametrize("cron, words", [("bad", "not a Quartz cron expression"),
                                         (5, "expected a Quartz cron expression")])
def test_a_cron_given_is_checked(cron, words) -> None:
    with pytest.raises(ValueError, match=words):
        GarbageCollectorSettings(cron=cron)
    assert GarbageCollectorSettings(cron="0 30 2 * * ?").cron == "0 30 2 * * ?"
