"""A pass that changed more records than one swap may move commits them as several
versions (``snapshots.COMMIT_RECORDS``): no swap script blocks Redis for long (at 10^6
memories one swap of a full pass ran past Redis' 5 s busy threshold), every version is
whole (no merge half done), writes during and between the parts are kept, the result
equals a single commit, and a rollback to before the pass undoes all of it."""

from __future__ import annotations

import pytest
import redis

from memcore.core.models import Actor, Memory, Status
from memcore.store import MemoryStore, keys
from memcore.store.snapshots import commit_parts
from tests.store.test_store_support import later, mem


def test_parts_are_bounded_and_keep_a_merge_together() -> None:
    ms = {f"m{i}": mem("u", f"fact {i}", seed=i) for i in range(10)}
    staged: dict[str, Memory | None] = {}
    for i, (mid, m) in enumerate(ms.items()):
        # m1 -> m0, m2 -> m0 (a merge of three); m5 -> m6; the rest alone; m9 erased
        target = {"m1": "m0", "m2": "m0", "m5": "m6"}.get(mid)
        staged[mid] = None if i == 9 else m.model_copy(update={"superseded_by": target})
    parts = commit_parts(staged, 3)
    assert sorted(parts[0]) == ["m0", "m1", "m2"]
    assert all(len(p) <= 3 for p in parts)
    assert any({"m5", "m6"} <= set(p) for p in parts)
    assert sorted(i for p in parts for i in p) == sorted(staged)
    assert commit_parts(staged, 100) == [staged]
    assert commit_parts({}, 3) == [{}]
    with pytest.raises(ValueError):
        commit_parts(staged, 0)


def _seed(store: MemoryStore, ns: str, n: int) -> list[str]:
    return [store.writes.add(ns, mem(ns, f"fact number {i} about tea", seed=i), actor=Actor.INGEST,
                      reason="").id for i in range(n)]


def _merges(view_memories: list[Memory]) -> list[Memory]:
    """Pairs (2k, 2k+1): the first survives with a merged text, the second is absorbed."""
    out = []
    for a, b in zip(view_memories[0::2], view_memories[1::2], strict=False):
        out.append(a.model_copy(update={"text": f"{a.text} and {b.text}",
                                        "strength": a.strength + b.strength}))
        out.append(b.model_copy(update={"status": Status.TOMBSTONED, "superseded_by": a.id}))
    return out


def _state(store: MemoryStore, ns: str, ids: list[str]) -> list[dict[str, object]]:
    """Every record by seed position (ids and namespace differ between namespaces)."""
    pos = {mid: i for i, mid in enumerate(ids)}
    got = {m.id: m for m in store.records.iter_memories(ns)}
    out = []
    for mid in ids:
        d = got[mid].model_dump(exclude={"id", "namespace", "version"})
        d["superseded_by"] = pos.get(d["superseded_by"] or "")
        out.append(d)
    return out


def test_a_large_pass_commits_whole_versions_and_keeps_racing_writes(
        redis_client: redis.Redis) -> None:
    store = MemoryStore(redis_client)
    ids = {ns: _seed(store, ns, 24) for ns in ("one", "parts")}
    results = {}
    for ns, size in (("one", None), ("parts", 6)):
        view = store.snapshots.begin_pass(ns)
        changed = _merges(view.memories)
        # a write during the pass, before the commit, on a record of the last part
        store.writes.reinforce(ns, ids[ns][22], source="during", now=later(5), reason="")
        swap = store.snapshots._swap
        calls: list[int] = []

        def racing(*args: object, _ns: str = ns, _swap: object = swap,
                   calls: list[int] = calls, **kw: object) -> int:
            res = _swap(*args, **kw)  # type: ignore[operator]
            calls.append(res)
            if len(calls) == 1:  # between the first part and the rest: a write and a touch
                store.writes.reinforce(_ns, ids[_ns][20], source="between", now=later(6), reason="")
                store.writes.touch(_ns, [ids[_ns][2]], later(7))
            return int(res)

        store.snapshots._swap = racing  # type: ignore[method-assign]
        try:
            last = store.snapshots.commit_changes(ns, view, changed, [], now=later(10),
                                                  max_records=size)
        finally:
            del store.snapshots._swap
        results[ns] = (last, list(store.snapshots.last_versions))
    (one_last, one_made), (parts_last, made) = results["one"], results["parts"]
    assert one_made == [one_last] == [1]
    assert made == [1, 2, 3, 4] and parts_last == 4  # 12 merged pairs, 3 per part
    assert store.current_version("parts") == 4
    # the same records as one commit, racing writes included
    assert _state(store, "one", ids["one"]) == _state(store, "parts", ids["parts"])
    for ns in ("one", "parts"):
        got = {m.id: m for m in store.records.iter_memories(ns)}
        assert "during" in got[ids[ns][22]].sources and "between" in got[ids[ns][20]].sources
        assert got[ids[ns][2]].recall_count == 1
        assert got[ids[ns][21]].status is Status.TOMBSTONED
        assert store.records.count_by_status(ns) == {"candidate": 0, "active": 12, "superseded": 0,
                                             "tombstoned": 12}
    # every version is whole: a survivor and what it absorbed change in the same version
    pairs = list(zip(ids["parts"][0::2], ids["parts"][1::2], strict=True))
    for v in range(0, 5):
        loaded = store.gateway.load("parts", v, ids["parts"], vectors=False)
        by_id = {m.id: m for m in loaded if m is not None}
        for a, b in pairs:
            assert (" and " in by_id[a].text) == (by_id[b].status is Status.TOMBSTONED)
    assert not store.client.exists(keys.pass_token("parts"), keys.delta("parts"))
    # a rollback to before the pass undoes every part
    store.snapshots.rollback("parts", 0, later(20))
    assert all(m.status is Status.ACTIVE and " and " not in m.text
               for m in store.records.iter_memories("parts"))
