"""A simulated model latency around the offline models (``MEMCORE_OFFLINE_LATENCY_MS``).

The offline rules answer in microseconds; a real model takes hundreds of
milliseconds. Wrapping each role so every call sleeps that long shows what the
worker concurrency buys (throughput near concurrency / latency) without a network.
Workers get it by running the benchmarks' Celery app (:mod:`memcore_bench.worker_app`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence

from memcore.adapters import Models
from memcore.core.config import Settings
from memcore.core.interfaces import (
    ClusterOutcome,
    ClusterRequest,
    Decider,
    Decision,
    DecisionRequest,
    ExtractedFact,
    Extractor,
    Merger,
)
from memcore.core.models import Episode
from memcore.observability.usage import Metered


class _Delayed(Metered):
    """Counts into the wrapped adapter's usage and errors; sleeps once per model call."""

    def __init__(self, inner: object, latency_ms: float) -> None:
        if latency_ms < 0:
            raise ValueError(f"latency_ms must be >= 0, got {latency_ms}")
        super().__init__()
        if isinstance(inner, Metered):
            self.share_counters(inner)
        self.inner = inner
        self.seconds = latency_ms / 1000.0

    @property
    def model_name(self) -> str:
        """The wrapped adapter's model."""
        return self.inner.model_name if isinstance(self.inner, Metered) else super().model_name

    def _sleep(self, items: Sequence[object]) -> None:
        # One simulated call per non-empty batch (the offline adapters count the same);
        # not read from ``usage``, which other threads of a threads pool also move.
        if items and self.seconds > 0:
            time.sleep(self.seconds)


class DelayedExtractor(_Delayed):
    """An extractor whose every call takes at least ``latency_ms``."""

    def __init__(self, inner: Extractor, latency_ms: float) -> None:
        super().__init__(inner, latency_ms)
        self._extractor = inner

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        """The wrapped extraction, then the simulated latency."""
        facts = self._extractor.extract(episodes)
        self._sleep(episodes)
        return facts


class DelayedDecider(_Delayed):
    """A decider whose every call takes at least ``latency_ms``."""

    def __init__(self, inner: Decider, latency_ms: float) -> None:
        super().__init__(inner, latency_ms)
        self._decider = inner

    def decide(self, requests: Sequence[DecisionRequest]) -> list[Decision]:
        """The wrapped decisions, then the simulated latency."""
        decisions = self._decider.decide(requests)
        self._sleep(requests)
        return decisions


class DelayedMerger(_Delayed):
    """A merger whose every call takes at least ``latency_ms``."""

    def __init__(self, inner: Merger, latency_ms: float) -> None:
        super().__init__(inner, latency_ms)
        self._merger = inner

    def merge(self, clusters: Sequence[ClusterRequest]) -> list[ClusterOutcome]:
        """The wrapped merge, then the simulated latency."""
        outcomes = self._merger.merge(clusters)
        self._sleep(clusters)
        return outcomes

    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """The wrapped summaries, then the simulated latency."""
        texts = self._merger.summarize(groups)
        self._sleep(groups)
        return texts


LATENCY_ENV = "MEMCORE_OFFLINE_LATENCY_MS"


def latency_ms(environ: Mapping[str, str] = os.environ) -> float:
    """The simulated latency per offline model call, in ms, from ``MEMCORE_OFFLINE_LATENCY_MS``
    (unset or empty: 0); a value that is not a number >= 0 is an error naming the variable."""
    text = environ.get(LATENCY_ENV, "").strip()
    if not text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also NaN
        raise ValueError(f"{LATENCY_ENV} must be a number of milliseconds >= 0, got {text!r}")
    return value


def delayed(models: Models, settings: Settings, ms: float | None = None) -> Models:
    """``models`` with every extraction, decision and merge call taking ``ms`` longer
    (default: :func:`latency_ms`); unchanged for real models (an OpenAI-compatible
    endpoint, ``settings.openai_api_key`` set) or a latency of 0."""
    ms = latency_ms() if ms is None else ms
    if settings.openai_api_key or ms <= 0:
        return models
    models.extractor = DelayedExtractor(models.extractor, ms)
    models.decider = DelayedDecider(models.decider, ms)
    models.merger = DelayedMerger(models.merger, ms)
    return models
