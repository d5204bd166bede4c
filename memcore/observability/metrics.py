"""memcore's own Prometheus metrics, kept in a private registry and served over HTTP.

Usage from the pipeline (all cheap, no I/O)::

    from memcore.observability import metrics
    metrics.record_memory_change("added", namespace=ns)
    metrics.record_model_call("decide", tokens=812)   # usually via observability.instrument
    metrics.record_embedding_call()
    metrics.record_decision("UPDATE")
    with metrics.consolidation_timer():
        run_pass()

and from a worker process::

    metrics.start_metrics_server(settings.metrics_port)

Prefork workers: set ``PROMETHEUS_MULTIPROC_DIR`` (an empty, writable directory) in the
worker's environment *before* Python starts. prometheus_client then keeps every child's
values in mmap files in that directory and the HTTP server sums them, so one port shows the
whole worker whichever child serves it. ``start_metrics_server`` tolerates being called in
every child (``worker_process_init``): the first one binds the port, the others get ``None``.
Without the variable each process exposes only its own values (fine for ``--pool solo`` or
``threads``, and for tests).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from threading import Thread
from typing import Literal
from wsgiref.simple_server import WSGIServer

import redis
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

MemoryOp = Literal["added", "updated", "superseded", "merged", "tombstoned", "erased"]
MEMORY_OPS: tuple[MemoryOp, ...] = (
    "added",
    "updated",
    "superseded",
    "merged",
    "tombstoned",
    "erased",
)
DecisionOp = Literal["ADD", "UPDATE", "DELETE", "NOOP"]
QUEUES: tuple[str, ...] = ("ingest", "consolidate")
# kombu's Redis transport stores priorities 3/6/9 in "<queue>\x06\x16<pri>" lists.
_KOMBU_PRIORITY_SEP = "\x06\x16"
_KOMBU_PRIORITY_STEPS = (3, 6, 9)
_UNACKED = "unacked"  # kombu's Redis transport: delivered, not yet acknowledged messages
# The task id in a Celery message's headers (protocol 2); the body before it is base64.
_MESSAGE_ID = re.compile(rb'"id": "([^"]+)"')
# Opt-in only: one series per tenant can explode Prometheus' memory.
NAMESPACE_LABEL_ENV = "MEMCORE_METRICS_NAMESPACE_LABEL"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_MODEL_CALL_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, float("inf"))
_PASS_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, float("inf"))


class Metrics:
    """All memcore metrics, registered in one private ``CollectorRegistry``.

    ``namespace_label`` adds a ``namespace`` label to the memory counters; off by default
    because every namespace is a new time series.
    """

    def __init__(self, *, namespace_label: bool = False) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.namespace_label = namespace_label
        mem_labels = ["namespace"] if namespace_label else []
        reg = self.registry
        self.memories: dict[MemoryOp, Counter] = {
            op: Counter(
                f"memcore_memories_{op}",
                f"Memories {op} (write path and consolidation).",
                mem_labels,
                registry=reg,
            )
            for op in MEMORY_OPS
        }
        self.model_calls = Counter(
            "memcore_model_calls", "Model calls by kind (one batch = one call).", ["kind"],
            registry=reg,
        )
        self.model_tokens = Counter(
            "memcore_model_tokens", "Model tokens (prompt + completion) by kind.",
            ["kind"], registry=reg,
        )
        self.model_errors = Counter(
            "memcore_model_errors", "Model calls that failed or gave unusable answers, by kind.",
            ["kind"], registry=reg,
        )
        self.model_call_seconds = Histogram(
            "memcore_model_call_seconds", "Duration of one model call (retries included).",
            ["kind"], buckets=_MODEL_CALL_BUCKETS, registry=reg,
        )
        self.embedding_calls = Counter(
            "memcore_embedding_calls", "Embedding requests (one batch = one call).", registry=reg
        )
        self.decisions = Counter(
            "memcore_decisions", "Write-path decisions by operation.", ["op"], registry=reg
        )
        self.consolidation_pass = Histogram(
            "memcore_consolidation_pass_seconds",
            "Duration of one consolidation pass.",
            buckets=_PASS_BUCKETS,
            registry=reg,
        )

    def record_memory_change(
        self, op: MemoryOp, count: int = 1, namespace: str | None = None
    ) -> None:
        """Count ``count`` memories that went through ``op``."""
        if op not in self.memories:
            raise ValueError(f"op: unknown memory operation {op!r}, expected one of {MEMORY_OPS}")
        if count < 0:
            raise ValueError(f"count: must be >= 0, got {count}")
        counter = self.memories[op]
        if self.namespace_label:
            counter.labels(namespace=namespace or "").inc(count)
        else:
            counter.inc(count)

    def record_model_call(self, kind: str, tokens: int = 0, calls: int = 1) -> None:
        """Count ``calls`` model calls of ``kind`` (extract, decide, merge...) and their tokens."""
        if tokens < 0:
            raise ValueError(f"tokens: must be >= 0, got {tokens}")
        if calls < 0:
            raise ValueError(f"calls: must be >= 0, got {calls}")
        if calls:
            self.model_calls.labels(kind=kind).inc(calls)
        if tokens:
            self.model_tokens.labels(kind=kind).inc(tokens)

    def record_embedding_call(self, count: int = 1) -> None:
        """Count ``count`` embedding requests."""
        self.embedding_calls.inc(count)

    def record_model_error(self, kind: str, count: int = 1) -> None:
        """Count ``count`` failed or unusable model answers of ``kind``."""
        if count < 0:
            raise ValueError(f"count: must be >= 0, got {count}")
        self.model_errors.labels(kind=kind).inc(count)

    def observe_model_call(self, kind: str, seconds: float) -> None:
        """Record how long one model call of ``kind`` took."""
        self.model_call_seconds.labels(kind=kind).observe(seconds)

    def record_decision(self, op: str) -> None:
        """Count one write-path decision (ADD / UPDATE / DELETE / NOOP)."""
        self.decisions.labels(op=op.upper()).inc()

    def observe_consolidation_pass(self, seconds: float) -> None:
        """Record the duration of one consolidation pass."""
        self.consolidation_pass.observe(seconds)

    @contextlib.contextmanager
    def consolidation_timer(self) -> Iterator[None]:
        """Time the ``with`` block as one consolidation pass (also when it raises)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.observe_consolidation_pass(time.perf_counter() - start)


