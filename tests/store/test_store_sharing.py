"""Versions share unchanged records: a pass writes only what it changed, every version in
the grace period reads as it did, rollback and erase reach every copy."""

from __future__ import annotations

import pytest
import redis

from memcore.core.models import Actor, Status
from memcore.store import MemoryStore, keys
from memcore.store.codec import pack_memory
from tests.store.test_store_fastpath import dump_all
from tests.store.test_store_support import later, mem


@pytest.fixture()
def store(redis_client: redis.Redis) -> MemoryStore:
    redis_client.config_set("rdbcompression", "no")
    return MemoryStore(redis_client)


def _seed(store: MemoryStore, n: int) -> list[str]:
    return [store.writes.add("u", mem("u", f"fact number {i} about tea", seed=i),
                             actor=Actor.INGEST,
                      reason="").id for i in range(n)]


def _state(store: MemoryStore) -> dict[str, dict[str, object]]:
    return {m.id: m.model_dump() for m in store.records.iter_memories("u")}


def _record_keys(store: MemoryStore) -> int:
    return sum(1 for _ in store.client.scan_iter(match=keys.prefix("u") + "*m:*"))


def test_a_pass_writes_only_what_it_changed(store: MemoryStore) -> None:
    ids = _seed(store, 40)
    view = store.snapshots.begin_pass("u")
    changed = [m.model_copy(update={"status": Status.TOMBSTONED}) for m in view.memories[:2]]
    v1 = store.snapshots.commit_pass("u", view, [*changed, *view.memories[2:]], [], now=later(10))
    assert v1 == 1 and _record_keys(store) == 40  # one record per memory, not one per version
    undo = store.client.hgetall(keys.undo("u", 1))
    assert sorted(k.decode() for k in undo) == sorted(ids[:2])  # the previous bytes only
    assert store.snapshots.last_bytes_staged == sum(len(pack_memory(m)) for m in changed)
    assert store.records.count_by_status("u")["tombstoned"] == 2
    assert [v.memories for v in store.snapshots.versions("u")] == [40, 40]


def test_every_version_reads_as_it_did_and_rolls_back(store: MemoryStore) -> None:
    ids = _seed(store, 12)
    states = {0: _state(store)}
    for version in (1, 2, 3):
        view = store.snapshots.begin_pass("u")
        out = [m.model_copy(update={"text": f"v{version} {m.text}"}) if i % version == 0 else m
               for i, m in enumerate(view.memories)]
        assert store.snapshots.commit_pass("u", view, out, [], now=later(10 * version)) == version
        # writes while this version is current belong to it
        store.writes.reinforce("u", ids[version], source=f"late-{version}",
                               now=later(10 * version + 1),
                        reason="")
        store.writes.touch("u", [ids[version + 1]], later(10 * version + 2))
        store.writes.add("u", mem("u", f"new in v{version}", seed=100 + version),
                         actor=Actor.INGEST,
                  reason="")
        states[version] = _state(store)
    for version in (0, 1, 2):  # reading an older version: the live records + undo hashes
        got = {m.id: m.model_dump() for m in store.gateway.load("u", version, list(states[3]))
               if m is not None}
        assert got == states[version]
    store.snapshots.rollback("u", 1, later(50))
    assert _state(store) == states[1] and store.current_version("u") == 1
    assert store.records.find_by_hash("u", store.records.get("u", ids[0]).content_hash) == ids[0]  # type: ignore[union-attr]
    assert store.records.count_by_status("u")["active"] == len(states[1])
    with pytest.raises(ValueError, match="rolled back from"):
        store.snapshots.rollback("u", 3, later(51))
    store.snapshots.rollback("u", 0, later(52))
    assert _state(store) == states[0]


def test_a_write_racing_a_rollback_is_never_half_undone(store: MemoryStore) -> None:
    ids = _seed(store, 5)
    before = _state(store)
    view = store.snapshots.begin_pass("u")
    store.snapshots.commit_pass("u", view, [m.model_copy(update={"importance": 0.9})
                                  for m in view.memories], [], now=later(10))
    store.writes.reinforce("u", ids[0], source="after-v1", now=later(11), reason="")
    commit = store.gateway.commit

    def racing(ns: str, batch: object, **kw: object) -> bool:
        store.gateway.commit = commit  # once: a writer lands between read and commit
        store.writes.reinforce("u", ids[1], source="racer", now=later(12), reason="")
        return commit(ns, batch, **kw)  # type: ignore[arg-type]

    store.gateway.commit = racing  # type: ignore[method-assign]
    store.snapshots.rollback("u", 0, later(13))
    assert _state(store) == before  # exactly version 0: the racing write retried on it
    assert store.current_version("u") == 0


def test_add_new_writes_what_add_writes(redis_client: redis.Redis) -> None:
    one, bulk = MemoryStore(redis_client), MemoryStore(redis_client)
    memories = [mem("a", f"fact {i}", seed=i) for i in range(20)]
    for m in memories:
        one.writes.add("a", m, actor=Actor.INGEST, reason="load")
    assert bulk.writes.add_new("b", [m.model_copy(update={"namespace": "b"}) for m in memories],
                        actor=Actor.INGEST, reason="load") == 20

    def normalized(ns: str) -> dict[bytes, object]:
        out = {}
        for key, value in dump_all(redis_client, ns).items():
            if isinstance(value, list):  # audit entries: drop times, same fields otherwise
                value = [{k: v for k, v in f.items() if k != b"at"} if isinstance(f, dict)
                         else f for f in value]
            if isinstance(value, dict):
                value = {k: v for k, v in value.items() if not k[:1].isdigit()}
            out[key.replace(keys.prefix(ns).encode(), b"")] = value
        return out

    assert normalized("a") == normalized("b")
    with pytest.raises(ValueError, match="content hash"):
        bulk.writes.add_new("b", [mem("b", "same", seed=1), mem("b", "same", seed=2)],
                      actor=Actor.INGEST, reason="")
    again = bulk.writes.add_new("b", [memories[0].model_copy(update={"namespace": "b"})],
                         actor=Actor.INGEST, reason="load")  # exists: falls back to add
    assert again == 1 and sum(bulk.records.count_by_status("b").values()) == 20


def test_erase_reaches_the_undo_copies(store: MemoryStore) -> None:
    secret = "SECRET-FACT the locker code is 8812"
    target = store.writes.add("u", mem("u", secret, seed=7), actor=Actor.INGEST, reason="").id
    _seed(store, 3)
    view = store.snapshots.begin_pass("u")
    store.snapshots.commit_pass("u", view, [m.model_copy(update={"importance": 0.8})
                                  for m in view.memories], [], now=later(10))
    assert any(secret.encode() in v for v in store.client.hvals(keys.undo("u", 1)))
    building = store.snapshots.begin_pass("u")  # a pass stages a changed copy of the secret
    store.snapshots._stage("u", 9, [(m.id, m.model_copy(update={"importance": 0.1}))
                                    for m in building.memories])
    store.client.zadd(keys.building("u"), {"9": 0})
    store.eraser.erase_memory("u", target, later(11))
    for key, value in dump_all(store.client, "u").items():
        assert secret.encode() not in repr(value).encode(), key
    store.snapshots.rollback("u", 0, later(13))
    assert store.records.get("u", target) is None  # rolling back never brings it back
