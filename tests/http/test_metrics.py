"""/metrics written by prometheus-client: Steep's names and labels, each app's own figures
(no global registry shared by apps in one process), OpenMetrics on request, and the live
feed's figures: clients, events delivered and the delay from commit to delivery."""

from __future__ import annotations

import asyncio
import time
import warnings

import prometheus_client
from prometheus_client.parser import text_string_to_metric_families

from steepy.events import AgentLeft
from steepy.http import ApiContext, create_app
from steepy.http.metrics import exposition
from steepy.documents.loading import read_services
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.http.test_feed import Listener

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SERVICES = read_services(str(ROOT / "services"))
FAMILIES = {"steep_scheduler_process_chains": "gauge", "steep_local_agent_retries": "gauge",
            "steep_remote_agents": "gauge", "steep_controller_process_chains": "gauge",
            "steep_eventbus_compressedjson_messages": "counter",
            "steep_eventbus_compressedjson_bytes": "counter",
            "steep_eventbus_compressedjson_time": "counter", "steepy_agents_busy": "gauge",
            "steepy_submissions": "gauge", "steepy_process_chain_runs": "gauge",
            "steepy_feed_subscribers": "gauge", "steepy_feed_events_delivered": "counter",
            "steepy_feed_delivery_delay_seconds": "histogram"}


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def _value(text: str, name: str, **labels: str) -> float | None:
    return _samples(text).get((name, tuple(sorted(labels.items()))))


def test_names_types_and_each_apps_own_figures(tmp_path) -> None:
    apps = []
    for name in ("a", "b"):
        ctx = ApiContext(open_registry(f"sqlite:///{tmp_path / name}.db"), SERVICES,
                         log_dir=tmp_path / "logs")
        apps.append(TestClient(create_app(ctx)))
    a, b = apps
    linear = (ROOT / "workflows" / "linear.yaml").read_text()
    for _ in range(2):
        assert a.post("/workflows", content=linear).status_code == 202
    response = a.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    families = {f.name: f.type for f in text_string_to_metric_families(response.text)}
    assert families == FAMILIES
    assert _value(response.text, "steepy_submissions", status="ACCEPTED") == 2
    assert _value(response.text, "steep_scheduler_process_chains", status="REGISTERED") == 0
    assert _value(response.text, "steep_remote_agents") == 0
    assert _value(response.text, "steepy_feed_subscribers") == 0
    assert _value(response.text, "steepy_feed_delivery_delay_seconds_count") == 0
    # the other app, in the same process, counts its own database only
    assert _value(b.get("/metrics").text, "steepy_submissions", status="ACCEPTED") == 0
    # nothing lands in prometheus-client's process-wide registry
    assert prometheus_client.REGISTRY.get_sample_value("steepy_submissions",
                                                       {"status": "ACCEPTED"}) is None
    openmetrics = a.get("/metrics", headers={"accept": "application/openmetrics-text"})
    assert openmetrics.headers["content-type"].startswith("application/openmetrics-text")
    assert openmetrics.text.endswith("# EOF\n")
    assert 'steepy_submissions{status="ACCEPTED"} 2' in openmetrics.text
    for client in apps:
        client.close()


async def test_feed_figures_count_deliveries_and_their_delay(tmp_path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'feed.db'}")
    ctx = ApiContext(registry, log_dir=None)
    live = await ctx.feed.subscribe(None, stop=ctx.stopping)
    registry.queue.add_event(None, AgentLeft(agent="a1", reason="lost"))
    await asyncio.sleep(0.6)  # the client reads late: the event waits for it
    assert [e["kind"] for e in await live.next_batch(10)] == ["agent.left"]
    text = exposition(ctx, None)[0].decode()
    assert _value(text, "steepy_feed_subscribers") == 1
    assert _value(text, "steepy_feed_events_delivered_total") == 1
    assert _value(text, "steepy_feed_delivery_delay_seconds_count") == 1
    assert _value(text, "steepy_feed_delivery_delay_seconds_bucket", le="0.5") == 0
    assert _value(text, "steepy_feed_delivery_delay_seconds_bucket", le="10.0") == 1
    assert 0.6 <= _value(text, "steepy_feed_delivery_delay_seconds_sum") < 10

    # a client resuming from the start gets it too: its delay counts from the client's
    # arrival (how long it was away is not the feed's delay)
    resumed = await ctx.feed.subscribe(0, stop=ctx.stopping)
    assert [e["kind"] for e in await resumed.next_batch(10)] == ["agent.left"]
    text = exposition(ctx, None)[0].decode()
    assert _value(text, "steepy_feed_subscribers") == 2
    assert _value(text, "steepy_feed_events_delivered_total") == 2
    assert _value(text, "steepy_feed_delivery_delay_seconds_bucket", le="0.5") == 1
    live.close()
    resumed.close()
    assert _value(exposition(ctx, None)[0].decode(), "steepy_feed_subscribers") == 0
    ctx.stopping.set()
    await asyncio.wait_for(ctx.feed._task, 10)
    registry.engine.dispose()


