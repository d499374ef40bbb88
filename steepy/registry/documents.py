"""Stored submissions and chains as JSON documents (what `show --json` and `run --json` print)."""

from __future__ import annotations

from steepy.registry.store import ChainRecord, Registry


def submission_document(registry: Registry, submission_id: str) -> dict:
    """A submission with its chains, their runs and attempts, as one JSON object."""
    submission = registry.get_submission(submission_id)
    out = submission.to_json(with_workflow=False)
    counts = registry.chain_counts(submission_id)
    out["totalProcessChains"] = sum(counts.values())
    for status, key in (("RUNNING", "running"), ("PAUSED", "paused"), ("CANCELLED", "cancelled"),
                        ("SUCCESS", "succeeded"), ("ERROR", "failed")):
        out[f"{key}ProcessChains"] = counts.get(status, 0)
    chains, _ = registry.list_chains(submission_id)
    out["processChains"] = [chain_document(registry, c) for c in reversed(chains)]
    return out


def chain_document(registry: Registry, record: ChainRecord) -> dict:
    out = record.chain.to_json()
    out.update(submissionId=record.submission_id, status=str(record.status))
    if record.results is not None:
        out["results"] = record.results
    runs = registry.runs(record.chain.id)
    out["runs"] = [dict(r.to_json(), attempts=registry.attempts(record.chain.id, r.run_number))
                   for r in runs]
    out["totalRuns"] = len(runs)
    return out