class QueueLagCollector(Collector):
    """``memcore_queue_lag{queue}``: messages waiting in the broker lists, read at scrape."""

    def __init__(self, broker_url: str, queues: Iterable[str] = QUEUES) -> None:
        self.queues = tuple(queues)
        self._client = redis.Redis.from_url(
            _redis_py_url(broker_url), socket_timeout=2, socket_connect_timeout=2
        )

    def collect(self) -> Iterable[Metric]:
        """Sum LLEN over each queue's priority lists; nothing if the broker is unreachable."""
        family = GaugeMetricFamily(
            "memcore_queue_lag", "Messages waiting in the broker queue.", labels=["queue"]
        )
        lengths = self.lengths()
        if not lengths:
            return []
        for queue, length in lengths.items():
            family.add_metric([queue], float(length))
        return [family]

    def lengths(self) -> dict[str, int]:
        """Messages waiting in each queue (one round trip); empty if the broker is
        unreachable."""
        pipe = self._client.pipeline(transaction=False)
        for queue in self.queues:
            for key in _queue_keys(queue):
                pipe.llen(key)
        try:
            lengths = pipe.execute()
        except redis.RedisError as exc:
            log.warning("queue lag not readable from the broker: %s", exc)
            return {}
        per_queue = len(_KOMBU_PRIORITY_STEPS) + 1
        return {queue: int(sum(lengths[i * per_queue : (i + 1) * per_queue]))
                for i, queue in enumerate(self.queues)}

    def holding(self, task_ids: Iterable[str], chunk: int = 1000) -> set[str]:
        """Which of ``task_ids`` the broker holds: waiting in a queue, or delivered to a
        worker and not yet acknowledged (kombu's ``unacked`` hash; every task is
        ``acks_late``, so a running one is there). Reads the whole queues: for the rare
        question whether a task id exists at all, never per message."""
        wanted = {t: t.encode() for t in task_ids}
        by_bytes = {b: t for t, b in wanted.items()}
        found: set[str] = set()

        def look(raw: bytes | str) -> None:
            blob = raw.encode() if isinstance(raw, str) else raw
            header = _MESSAGE_ID.search(blob)
            if header is not None:  # one lookup per message, however many ids are asked
                if header.group(1) in by_bytes:
                    found.add(by_bytes[header.group(1)])
                return
            found.update(t for t, b in wanted.items() if t not in found and b in blob)

        for queue in self.queues:
            for key in _queue_keys(queue):
                start = 0
                while len(found) < len(wanted):
                    batch = self._client.lrange(key, start, start + chunk - 1)
                    for raw in batch:
                        look(raw)
                    if len(batch) < chunk:
                        break
                    start += chunk
        for _, raw in self._client.hscan_iter(_UNACKED, count=chunk):
            if len(found) == len(wanted):
                break
            look(raw)
        return found

    def close(self) -> None:
        """Close the broker connection pool."""
        self._client.close()


def _queue_keys(queue: str) -> list[str]:
    return [queue] + [f"{queue}{_KOMBU_PRIORITY_SEP}{p}" for p in _KOMBU_PRIORITY_STEPS]


