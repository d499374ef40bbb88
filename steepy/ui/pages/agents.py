"""Agents (`/agents`, `/agents/{id}`): what each live agent offers, what it runs, when it was
last heard of, and on which host."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from steepy.events import EventKind as K, kinds
from steepy.ui.render import not_found
from steepy.ui.render import page as render
from steepy.ui.routing import page

RUNNING = "RUNNING"
RUNNING_PAGE = 500  # running chains looked at (each agent runs one at most)
LIVE_KINDS = ",".join([*kinds("agent"), K.CHAIN_STARTED, K.CHAIN_FINISHED, K.CHAIN_REQUEUED,
                       K.CHAIN_AGENT_LOST])


@dataclass
class AgentView:
    """One live agent: Steep's agent document plus what the heartbeat stores beside it."""

    id: str
    capabilities: list[str]
    start_time: str | None
    state_changed_time: str | None
    chain_id: str | None = None
    last_seen: str | None = None
    host: str | None = None
    pid: int | None = None
    submission_id: str | None = None  # of the chain it runs
    chain_status: str | None = None
    services: list[str] = field(default_factory=list)  # the service ids of that chain
    since: str | None = None  # when its run of that chain started

    @property
    def busy(self) -> bool:
        return self.chain_id is not None


def live_agents(ctx: Any) -> list[AgentView]:
    """The live agents, each with its host and last heartbeat (stored by the heartbeat, not in
    Steep's shape) and, if it runs a chain, that chain's submission and services.

    What an agent runs is taken from the running chains' runs, which the agent's claim writes
    at once; the agent's own row says it only with its next heartbeat."""
    beats = {a["id"]: a for a in ctx.registry.leases.live_agents(ctx.agent_max_age_s)}
    docs = ctx.views.agents(ctx.agent_max_age_s)
    running, _ = ctx.views.chain_summaries(None, RUNNING, max(RUNNING_PAGE, 2 * len(docs)), 0)
    runs_on = {c["agentId"]: c for c in running if c.get("agentId")}
    found: list[AgentView] = []
    for doc in docs:
        beat = beats.get(doc["id"], {})
        chain = runs_on.get(doc["id"])
        agent = AgentView(id=doc["id"], capabilities=list(doc.get("capabilities") or []),
                          start_time=doc.get("startTime"),
                          state_changed_time=doc.get("stateChangedTime"),
                          chain_id=chain["id"] if chain else None,
                          last_seen=beat.get("lastSeen"), host=beat.get("host"),
                          pid=beat.get("pid"))
        if chain is not None:
            agent.submission_id = chain.get("submissionId")
            agent.chain_status = chain.get("status")
            agent.since = chain.get("startTime")
            record = ctx.views.get_chain(chain["id"])
            if record is not None:
                agent.services = list(dict.fromkeys(e.service_id
                                                    for e in record.chain.executables))
        found.append(agent)
    return found


def agents(request: Request) -> Response:
    ctx = request.app.state.ctx
    found = live_agents(ctx)
    return render(request, "agents.html", agents=found, busy=sum(a.busy for a in found),
                  engine=ctx.engine is not None, max_age=ctx.agent_max_age_s,
                  live_kinds=LIVE_KINDS)


def agent(request: Request) -> Response:
    ctx = request.app.state.ctx
    agent_id = request.path_params["id"]
    found = next((a for a in live_agents(ctx) if a.id == agent_id), None)
    if found is None:
        return not_found(request, f"There is no live agent with ID `{agent_id}' (agents silent "
                                  f"for more than {ctx.agent_max_age_s:g} s are not listed).")
    return render(request, "agent.html", agent=found, live_kinds=LIVE_KINDS)


ROUTES = [page("/agents", agents), page("/agents/{id}", agent)]
