"""The model-call instrumentation: calls, errors and their draining, per thread."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from memcore.adapters.offline import OfflineDecider, OfflineMerger
from memcore.adapters.provided import ProvidedFactsExtractor
from memcore.core.interfaces import DecisionRequest
from memcore.core.models import Actor, AuditAction, Episode
from memcore.observability.instrument import (
    MAX_PENDING_ERRORS,
    InstrumentedDecider,
    InstrumentedEmbedder,
    InstrumentedExtractor,
    Instruments,
    instrument_merger,
)
from memcore.observability.metrics import Metrics

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def sample(metrics: Metrics, name: str, kind: str) -> float:
    return metrics.registry.get_sample_value(name, {"kind": kind}) or 0.0


def bad_attachment(i: int = 0) -> Episode:
    return Episode(namespace="n", role="user", id=f"e{i}", text="hi", timestamp=T0,
                   metadata={"facts": [{"text": ""}]})


class BrokenEmbedder:
    """An embedder whose endpoint is down (not a Metered adapter)."""

    name = "broken"
    dim = 8

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise ConnectionError("endpoint unreachable")


def test_adapter_errors_are_drained_counted_and_audited() -> None:
    metrics = Metrics()
    instruments = Instruments(metrics)
    adapter = ProvidedFactsExtractor()
    facts = InstrumentedExtractor(adapter, instruments).extract([bad_attachment()])
    assert facts == [] and adapter.errors == []  # drained from the adapter at once
    assert sample(metrics, "memcore_model_errors_total", "extract") == 1
    assert sample(metrics, "memcore_model_calls_total", "extract") == 0  # no model call
    (event,) = instruments.audit_events("n", Actor.INGEST, T0)
    assert event.action is AuditAction.MODEL_ERROR and event.actor is Actor.INGEST
    assert event.reason.startswith("extractor: episode e0: metadata.facts[0]")
    assert instruments.drain_errors() == []


def test_a_failed_call_is_counted_and_raised() -> None:
    metrics = Metrics()
    instruments = Instruments(metrics)
    embedder = InstrumentedEmbedder(BrokenEmbedder(), instruments)
    assert (embedder.name, embedder.dim) == ("broken", 8)
    with pytest.raises(ConnectionError):
        embedder.embed(["x"])
    assert sample(metrics, "memcore_model_calls_total", "embed") == 1
    assert metrics.registry.get_sample_value("memcore_embedding_calls_total") == 1
    assert sample(metrics, "memcore_model_errors_total", "embed") == 1
    (error,) = instruments.drain_errors()
    assert error.reason == "embedder: embed: ConnectionError: endpoint unreachable"


def test_calls_seconds_and_roles() -> None:
    metrics = Metrics()
    instruments = Instruments(metrics)
    decider = InstrumentedDecider(OfflineDecider(), instruments)
    decider.decide([DecisionRequest("Sam likes tea.", [])])
    decider.decide([])  # no batch, no call
    merger = instrument_merger(OfflineMerger(), instruments)
    assert instrument_merger(merger) is merger
    merger.merge([])
    merger.summarize([["a b", "a c"]])
    assert sample(metrics, "memcore_model_calls_total", "decide") == 1
    assert sample(metrics, "memcore_model_calls_total", "summarize") == 1
    assert sample(metrics, "memcore_model_calls_total", "merge") == 0
    assert sample(metrics, "memcore_model_call_seconds_count", "decide") == 1
    assert instruments.thread_calls("decide") == 1 and instruments.thread_calls() == 2


def test_pending_errors_are_bounded_and_per_thread() -> None:
    instruments = Instruments(Metrics())
    extractor = InstrumentedExtractor(ProvidedFactsExtractor(), instruments)
    for i in range(MAX_PENDING_ERRORS + 10):
        extractor.extract([bad_attachment(i)])
    kept = instruments.drain_errors()
    assert len(kept) == MAX_PENDING_ERRORS and "episode e10:" in kept[0].message

    seen: dict[int, list[str]] = {}

    def work(n: int) -> None:
        for i in range(n):
            extractor.extract([bad_attachment(100 * n + i)])
        seen[n] = [e.message.split(":")[0] for e in instruments.drain_errors()]

    threads = [threading.Thread(target=work, args=(n,)) for n in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {n: [f"episode e{100 * n + i}" for i in range(n)] for n in (1, 2, 3)}
