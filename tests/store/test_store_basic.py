"""Store basics against a real Redis: validation, write ops, episodes, audit, footprint."""

from __future__ import annotations

import pytest

from memcore.core.models import Actor, AuditAction, Episode, Role, Status
from memcore.local.redis_server import running_redis
from memcore.store import DurabilityError, MemoryStore, footprint, keys
from tests.store.test_store_support import DIM, T0, hundred_chars, later, mem, vec


@pytest.mark.parametrize("bad", ["", "a b", "x{y}", "a:b", "a*", "é", "x" * 129])
def test_bad_namespace_rejected(store: MemoryStore, bad: str) -> None:
    with pytest.raises(ValueError, match="namespace"):
        keys.current(bad)
    with pytest.raises(ValueError, match="namespace"):
        store.records.get(bad, "abc")
    with pytest.raises(ValueError, match="namespace"):
        store.records.iter_memories(bad).__next__()


@pytest.mark.parametrize("bad", ["", "a b", "x}", "a:b", "*"])
def test_bad_ids_rejected(store: MemoryStore, bad: str) -> None:
    with pytest.raises(ValueError, match="id"):
        store.records.get("u", bad)
    with pytest.raises(ValueError, match="id"):
        store.writes.touch("u", ["ok", bad], T0)
    with pytest.raises(ValueError, match="content_hash"):
        store.records.find_by_hash("u", "not-hex}")


def test_refuses_evicting_server() -> None:
    with running_redis(extra=["--maxmemory-policy", "allkeys-lru"]) as server:
        with pytest.raises(DurabilityError, match="noeviction"):
            MemoryStore(server.client())
        MemoryStore(server.client(), check_durability=False)  # explicit opt-out works


def test_write_ops_and_reads(store: MemoryStore) -> None:
    m = store.writes.add("u", mem("u", "Alice likes cats", seed=1, status=Status.CANDIDATE),
                  actor=Actor.INGEST, reason="new fact")
    got = store.records.get("u", m.id)
    assert got is not None
    assert got.model_dump(exclude={"vector"}) == m.model_dump(exclude={"vector"})
    assert m.version == 1
    assert store.records.find_by_hash("u", m.content_hash) == m.id
    assert store.records.namespaces() == ["u"]
    assert store.current_version("u") == 0
    r = store.writes.reinforce("u", m.id, source="ep9", now=later(1), reason="seen again")
    assert (r.support, r.confidence, r.sources) == (2, 0.75, ["ep1", "ep9"])
    assert store.writes.reinforce("u", m.id, source="ep9", now=later(2), reason="redelivered") == r
    u = store.writes.update("u", m.id, text="Alice loves cats", vector=vec(2), source="ep10",
                     now=later(3), reason="stronger", decision="UPDATE 0")
    assert (u.text, u.strength, u.support) == ("Alice loves cats", 2.0, 3)
    assert store.records.find_by_hash("u", m.content_hash) is None
    assert store.records.find_by_hash("u", u.content_hash) == m.id
    store.writes.touch("u", [m.id, "missing"], later(4))
    t = store.records.get("u", m.id)
    assert t is not None and (t.recall_count, t.strength, t.last_used) == (1, 3.0, later(4))
    new = mem("u", "Alice hates cats now", seed=3)
    store.writes.supersede("u", m.id, new, now=later(5), reason="contradiction")
    old = store.records.get("u", m.id)
    assert old is not None and old.status is Status.SUPERSEDED
    assert (old.superseded_by, old.valid_until) == (new.id, later(5))
    assert store.records.count_by_status("u")["superseded"] == 1
    assert store.records.count_by_status("u")["active"] == 1
    assert store.writes.pin("u", new.id, later(6)).pinned
    assert not store.writes.unpin("u", new.id, later(7)).pinned
    actions = [e.action for e in store.audit.history("u", m.id)]
    assert actions == [AuditAction.ADD, AuditAction.NOOP, AuditAction.UPDATE,
                       AuditAction.SUPERSEDE, AuditAction.PIN, AuditAction.UNPIN]
    assert store.coordination.pending_importance("u") == pytest.approx(15.0)
    with pytest.raises(KeyError, match="nope"):
        store.writes.reinforce("u", "nope", source="s", now=T0, reason="")
    with pytest.raises(ValueError, match="namespace"):
        store.writes.add("other", mem("u", "x"), actor=Actor.INGEST, reason="")


