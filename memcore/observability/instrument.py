"""Model-call instrumentation: one wrapper per model role, wired in one place.

Every model call memcore makes goes through a wrapper here (the way dramatiq runs
cross-cutting concerns as middleware around every actor): :class:`InstrumentedExtractor`
("extract"), :class:`InstrumentedDecider` ("decide"), :class:`InstrumentedMerger`
("merge" and "summarize") and :class:`InstrumentedEmbedder` ("embed"). Around each call,
:class:`Instruments`

* counts the calls the adapter made (``memcore_model_calls_total{kind}``; embeddings
  also in ``memcore_embedding_calls_total``) and the tokens it was charged
  (``memcore_model_tokens_total{kind}``),
* times it (``memcore_model_call_seconds{kind}``),
* adds it to the usage this thread is collecting
  (:func:`~memcore.observability.usage.collect_usage`: a response's ``usage``) and, when
  tracing is on, wraps it in a GenAI span (:mod:`memcore.observability.tracing`),
* collects its errors: the ones the adapter turned into a safe default (drained from the
  adapter, so its list never grows) and any exception it raised. Each is counted
  (``memcore_model_errors_total{kind}``), logged, and kept for this thread until the
  caller writes it to the audit log with :meth:`Instruments.audit_events` (the audit
  goes through the store, which this layer does not know).

Adapters that subclass :class:`~memcore.observability.usage.Metered` report their own
calls and tokens (an offline rule, or a provided fact, may make no call at all); any
other implementation of a role counts one call per non-empty batch and no tokens.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Literal, TypeVar

import numpy as np

from memcore.core.interfaces import (
    ClusterOutcome,
    ClusterRequest,
    Decider,
    Decision,
    DecisionRequest,
    Embedder,
    ExtractedFact,
    Extractor,
    Merger,
)
from memcore.core.models import Actor, AuditAction, AuditEvent, Episode
from memcore.observability import tracing
from memcore.observability.metrics import Metrics, get_metrics
from memcore.observability.usage import Metered, note_usage

log = logging.getLogger(__name__)

T = TypeVar("T")
A = TypeVar("A")

ModelRole = Literal["extract", "decide", "merge", "summarize", "embed"]
MODEL_ROLES: tuple[ModelRole, ...] = ("extract", "decide", "merge", "summarize", "embed")
# The adapter each role belongs to, as MODEL_ERROR audit reasons name it.
ADAPTER_OF: dict[ModelRole, str] = {"extract": "extractor", "decide": "decider",
                                    "merge": "merger", "summarize": "merger",
                                    "embed": "embedder"}
MAX_PENDING_ERRORS = 256
"""Undrained errors kept per thread; older ones are dropped (still counted and logged)."""
_AUDIT_REASON_CHARS = 500


@dataclass(frozen=True)
class ModelError:
    """One failed or unusable model answer."""

    role: ModelRole
    message: str

    @property
    def reason(self) -> str:
        """The MODEL_ERROR audit reason: the adapter, then what went wrong."""
        return f"{ADAPTER_OF[self.role]}: {self.message}"[:_AUDIT_REASON_CHARS]


class _ThreadState(threading.local):
    """What this thread's calls produced and nobody has read yet."""

    def __init__(self) -> None:
        self.errors: deque[ModelError] = deque(maxlen=MAX_PENDING_ERRORS)
        self.calls: Counter[str] = Counter()


