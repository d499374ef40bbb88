"""What Steep's messages say that the timeline events do not: read from the database, only
for the events whose messages someone listens to (messages.LOOKUPS)."""

from __future__ import annotations

from steepy.events import EventKind
from steepy.http.eventbus.messages import LOOKUPS, Memory
from steepy.registry import ReadViews
from steepy.registry.offload import call


def submission_body(views: ReadViews, submission_id: str) -> dict | None:
    submission = views.get_submission(submission_id)
    return None if submission is None else submission.to_json(with_workflow=True)


def chain_body(views: ReadViews, chain_id: str) -> dict | None:
    record = views.get_chain(chain_id)
    return None if record is None else record.chain.to_json()


def run_agent(views: ReadViews, chain_id: str, run_number: int) -> str | None:
    for run in views.runs(chain_id):
        if run.run_number == run_number:
            return run.agent_id
    return None


def chain_status(views: ReadViews, chain_id: str) -> str | None:
    found = views.chain_status(chain_id)
    return None if found is None else found[0]


async def enrich(views: ReadViews, events: list[dict], wanted: set[str],
                 memory: Memory) -> list[dict]:
    """The events, with `submission`, `chain`, `agent` or `chainStatus` added where a message
    to an address in `wanted` needs it."""
    out = []
    for event in events:
        kind = event["kind"]
        if not (LOOKUPS.get(kind, frozenset()) & wanted):
            out.append(event)
            continue
        event = dict(event)
        if kind == EventKind.SUBMISSION_STATUS and event.get("status") == "ACCEPTED":
            event["submission"] = await call(submission_body, views, event["submissionId"])
        elif kind == EventKind.CHAIN_REGISTERED:
            event["chain"] = await call(chain_body, views, event["chainId"])
        elif kind == EventKind.CHAIN_FINISHED and event["chainId"] not in memory.agents:
            event["agent"] = await call(run_agent, views, event["chainId"], event.get("run", 1))
        elif kind in (EventKind.CHAIN_CANCEL_REQUESTED, EventKind.CHAIN_REQUEUED):
            event["chainStatus"] = await call(chain_status, views, event["chainId"])
        out.append(event)
    return out


def newest_events(views: ReadViews, most: int) -> list[dict]:
    """The newest `most` events of the timeline, oldest first."""
    last = views.last_event_id()
    return views.feed(max(0, last - most), None, most)
