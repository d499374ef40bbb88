"""Signals from a tool in a container (extensions 11): STEEPY_SIGNAL_FILE reaches the
container and lies in steep.tmpPath, which is mounted at the same path, so the agent reads
what the tool wrote there. Needs a real dockerd (`.ci/docker start'); the owner runs it."""

from __future__ import annotations

import os

import pytest

from steepy.model.attempt import PRUNED, REQUEUED
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.runtimes.docker.test_docker_runtime import _agent, _exe, docker  # noqa: F401

pytestmark = [pytest.mark.timeout(900), pytest.mark.docker, pytest.mark.process]


async def test_requeue_then_prune_from_a_container(docker, tmp_path) -> None:  # noqa: F811
    counter = tmp_path / "n"
    script = (f'n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}; '
              'if [ "$n" = 0 ]; then echo "requeue 50ms" > "$STEEPY_SIGNAL_FILE"; '
              'else echo "prune from the box" > "$STEEPY_SIGNAL_FILE"; fi')
    outcome = await _agent(docker, tmp_path).execute(
        ProcessChain("c", [_exe(docker, script, exe_id="signals")]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert [(r.attempt, r.outcome) for r in outcome.attempts] == [(1, REQUEUED), (1, PRUNED)]
    assert outcome.pruned == "the tool pruned its chain: from the box"
    assert [p for p in os.listdir(tmp_path) if p.startswith(".steepy-signal")] == []