class Instruments:
    """The middleware shared by a set of role wrappers: metrics, timing, errors.

    ``metrics`` defaults to the process-wide :func:`~memcore.observability.metrics.get_metrics`.
    Pending errors and call counts are per thread, so a threads pool audits each task's
    own errors.
    """

    def __init__(self, metrics: Metrics | None = None) -> None:
        self._metrics = metrics
        self._thread = _ThreadState()

    @property
    def metrics(self) -> Metrics:
        """Where the calls are counted."""
        return self._metrics if self._metrics is not None else get_metrics()

    def call(self, role: ModelRole, adapter: object, size: int, run: Callable[[], T]) -> T:
        """Run one call of ``role`` on ``adapter`` (a batch of ``size`` items), instrumented."""
        meter = adapter if isinstance(adapter, Metered) else None
        calls_before = meter.thread_calls if meter else 0
        prompt_before = meter.thread_prompt_tokens if meter else 0
        completion_before = meter.thread_completion_tokens if meter else 0
        model = meter.model_name if meter else type(adapter).__name__
        system = meter.model_system if meter else "memcore"
        with tracing.model_call(role, model, system) as traced:
            start = time.perf_counter()
            failure: Exception | None = None
            try:
                return run()
            except Exception as exc:
                failure = exc
                raise
            finally:
                seconds = time.perf_counter() - start
                if meter is not None:
                    calls = meter.thread_calls - calls_before
                    prompt = meter.thread_prompt_tokens - prompt_before
                    completion = meter.thread_completion_tokens - completion_before
                    messages = meter.drain_errors()
                else:
                    calls, prompt, completion, messages = (1 if size else 0), 0, 0, []
                if failure is not None and not messages:
                    messages = [f"{role}: {type(failure).__name__}: {failure}"]
                self._record(role, calls, prompt + completion, seconds, messages)
                note_usage(role, calls, prompt, completion)
                traced.finish(calls, prompt, completion, len(messages))

    def _record(self, role: ModelRole, calls: int, tokens: int, seconds: float,
                messages: Sequence[str]) -> None:
        metrics = self.metrics
        metrics.record_model_call(role, tokens=tokens, calls=calls)
        if role == "embed" and calls:
            metrics.record_embedding_call(calls)
        if calls:
            metrics.observe_model_call(role, seconds)
            self._thread.calls[role] += calls
        if messages:
            metrics.record_model_error(role, len(messages))
            for message in messages:
                log.warning("model %s: %s", role, message)
                self._thread.errors.append(ModelError(role, message))

    def thread_calls(self, *roles: ModelRole) -> int:
        """Calls of ``roles`` (all roles if none given) this thread has made so far."""
        counts = self._thread.calls
        return sum(counts[r] for r in (roles or MODEL_ROLES))

    def drain_errors(self) -> list[ModelError]:
        """This thread's errors since the last drain, forgetting them."""
        out = list(self._thread.errors)
        self._thread.errors.clear()
        return out

    def audit_events(self, namespace: str, actor: Actor, at: datetime,
                     refs: Collection[str] = ()) -> list[AuditEvent]:
        """This thread's pending errors as MODEL_ERROR audit events (drains them).
        ``refs``: the turns and memories the failed calls read; an error's reason may quote
        what the model made of them, so erasing any of them redacts it (``before``)."""
        return [AuditEvent(action=AuditAction.MODEL_ERROR, namespace=namespace,
                           before=sorted(set(refs)), reason=error.reason, actor=actor, at=at)
                for error in self.drain_errors()]


class _Wrapper(Generic[A]):
    """One role's adapter and the instruments its calls go through."""

    def __init__(self, inner: A, instruments: Instruments) -> None:
        self.inner = inner
        self.instruments = instruments


class InstrumentedExtractor(_Wrapper[Extractor]):
    """An :class:`Extractor` whose calls are instrumented as "extract"."""

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        """The wrapped extraction."""
        return self.instruments.call("extract", self.inner, len(episodes),
                                     lambda: self.inner.extract(episodes))


class InstrumentedDecider(_Wrapper[Decider]):
    """A :class:`Decider` whose calls are instrumented as "decide"."""

    def decide(self, requests: Sequence[DecisionRequest]) -> list[Decision]:
        """The wrapped decisions."""
        return self.instruments.call("decide", self.inner, len(requests),
                                     lambda: self.inner.decide(requests))


class InstrumentedMerger(_Wrapper[Merger]):
    """A :class:`Merger` whose calls are instrumented as "merge" and "summarize"."""

    def merge(self, clusters: Sequence[ClusterRequest]) -> list[ClusterOutcome]:
        """The wrapped merge."""
        return self.instruments.call("merge", self.inner, len(clusters),
                                     lambda: self.inner.merge(clusters))

    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """The wrapped summaries."""
        return self.instruments.call("summarize", self.inner, len(groups),
                                     lambda: self.inner.summarize(groups))


class InstrumentedEmbedder(_Wrapper[Embedder]):
    """An :class:`Embedder` whose calls are instrumented as "embed"."""

    @property
    def name(self) -> str:
        """The wrapped embedder's name."""
        return self.inner.name

    @name.setter
    def name(self, value: str) -> None:
        self.inner.name = value

    @property
    def dim(self) -> int:
        """The wrapped embedder's width (a lazily loaded model may set it late)."""
        return self.inner.dim

    @dim.setter
    def dim(self, value: int) -> None:
        self.inner.dim = value

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The wrapped embeddings."""
        return self.instruments.call("embed", self.inner, len(texts),
                                     lambda: self.inner.embed(texts))


@dataclass(frozen=True)
class InstrumentedModels:
    """The four roles, each behind its wrapper, sharing one :class:`Instruments`."""

    extractor: InstrumentedExtractor
    decider: InstrumentedDecider
    merger: InstrumentedMerger
    embedder: InstrumentedEmbedder
    instruments: Instruments


def instrument(extractor: Extractor, decider: Decider, merger: Merger, embedder: Embedder,
               instruments: Instruments) -> InstrumentedModels:
    """Wrap each role so its calls go through ``instruments``."""
    return InstrumentedModels(
        extractor=InstrumentedExtractor(extractor, instruments),
        decider=InstrumentedDecider(decider, instruments),
        merger=instrument_merger(merger, instruments),
        embedder=InstrumentedEmbedder(embedder, instruments),
        instruments=instruments,
    )


def instrument_merger(merger: Merger, instruments: Instruments | None = None
                      ) -> InstrumentedMerger:
    """``merger`` itself if it is already instrumented, else wrapped (in ``instruments``,
    or fresh ones counting into the process-wide metrics)."""
    if isinstance(merger, InstrumentedMerger):
        return merger
    return InstrumentedMerger(merger, instruments or Instruments())