def test_a_real_servers_feed_figures(server) -> None:
    before = _samples(server.http.get("/metrics").text)
    listener = Listener(server.url)
    sid = server.submit((ROOT / "workflows" / "linear.yaml").read_text())
    listener.wait_for(lambda e: e.get("submissionId") == sid and e.get("status") == "SUCCESS")
    # counted before the scrape: the listener may receive later events while it runs
    received = len(listener.events)
    text = server.http.get("/metrics").text
    subscribers = before[("steepy_feed_subscribers", ())]
    assert _value(text, "steepy_feed_subscribers") == subscribers + 1
    delivered = _value(text, "steepy_feed_events_delivered_total")
    assert delivered - before[("steepy_feed_events_delivered_total", ())] >= received
    assert _value(text, "steepy_feed_delivery_delay_seconds_count") == delivered
    assert _value(text, "steepy_feed_delivery_delay_seconds_bucket", le="+Inf") == delivered
    assert _value(text, 'steep_scheduler_process_chains', status="SUCCESS") >= 1
    listener.close()
    end = time.monotonic() + 20
    while _value(server.http.get("/metrics").text, "steepy_feed_subscribers") != subscribers:
        assert time.monotonic() < end, "the closed client is still counted"
        time.sleep(0.1)


SLEEP = """api: 4.7.0
name: metrics
actions:
  - type: execute
    service: sleep
    inputs: [{id: seconds, value: 3}]
"""
# Steep's families (its Controller, Scheduler, LocalAgent, RemoteAgentRegistry and
# CompressedJsonObjectMessageCodec register them): type and label names
STEEP = {"steep_controller_process_chains": ("gauge", ("submissionId",)),
         "steep_scheduler_process_chains": ("gauge", ("status",)),
         "steep_local_agent_retries": ("gauge", ("serviceId",)),
         "steep_remote_agents": ("gauge", ()),
         "steep_eventbus_compressedjson_messages": ("counter", ("operation",)),
         "steep_eventbus_compressedjson_bytes": ("counter", ("operation", "stage")),
         "steep_eventbus_compressedjson_time": ("counter", ("operation",))}


def _families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_steep_s_names_and_labels_on_a_real_server(server) -> None:
    sid = server.submit(SLEEP)
    server.wait(sid, ("RUNNING",))
    end = time.monotonic() + 20
    while True:  # the chain is generated (the controller waits for it) and claimed: a
        during = server.http.get("/metrics").text  # look between the two sees it REGISTERED
        if _value(during, "steep_controller_process_chains", submissionId=sid) == 1 and \
                _value(during, "steep_scheduler_process_chains", status="RUNNING") >= 1:
            break
        assert time.monotonic() < end, during
        time.sleep(0.1)
    assert server.wait(sid)["status"] == "SUCCESS"
    text = server.http.get("/metrics").text
    families = _families(text)
    for name, (kind, labels) in STEEP.items():
        assert families[name].type == kind, name
        assert all(tuple(s.labels) == labels for s in families[name].samples), name
    # a submission that ended is no longer waited for (Steep removes its label)
    assert _value(text, "steep_controller_process_chains", submissionId=sid) is None
    for status in ("RUNNING", "SUCCESS", "CANCELLED", "ERROR"):  # Steep's scheduler's labels
        assert _value(text, "steep_scheduler_process_chains", status=status) is not None
    assert _value(text, "steep_scheduler_process_chains", status="SUCCESS") >= 1
    assert _value(text, "steep_remote_agents") == 2  # the server's two local agents
    # no cluster event bus: Steep's counters are declared, without samples
    assert "# TYPE steep_eventbus_compressedjson_bytes_total counter" in text.splitlines()
    assert not families["steep_eventbus_compressedjson_messages"].samples
