"""Versioned snapshots: consistent readers, CAS, writes during a pass, rollback, gc."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import redis

from memcore.core.models import Actor, AuditAction, AuditEvent, Memory, Status
from memcore.store import MemoryStore, StoreConflict, keys, snapshots
from tests.store.test_store_support import T0, later, mem


def _seed(store: MemoryStore, n: int = 30) -> list[str]:
    return [store.writes.add("u", mem("u", f"v0 fact {i}", seed=i), actor=Actor.INGEST,
                             reason="").id
            for i in range(n)]


def _dump(store: MemoryStore) -> list[dict[str, object]]:
    return sorted((m.model_dump() for m in store.records.iter_memories("u")),
                  key=lambda d: str(d["id"]))


def test_readers_never_see_a_mix(store: MemoryStore, redis_url: str) -> None:
    ids = _seed(store)
    stop = threading.Event()
    seen: set[tuple[str, ...]] = set()
    bad: list[list[str]] = []

    def reader() -> None:
        rstore = MemoryStore(redis.Redis.from_url(redis_url))
        while not stop.is_set():
            got = rstore.records.get_many("u", ids)
            prefixes = {m.text.split()[0] for m in got if m is not None}
            seen.add(tuple(sorted(prefixes)))
            if len(prefixes) != 1 or any(m is None for m in got):
                bad.append(sorted(prefixes))

    th = threading.Thread(target=reader)
    th.start()
    try:
        for round_ in range(1, 4):
            view = store.snapshots.begin_pass("u")
            out = [m.model_copy(update={"text": m.text.replace(f"v{round_ - 1}", f"v{round_}")})
                   for m in view.memories]
            store.snapshots.commit_pass("u", view, out, [], now=later(round_))
    finally:
        stop.set()
        th.join()
    assert not bad
    assert store.current_version("u") == 3
    assert all(m.text.startswith("v3") for m in store.records.iter_memories("u"))


def test_writes_during_pass_land_in_new_version(store: MemoryStore) -> None:
    a, b, c = _seed(store, 3)
    view = store.snapshots.begin_pass("u")
    # Concurrent write path while the pass computes:
    store.writes.reinforce("u", a, source="late", now=later(5), reason="during pass")
    store.writes.reinforce("u", b, source="late-b", now=later(5), reason="absorbed id")
    new = store.writes.add("u", mem("u", "added during pass", seed=50), actor=Actor.INGEST,
                           reason="")
    store.writes.touch("u", [c], later(6))
    # The pass: everything decayed to importance 0.2, b merged into a.
    out: list[Memory] = []
    for m in view.memories:
        m = m.model_copy(update={"importance": 0.2})
        if m.id == b:
            m = m.model_copy(update={"status": Status.SUPERSEDED, "superseded_by": a})
        out.append(m)
    events = [store_event("u", [a, b], [a])]
    v1 = store.snapshots.commit_pass("u", view, out, events, now=later(7))
    assert v1 == 1 and store.current_version("u") == 1
    ma, mb, mn, mc = store.records.get_many("u", [a, b, new.id, c])
    assert ma is not None and ma.importance == 0.2
    assert set(ma.sources) == {"ep0", "late", "late-b"}  # b's reinforcement redirected to a
    assert mb is not None and mb.status is Status.SUPERSEDED and "late-b" not in mb.sources
    assert mn is not None and mn.text == "added during pass"
    assert mc is not None and mc.recall_count == 1 and mc.importance == 0.2
    assert store.records.find_by_hash("u", mn.content_hash) == new.id
    # only the write during the pass
    assert store.coordination.pending_importance("u") == pytest.approx(5.0)
    assert store.coordination.last_pass_at("u") == later(7)
    assert store.audit.tail("u", 1)[0].action is AuditAction.MERGE
    assert [h.action for h in store.audit.history("u", b)][-1] is AuditAction.MERGE
    ids, mat, _ = store.records.vectors_since("u", 1, 0)
    assert set(ids) == {a, b, c, new.id} and mat.shape[0] == 4


def store_event(ns: str, before: list[str], after: list[str]) -> AuditEvent:
    return AuditEvent(action=AuditAction.MERGE, namespace=ns, before=before, after=after,
                      reason="merged", at=later(7))


def test_cas_against_moved_pointer_fails_cleanly(store: MemoryStore) -> None:
    _seed(store, 5)
    first = store.snapshots.begin_pass("u")
    second = store.snapshots.begin_pass("u")  # takes over: the first pass can no longer commit
    with pytest.raises(StoreConflict, match="another pass"):
        store.snapshots.commit_pass("u", first, first.memories, [], now=later(1))
    v = store.snapshots.commit_pass("u", second, second.memories, [], now=later(1))
    third = store.snapshots.begin_pass("u")
    store.snapshots.rollback("u", 0, later(2))  # pointer moves under the pass
    with pytest.raises(StoreConflict, match="pointer moved"):
        store.snapshots.commit_pass("u", third, third.memories, [], now=later(3))
    assert store.current_version("u") == 0
    assert [i.version for i in store.snapshots.versions("u")] == [0, v]
    leftovers = list(store.client.scan_iter(match=keys.prefix("u") + "v3:*"))
    leftovers += list(store.client.scan_iter(match=keys.prefix("u") + "v1:*"))
    assert leftovers == [] and v == 2


def test_rollback_restores_exactly_and_gc(store: MemoryStore) -> None:
    _seed(store, 10)
    before = _dump(store)
    view = store.snapshots.begin_pass("u")
    v1 = store.snapshots.commit_pass("u", view, [m.model_copy(update={"importance": 0.9,
                                                                      "text": "changed"})
                                       for m in view.memories], [], now=later(10))
    assert _dump(store) != before
    store.snapshots.rollback("u", 0, later(11))
    assert _dump(store) == before and store.current_version("u") == 0
    assert store.audit.tail("u", 1)[0].action is AuditAction.ROLLBACK
    assert store.snapshots.gc("u", later(11) + timedelta(days=1)) == []
    assert store.snapshots.gc("u", later(11) + timedelta(days=8)) == [v1]
    assert [i.version for i in store.snapshots.versions("u")] == [0]
    assert _dump(store) == before
    with pytest.raises(ValueError, match="version"):
        store.snapshots.rollback("u", v1, later(12))


def test_index_blob_chunks(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshots, "INDEX_CHUNK", 7)
    blob = bytes(range(50))
    store.snapshots.store_index_blob("u", 0, blob)
    assert store.snapshots.load_index_blob("u", 0) == blob
    store.snapshots.store_index_blob("u", 0, b"short")
    assert store.snapshots.load_index_blob("u", 0) == b"short"
    assert store.snapshots.load_index_blob("u", 5) is None
    assert store.client.get(keys.index_chunk("u", 0, 1)) is None


def test_begin_pass_on_empty_namespace(store: MemoryStore) -> None:
    view = store.snapshots.begin_pass("fresh")
    assert (view.version, view.memories) == (0, [])
    new = store.snapshots.commit_pass("fresh", view, [mem("fresh", "first", at=T0)], [], now=T0)
    assert new == 1 and store.records.count_by_status("fresh")["active"] == 1
