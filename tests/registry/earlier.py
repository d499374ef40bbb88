"""Earlier work for tests that store a chain reusing it: a submission whose chain left a
record of its work (a cache entry). Without it, the store finds nothing to reuse (as when
the garbage collector took it since the lookup) and stores the chain to run instead."""

from __future__ import annotations

from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import Registry
from steepy.registry.cache import CacheWrite, Pending
from steepy.registry.writes import RoundWrite


def earlier_work(registry: Registry, submission_id: str, chain_id: str) -> None:
    """(Call it before anything else is stored: its chain is claimed and finished here.)"""
    registry.requests.add_submission(Submission(id=submission_id,
                                                workflow=Workflow(name=submission_id)))
    registry.submissions.controller_round(submission_id, RoundWrite(
        1, chains=[ProcessChain(chain_id)], save_state=True, state={},
        cache=CacheWrite(pending=[Pending(f"K-{chain_id}", "k0", chain_id, "e0", 0)])))
    claimed = registry.queue.claim_chain("an earlier agent")
    assert claimed is not None and claimed[0].chain.id == chain_id
    registry.queue.finish_run(chain_id, claimed[1], "SUCCESS", CS.SUCCESS, results={})
