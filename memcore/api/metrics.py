"""Request metrics of the HTTP service (its own Prometheus registry)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memcore.client import Client
from memcore.observability.metrics import get_metrics
from memcore.observability.usage import USAGE_FIELDS
from memcore.store.errors import UNREACHABLE

STARTED = "memcore_started"
"""Scope key: when the request reached the app (``time.perf_counter()``), set by the
search's shortcut (:mod:`memcore.api.fastpath`) when it hands a request on."""
_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, float("inf"))


class ApiMetrics:
    """Requests by method, route template and status; latency by route."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("memcore_http_requests", "HTTP requests answered.",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("memcore_http_request_seconds",
                                 "Time from request to the last byte of the response.",
                                 ["method", "route"], buckets=_BUCKETS, registry=self.registry)


class QueueCollector(Collector):
    """Read at scrape time: ``memcore_queue_lag{queue}`` (messages waiting in each broker
    queue, as the workers' metrics show it) and ``memcore_ingest_backlog`` (ingest tasks
    accepted and not finished, all namespaces: what ``MEMCORE_QUEUE_LIMIT`` compares)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def collect(self) -> Iterable[Metric]:
        """The two gauges (each left out when its Redis cannot be read)."""
        lag = GaugeMetricFamily("memcore_queue_lag", "Messages waiting in the broker queue.",
                                labels=["queue"])
        for queue, length in self.client.queue_lengths().items():
            lag.add_metric([queue], float(length))
        backlog = GaugeMetricFamily(
            "memcore_ingest_backlog",
            "Ingest tasks accepted and not finished, all namespaces (queue_limit).")
        try:
            backlog.add_metric([], float(self.client.store.backlog.depth().total))
        except UNREACHABLE:  # /metrics answers without it while Redis is away
            return [lag]
        return [lag, backlog]


class UsageCollector(Collector):
    """Read at scrape time from the store's usage counters (every process's calls):
    ``memcore_usage_model_calls_total``, ``memcore_usage_prompt_tokens_total`` and
    ``memcore_usage_completion_tokens_total`` by ``operation`` (ingest, consolidate,
    context), and by ``namespace`` too when ``MEMCORE_METRICS_NAMESPACE_LABEL`` is on
    (a series per tenant; off, the totals of all namespaces, erased ones included)."""

    def __init__(self, client: Client, *, per_namespace: bool | None = None) -> None:
        self.client = client
        self.per_namespace = (get_metrics().namespace_label if per_namespace is None
                              else per_namespace)

    def collect(self) -> Iterable[Metric]:
        """The three counters (none while Redis cannot be read)."""
        labels = ["namespace", "operation"] if self.per_namespace else ["operation"]
        families = {f: CounterMetricFamily(f"memcore_usage_{f}",
                                           f"Model usage ({f.replace('_', ' ')}) by operation.",
                                           labels=labels)
                    for f in USAGE_FIELDS}
        usage = self.client.store.usage
        try:
            rows = (usage.by_namespace() if self.per_namespace else {"": usage.totals()})
        except UNREACHABLE:
            return []
        for namespace, operations in rows.items():
            for operation, counts in sorted(operations.items()):
                key = [namespace, operation] if self.per_namespace else [operation]
                for f, family in families.items():
                    family.add_metric(key, float(counts[f]))
        return list(families.values())


class MetricsMiddleware:
    """Times every HTTP request. The label is the route template (``/v1/namespaces/{ns}/...``,
    never a namespace or id), so tenants add no time series."""

    def __init__(self, app: ASGIApp, *, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics
        # (method, route, status) -> the two labelled children: ``labels()`` validates
        # and locks on every call, a measurable share of a search's CPU under load.
        # Bounded by the route templates, methods and statuses (as the series are).
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answer and its latency (also called by the search's shortcut)."""
        key = (method, route, status)
        children = self._children.get(key)
        if children is None:
            children = (self.metrics.requests.labels(method, route, str(status)),
                        self.metrics.latency.labels(method, route))
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = scope.get(STARTED) or time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("memcore_route")
            if route is None:
                found = scope.get("route")
                route = getattr(found, "path", None) or "unmatched"
            self.observe(scope.get("method", ""), route, status, time.perf_counter() - start)
