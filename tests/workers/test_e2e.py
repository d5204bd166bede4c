"""End to end through real Celery workers and a real Redis: turns in, memories out."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from celery.exceptions import CeleryError

from memcore.client.client import Client
from memcore.consolidation import consolidate
from memcore.core.config import ConsolidationConfig
from memcore.core.models import Actor, AuditAction, Status
from memcore.local.stack import LocalStack
from memcore.messaging import task_names
from memcore.store import keys
from tests.support.helpers import JoinMerger, hours, make_memory

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def fresh_ns() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture()
def client(celery_stack: LocalStack) -> Client:
    c = Client(celery_stack.redis_url)
    yield c
    c.close()


def turns() -> list[dict[str, object]]:
    return [
        {"role": "user", "speaker": "Sam", "content": "Hi there!", "id": "a0"},
        {"role": "user", "speaker": "Sam", "content": "I live in Paris.", "id": "a1"},
        {"role": "user", "speaker": "Sam", "content": "I prefer tea over coffee.", "id": "a2"},
        {"role": "assistant", "speaker": "bot", "content": "Sam loves opera.", "id": "a3"},
    ]


def test_turns_in_memories_out_and_audited(client: Client) -> None:
    ns = fresh_ns()
    results = client.wait(client.add(ns, turns(), timestamp=T0), timeout=60)
    assert results[0]["new_episodes"] == 4
    texts = {m.text for m in client.store.records.iter_memories(ns)}
    assert any("Paris" in t for t in texts) and any("tea" in t for t in texts)
    assert not any("opera" in t for t in texts), "assistant turns never become facts"
    assert client.store.episodes.get_episode(ns,
                                             "a3") is not None, "but they are stored as episodes"
    audit = client.store.audit.tail(ns, 50)
    assert {e.action for e in audit} >= {AuditAction.ADD}
    hits = client.search(ns, "Where does Sam live?", k=3, now=T0)
    assert hits and "Paris" in hits[0].memory.text
    assert client.get(ns, hits[0].memory.id).recall_count == 1  # type: ignore[union-attr]


def test_redelivered_turns_change_nothing(client: Client) -> None:
    ns = fresh_ns()
    client.wait(client.add(ns, turns(), timestamp=T0), timeout=60)
    before = sorted(m.model_dump_json() for m in client.store.records.iter_memories(ns))
    audit_before = len(client.store.audit.tail(ns, 1000))
    client.wait(client.add(ns, turns(), timestamp=T0), timeout=60)
    after = sorted(m.model_dump_json() for m in client.store.records.iter_memories(ns))
    assert after == before
    assert len(list(client.store.episodes.iter_episodes(ns))) == 4
    assert len(client.store.audit.tail(ns, 1000)) == audit_before


def test_repeat_reinforces_and_contradiction_supersedes(client: Client) -> None:
    ns = fresh_ns()
    client.wait(client.add(ns, [{"role": "user", "speaker": "Sam", "id": "b1",
                                 "content": "I live in Paris."}], timestamp=T0))
    client.wait(client.add(ns, [{"role": "user", "speaker": "Sam", "id": "b2",
                                 "content": "I live in Paris."}],
                           timestamp=T0 + timedelta(days=1)))
    (paris,) = [m for m in client.store.records.iter_memories(ns) if "Paris" in m.text]
    # Stated explicitly: starts one support step up (0.75), +0.25 for the repeat.
    assert sorted(paris.sources) == ["b1", "b2"] and paris.confidence == 1.0
    client.wait(client.add(ns, [{"role": "user", "speaker": "Sam", "id": "b3",
                                 "content": "I moved to Berlin."}],
                           timestamp=T0 + timedelta(days=30)))
    old = client.get(ns, paris.id)
    assert old is not None and old.status is Status.SUPERSEDED and old.valid_until is not None
    new = client.get(ns, old.superseded_by or "")
    assert new is not None and "Berlin" in new.text


def test_invalid_payload_fails_naming_the_field_and_writes_nothing(client: Client) -> None:
    ns = fresh_ns()
    bad = {"namespace": ns, "episodes": [{"namespace": ns, "role": "robot", "text": "hi",
                                          "timestamp": T0.isoformat()}]}
    result = client.celery.send_task(task_names.INGEST, args=[bad], queue="ingest")
    with pytest.raises((CeleryError, Exception)) as err:
        result.get(timeout=30)
    assert "episodes.0.role" in str(err.value)
    assert client.store.client.keys(keys.pattern(ns)) == []
    assert client.celery.control.ping(timeout=2), "the worker stays up"


def test_chord_pass_matches_the_pure_core(client: Client) -> None:
    ns = fresh_ns()
    mems = [make_memory("uses vim", [1.0, 0.0], 0.6, 100.0),
            make_memory("prefers vim keybindings", [0.99, 0.1], 0.8, 90.0),
            make_memory("lunch was soup", [0.0, 1.0], 0.1, 0.0)]
    mems = [m.model_copy(update={"namespace": ns}) for m in mems]
    for m in mems:
        client.store.writes.add(ns, m, actor=Actor.USER, reason="test")
    cfg = ConsolidationConfig(tau_hours=72, merge_threshold=0.95, borderline_threshold=0.95,
                              floor=0.05, cap=10, min_confidence=0.0)
    client.settings = client.settings.model_copy(update={"consolidation": cfg})
    expected = consolidate(mems, hours(200), cfg, JoinMerger())
    exp_live = sorted((m.importance, m.strength) for m in expected.live())
    # The workers use their own (default) config; run the pass with the seed's.
    from memcore.consolidate.passes import run_pass
    report = run_pass(client.store, ns, cfg, JoinMerger(), now=hours(200))
    assert report.to_version == 1
    live = [m for m in client.store.records.iter_memories(ns) if m.live]
    assert sorted((m.importance, m.strength) for m in live) == exp_live == [(0.8, 2.0)]
