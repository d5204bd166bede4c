"""Recall bookkeeping (``store.writes.touch``): an id listed n times is n recalls written once,
a long list is written in bounded script calls (a script blocks Redis while it runs),
the record outside its 25-byte recall header is left byte for byte, and a touch logged
while a pass runs is replayed with its count."""

from __future__ import annotations

import redis

from memcore.core.models import Actor, Memory
from memcore.store import MemoryStore, keys
from memcore.store.codec import RECALL
from memcore.store.writes import TOUCH_CHUNK
from tests.store.test_store_support import later, mem


def _seed(store: MemoryStore, n: int, ns: str = "u") -> list[Memory]:
    return [store.writes.add(ns, mem(ns, f"fact {i} about tea", seed=i), actor=Actor.INGEST,
                             reason="")
            for i in range(n)]


def _recall(store: MemoryStore, ns: str, memory_id: str) -> tuple[int, float, object, int]:
    m = store.records.get(ns, memory_id)
    assert m is not None
    return m.recall_count, m.strength, m.last_used, m.version


def test_an_id_listed_twice_is_two_recalls_in_one_write(store: MemoryStore) -> None:
    a, b = _seed(store, 2)
    store.writes.touch("u", [a.id, b.id, a.id, "missing"], later(3), strength_cap=10.0)
    assert _recall(store, "u", a.id) == (2, a.strength + 2, later(3), a.version + 1)
    assert _recall(store, "u", b.id) == (1, b.strength + 1, later(3), b.version + 1)


def test_the_strength_cap_holds_for_repeated_recalls(store: MemoryStore) -> None:
    (a,) = _seed(store, 1)
    store.writes.touch("u", [a.id] * 5, later(1), strength_cap=a.strength + 2)
    assert _recall(store, "u", a.id)[:2] == (5, a.strength + 2)


def test_only_the_recall_header_changes(store: MemoryStore, redis_client: redis.Redis) -> None:
    (a,) = _seed(store, 1)
    key = keys.memory("u", a.id)
    before = redis_client.get(key)
    store.writes.touch("u", [a.id], later(2))
    after = redis_client.get(key)
    assert before is not None and after is not None and len(after) == len(before)
    assert after[RECALL.size:] == before[RECALL.size:]
    assert after[:RECALL.size] != before[:RECALL.size]


def test_a_long_list_is_written_in_bounded_calls(store: MemoryStore,
                                                 redis_client: redis.Redis) -> None:
    memories = _seed(store, TOUCH_CHUNK + 40)
    ids = [m.id for m in memories] + [memories[0].id]  # one repeated across chunks
    redis_client.config_resetstat()
    store.writes.touch("u", ids, later(4))
    calls = redis_client.info("commandstats")["cmdstat_evalsha"]["calls"]
    assert calls == 2  # ceil((TOUCH_CHUNK + 40) / TOUCH_CHUNK) distinct ids
    assert _recall(store, "u", memories[0].id)[0] == 2
    assert all(_recall(store, "u", m.id)[0] == 1 for m in memories[1:])


def test_a_touch_during_a_pass_is_replayed_with_its_count(store: MemoryStore) -> None:
    a, b = _seed(store, 2)
    view = store.snapshots.begin_pass("u")
    store.writes.touch("u", [a.id, a.id, a.id, b.id], later(5))
    out = [m.model_copy(update={"importance": 0.3}) for m in view.memories]
    assert store.snapshots.commit_pass("u", view, out, [], now=later(6)) == 1
    ma, mb = store.records.get_many("u", [a.id, b.id])
    assert ma is not None and (ma.recall_count, ma.strength) == (3, a.strength + 3)
    assert mb is not None and (mb.recall_count, mb.importance) == (1, 0.3)
