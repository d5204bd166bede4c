"""Erasing a turn takes the audit entries that quote what a model made of it.

A model's rejected answer is audited (MODEL_ERROR) with its text, which is derived from
the user's turn ("Panic attacks are common in people with anxiety disorders" for "I had
a panic attack at work"). Such an entry cites the turns its call read, so that a forget
request (or an erase of the turn) redacts it: found by a key scan in the model bench.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from memcore.adapters import build_models
from memcore.core.config import Settings
from memcore.core.models import Actor, AuditAction, AuditEvent, Episode, Role
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from tests.support.key_scan import keys_holding
from tests.support.test_reliability_common import T0
from tests.workers.test_reliability_models import completion, model_server

INFERRED = "Panic attacks are common in people with anxiety disorders"


def _answer(body: dict[str, Any]) -> tuple[int, str, float]:
    """Extraction: the turn's own text plus an inference grounded in no turn; decisions:
    ADD."""
    data = json.loads(body["messages"][-1]["content"])
    if "turns" in data:
        facts = [{"turn": t["id"], "text": t["text"], "kind": "knowledge", "importance": 6,
                  "explicit": True} for t in data["turns"] if t["source"]]
        facts += [{"turn": t["id"], "text": INFERRED, "kind": "knowledge", "importance": 6,
                   "explicit": True} for t in data["turns"] if t["source"]
                  and "panic" in t["text"]]
        return 200, completion(json.dumps({"facts": facts})), 0.0
    return 200, completion(json.dumps({"decisions": [
        {"fact": f["id"], "op": "ADD", "target": None} for f in data.get("facts", [])]})), 0.0


def test_a_forget_request_redacts_the_model_errors_quoting_its_turn(
        redis_url: str, redis_client: redis.Redis) -> None:
    with model_server(_answer) as url:
        settings = Settings(redis_url=redis_url, openai_api_key="sk-test", openai_base_url=url,
                            model_max_retries=0)
        store = MemoryStore.from_url(redis_url)
        pipeline = IngestPipeline(store, build_models(settings), settings)
        turns = ["I teach chemistry at a sixth form college.",
                 "I had a panic attack at work yesterday.",
                 "Not really. Honestly, could you just not remember it?"]
        for i, text in enumerate(turns):
            pipeline.ingest("pm", [Episode(id=f"pm-{i}", namespace="pm", role=Role.USER,
                                           speaker="Sam", text=text, timestamp=T0,
                                           user_id="sam")])
            if i == 1:  # the rejected inference is audited, citing the turn
                errors = [e for e in store.audit.tail("pm", 50)
                          if e.action is AuditAction.MODEL_ERROR]
                assert any("anxiety" in e.reason and "pm-1" in e.before for e in errors), errors
    assert not keys_holding(redis_client, "anxiety")
    assert not keys_holding(redis_client, "panic")
    live = [m.text for m in store.records.iter_memories("pm") if m.live]
    assert any("chemistry" in t for t in live), live


def test_an_erase_redacts_model_errors_citing_nothing(redis_url: str) -> None:
    # A pass's summarize error cites no memory; it may quote one that is erased later.
    store = MemoryStore.from_url(redis_url)
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("pu", [Episode(id="pu-0", namespace="pu", role=Role.USER, speaker="Sam",
                                   text="My PIN hint is the name of my first dog, Rex.",
                                   timestamp=T0)])
    store.audit.append([
        AuditEvent(action=AuditAction.MODEL_ERROR, namespace="pu", actor=Actor.CONSOLIDATION,
                   reason="merger: summary not grounded: 'first dog Rex'", at=T0),
        AuditEvent(action=AuditAction.MODEL_ERROR, namespace="pu", actor=Actor.INGEST,
                   before=["pu-other"], reason="extractor: HTTP 500", at=T0)])
    store.eraser.erase_episode("pu", "pu-0", T0)
    reasons = [e.reason for e in store.audit.tail("pu", 20)
               if e.action is AuditAction.MODEL_ERROR]
    assert not any("Rex" in r for r in reasons), reasons
    assert "extractor: HTTP 500" in reasons  # cites another turn: kept
