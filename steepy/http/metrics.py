"""GET /metrics, written by prometheus-client: Steep's metric names where steepy has the same
thing (chains by status, the chains each running submission waits for, retries by service,
agents, and the cluster's counters, which stay empty), steepy's own for the rest, and the live
feed's figures (clients, events delivered, delivery delay).

Each request builds its own CollectorRegistry from collectors that read the registry and
this app's feed at that moment: nothing is kept in prometheus-client's global registry, so
several apps in one process (tests) never see each other's figures."""

from __future__ import annotations

from typing import Iterator

from fastapi import APIRouter, Request
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import (CounterMetricFamily, GaugeMetricFamily,
                                            HistogramMetricFamily, Metric)
from starlette.responses import Response

from steepy.engine.feed import DELAY_BUCKETS, Feed
from steepy.http.context import ApiContext
from steepy.http.responses import context
from steepy.model.submission import ProcessChainStatus, SubmissionStatus

router = APIRouter(tags=["system"])


class StoreCollector:
    """What the database holds: submissions, chains and runs by status, retries, agents."""

    def __init__(self, ctx: ApiContext):
        self.ctx = ctx

    def collect(self) -> Iterator[Metric]:
        m = self.ctx.views.metrics(self.ctx.agent_max_age_s)
        yield _by("steep_scheduler_process_chains", "Number of process chains by status",
                  "status", ((s.value, m["chains"].get(s, 0)) for s in ProcessChainStatus))
        # a gauge, as in Steep (a counter's samples would be named ..._total)
        yield _by("steep_local_agent_retries",
                  "Executable attempts after the first (retries), by service", "serviceId",
                  sorted(m["retries"].items()))
        yield GaugeMetricFamily("steep_remote_agents", "Number of live agents",
                                value=m["agents"])
        yield _by("steep_controller_process_chains",
                  "Number of generated process chains the controller is waiting for",
                  "submissionId", sorted(m["waited_for"].items()))
        yield GaugeMetricFamily("steepy_agents_busy", "Number of live agents running a chain",
                                value=m["busy_agents"])
        yield _by("steepy_submissions", "Number of submissions by status", "status",
                  ((s.value, m["submissions"].get(s, 0)) for s in SubmissionStatus))
        yield _by("steepy_process_chain_runs",
                  "Number of process-chain runs by outcome (RUNNING: not finished)", "status",
                  sorted(m["runs"].items()))


def _by(name: str, documentation: str, label: str, values) -> GaugeMetricFamily:
    """A gauge with one sample per (label value, number)."""
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, number in values:
        family.add_metric([str(key)], number)
    return family


class ClusterCollector:
    """Steep's counters of compressed JSON messages on its cluster event bus. steepy's
    processes share a database, not an event bus: the families are there, with no samples,
    as in a Steep instance that has not sent or received such a message yet."""

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily("steep_eventbus_compressedjson_messages",
                                  "Total number of compressed JSON messages",
                                  labels=["operation"])
        yield CounterMetricFamily("steep_eventbus_compressedjson_bytes",
                                  "Total number of compressed JSON bytes",
                                  labels=["operation", "stage"])
        yield CounterMetricFamily("steep_eventbus_compressedjson_time",
                                  "Total number of milliseconds spent compressing/"
                                  "decompressing JSON", labels=["operation"])


class FeedCollector:
    """The live feed of this server process (steepy/engine/feed.py)."""

    def __init__(self, feed: Feed):
        self.feed = feed

    def collect(self) -> Iterator[Metric]:
        feed = self.feed
        yield GaugeMetricFamily("steepy_feed_subscribers",
                                "Number of clients following the live feed (GET /events, "
                                "submission streams)", value=len(feed.subscribers))
        yield CounterMetricFamily("steepy_feed_events_delivered",
                                  "Events handed to the live feed's clients",
                                  value=feed.delivered)
        counts = list(feed.delay_counts)
        cumulative, buckets = 0, []
        for bound, n in zip([*map(str, DELAY_BUCKETS), "+Inf"], counts):
            cumulative += n
            buckets.append((bound, cumulative))
        yield HistogramMetricFamily(
            "steepy_feed_delivery_delay_seconds",
            "Time from an event's commit (or the client's subscription, if later) until "
            "the live feed hands it to a client", buckets=buckets, sum_value=feed.delay_sum)


def exposition(ctx: ApiContext, accept: str | None) -> tuple[bytes, str]:
    """The metrics in the format `accept` asks for (Prometheus text or OpenMetrics)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(ctx))
    registry.register(ClusterCollector())
    registry.register(FeedCollector(ctx.feed))
    encode, content_type = choose_encoder(accept or "")
    return encode(registry), content_type


@router.get("/metrics", summary="Prometheus metrics",
            responses={200: {"content": {"text/plain": {},
                                         "application/openmetrics-text": {}}}})
def metrics(request: Request) -> Response:
    """Prometheus's text format, or OpenMetrics for a client that asks for it (`Accept`)."""
    body, content_type = exposition(context(request), request.headers.get("accept"))
    return Response(body, media_type=content_type)
