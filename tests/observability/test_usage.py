"""Usage: the model calls and tokens each operation cost, in its response, in the
namespace's counters (``stats``, CLI and HTTP) and in the API's ``/metrics``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from memcore.adapters import build_models
from memcore.api.metrics import UsageCollector
from memcore.client.client import Client, to_episodes
from memcore.core.config import Settings
from memcore.core.models import Episode
from memcore.ingest.write_path import IngestPipeline
from memcore.local.stack import LocalStack
from memcore.observability.instrument import Instruments
from memcore.observability.usage import CallUsage, Metered, collect_usage
from memcore.store import MemoryStore
from tests.support.api_helpers import Api, serve
from tests.support.celery_stack import fresh_ns
from tests.support.cli_helpers import run, run_json
from tests.support.test_reliability_common import T0
from tests.workers.test_reliability_models import good_answer, model_server


class _Tokens(Metered):
    """An extractor that reports fixed tokens per call, as an endpoint would."""

    def extract(self, episodes: Sequence[Episode]) -> list[Any]:
        self.count_call()
        self.count_tokens(7, 3)
        return []


def test_collected_usage_sees_the_calls_of_its_block_only() -> None:
    instruments, adapter = Instruments(), _Tokens()
    instruments.call("extract", adapter, 1, lambda: adapter.extract([]))  # outside: nowhere
    with collect_usage() as outer:
        instruments.call("extract", adapter, 1, lambda: adapter.extract([]))
        with collect_usage() as inner:
            instruments.call("extract", adapter, 1, lambda: adapter.extract([]))
    assert inner.as_dict() == {"model_calls": 1, "prompt_tokens": 7, "completion_tokens": 3,
                               "calls": {"extract": 1}}
    assert outer.as_dict() == {"model_calls": 2, "prompt_tokens": 14, "completion_tokens": 6,
                               "calls": {"extract": 2}}
    assert CallUsage.from_dict(outer.as_dict()) == outer

    seen: list[CallUsage] = []

    def other_thread() -> None:  # a call of another thread is not this block's
        with collect_usage() as mine:
            instruments.call("extract", adapter, 1, lambda: adapter.extract([]))
        seen.append(mine)

    with collect_usage() as here:
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert here.model_calls == 0 and seen[0].model_calls == 1


def test_usage_counters_per_namespace_and_in_all(redis_url: str) -> None:
    store = MemoryStore.from_url(redis_url)
    store.usage.record("a", "ingest", CallUsage(3, 40, 5, {"extract": 3}))
    store.usage.record("a", "ingest", CallUsage(1, 2, 1))
    store.usage.record("b", "context", CallUsage(1, 0, 0, {"embed": 1}))
    store.usage.record("b", "consolidate", CallUsage())  # no call: nothing written
    assert store.usage.of("a") == {"ingest": {"model_calls": 4, "prompt_tokens": 42,
                                              "completion_tokens": 6}}
    assert store.usage.of("b") == {"context": {"model_calls": 1, "prompt_tokens": 0,
                                               "completion_tokens": 0}}
    assert store.usage.totals()["ingest"]["prompt_tokens"] == 42
    with pytest.raises(ValueError, match="operation"):
        store.usage.record("a", "search", CallUsage(1))
    store.close()


def test_openai_tokens_reach_the_report_and_the_counters(redis_url: str) -> None:
    sent = {"prompt": 0, "completion": 0}
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> tuple[int, str, float]:
        content = good_answer(body)
        with lock:
            prompt, completion = 50 + len(body["messages"][-1]["content"]) // 10, 9
            sent["prompt"] += prompt
            sent["completion"] += completion
        return 200, json.dumps({
            "id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}), 0.0

    with model_server(answer) as url:
        settings = Settings(redis_url=redis_url, openai_api_key="sk-test", openai_base_url=url,
                            model_max_retries=0, language="none")
        store = MemoryStore.from_url(redis_url)
        pipeline = IngestPipeline(store, build_models(settings), settings)
        report = pipeline.ingest("tok", to_episodes("tok", [
            {"role": "user", "content": "I work as a nurse in Leeds."},
            {"role": "user", "content": "My sister Maya lives in Oslo."}], T0, None))
    usage = report.usage
    assert sent["prompt"] > 0
    assert (usage.prompt_tokens, usage.completion_tokens) == (sent["prompt"], sent["completion"])
    assert usage.calls["extract"] >= 1 and usage.calls["embed"] >= 1
    assert store.usage.of("tok") == {"ingest": {"model_calls": usage.model_calls,
                                                "prompt_tokens": sent["prompt"],
                                                "completion_tokens": sent["completion"]}}
    store.close()


def test_offline_models_report_calls_and_no_tokens(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, language="none")
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    report = pipeline.ingest("off", to_episodes("off", [
        {"role": "user", "content": "I work as a nurse in Leeds."}], T0, None))
    assert report.usage.model_calls >= 1 and report.usage.calls.get("embed", 0) >= 1
    assert (report.usage.prompt_tokens, report.usage.completion_tokens) == (0, 0)
    store.close()


@pytest.fixture()
def live(celery_stack: LocalStack) -> Iterator[Api]:
    assert celery_stack.redis_url
    yield from serve(celery_stack.redis_url)


def test_usage_in_responses_stats_and_metrics(live: Api, stack_client: Client) -> None:
    ns = fresh_ns("usage")
    key = live.key(ns, role="write")
    add = live.call("POST", f"/v1/namespaces/{ns}/messages", key, json={
        "messages": [{"role": "user", "content": "I live in Lisbon with my cat Tom."}],
        "wait": True})
    assert add.status_code == 200, add.text
    added = add.json()["usage"]
    assert added["model_calls"] >= 1 and added["calls"]["embed"] >= 1
    assert (added["prompt_tokens"], added["completion_tokens"]) == (0, 0)  # offline models

    # An async add: its task's result carries the usage (tasks/wait, Client.wait).
    ids = live.call("POST", f"/v1/namespaces/{ns}/messages", key, json={
        "messages": [{"role": "user", "content": "My sister Maya lives in Oslo."}]}
    ).json()["task_ids"]
    waited = live.call("POST", f"/v1/namespaces/{ns}/tasks/wait", key,
                       json={"task_ids": ids, "timeout": 60}).json()["results"]
    second = waited[0]["usage"]
    assert second["model_calls"] >= 1
    assert stack_client.wait(ids)[0]["usage"] == second

    context = live.call("POST", f"/v1/namespaces/{ns}/context", key,
                        json={"query": "where does she live?"})
    assert context.status_code == 200, context.text
    assert context.json()["usage"]["calls"] == {"embed": 1}

    passed = live.call("POST", f"/v1/namespaces/{ns}/consolidate", key,
                       json={"wait": True, "timeout": 120})
    assert passed.status_code == 200, passed.text
    assert set(passed.json()["report"]["usage"]) == {"model_calls", "prompt_tokens",
                                                     "completion_tokens"}

    stats = live.call("GET", f"/v1/namespaces/{ns}/stats", key).json()["usage"]
    assert stats["ingest"] == {"model_calls": added["model_calls"] + second["model_calls"],
                               "prompt_tokens": 0, "completion_tokens": 0}
    assert stats["context"]["model_calls"] == 1
    assert run_json(live.redis_url, "stats", ns)["usage"] == stats
    shown = run(live.redis_url, "stats", ns)
    assert f"usage, ingest: {stats['ingest']['model_calls']} model calls, 0 prompt + 0 " \
           "completion tokens" in shown.stdout, shown.stdout

    text = live.call("GET", "/metrics").text
    assert 'memcore_usage_model_calls_total{operation="ingest"}' in text
    assert 'memcore_usage_prompt_tokens_total{operation="ingest"}' in text
    registry = CollectorRegistry(auto_describe=False)
    registry.register(UsageCollector(stack_client, per_namespace=True))
    series = generate_latest(registry).decode()
    calls = stats["ingest"]["model_calls"]
    assert f'memcore_usage_model_calls_total{{namespace="{ns}",operation="ingest"}} ' \
           f'{float(calls)}' in series
    assert f'memcore_usage_model_calls_total{{namespace="{ns}",operation="context"}} 1.0' \
        in series
