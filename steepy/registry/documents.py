"""The JSON documents of the API, in one place: Steep's shapes (reference section 8) of
submissions, process chains, runs, agents and timeline events, built from stored rows and
records, plus steepy's whole documents (a submission with its chains, runs and attempts, as
`show --json` and `run --json` print them)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable

from steepy.model.common import iso_time
from steepy.model.stopping import stopped_at, without_marker
from steepy.model.submission import CHAIN_COUNTERS, SUCCEEDED_SUBMISSION, WAITING_CHAIN
from steepy.registry.records import CS, SS, ChainRecord, RunRecord, load

if TYPE_CHECKING:
    from steepy.registry.interfaces import ReadViews


def _time(value: Any) -> str | None:
    if value is not None and value.tzinfo is None:  # SQLite's: written in UTC
        return value.isoformat() + "Z"  # what iso_time(as_utc(value)) says, quicker
    return iso_time(value)


def _put(out: dict, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _counters(out: dict, counts: dict[str, int]) -> dict:
    for status, key in CHAIN_COUNTERS:
        out[key] = counts.get(status, 0)
    out["totalProcessChains"] = sum(counts.values())
    return out


def submission(row: Any, counts: dict[str, int], with_workflow: bool = True,
               full: bool = True) -> dict:
    """A submission in Steep's shape, with chain counters. A summary (`full` false) has no
    workflow, source, results or error message; otherwise `results` only after SUCCESS or
    PARTIAL_SUCCESS and `errorMessage` only after ERROR."""
    out: dict[str, Any] = {"id": row.id}
    _put(out, "name", row.name)
    if full and with_workflow:
        out["workflow"] = load(row.workflow)
    out.update(priority=row.priority, status=row.status,
               requiredCapabilities=load(row.required_capabilities) or [])
    _put(out, "startTime", _time(row.start_time))
    _put(out, "endTime", _time(row.end_time))
    if full:
        if with_workflow:
            _put(out, "source", row.source)
        _put(out, "vars", load(row.vars))  # steepy: the values given at submit time
        _put(out, "resume", getattr(row, "resume", None))  # extensions 15: `--resume'
        if row.status == SS.ERROR:
            _put(out, "errorMessage", row.error_message)
        if row.status in SUCCEEDED_SUBMISSION:
            _put(out, "results", load(row.results))
    return _counters(out, counts)


def updated_submission(document: dict | None) -> dict | None:
    """Steep's answer to `PUT /workflows/{id}`: the submission with its source, but without
    its workflow, results and error message."""
    if document is None:
        return None
    return {k: v for k, v in document.items()
            if k not in ("workflow", "results", "errorMessage")}


def _results(out: dict, results: dict | None) -> None:
    """A chain's `results' (its outputs only) and, for one that ended early without an error
    (extensions 10, 11), steepy's `stopped': where, why and by which executable."""
    if results is None:
        return
    out["results"] = without_marker(results)
    marker = stopped_at(results)
    if marker is not None:
        executable_id, reason, by = marker
        out["stopped"] = {"executableId": executable_id, "reason": reason, "by": by}


def _waiting(out: dict, row: Any) -> None:
    """steepy's `waiting': why a REGISTERED chain cannot start (no agent offers ...)."""
    if row.status == CS.REGISTERED:
        _put(out, "waiting", row.waiting)


def _progress(out: dict, status: str, row: Any) -> None:
    """Steep's `estimatedProgress' of a RUNNING chain, as its agent last reported it."""
    if status == CS.RUNNING:
        _put(out, "estimatedProgress", row.progress)


def current_run(status: str, last_run: Any) -> Any:
    """The run a chain's document shows, by Steep's rule (its `amendProcessChain`): the last
    run, unless the chain waits (REGISTERED, PAUSED) or was cancelled while it waited (then
    its last run did not end CANCELLED). None: the chain has no current run, and its document
    has no `agentId`, `startTime`, `endTime`, `errorMessage` or `runNumber`."""
    if last_run is None or status in WAITING_CHAIN:
        return None
    if status == CS.CANCELLED and last_run.status != CS.CANCELLED:
        return None
    return last_run


def _run_fields(out: dict, status: str, run: Any) -> None:
    if run is not None:
        _put(out, "agentId", run.agent_id)
        _put(out, "startTime", _time(run.start_time))
        _put(out, "endTime", _time(run.end_time))
        if status == CS.ERROR:
            _put(out, "errorMessage", run.error_message)


def chain_summary(row: Any, latest_run: Any) -> dict:
    """A process chain in a listing: without executables and results."""
    out: dict[str, Any] = {"id": row.id,
                           "requiredCapabilities": load(row.required_capabilities) or []}
    if row.priority:
        out["priority"] = row.priority
    retries = json.loads(row.retries) if isinstance(row.retries, str) else row.retries
    _put(out, "retries", retries)
    out.update(submissionId=row.submission_id, status=row.status)
    _waiting(out, row)
    _progress(out, row.status, row)
    _run_fields(out, row.status, current_run(row.status, latest_run))
    return out


def chain(row: Any, all_runs: list[Any], run_number: int | None = None,
          with_executables: bool = True) -> dict | None:
    """One process chain in Steep's shape: as of its current run (`current_run`), or of run
    `run_number' (then its status is that run's). Without executables, it is Steep's answer
    to a PUT: also without results, `totalRuns`, `runNumber` and `autoResumeAfter`. None: no
    such run."""
    out = load(row.chain)
    if not with_executables:
        out.pop("executables", None)
    out.pop("priority", None)
    if row.priority:  # the column is current; the stored JSON has the first priority
        out["priority"] = row.priority
    status = row.status
    last = all_runs[-1] if all_runs else None
    if run_number is None:
        run = current_run(status, last)
    else:
        run = next((r for r in all_runs if r.run_number == run_number), None)
        if run is None:
            return None
        status = run.status or (status if run is last else CS.RUNNING)  # its own outcome
    out.update(submissionId=row.submission_id, status=status)
    _waiting(out, row)
    _put(out, "reused", load(getattr(row, "reused", None)))  # extensions 15
    _progress(out, status, row)
    _run_fields(out, status, run)
    if with_executables:
        _details(out, status, row, run, last, len(all_runs))
    return out


def _details(out: dict, status: str, row: Any, run: Any, last: Any, total: int) -> None:
    """What Steep adds to a single chain: results after SUCCESS, the number of runs, the
    shown run's number and `autoResumeAfter` (a PAUSED chain's always, from its last run)."""
    if status == CS.SUCCESS:
        _results(out, load(row.results))
    out["totalRuns"] = total
    if run is not None:
        out["runNumber"] = run.run_number
    resume = run if run is not None else last if status == CS.PAUSED else None
    if resume is not None:
        _put(out, "autoResumeAfter", _time(resume.auto_resume_after))


def run(record: RunRecord) -> dict:
    out: dict[str, Any] = {"runNumber": record.run_number, "agentId": record.agent_id,
                           "startTime": iso_time(record.start_time)}
    for key, value in (("endTime", iso_time(record.end_time)), ("status", record.status),
                       ("errorMessage", record.error_message),
                       ("autoResumeAfter", iso_time(record.auto_resume_after))):
        _put(out, key, value)
    return out


def agent(row: Any) -> dict:
    out = {"id": row.id, "available": row.chain_id is None,
           "capabilities": load(row.capabilities) or [], "startTime": _time(row.start_time),
           "stateChangedTime": _time(row.state_changed_time)}
    _put(out, "processChainId", row.chain_id)
    return out


def event(row: Any, with_submission: bool = False) -> dict:
    """A timeline event: id, time, kind, the submission (in the global feed) and the chain it
    concerns, and its data."""
    return event_of(row.id, row.submission_id, row.chain_id, row.time, row.kind, row.data,
                    with_submission)


def event_of(event_id: int, submission_id: str | None, chain_id: str | None, time: Any,
             kind: str, data: str | None, with_submission: bool = False) -> dict:
    """`event` from the columns of `EVENT_COLUMNS`, in their order (a row unpacked: `steepy
    run` prints 20,000 events when 10,000 chains are reused)."""
    out = {"id": event_id, "time": _time(time), "kind": kind}
    if with_submission and submission_id:
        out["submissionId"] = submission_id
    if chain_id:
        out["chainId"] = chain_id
    if data is not None and data != "{}":
        out.update(load(data))
    return out


# ---------------------------------------------------------------- whole documents

def submission_document(views: "ReadViews", submission_id: str) -> dict:
    """A submission with its chains, their runs and attempts, as one JSON object."""
    out = _submission_head(views, submission_id)
    chains, _ = views.list_chains(submission_id, oldest_first=True)
    out["processChains"] = _chain_documents(views, submission_id, chains, None)
    return out


def write_submission_document(views: "ReadViews", submission_id: str,
                              write: Callable[[str], Any], page: int = 1000) -> None:
    """`submission_document(...)` as JSON text: the submission's fields indented, then its
    chains a line each, written a page of chains at a time: a submission of 100,000 chains
    is never one object in memory, and the last page costs what the first did (keyset
    pages). A line per chain is quick to grep, and quick to write: indenting is done by the
    json module's Python code, a line by its C encoder."""
    write(json.dumps(_submission_head(views, submission_id), indent=2)[:-2])  # without "\n}"
    write(',\n  "processChains": [')
    written, after = 0, 0
    while chains := views.chains_after(submission_id, after, page):  # keyset pages
        ids = [c.chain.id for c in chains]
        for document in _chain_documents(views, submission_id, chains, ids):
            write(("\n    " if written == 0 else ",\n    ") + json.dumps(document))
            written += 1
        after = chains[-1].seq
    write("\n  ]\n}" if written else "]\n}")


def _submission_head(views: "ReadViews", submission_id: str) -> dict:
    """The submission as GET /workflows/ID has it without its workflow (its counters, and
    `reusedProcessChains' once it ended), and the actions it skipped."""
    out = views.submission(submission_id, with_workflow=False)
    if out is None:
        raise LookupError(f"no submission {submission_id}")
    skipped = views.skipped_actions(submission_id)  # extensions 10, 11
    if skipped:
        out["skippedActions"] = skipped
    return out


