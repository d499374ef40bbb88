"""What lost-run recovery ends of a dead engine's attempts (steepy.agent.leftovers): the
process groups its tools led, and nothing else. A group id is the pid of the tool that led
it; once the group ended, Linux gives that pid to a new process (on a busy machine within
minutes), and the new process's group is not the attempt's."""

from __future__ import annotations

import subprocess

import psutil
import pytest

from steepy.agent.leftovers import SPAWN_SLACK_S, end_groups

pytestmark = [pytest.mark.process]


@pytest.fixture
def other():
    """A process leading a group (and session) of its own, as a tool or an executor does."""
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


def test_a_group_whose_id_was_given_again_is_left_alone(other) -> None:
    """The attempt started long before this group's leader: the attempt's tool had that pid
    once, its group ended and the id went to another process (an executor of another engine
    was killed so, then every tool of that engine failed)."""
    created = psutil.Process(other.pid).create_time()
    assert end_groups([(other.pid, created - SPAWN_SLACK_S - 60)], 0.2) == 0
    assert other.poll() is None


def test_the_group_of_the_attempts_own_tool_is_ended(other) -> None:
    created = psutil.Process(other.pid).create_time()
    assert end_groups([(other.pid, created - 0.5)], 0.2) == 1
    assert other.wait(10) == -15  # SIGTERM was enough
