"""A controller round reads which chains are still active and which finished ones the
generator has not seen; a chain that another engine's agent finishes while the round reads
must be seen one way or the other. On PostgreSQL (READ COMMITTED) each statement of the
round's transaction sees what was committed when it ran, so the order of the reads matters:
read the other way round, a chain finishing between them was seen neither active nor
finished, the round was settled and the submission ended without its last chain."""

from __future__ import annotations

import threading

import pytest

import steepy.registry.submissions as store
from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import open_registry
from steepy.registry.writes import RoundWrite


@pytest.mark.parametrize("between", ["_has_active", "_unfed"])
def test_a_chain_finishing_while_a_round_reads_is_never_missed(database_url, monkeypatch,
                                                               between: str) -> None:
    registry = open_registry(database_url)
    try:
        registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"),
                                                    name="s"))
        registry.submissions.controller_round(
            "s", RoundWrite(1, chains=[ProcessChain(id="a")], save_state=True, state={}))
        _, run = registry.queue.claim_chain("agent")
        read = getattr(store, between)

        def then_the_chain_finishes(conn, *args):
            result = read(conn, *args)
            # another engine's agent ends the chain, committed in a transaction of its own
            other = threading.Thread(
                target=lambda: registry.queue.finish_run("a", run, "SUCCESS", CS.SUCCESS))
            other.start()
            other.join()
            return result

        monkeypatch.setattr(store, between, then_the_chain_finishes)
        view = registry.submissions.controller_round("s")
        monkeypatch.undo()
        assert not view.settled
        assert view.active or [r.chain.id for r in view.finished] == ["a"]
        # and the next round feeds it
        assert [r.chain.id for r in registry.submissions.controller_round("s").finished] == ["a"]
    finally:
        registry.close()
