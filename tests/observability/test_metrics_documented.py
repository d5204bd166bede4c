"""Every metric the Metrics table of docs/operations.md lists moves when memcore works.

An ingest batch (extract, embed, decide), a consolidation pass (merge, summarize, decay)
and an erase run in process through the real write path, pass and store, with the
OpenAI-compatible adapters talking to a local server (so tokens are reported); then
``/metrics`` is scraped. The table is parsed from docs/operations.md, so the docs and the code
cannot drift apart: a documented series that never moves, or a listed label value that
never appears, fails here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from memcore.adapters import build_models
from memcore.adapters.hashing import HashingEmbedder
from memcore.client.client import Client, to_episodes
from memcore.consolidate.passes import run_pass
from memcore.core.config import ConsolidationConfig, Settings
from memcore.core.models import Actor, AuditAction, Kind
from memcore.ingest.write_path import IngestPipeline
from memcore.observability.metrics import start_metrics_server
from memcore.store import MemoryStore
from tests.observability.test_metrics import scrape
from tests.support.docs_text import doc, section
from tests.support.helpers import hours, make_memory
from tests.workers.test_reliability_models import Answer, completion, model_server

EMBED_DIM = 64
_HASHER = HashingEmbedder(dim=EMBED_DIM)


def documented_metrics() -> list[tuple[str, str, str | None, list[str]]]:
    """(sample name, type, label, listed label values) for each series in the table."""
    table = section(doc("operations.md"), "## Metrics")
    rows = [line for line in table.splitlines() if line.startswith("| `memcore_")]
    out = []
    for row in rows:
        names_cell, type_cell, labels_cell = (c.strip() for c in row.strip("|").split("|")[:3])
        label_match = re.match(r"`(\w+)`(?:\s*\(([^)]*)\))?", labels_cell)
        label = label_match.group(1) if label_match else None
        values = ([v.strip() for v in label_match.group(2).split(",") if v.strip() != "..."]
                  if label_match and label_match.group(2) else [])
        for name in re.findall(r"`(memcore_\w+)`", names_cell):
            sample = name + "_count" if type_cell == "histogram" else name
            out.append((sample, type_cell, label, values))
    return out


def answer(body: dict[str, Any]) -> Answer:
    """A scripted model: echoes facts, decides by keyword, merges only the vim cluster."""
    if "input" in body:  # /v1/embeddings: the hashing embedder's vectors, with usage
        rows = _HASHER.embed(body["input"])
        return 200, json.dumps({
            "object": "list", "model": "m",
            "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in row]}
                     for i, row in enumerate(rows)],
            "usage": {"prompt_tokens": 3 * len(rows), "total_tokens": 3 * len(rows)}}), 0.0
    data = json.loads(body["messages"][-1]["content"])
    if "turns" in data:
        facts = [{"turn": t["id"], "text": t["text"], "kind": "knowledge", "importance": 6,
                  "explicit": True} for t in data["turns"] if t["source"]]
        if any("glitch" in t["text"] for t in data["turns"]):
            facts.append({"turn": 99, "text": "a fact about a turn nobody said"})
        reply: dict[str, Any] = {"facts": facts}
    elif "facts" in data:
        def decide(fact: dict[str, Any]) -> dict[str, Any]:
            if "Berlin" in fact["text"]:
                return {"fact": fact["id"], "op": "DELETE", "target": 0}
            if "every morning" in fact["text"]:
                return {"fact": fact["id"], "op": "UPDATE", "target": 0, "text": fact["text"]}
            return {"fact": fact["id"], "op": "NOOP", "target": 0}
        reply = {"decisions": [decide(f) for f in data["facts"]]}
    elif "clusters" in data:  # the tea cluster gets no answer: a merge error to audit
        reply = {"clusters": [{"cluster": c["id"], "merged_text": c["texts"][0],
                               "verdicts": ["same"] * len(c["pairs"])}
                              for c in data["clusters"] if "vim" in " ".join(c["texts"])]}
    else:
        reply = {"summaries": [{"group": g["id"], "summary": "Lunches: " + "; ".join(g["texts"])}
                               for g in data["groups"]]}
    return 200, completion(json.dumps(reply)), 0.0


@pytest.fixture()
def model_url() -> Iterator[str]:
    with model_server(answer) as url:
        yield url


def _ingest(pipeline: IngestPipeline, ns: str, turn_id: str, text: str, hour: float) -> None:
    pipeline.ingest(ns, to_episodes(ns, [{"role": "user", "id": turn_id, "content": text}],
                                    hours(hour), None))


def _consolidation_memories(ns: str) -> list[Any]:
    """Two near-duplicate pairs (vim, tea), three fading lunches, one fading heron."""
    def mem(text: str, vec: list[float], importance: float, last_h: float) -> Any:
        return make_memory(text, vec, importance, last_h, namespace=ns, kind=Kind.EVENT,
                           sources=[f"src-{abs(hash(text)) % 10**6}"])
    return [mem("Sam uses vim", [1, 0, 0, 0, 0], 0.9, 199),
            mem("Sam prefers vim keybindings", [0.99, 0.1, 0, 0, 0], 0.9, 199),
            mem("Sam drinks tea", [0, 0, 0, 0, 1], 0.9, 199),
            mem("Sam drinks green tea", [0, 0, 0, 0.1, 0.99], 0.9, 199),
            mem("lunch was soup", [0, 1, 0, 0, 0], 0.02, 0),
            mem("lunch was salad", [0, 0.9, 0.436, 0, 0], 0.02, 0),
            mem("lunch was bread", [0, 0.9, -0.436, 0, 0], 0.02, 0),
            mem("Sam once saw a heron", [0, 0, 0, 1, 0], 0.02, 0)]


def test_every_documented_metric_moves(redis_url: str, redis_client: redis.Redis,
                                       model_url: str) -> None:
    documented = documented_metrics()
    assert len(documented) >= 12, documented  # the parser found the table
    settings = Settings(redis_url=redis_url, openai_api_key="sk-test", openai_base_url=model_url,
                        embedder="openai", embedding_model="m", embedding_dim=EMBED_DIM,
                        merge_threshold=0.84, borderline_threshold=0.52,
                        model_timeout=5.0, model_max_retries=0)
    server = start_metrics_server(0, "127.0.0.1", broker_url=redis_url)
    assert server is not None
    try:
        before = scrape(server.port)
        store = MemoryStore.from_url(redis_url)
        models = build_models(settings)
        pipeline = IngestPipeline(store, models, settings)
        ns = "metrics-ingest"
        _ingest(pipeline, ns, "t1", "Sam lives in Paris.", 0)                 # ADD
        _ingest(pipeline, ns, "t2", "Sam lives in Paris.", 1)                 # NOOP (exact)
        _ingest(pipeline, ns, "t3", "Sam walks his 2 dogs.", 2)                # ADD
        _ingest(pipeline, ns, "t4", "Sam walks his 3 dogs every morning.", 3)  # UPDATE
        _ingest(pipeline, ns, "t5", "Sam lives in Berlin.", 4)                # DELETE
        _ingest(pipeline, ns, "t6", "A glitch in the answer.", 5)             # extract error
        pass_ns = "metrics-pass"
        for memory in _consolidation_memories(pass_ns):
            store.writes.add(pass_ns, memory, actor=Actor.USER, reason="test")
        config = ConsolidationConfig(tau_hours=72, merge_threshold=0.95,
                                     borderline_threshold=0.95, floor=0.05, cap=10,
                                     min_confidence=0.0, summary_threshold=0.6)
        report = run_pass(store, pass_ns, config, models.merger, now=hours(200))
        client = Client(redis_url, settings=settings)
        erase_me = next(m.id for m in store.records.iter_memories(ns) if "walks" in m.text)
        assert client.erase(ns, memory_id=erase_me) >= 1
        assert client.search(ns, "where does Sam live?", touch=False)
        client.close()
        redis_client.lpush("ingest", "waiting")
        redis_client.lpush("consolidate", "waiting")
        after = scrape(server.port)
    finally:
        server.close()

    def value(got: dict[Any, float], sample: str, label: str | None, wanted: str | None) -> float:
        return sum(v for (name, labels), v in got.items() if name == sample
                   and (wanted is None or (label, wanted) in labels))

    not_moved = []
    for sample, _type, label, values in documented:
        for wanted in values or [None]:
            if value(after, sample, label, wanted) <= value(before, sample, label, wanted):
                not_moved.append(f"{sample}{{{label}={wanted!r}}}" if wanted else sample)
    print(f"\n[documented metrics] {len(documented)} series in the docs' table; pass events "
          f"{report.events}; not moved: {not_moved}")
    assert not_moved == []
    assert report.events.get("MERGE") and report.events.get("SUMMARIZE")

    # Errors were audited where they happened, and no list of them is left to grow.
    audit = {n: [e.reason for e in store.audit.tail(n, 200)
                 if e.action is AuditAction.MODEL_ERROR] for n in (ns, pass_ns)}
    assert any(r.startswith("extractor: extract: fact cites turn 99") for r in audit[ns]), audit
    assert any(r.startswith("merger: merge: no answer for cluster") for r in audit[pass_ns]), \
        audit
    for adapter in (models.extractor, models.decider, models.merger, models.embedder):
        assert adapter.errors == []  # type: ignore[attr-defined]
    assert models.instruments.drain_errors() == []
