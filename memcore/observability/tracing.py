"""OpenTelemetry traces: the one module that imports ``opentelemetry`` (docs/architecture.md).

Off unless ``MEMCORE_OTEL_ENDPOINT`` names an OTLP/HTTP collector (``http://host:4318``).
Each process that should trace calls :func:`setup_tracing` once at start: the workers'
children (``worker_process_init``), the HTTP service, a :class:`memcore.Client`. It
installs the SDK's tracer provider with a batching OTLP exporter and the official
Celery and Redis instrumentations; the HTTP service adds FastAPI's
(:func:`instrument_fastapi`). What a trace of one ``add`` holds:

* ``memcore.add`` (the producer: :class:`memcore.Client` or the HTTP route under FastAPI's
  server span), then Celery's ``apply_async/memcore.ingest``: the trace context travels
  in the task message's headers,
* the worker's ``run/memcore.ingest`` and under it every Redis command of the store
  (the Redis instrumentation) and every model call: one ``chat``/``embeddings`` span per
  call with the GenAI semantic-convention attributes (``gen_ai.operation.name``,
  ``gen_ai.request.model``, ``gen_ai.system``, ``gen_ai.usage.input_tokens`` and
  ``output_tokens``), made by :mod:`memcore.observability.instrument`,
* a consolidation pass is its own trace from ``memcore.consolidate`` (or beat's schedule
  task) through its chord's batch and reduce tasks and the merger's calls.

The packages are the ``otel`` extra (``pip install 'memcore[otel]'``); without them
nothing here does anything unless tracing is switched on, which then fails at start
saying so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memcore.core.config import Settings

log = logging.getLogger(__name__)

EXTRA = "otel"
"""The pyproject extra that installs the tracing packages."""
TRACER_NAME = "memcore"
# GenAI semantic conventions: the operation of each model role.
_OPERATION = {"extract": "chat", "decide": "chat", "merge": "chat", "summarize": "chat",
              "embed": "embeddings"}


class TracingUnavailable(RuntimeError):
    """Tracing is switched on but the OpenTelemetry packages are not installed."""


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tracer: Any = None  # an opentelemetry Tracer while tracing is on
        self.provider: Any = None
        self.instrumentors: list[Any] = []


_state = _State()


def enabled() -> bool:
    """True while this process traces."""
    return _state.tracer is not None


def wanted(settings: Settings) -> bool:
    """Do ``settings`` switch tracing on?"""
    return bool(settings.otel_endpoint)


def _import_sdk() -> Any:
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider  # noqa: F401
    except ImportError as exc:
        raise TracingUnavailable(
            f"MEMCORE_OTEL_ENDPOINT is set but OpenTelemetry is not installed ({exc.name} "
            f"missing): pip install 'memcore[{EXTRA}]', or unset MEMCORE_OTEL_ENDPOINT"
        ) from None
    return trace


def setup_tracing(settings: Settings, service: str, *, exporter: Any = None) -> bool:
    """Start tracing in this process if ``settings`` ask for it (or an ``exporter`` is
    given: tests collect spans in memory); True if this process now traces.

    Idempotent: a second call (another Client in the process) changes nothing. Raises
    :class:`TracingUnavailable` when tracing is asked for and the ``otel`` extra is missing.
    """
    if exporter is None and not wanted(settings):
        return enabled()
    trace = _import_sdk()
    with _state.lock:
        if _state.tracer is not None:
            return True
        from opentelemetry.instrumentation.celery import CeleryInstrumentor
        from opentelemetry.instrumentation.redis import RedisInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        if exporter is not None:  # in memory: each span at once
            provider.add_span_processor(SimpleSpanProcessor(exporter))
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            endpoint = str(settings.otel_endpoint).rstrip("/") + "/v1/traces"
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        # The global provider is what the instrumentations' spans use; it can be set once
        # per process, so a later setup (after shutdown_tracing) keeps the first one.
        trace.set_tracer_provider(provider)
        current = trace.get_tracer_provider()
        instrumentors: list[Any] = [CeleryInstrumentor(), RedisInstrumentor()]
        for instrumentor in instrumentors:
            if not instrumentor.is_instrumented_by_opentelemetry:
                instrumentor.instrument(tracer_provider=current)
        _state.provider = current
        _state.instrumentors = instrumentors
        _state.tracer = current.get_tracer(TRACER_NAME)
        log.info("tracing on: service %s, spans to %s", service,
                 "memory" if exporter is not None else settings.otel_endpoint)
        return True


def instrument_fastapi(app: Any) -> None:
    """Give the HTTP service's requests server spans (when this process traces)."""
    if not enabled():
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(app, tracer_provider=_state.provider)


def flush(timeout_millis: int = 5000) -> None:
    """Export the spans still batched (before a process exits)."""
    provider = _state.provider
    if provider is not None and hasattr(provider, "force_flush"):
        provider.force_flush(timeout_millis)


def shutdown_tracing() -> None:
    """Stop tracing in this process: flush, and take the instrumentations off."""
    with _state.lock:
        if _state.tracer is None:
            return
        flush()
        for instrumentor in _state.instrumentors:
            if instrumentor.is_instrumented_by_opentelemetry:
                instrumentor.uninstrument()
        _state.tracer = None
        _state.instrumentors = []


@contextmanager
def span(name: str, **attributes: str | int | float | bool) -> Iterator[None]:
    """A span around the ``with`` block (nothing when tracing is off)."""
    tracer = _state.tracer
    if tracer is None:
        yield
        return
    with tracer.start_as_current_span(name, attributes=attributes):
        yield


class ModelCallSpan:
    """What the instrumentation tells the span of one model call when it ends."""

    def __init__(self, handle: Any) -> None:
        self._span = handle

    def finish(self, calls: int, prompt_tokens: int, completion_tokens: int,
               errors: int) -> None:
        """The call's usage as GenAI attributes (tokens only when the model reported
        some: the offline models report none)."""
        if self._span is None:
            return
        self._span.set_attribute("memcore.model.calls", calls)
        if prompt_tokens or completion_tokens:
            self._span.set_attribute("gen_ai.usage.input_tokens", prompt_tokens)
            self._span.set_attribute("gen_ai.usage.output_tokens", completion_tokens)
        if errors:
            self._span.set_attribute("memcore.model.errors", errors)


@contextmanager
def model_call(role: str, model: str, system: str) -> Iterator[ModelCallSpan]:
    """The span of one model call of ``role`` (GenAI semantic conventions: named
    ``"{operation} {model}"``, a client span); an exception raised inside marks it
    failed."""
    tracer = _state.tracer
    if tracer is None:
        yield ModelCallSpan(None)
        return
    from opentelemetry.trace import SpanKind

    operation = _OPERATION.get(role, "chat")
    attributes = {"gen_ai.operation.name": operation, "gen_ai.request.model": model,
                  "gen_ai.system": system, "gen_ai.provider.name": system,
                  "memcore.model.role": role}
    with tracer.start_as_current_span(f"{operation} {model}", kind=SpanKind.CLIENT,
                                      attributes=attributes) as handle:
        yield ModelCallSpan(handle)