def _chain_documents(views: "ReadViews", submission_id: str, chains: list[ChainRecord],
                     ids: list[str] | None) -> list[dict]:
    """`chains' (all of the submission's when `ids' is None) with their runs and attempts."""
    runs: dict[str, list[RunRecord]] = defaultdict(list)
    for r in views.submission_runs(submission_id, ids):
        runs[r.chain_id].append(r)
    attempts: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for chain_id, attempt in views.submission_attempts(submission_id, ids):
        attempts[chain_id, attempt["runNumber"]].append(attempt)
    return [_chain_document(c, runs[c.chain.id], attempts) for c in chains]


def chain_document(views: "ReadViews", record: ChainRecord) -> dict:
    attempts: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for attempt in views.attempts(record.chain.id):
        attempts[record.chain.id, attempt["runNumber"]].append(attempt)
    return _chain_document(record, views.runs(record.chain.id), attempts)


def _chain_document(record: ChainRecord, runs: list[RunRecord],
                    attempts: dict[tuple[str, int], list[dict]]) -> dict:
    out = record.chain.to_json()
    out.update(submissionId=record.submission_id, status=str(record.status))
    _put(out, "waiting", record.waiting or None)
    _put(out, "reused", record.reused)  # extensions 15
    _results(out, record.results)
    out["runs"] = [dict(run(r), attempts=attempts.get((r.chain_id, r.run_number), []))
                   for r in runs]
    out["totalRuns"] = len(runs)
    return out
