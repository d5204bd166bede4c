"""A pass's model calls follow what changed, not how dense the store is.

A store of templated facts ("owns a red bike called item17 bought in Porto in 2019")
puts every memory near hundreds of others. Counted with the real offline merger.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from memcore.adapters.hashing import HashingEmbedder
from memcore.adapters.offline import OfflineMerger
from memcore.consolidate.passes import BATCH_SIZE, CountingMerger
from memcore.consolidation import consolidate, plan, resolve
from memcore.core.config import Settings
from memcore.core.models import Memory, Status, utcnow

ADJECTIVES = ["red", "blue", "old", "new", "small", "large", "green", "vintage"]
THINGS = ["bike", "guitar", "camera", "lamp", "watch", "kettle", "drone", "chair"]
CITIES = ["Porto", "Lisbon", "Berlin", "Madrid", "Paris", "Rome", "Oslo", "Vienna"]


def templated(n: int, start: int = 0, seed: int = 7) -> list[Memory]:
    """``n`` owned-thing facts (one episode each), embedded with the hashing embedder."""
    rng = random.Random(seed + start)
    texts = [f"User owns a {rng.choice(ADJECTIVES)} {rng.choice(THINGS)} called item{start + i} "
             f"that they bought in {rng.choice(CITIES)} in {rng.randint(1990, 2024)}"
             for i in range(n)]
    vectors = HashingEmbedder().embed(texts)
    at = utcnow() - timedelta(days=1)
    return [Memory(id=f"m{start + i}", namespace="owner", text=t,
                   vector=[float(x) for x in v], last_used=at, sources=[f"ep{start + i}"],
                   status=Status.ACTIVE, created_at=at, updated_at=at)
            for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]


@pytest.fixture(scope="module")
def store_3000() -> list[Memory]:
    return templated(3000)


def test_bound_is_what_keeps_the_calls_down(store_3000: list[Memory]) -> None:
    cfg = Settings(embedder="hash").consolidation
    unbounded = plan(store_3000, cfg.model_copy(update={"max_pairs_per_memory": 10_000}))
    bounded = plan(store_3000, cfg)
    pairs = sum(len(w.pairs) for w in bounded.clusters)
    assert pairs <= cfg.max_pairs_per_memory * len(store_3000)
    # Without the bound every memory sends all of its many borderline partners.
    assert sum(len(w.pairs) for w in unbounded.clusters) > 10 * pairs
    assert -(-len(bounded.clusters) // BATCH_SIZE) <= 0.2 * len(store_3000)


def test_full_and_incremental_passes_stay_under_a_fifth_of_the_changes(
        store_3000: list[Memory]) -> None:
    cfg = Settings(embedder="hash").consolidation
    now = utcnow()
    merger = CountingMerger(OfflineMerger())
    first = consolidate(store_3000, now, cfg, merger)
    assert 0 < merger.calls <= 0.2 * len(store_3000)

    fresh = templated(200, start=3000)
    current = [*first.memories, *fresh]
    incremental = plan(current, cfg, changed={m.id for m in fresh})
    assert all(any(mid.startswith("m") and int(mid[1:]) >= 3000 for mid in w.ids())
               for w in incremental.clusters)  # every unit of work involves a new memory
    merger = CountingMerger(OfflineMerger())
    outcomes = resolve(incremental, {m.id: m for m in current}, merger)
    assert len(outcomes) == len(incremental.clusters)
    assert 0 < merger.calls <= 0.2 * len(fresh)


def test_second_round_does_not_rejudge_pairs() -> None:
    # Two near-copies merge in round 1; round 2 must only search the merged head, so a
    # borderline pair between untouched memories is judged exactly once.
    cfg = Settings(embedder="hash").consolidation
    memories = templated(40)
    judged: list[tuple[str, str]] = []

    class Recording(OfflineMerger):
        def merge(self, clusters):  # type: ignore[no-untyped-def]
            judged.extend(p for c in clusters for p in c.pair_texts)
            return super().merge(clusters)

    consolidate(memories, utcnow(), cfg, Recording())
    assert judged and len(judged) == len(set(judged))
