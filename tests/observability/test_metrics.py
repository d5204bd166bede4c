"""memcore.observability.metrics: increments are visible over HTTP (start_metrics_server)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from memcore.observability.metrics import Metrics, MetricsServer, start_metrics_server


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """GET /metrics and index the samples by (name, sorted labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        assert resp.status == 200
        text = resp.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


@pytest.fixture()
def served() -> Iterator[tuple[Metrics, MetricsServer]]:
    metrics = Metrics()
    server = start_metrics_server(0, "127.0.0.1", metrics=metrics)
    assert server is not None
    yield metrics, server
    server.close()


def test_increments_appear_over_http(served: tuple[Metrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.record_memory_change("added", 3)
    metrics.record_memory_change("superseded")
    metrics.record_memory_change("tombstoned", 2, namespace="ignored-when-label-off")
    metrics.record_model_call("extract", tokens=120)
    metrics.record_model_call("decide", tokens=80)
    metrics.record_model_call("decide")
    metrics.record_embedding_call(4)
    metrics.record_decision("update")
    metrics.record_decision("ADD")
    with metrics.consolidation_timer():
        pass
    metrics.observe_consolidation_pass(7.5)

    got = scrape(server.port)
    assert got[("memcore_memories_added_total", ())] == 3
    assert got[("memcore_memories_superseded_total", ())] == 1
    assert got[("memcore_memories_tombstoned_total", ())] == 2
    assert got[("memcore_memories_erased_total", ())] == 0
    assert got[("memcore_model_calls_total", (("kind", "decide"),))] == 2
    assert got[("memcore_model_tokens_total", (("kind", "extract"),))] == 120
    assert got[("memcore_model_tokens_total", (("kind", "decide"),))] == 80
    assert got[("memcore_embedding_calls_total", ())] == 4
    assert got[("memcore_decisions_total", (("op", "UPDATE"),))] == 1
    assert got[("memcore_decisions_total", (("op", "ADD"),))] == 1
    assert got[("memcore_consolidation_pass_seconds_count", ())] == 2
    assert got[("memcore_consolidation_pass_seconds_bucket", (("le", "10.0"),))] == 2
    assert got[("memcore_consolidation_pass_seconds_bucket", (("le", "5.0"),))] == 1
    # No namespace label by default (cardinality).
    assert not any(dict(labels).get("namespace") for _, labels in got)

    # Live values: a second scrape sees later increments.
    metrics.record_memory_change("added")
    assert scrape(server.port)[("memcore_memories_added_total", ())] == 4


def test_registries_are_isolated() -> None:
    a, b = Metrics(), Metrics()
    a.record_memory_change("merged", 5)
    assert a.registry.get_sample_value("memcore_memories_merged_total") == 5
    assert b.registry.get_sample_value("memcore_memories_merged_total") == 0


def test_namespace_label_is_opt_in() -> None:
    metrics = Metrics(namespace_label=True)
    metrics.record_memory_change("erased", namespace="alice")
    value = metrics.registry.get_sample_value(
        "memcore_memories_erased_total", {"namespace": "alice"}
    )
    assert value == 1


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m: m.record_memory_change("deleted"), "op"),
        (lambda m: m.record_memory_change("added", -1), "count"),
        (lambda m: m.record_model_call("decide", tokens=-5), "tokens"),
    ],
)
def test_bad_input_names_the_field(call, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field):
        call(Metrics())


def test_port_in_use_returns_none(served: tuple[Metrics, MetricsServer]) -> None:
    _, server = served
    assert start_metrics_server(server.port, "127.0.0.1", metrics=Metrics()) is None
    assert scrape(server.port)  # the first server is unaffected


def test_bad_port() -> None:
    with pytest.raises(ValueError, match="port"):
        start_metrics_server(70000, metrics=Metrics())


def test_queue_lag_reads_the_broker_lists(redis_url: str, redis_client: redis.Redis) -> None:
    metrics = Metrics()
    redis_client.rpush("ingest", "m1", "m2", "m3")
    redis_client.rpush("ingest\x06\x169", "m4")  # kombu's priority-9 list
    redis_client.rpush("consolidate", "c1")
    server = start_metrics_server(0, "127.0.0.1", metrics=metrics, broker_url=redis_url)
    assert server is not None
    try:
        got = scrape(server.port)
        assert got[("memcore_queue_lag", (("queue", "ingest"),))] == 4
        assert got[("memcore_queue_lag", (("queue", "consolidate"),))] == 1
        redis_client.lpop("ingest")
        assert scrape(server.port)[("memcore_queue_lag", (("queue", "ingest"),))] == 3
    finally:
        server.close()
    # Serving did not add the lag collector to the private registry.
    assert metrics.registry.get_sample_value("memcore_queue_lag", {"queue": "ingest"}) is None


MULTIPROC_CHILD = textwrap.dedent(
    """
    import sys
    from memcore.observability.metrics import Metrics
    m = Metrics()
    m.record_memory_change("added", int(sys.argv[1]))
    m.record_model_call("decide", tokens=10)
    """
)

MULTIPROC_SERVER = textwrap.dedent(
    """
    import sys, urllib.request
    from memcore.observability.metrics import start_metrics_server
    first = start_metrics_server(0, "127.0.0.1")
    # A second child asking for the same port gets None instead of crashing.
    second = start_metrics_server(first.port, "127.0.0.1")
    assert second is None, second
    url = f"http://127.0.0.1:{first.port}/metrics"
    sys.stdout.write(urllib.request.urlopen(url, timeout=5).read().decode())
    first.close()
    """
)


def test_multiprocess_mode_sums_all_processes(tmp_path: Path) -> None:
    """Prefork: separate processes write to PROMETHEUS_MULTIPROC_DIR, one port shows the sum."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for n in (2, 5):
        subprocess.run([sys.executable, "-c", MULTIPROC_CHILD, str(n)], env=env, check=True)
    out = subprocess.run(
        [sys.executable, "-c", MULTIPROC_SERVER], env=env, check=True, capture_output=True,
        text=True, timeout=30,
    ).stdout
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(out)
        for s in fam.samples
    }
    assert samples[("memcore_memories_added_total", ())] == 7
    assert samples[("memcore_model_tokens_total", (("kind", "decide"),))] == 20