def test_add_is_idempotent_and_dedupes_by_hash(store: MemoryStore) -> None:
    a = mem("u", "Bob is vegan.", seed=1, sources=["e1"])
    store.writes.add("u", a, actor=Actor.INGEST, reason="new")
    assert store.writes.add("u", a, actor=Actor.INGEST, reason="again").version == 1
    twin = store.writes.add("u", mem("u", "bob is VEGAN", seed=2, sources=["e2"]),
                     actor=Actor.INGEST, reason="race")
    assert twin.id == a.id and twin.support == 2
    assert len(list(store.records.iter_memories("u"))) == 1


def test_restore_tombstoned(store: MemoryStore) -> None:
    m = store.writes.add("u", mem("u", "temp fact", status=Status.TOMBSTONED), actor=Actor.USER,
                  reason="")
    assert store.records.find_by_hash("u", m.content_hash) is None
    back = store.writes.restore("u", m.id, later(1))
    assert back.status is Status.ACTIVE
    assert store.records.find_by_hash("u", m.content_hash) == m.id
    assert store.audit.tail("u", 1)[0].action is AuditAction.RESTORE


def test_episodes_idempotent(store: MemoryStore) -> None:
    eps = [Episode(id=f"e{i}", namespace="u", role=Role.USER, text=f"turn {i}",
                   timestamp=later(i), metadata={"session": 1}) for i in range(3)]
    assert store.episodes.add_episodes(eps) == [True, True, True]
    assert store.episodes.add_episodes([eps[1], eps[0]]) == [False, False]
    assert [e.id for e in store.episodes.iter_episodes("u")] == ["e0", "e1", "e2"]
    assert store.episodes.get_episode("u", "e1") == eps[1]
    assert store.episodes.get_episode("u", "nope") is None


def test_audit_trim_by_age_and_counters(store: MemoryStore) -> None:
    for i in range(5):
        store.writes.add("u", mem("u", f"fact {i}", seed=i, at=later(i * 60 * 24)),
                  actor=Actor.INGEST, reason="r")
    assert store.audit.trim("u", later(2 * 60 * 24)) == 2
    assert [e.text for e in store.audit.tail("u", 10)] == ["fact 2", "fact 3", "fact 4"]
    store.coordination.incr_counters("u", {"model_calls": 2, "tokens": 150.5})
    store.coordination.incr_counters("u", {"model_calls": 1})
    assert store.coordination.counters("u") == {"model_calls": 3.0, "tokens": 150.5}


def test_vectors_since_follows_inserts(store: MemoryStore) -> None:
    ids = [store.writes.add("u", mem("u", f"fact {i}", seed=i), actor=Actor.INGEST, reason="").id
           for i in range(5)]
    got, mat, off = store.records.vectors_since("u", 0, 0, limit=3)
    assert got == ids[:3] and mat.shape == (3, DIM) and off == 3
    got, mat, off = store.records.vectors_since("u", 0, off)
    assert got == ids[3:] and off == 5
    assert float(mat[0] @ vec(3)) > 0.999
    store.writes.update("u", ids[0], text="fact zero", vector=vec(99), source="x", now=later(1),
                 reason="")
    got, mat, off = store.records.vectors_since("u", 0, off)
    assert got == [ids[0]] and float(mat[0] @ vec(99)) > 0.999


def test_footprint_per_memory(store: MemoryStore) -> None:
    n = 1000
    pipe_memories = [mem("fp", hundred_chars(i), seed=i) for i in range(n)]
    view = store.snapshots.begin_pass("fp")
    store.snapshots.commit_pass("fp", view, pipe_memories, [], now=T0)
    fp = footprint(store, "fp")
    overhead = fp["bytes_per_memory"] - fp["text_bytes_per_memory"]
    print(f"\nfootprint d={DIM}, 100-char texts, n={n}: {fp['bytes_per_memory']:.0f} B/memory "
          f"({fp['text_bytes_per_memory']:.0f} text, {fp['vector_bytes_per_memory']:.0f} vector, "
          f"{overhead:.0f} beyond the text)")
    assert overhead <= 1024
