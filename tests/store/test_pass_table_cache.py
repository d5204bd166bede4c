"""The pass's table cache: a refresh with the records the undo hashes list equals a whole
read of the namespace, through writes, touches, new memories and passes; erase and
rollback (which bypass the undo hashes) force a whole read."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.consolidate.passes import TableCache
from memcore.core.models import Actor, Status
from memcore.index.table import MemoryTable
from memcore.store import MemoryStore
from tests.store.test_store_support import later, mem


def rows(table: MemoryTable) -> dict[str, tuple[object, ...]]:
    """Every field of every row, by id (row order aside)."""
    cols = table._columns()
    vec = table.vectors
    assert vec.codes is not None and vec.scales is not None
    out: dict[str, tuple[object, ...]] = {}
    for r, mid in enumerate(table.ids):
        out[mid] = (table.texts[r], table.hashes[r], *(cols[c][r].item() for c in sorted(cols)),
                    bool(vec.present[r]), float(vec.scales[r]), vec.codes[r].tobytes())
    return out


def cached(cache: TableCache, store: MemoryStore) -> MemoryTable:
    return cache.table(store, "u", store.current_version("u"))


def test_refresh_reads_only_what_changed_and_equals_a_whole_read(store: MemoryStore) -> None:
    ids = [store.writes.add("u", mem("u", f"fact number {i} about tea", seed=i), actor=Actor.INGEST,
                     reason="").id for i in range(60)]
    cache = TableCache()
    assert rows(cached(cache, store)) == rows(store.snapshots.read_table("u"))
    assert cache.whole_reads == 1
    for version in (1, 2, 3):
        view = store.snapshots.begin_pass("u")
        out = [m.model_copy(update={"text": f"v{version} {m.text}"}) if i == version else
               m.model_copy(update={"status": Status.TOMBSTONED}) if i == 10 + version else m
               for i, m in enumerate(view.memories)]
        assert store.snapshots.commit_pass("u", view, out, [], now=later(10 * version)) == version
        store.writes.reinforce("u", ids[20 + version], source=f"late-{version}",
                        now=later(10 * version + 1), reason="")
        store.writes.touch("u", [ids[30 + version]], later(10 * version + 2))
        store.writes.add("u", mem("u", f"new in v{version}", seed=100 + version),
                         actor=Actor.INGEST,
                  reason="")
        table = cached(cache, store)
        assert rows(table) == rows(store.snapshots.read_table("u")), version
        table.set_row(0, store.records.get("u", ids[59]) or mem("u", "x"))  # callers get a copy
        assert rows(cached(cache, store)) == rows(store.snapshots.read_table("u"))
    # v0 is the oldest version (collection may drop its undo hash): the read after the
    # first pass is whole; every later one is a refresh
    assert cache.whole_reads == 2
    # each refresh read the records of two versions' undo hashes, not the namespace
    assert 0 < cache.refreshed_rows < 6 * 12


def test_erase_and_rollback_force_a_whole_read(store: MemoryStore) -> None:
    ids = [store.writes.add("u", mem("u", f"fact number {i} about tea", seed=i), actor=Actor.INGEST,
                     reason="").id for i in range(20)]
    view = store.snapshots.begin_pass("u")
    store.snapshots.commit_pass("u", view, view.memories, [], now=later(5))
    cache = TableCache()
    cached(cache, store)
    store.eraser.erase_memory("u", ids[3], later(6))
    table = cached(cache, store)
    assert ids[3] not in table.ids and cache.whole_reads == 2
    assert rows(table) == rows(store.snapshots.read_table("u"))
    view = store.snapshots.begin_pass("u")
    out = [m.model_copy(update={"text": "changed " + m.text}) for m in view.memories]
    store.snapshots.commit_pass("u", view, out, [], now=later(7))
    assert rows(cached(cache, store)) == rows(store.snapshots.read_table("u"))
    assert cache.whole_reads == 2
    store.snapshots.rollback("u", 1, later(8))
    assert rows(cached(cache, store)) == rows(store.snapshots.read_table("u"))
    assert cache.whole_reads == 3


def test_patch_overwrites_and_appends() -> None:
    a = [mem("u", f"fact {i}", seed=i) for i in range(5)]
    table = MemoryTable.from_memories(a)
    with pytest.raises(ValueError, match="stored codes"):
        table.patch(table)
    codes = np.arange(5 * 8, dtype=np.int8).reshape(5, 8)
    from memcore.index.table import Vectors

    base = MemoryTable("u", table.ids[:], table.texts[:], table.hashes[:],
                       Vectors(np.ones(5, dtype=bool), codes=codes.copy(),
                               scales=np.ones(5, dtype=np.float32)), table._columns())
    fresh = MemoryTable("u", [table.ids[1], "new1"], ["one", "two"], ["h1", "h2"],
                        Vectors(np.ones(2, dtype=bool), codes=np.full((2, 8), 7, dtype=np.int8),
                                scales=np.full(2, 2.0, dtype=np.float32)),
                        {k: v[:2].copy() for k, v in table._columns().items()})
    base.patch(fresh)
    assert base.ids == [*table.ids, "new1"] and base.texts[1] == "one"
    assert base.texts[5] == "two" and base.row("new1") == 5
    assert (base.vectors.take([1, 5]) == 14.0).all()
    assert (base.vectors.take([0]) == codes[0]).all()


def _run_pass(store: MemoryStore, pass_id: str, at: int, *, full: bool) -> int | None:
    from memcore.adapters.offline import OfflineMerger
    from memcore.consolidate import passes
    from memcore.core.config import ConsolidationConfig

    config, merger = ConsolidationConfig(cap=1000), OfflineMerger()
    started = passes.start_pass(store, "u", pass_id, later(at), config, full=full)
    assert started is not None
    results = [passes.merge_batch(store, "u", pass_id, a, b, merger) for a, b in started.batches]
    return passes.finish_pass(store, "u", pass_id, results, config, merger).to_version


def test_passes_after_the_first_read_only_what_changed(store: MemoryStore) -> None:
    from memcore.consolidate.passes import TABLES

    TABLES.clear()
    reads = TABLES.whole_reads
    ids = [store.writes.add("u", mem("u", f"fact number {i} about tea", seed=i), actor=Actor.INGEST,
                     reason="").id for i in range(40)]
    assert _run_pass(store, "p0", 10, full=True) == 1
    assert TABLES.whole_reads == reads + 2  # start and finish at v0 (no undo hash there)
    for k in (1, 2, 3):
        store.writes.add("u", mem("u", f"new fact {k} about coffee", seed=200 + k),
                         actor=Actor.INGEST,
                  reason="")
        store.writes.touch("u", [ids[k]], later(10 + 10 * k))
        assert _run_pass(store, f"p{k}", 11 + 10 * k, full=False) == 1 + k
        version = store.current_version("u")
        assert rows(TABLES.table(store, "u", version)) == rows(store.snapshots.read_table("u"))
    assert TABLES.whole_reads == reads + 2


def _stored(memories: list, codes_seed: int = 0) -> MemoryTable:
    """``memories`` as a table of stored int8 codes (what the store's decoder returns)."""
    from memcore.index.table import Vectors

    table = MemoryTable.from_memories(memories)
    rng = np.random.default_rng(codes_seed)
    n, d = len(memories), len(memories[0].vector or [])
    codes = rng.integers(-127, 128, (n, d)).astype(np.int8)
    present = np.ones(n, dtype=bool)
    present[1] = False
    codes[1] = 0
    scales = rng.uniform(0.001, 0.01, n).astype(np.float32)
    scales[1] = 0.0
    return MemoryTable("u", table.ids[:], table.texts[:], table.hashes[:],
                       Vectors(present, codes=codes, scales=scales), table._columns())


def test_stored_rows_equal_the_full_float32_matrix() -> None:
    table = _stored([mem("u", f"fact {i}", seed=i) for i in range(6)])
    d = table.vectors.dim
    table.vectors.set(2, np.full(d, 0.5, dtype=np.float32))  # an override
    table.vectors.set(3, None)  # a row that lost its vector
    table.vectors.extend([np.full(d, -0.25, dtype=np.float32), None])
    full = table.vectors.take_all()
    rows = table.vectors.rows()
    assert rows.shape == full.shape == (8, d)
    for idx in ([0, 1, 2, 3, 4, 5, 6, 7], [5, 0, 7, 2], [4], []):
        assert np.array_equal(rows[np.array(idx, dtype=np.int64)], full[idx])
    assert np.array_equal(rows[6:], full[6:]) and np.array_equal(rows[:3], full[:3])
    plain = _stored([mem("u", f"fact {i}", seed=i) for i in range(6)])
    assert np.array_equal(plain.vectors.rows()[np.arange(6)], plain.vectors.take_all())


def test_a_copy_shares_codes_read_only_and_leaves_the_original_alone() -> None:
    table = _stored([mem("u", f"fact {i}", seed=i) for i in range(5)])
    table.row("x")  # build the id map: the copy takes it over
    before = rows(table)
    copy = table.copy()
    assert copy.vectors.codes is not None and not copy.vectors.codes.flags.writeable
    copy.set_row(0, mem("u", "changed", seed=9, mid=table.ids[0]))
    copy.append([mem("u", "appended", seed=10)])
    assert copy.row(copy.ids[5]) == 5 and table.row(copy.ids[5]) is None
    assert rows(table) == before and len(table) == 5


def test_text_flags_follow_set_row_append_patch_and_copies() -> None:
    from memcore.language.english.compare import may_change

    texts = ["Sam plays in the band", "Sam quit the band", "tea", "Ana no longer drinks coffee",
             "coffee"]
    table = _stored([mem("u", t, seed=i) for i, t in enumerate(texts)])
    calls: list[str] = []

    def test(text: str) -> bool:
        calls.append(text)
        return may_change(text)

    def expect(t: MemoryTable) -> list[bool]:
        return [may_change(x) for x in t.texts]

    assert table.text_flags("c", test).tolist() == expect(table) == [False, True, False, True,
                                                                      False]
    assert len(calls) == 5
    copy = table.copy()
    calls.clear()
    copy.set_row(2, mem("u", "Sam left the band", seed=2, mid=table.ids[2]))
    copy.append([mem("u", "Bo stopped running", seed=7)])
    assert copy.text_flags("c", test).tolist() == expect(copy)
    assert sorted(calls) == ["Bo stopped running", "Sam left the band"]  # only what changed
    assert table.text_flags("c", test).tolist() == expect(table)  # the original untouched
    fresh = _stored([mem("u", t, seed=20 + i, mid=mid) for i, (t, mid) in
                     enumerate([("Sam moved out", table.ids[0]), ("new quit fact", "n1")])])
    table.patch(fresh)
    assert table.text_flags("c", test).tolist() == expect(table) == [True, True, False, True,
                                                                      False, True]
    # a copy made before its original kept the test asks the original once
    other = _stored([mem("u", t, seed=i) for i, t in enumerate(texts)])
    copy = other.copy()
    copy.set_row(4, mem("u", "coffee is over", seed=4, mid=other.ids[4]))
    assert copy.text_flags("c", test).tolist() == expect(copy)
    assert other.text_flags("c", test).tolist() == expect(other)
