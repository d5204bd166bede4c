"""OpenTelemetry traces across producer, broker, worker, store and model (real parts).

The producer (this process) collects its spans in memory; the Celery workers are
subprocesses that export theirs over OTLP/HTTP to a small receiver run here, and their
models are a local OpenAI-compatible server that reports token usage. One ``add`` must
give one trace: ``memcore.add`` -> ``apply_async/memcore.ingest`` -> the worker's
``run/memcore.ingest`` -> the store's Redis commands and the model calls, each call a
GenAI span whose token attributes are what the server reported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.local.redis_server import start_redis
from memcore.local.stack import LocalStack
from memcore.observability import tracing
from tests.support.api_helpers import serve_process
from tests.support.celery_stack import fresh_ns
from tests.workers.test_reliability_models import good_answer, model_server

ROOT = Path(__file__).resolve().parents[2]
SERVER_KIND = 2
"""``SPAN_KIND_SERVER`` in OTLP."""


@dataclass(frozen=True)
class Span:
    """A finished span, from either side, in one shape."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    attributes: dict[str, Any]
    service: str
    kind: int = 0
    """OTLP's SpanKind (2: server); 0 for the producer's in-memory spans."""


class Receiver:
    """A minimal OTLP/HTTP trace receiver: decodes each export request into spans."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.add(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add(self, request: ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            service = next((a.value.string_value for a in resource_spans.resource.attributes
                            if a.key == "service.name"), "")
            for scope_spans in resource_spans.scope_spans:
                for s in scope_spans.spans:
                    attributes = {a.key: _value(a.value) for a in s.attributes}
                    with self.lock:
                        self.spans.append(Span(s.trace_id.hex(), s.span_id.hex(),
                                               s.parent_span_id.hex() or None, s.name,
                                               attributes, service, s.kind))

    def of_trace(self, trace_id: str) -> list[Span]:
        with self.lock:
            return [s for s in self.spans if s.trace_id == trace_id]


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def _local(exporter: InMemorySpanExporter) -> list[Span]:
    out = []
    for s in exporter.get_finished_spans():
        assert s.context is not None
        out.append(Span(f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}",
                        f"{s.parent.span_id:016x}" if s.parent else None, s.name,
                        dict(s.attributes or {}), "producer"))
    return out


class Model:
    """An OpenAI-compatible server answering every prompt correctly, reporting tokens
    that differ per request (so a sum that matches was really summed)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.prompt = 0
        self.completion = 0
        self.requests = 0

    def answer(self, body: dict[str, Any]) -> tuple[int, str, float]:
        content = good_answer(body)
        with self.lock:
            self.requests += 1
            prompt, completion = 100 + self.requests, len(content) // 4 + 1
            self.prompt += prompt
            self.completion += completion
        return 200, json.dumps({
            "id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}), 0.0


@dataclass
class Traced:
    receiver: Receiver
    exporter: InMemorySpanExporter
    model: Model
    client: Client


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    """Workers exporting to a receiver here, models on a local server, and this process
    tracing into memory."""
    receiver = Receiver()
    receiver.thread.start()
    model = Model()
    server = start_redis()
    exporter = InMemorySpanExporter()
    with model_server(model.answer) as model_url:
        env = {"MEMCORE_OTEL_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100",
               "MEMCORE_OPENAI_API_KEY": "sk-test-not-a-secret",
               "MEMCORE_OPENAI_BASE_URL": model_url, "MEMCORE_MODEL_MAX_RETRIES": "0",
               "MEMCORE_LANGUAGE": "none"}
        stack = LocalStack(server.url, ingest_concurrency=1, consolidate_concurrency=1,
                           log_dir=tmp_path_factory.mktemp("traced-logs"), env=env)
        try:
            stack.start()
            stack.wait_ready(timeout=120)
            settings = Settings(redis_url=server.url)
            assert tracing.setup_tracing(settings, "producer", exporter=exporter)
            client = Client(server.url, settings=settings)
            yield Traced(receiver, exporter, model, client)
            client.close()
        finally:
            tracing.shutdown_tracing()
            exporter.shutdown()
            stack.stop()
            server.stop()
            shutil.rmtree(server.directory, ignore_errors=True)
            receiver.httpd.shutdown()


def _collect(traced: Traced, trace_id: str, ready: Any, timeout: float = 30.0) -> list[Span]:
    """Every span of ``trace_id`` once ``ready(spans)`` holds (the workers batch theirs)."""
    deadline = time.monotonic() + timeout
    while True:
        spans = [s for s in _local(traced.exporter) if s.trace_id == trace_id] \
            + traced.receiver.of_trace(trace_id)
        if ready(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.1)


def _ancestors(span: Span, by_id: dict[str, Span]) -> list[str]:
    names = []
    while span.parent_id is not None and span.parent_id in by_id:
        span = by_id[span.parent_id]
        names.append(span.name)
    return names


def test_one_add_is_one_trace_from_producer_to_store_and_model(traced: Traced) -> None:
    ns = fresh_ns("trace")
    calls_before = (traced.model.prompt, traced.model.completion)
    task_ids = traced.client.add(ns, [{"role": "user", "content": "I live in Lisbon."},
                                      {"role": "user", "content": "My dog is called Rex."}])
    (result,) = traced.client.wait(task_ids, timeout=60)
    roots = [s for s in _local(traced.exporter) if s.name == "memcore.add"
             and s.attributes.get("memcore.namespace") == ns]
    assert len(roots) == 1 and roots[0].parent_id is None
    trace_id = roots[0].trace_id

    def ready(spans: list[Span]) -> bool:
        names = {s.name for s in spans}
        return "run/memcore.ingest" in names and any(n.startswith("chat ") for n in names)

    spans = _collect(traced, trace_id, ready)
    by_id = {s.span_id: s for s in spans}
    names = [s.name for s in spans]
    print("trace", trace_id, sorted(set(names)))
    publish = [s for s in spans if s.name == "apply_async/memcore.ingest"]
    assert len(publish) == 1 and publish[0].parent_id == roots[0].span_id
    run = [s for s in spans if s.name == "run/memcore.ingest"]
    assert len(run) == 1 and run[0].service == "memcore-worker"
    assert run[0].parent_id == publish[0].span_id  # the context came in the task headers
    # The store's writes, inside the task (Redis instrumentation).
    writes = [s for s in spans if s.service == "memcore-worker"
              and s.attributes.get("db.system") == "redis"
              and "run/memcore.ingest" in _ancestors(s, by_id)]
    assert writes, names
    # Model calls: GenAI attributes, and the tokens the server reported for them.
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert chats and all("run/memcore.ingest" in _ancestors(s, by_id) for s in chats)
    for chat in chats:
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.request.model"] == "gpt-4o-mini"
        assert chat.attributes["gen_ai.system"] == "openai"
        assert chat.attributes["gen_ai.usage.input_tokens"] > 100
        assert chat.attributes["gen_ai.usage.output_tokens"] > 0
    embeds = [s for s in spans if s.name.startswith("embeddings ")]
    assert embeds and all(s.attributes["gen_ai.system"] == "memcore" for s in embeds)
    assert all("gen_ai.usage.input_tokens" not in s.attributes for s in embeds)
    # The task's usage is the server's count: this add was the only traffic meanwhile.
    prompt = traced.model.prompt - calls_before[0]
    completion = traced.model.completion - calls_before[1]
    usage = result["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (prompt, completion)
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats) == prompt
    assert usage["calls"]["extract"] >= 1 and usage["calls"]["embed"] >= 1
    assert usage["model_calls"] == sum(usage["calls"].values())


def test_http_add_is_one_trace_from_server_span_through_task_to_store(
        traced: Traced) -> None:
    """``memcore serve`` as its own process exporting to the receiver, the real workers:
    one POST of an add with wait is one trace, FastAPI's server span -> ``memcore.add``
    -> ``apply_async/memcore.ingest`` -> the worker's ``run/memcore.ingest`` -> the
    store's Redis commands, with exactly one server span."""
    ns = fresh_ns("trace-http")
    url = traced.client.settings.redis_url or ""
    _, key = traced.client.store.api_keys.create([ns], "write", "trace-http")
    env = {"MEMCORE_OTEL_ENDPOINT": traced.receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    with serve_process(url, env) as base:
        response = httpx.post(f"{base}/v1/namespaces/{ns}/messages", timeout=120,
                              headers={"Authorization": f"Bearer {key}"},
                              json={"wait": True, "messages": [
                                  {"role": "user", "content": "I live in Porto."}]})
        assert response.status_code == 200, response.text

        def mine() -> list[Span]:
            with traced.receiver.lock:
                return [s for s in traced.receiver.spans if s.service == "memcore-api"
                        and s.kind == SERVER_KIND
                        and any(ns in str(v) for v in s.attributes.values())]

        deadline = time.monotonic() + 30
        while not mine() and time.monotonic() < deadline:
            time.sleep(0.1)
    servers = mine()
    assert len(servers) == 1, f"one server span per request, got {servers}"
    server = servers[0]
    assert server.parent_id is None and server.name == "POST /v1/namespaces/{ns}/messages"

    def ready(spans: list[Span]) -> bool:
        return any(s.name == "run/memcore.ingest" for s in spans) and any(
            s.name == "memcore.add" for s in spans)

    spans = _collect(traced, server.trace_id, ready)
    by_id = {s.span_id: s for s in spans}
    print("trace", server.trace_id, sorted({(s.service, s.name) for s in spans}))
    assert [s for s in spans if s.kind == SERVER_KIND] == [server], "no duplicate server span"
    (add,) = [s for s in spans if s.name == "memcore.add"]
    assert add.service == "memcore-api" and server.name in _ancestors(add, by_id)
    (publish,) = [s for s in spans if s.name == "apply_async/memcore.ingest"]
    assert publish.parent_id == add.span_id
    (run,) = [s for s in spans if s.name == "run/memcore.ingest"]
    assert run.service == "memcore-worker" and run.parent_id == publish.span_id
    assert _ancestors(run, by_id)[-1] == server.name, "one tree, rooted at the server span"
    writes = [s for s in spans if s.service == "memcore-worker"
              and s.attributes.get("db.system") == "redis"
              and "run/memcore.ingest" in _ancestors(s, by_id)]
    assert writes, "the store's writes are inside the task"


def test_a_pass_is_one_trace_through_its_chord_and_merger(traced: Traced) -> None:
    ns = fresh_ns("trace-pass")
    texts = ["I live in Berlin with my wife Anna and two cats.",
             "I live in Berlin with my wife Anna and our two cats."]
    for text in texts:  # two turns, two memories: one cluster for the merger
        traced.client.wait(traced.client.add(ns, [{"role": "user", "content": text}]),
                           timeout=60)
    report = traced.client.consolidate(ns, wait=True, timeout=120)
    assert isinstance(report, dict)
    roots = [s for s in _local(traced.exporter) if s.name == "memcore.consolidate"
             and s.attributes.get("memcore.namespace") == ns]
    assert len(roots) == 1
    trace_id = roots[0].trace_id

    def ready(spans: list[Span]) -> bool:
        # The merge call and the task span above it: a parent ends (and is exported)
        # after its children, possibly in a later batch.
        by_id = {s.span_id: s for s in spans}
        return any(s.name.startswith("chat ") and s.attributes.get("memcore.model.role")
                   == "merge" and {"run/memcore.consolidate_batch", "run/memcore.consolidate"}
                   & set(_ancestors(s, by_id)) for s in spans)

    spans = _collect(traced, trace_id, ready)
    by_id = {s.span_id: s for s in spans}
    names = {s.name for s in spans}
    print("pass trace", trace_id, sorted(names), report)
    assert "run/memcore.consolidate" in names
    merges = [s for s in spans if s.attributes.get("memcore.model.role") == "merge"]
    assert merges, names
    assert "run/memcore.consolidate_batch" in _ancestors(merges[0], by_id) \
        or "run/memcore.consolidate" in _ancestors(merges[0], by_id)
    assert report["usage"]["model_calls"] >= len(merges)
    assert report["usage"]["prompt_tokens"] >= sum(
        s.attributes["gen_ai.usage.input_tokens"] for s in merges)


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=120)


# Hides the OpenTelemetry packages from the child, as if the otel extra were not installed.
_WITHOUT_OTEL = """
import sys
class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _Hide())
"""


def test_tracing_is_off_by_default_and_needs_no_package(redis_url: str) -> None:
    code = _WITHOUT_OTEL + (
        "from memcore.client.client import Client\n"
        "from memcore.observability import tracing\n"
        f"c = Client({redis_url!r})\n"
        "c.search('t-off', 'anything')\n"
        "print('enabled', tracing.enabled())\n")
    done = _run(code, {"MEMCORE_OTEL_ENDPOINT": ""})
    assert done.returncode == 0, done.stderr
    assert "enabled False" in done.stdout


def test_tracing_switched_on_without_the_packages_names_the_extra(redis_url: str) -> None:
    code = _WITHOUT_OTEL + (
        "from memcore.client.client import Client\n"
        f"Client({redis_url!r})\n")
    done = _run(code, {"MEMCORE_OTEL_ENDPOINT": "http://127.0.0.1:4318"})
    assert done.returncode != 0
    assert "TracingUnavailable" in done.stderr
    assert "pip install 'memcore[otel]'" in done.stderr
    assert "MEMCORE_OTEL_ENDPOINT" in done.stderr
