"""Signals from a tool in a SLURM job (extensions 11): the job writes STEEPY_SIGNAL_FILE on
the shared file system (steep.tmpPath) and the agent reads it once srun has ended. Needs the
single-node cluster (`.ci/slurm start'); the owner runs it."""

from __future__ import annotations

import os

import pytest

from steepy.model.attempt import PRUNED, REQUEUED
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.runtimes.slurm.test_slurm_runtime import _agent, _exe, slurm  # noqa: F401

pytestmark = [pytest.mark.timeout(900), pytest.mark.slurm, pytest.mark.process]


async def test_requeue_then_prune_from_a_job(slurm, tmp_path) -> None:  # noqa: F811
    counter = tmp_path / "n"
    script = (f'n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}; '
              'if [ "$n" = 0 ]; then echo "requeue 50ms" > "$STEEPY_SIGNAL_FILE"; exit 3; '
              'else echo "prune on the cluster" > "$STEEPY_SIGNAL_FILE"; fi')
    outcome = await _agent(slurm, tmp_path).execute(ProcessChain("c", [_exe(script)]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert [(r.attempt, r.outcome, r.exit_code) for r in outcome.attempts] == [
        (1, REQUEUED, 3), (1, PRUNED, 0)]
    assert outcome.pruned == "the tool pruned its chain: on the cluster"
    assert [p for p in os.listdir(tmp_path) if p.startswith(".steepy-signal")] == []
