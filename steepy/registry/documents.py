"""Stored submissions and chains as JSON documents (what `show --json` and `run --json` print)."""

from __future__ import annotations

from collections import defaultdict

from steepy.model.submission import CHAIN_COUNTERS
from steepy.registry.store import ChainRecord, Registry, RunRecord


def submission_document(registry: Registry, submission_id: str) -> dict:
    """A submission with its chains, their runs and attempts, as one JSON object."""
    submission = registry.get_submission(submission_id)
    out = submission.to_json(with_workflow=False)
    counts = registry.chain_counts(submission_id)
    out["totalProcessChains"] = sum(counts.values())
    for status, key in CHAIN_COUNTERS:
        out[key] = counts.get(status, 0)
    chains, _ = registry.list_chains(submission_id)
    runs: dict[str, list[RunRecord]] = defaultdict(list)
    for run in registry.submission_runs(submission_id):
        runs[run.chain_id].append(run)
    attempts: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for chain_id, attempt in registry.submission_attempts(submission_id):
        attempts[chain_id, attempt["runNumber"]].append(attempt)
    out["processChains"] = [_chain_document(c, runs[c.chain.id], attempts)
                            for c in reversed(chains)]
    return out


def chain_document(registry: Registry, record: ChainRecord) -> dict:
    attempts: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for attempt in registry.attempts(record.chain.id):
        attempts[record.chain.id, attempt["runNumber"]].append(attempt)
    return _chain_document(record, registry.runs(record.chain.id), attempts)


def _chain_document(record: ChainRecord, runs: list[RunRecord],
                    attempts: dict[tuple[str, int], list[dict]]) -> dict:
    out = record.chain.to_json()
    out.update(submissionId=record.submission_id, status=str(record.status))
    if record.waiting:
        out["waiting"] = record.waiting
    if record.results is not None:
        out["results"] = record.results
    out["runs"] = [dict(r.to_json(), attempts=attempts.get((r.chain_id, r.run_number), []))
                   for r in runs]
    out["totalRuns"] = len(runs)
    return out