def _redis_py_url(url: str) -> str:
    """kombu spells unix sockets ``redis+socket://``; redis-py wants ``unix://``."""
    for prefix in ("redis+socket://", "socket://"):
        if url.startswith(prefix):
            return "unix://" + url[len(prefix) :]
    return url


@dataclass
class MetricsServer:
    """A running ``/metrics`` HTTP server (daemon thread)."""

    server: WSGIServer
    thread: Thread
    registry: CollectorRegistry
    queue_lag: QueueLagCollector | None = None

    @property
    def port(self) -> int:
        """The bound port (useful when started on port 0)."""
        return int(self.server.server_port)

    def close(self) -> None:
        """Stop serving and release the port."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        if self.queue_lag is not None:
            self.queue_lag.close()


_default: Metrics | None = None


def get_metrics() -> Metrics:
    """The process-wide ``Metrics`` (namespace label from ``MEMCORE_METRICS_NAMESPACE_LABEL``)."""
    global _default
    if _default is None:
        flag = os.environ.get(NAMESPACE_LABEL_ENV, "").strip().lower()
        _default = Metrics(namespace_label=flag in {"1", "true", "yes", "on"})
    return _default


def multiprocess_enabled() -> bool:
    """True when prometheus_client runs in multiprocess mode (``PROMETHEUS_MULTIPROC_DIR`` set)."""
    return bool(os.environ.get(MULTIPROC_ENV))


def exposition_registry(
    metrics: Metrics | None = None, broker_url: str | None = None
) -> tuple[CollectorRegistry, QueueLagCollector | None]:
    """The registry to serve: this process's metrics, or all processes' in multiprocess mode."""
    # Always a fresh registry: serving must not add collectors to the private one.
    registry = CollectorRegistry()
    if multiprocess_enabled():
        MultiProcessCollector(registry)
    else:
        registry.register(_RegistryView((metrics or get_metrics()).registry))
    lag = QueueLagCollector(broker_url) if broker_url else None
    if lag is not None:
        registry.register(lag)
    return registry, lag


class _RegistryView(Collector):
    """Re-exposes another registry's metrics (so serving adds nothing to it)."""

    def __init__(self, inner: CollectorRegistry) -> None:
        self.inner = inner

    def collect(self) -> Iterable[Metric]:
        return self.inner.collect()


def start_metrics_server(
    port: int,
    addr: str = "0.0.0.0",
    *,
    metrics: Metrics | None = None,
    broker_url: str | None = None,
) -> MetricsServer | None:
    """Serve ``/metrics`` on ``addr:port`` in a daemon thread; ``port=0`` picks a free port.

    ``broker_url`` (e.g. ``settings.broker_url or settings.redis_url``) adds the
    ``memcore_queue_lag`` gauge. A port already in use returns ``None`` instead of raising
    (in multiprocess mode the sibling holding it serves everyone's values; otherwise a warning
    is logged), so calling this in every prefork child is safe.
    """
    if not 0 <= port <= 65535:
        raise ValueError(f"port: must be in 0..65535, got {port}")
    registry, lag = exposition_registry(metrics, broker_url)
    try:
        server, thread = start_http_server(port, addr, registry=registry)
    except OSError as exc:
        if lag is not None:
            lag.close()
        if exc.errno != errno.EADDRINUSE:
            raise
        # Never kill a worker child over metrics: a sibling (or another program) has the port.
        if multiprocess_enabled():
            log.info("metrics port %d already served by a sibling process", port)
        else:
            log.warning(
                "metrics port %d is in use: this process's metrics are not served "
                "(set %s for prefork workers)", port, MULTIPROC_ENV,
            )
        return None
    log.info("memcore metrics on http://%s:%d/metrics", addr, server.server_port)
    return MetricsServer(server=server, thread=thread, registry=registry, queue_lag=lag)


# Module-level shortcuts on the process-wide Metrics: the small API the pipeline calls.


def record_memory_change(op: MemoryOp, count: int = 1, namespace: str | None = None) -> None:
    """Count ``count`` memories added/updated/superseded/merged/tombstoned/erased."""
    get_metrics().record_memory_change(op, count, namespace)


def record_model_call(kind: str, tokens: int = 0, calls: int = 1) -> None:
    """Count model calls of ``kind`` and their tokens."""
    get_metrics().record_model_call(kind, tokens, calls)


def record_embedding_call(count: int = 1) -> None:
    """Count embedding requests."""
    get_metrics().record_embedding_call(count)


def record_decision(op: str) -> None:
    """Count one write-path decision."""
    get_metrics().record_decision(op)


def observe_consolidation_pass(seconds: float) -> None:
    """Record one consolidation pass duration."""
    get_metrics().observe_consolidation_pass(seconds)


def consolidation_timer() -> contextlib.AbstractContextManager[None]:
    """Context manager timing one consolidation pass."""
    return get_metrics().consolidation_timer()
