"""Redelivered work changes nothing: an ingest turn decided UPDATE, a finished pass's start task.

Celery delivers a task again when its worker dies or it outlives the visibility
timeout, so every task must be idempotent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from memcore.adapters import build_models
from memcore.client.client import Client, to_episodes
from memcore.consolidate import passes
from memcore.core.config import Settings
from memcore.core.interfaces import Decision, DecisionRequest, Op
from memcore.ingest.write_path import IngestPipeline
from memcore.messaging import task_names
from memcore.store import MemoryStore, keys
from tests.support.test_reliability_common import T0, cluster

NS = "redeliver"


class MergingDecider:
    """A deterministic decider that always UPDATEs the closest neighbour with a merged text.

    Like an LLM decider, its text differs from the fact's, so a redelivered turn finds no
    exact duplicate and reaches ``UPDATE`` again (the facts conflict on a number, so
    the write path asks the decider rather than adding).
    """

    def decide(self, requests: Sequence[DecisionRequest]) -> list[Decision]:
        out = []
        for r in requests:
            if not r.neighbours:
                out.append(Decision(Op.ADD))
                continue
            merged = f"{r.neighbours[0].text.rstrip('.')} (also: {r.fact})"
            if r.fact in r.neighbours[0].text:
                merged = r.neighbours[0].text
            out.append(Decision(Op.UPDATE, target=0, text=merged, reason="extends"))
        return out


def turn(tid: str, fact: str, minutes: int) -> list[dict[str, Any]]:
    return [{"role": "user", "id": tid, "content": fact, "metadata": {"facts": [fact]},
             "timestamp": T0 + timedelta(minutes=minutes)}]


def test_redelivered_update_changes_nothing(redis_url: str) -> None:
    s = Settings(redis_url=redis_url, extractor="provided", add_threshold=0.0)
    store = MemoryStore.from_url(redis_url)
    models = build_models(s)
    models.decider = MergingDecider()
    pipeline = IngestPipeline(store, models, s)
    first = to_episodes(NS, turn("t1", "Sam owns 2 red kayaks", 0), None, None)
    second = to_episodes(NS, turn("t2", "Sam owns 3 red kayaks", 1), None, None)
    pipeline.ingest(NS, first)
    report = pipeline.ingest(NS, second)
    assert report.decisions == {"UPDATE": 1}
    before = {m.id: m.model_dump_json() for m in store.records.iter_memories(NS)}
    (memory,) = store.records.iter_memories(NS)
    audit_before = store.client.xlen(keys.audit(NS))
    redelivered = [pipeline.ingest(NS, second).decisions for _ in range(3)]
    after = {m.id: m.model_dump_json() for m in store.records.iter_memories(NS)}
    (again,) = store.records.iter_memories(NS)
    decided = {str(k): v for k, v in redelivered[0].items()}
    print(f"\n[redelivered UPDATE] 3 redeliveries of a turn decided {decided}: "
          f"strength {memory.strength} -> {again.strength}, support {memory.support} -> "
          f"{again.support}, version {memory.version} -> {again.version}; "
          f"records unchanged: {after == before}")
    assert memory.support == 2 and memory.sources == ["t1", "t2"]
    assert after == before
    assert store.client.xlen(keys.audit(NS)) == audit_before, "no new UPDATE audit entry"


def test_redelivered_start_task_of_a_finished_pass_is_refused(tmp_path: Path) -> None:
    with cluster(tmp_path / "logs") as c:
        c.spawn("consolidate", "consolidate", 1)
        c.spawn("ingest", "ingest", 1)
        c.wait_ready({"consolidate", "ingest"})
        client = Client(c.url)
        msgs = [m for i in range(20) for m in turn(f"p{i}", f"Sam likes color {i % 4} a lot", i)]
        client.wait(client.add(NS, msgs), timeout=120)
        payload = {"namespace": NS, "pass_id": "pass-once", "full": True}
        first = client.celery.send_task(task_names.CONSOLIDATE, args=[payload],
                                        queue="consolidate").get(timeout=120)
        deadline = time.monotonic() + 60
        while not passes.pass_finished(client.store, NS, "pass-once"):
            assert time.monotonic() < deadline, "the pass did not finish"
            time.sleep(0.1)
        version = client.store.current_version(NS)
        passes_before = client.store.client.xlen(keys.audit(NS))
        again = [client.celery.send_task(task_names.CONSOLIDATE, args=[payload],
                                         queue="consolidate").get(timeout=120)
                 for _ in range(3)]
        print(f"\n[redelivered pass start] first: {first}; 3 re-sent start tasks: "
              f"{[a.get('skipped') for a in again]}, pointer v{version} -> "
              f"v{client.store.current_version(NS)}")
        assert all(a.get("skipped") == "finished" for a in again)
        assert version == 1 and client.store.current_version(NS) == version
        assert client.store.client.xlen(keys.audit(NS)) == passes_before
        client.close()
