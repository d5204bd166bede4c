"""memcore.client.search.fused_order: the order of the full-key sort it replaces."""

from __future__ import annotations

import random

import pytest

from memcore.client.search import fused_order
from memcore.index.retrieval import fuse


def _reference(rank: dict[str, float], bm25: dict[str, float],
               cosine: dict[str, float]) -> list[str]:
    return sorted(rank, key=lambda mid: (-rank[mid], -bm25.get(mid, 0.0),
                                         -cosine.get(mid, 0.0), mid))


@pytest.mark.parametrize("seed", range(300))
def test_same_order_as_the_full_key_sort(seed: int) -> None:
    rng = random.Random(seed)
    pool = [f"{rng.getrandbits(32):08x}" for _ in range(rng.randint(1, 220))]
    vector = rng.sample(pool, min(len(pool), rng.randint(0, 100)))
    lexical = rng.sample(pool, min(len(pool), rng.randint(0, 100)))
    # RRF as the search computes it: equal ranks wherever two ids sit at the same place
    # of one list only, or at swapped places of both.
    rank = fuse([vector, lexical])
    for mid in rng.sample(pool, min(len(pool), 30)):
        rank.setdefault(mid, 0.0)  # zero ranks: fused_order takes any score
    # Scores with ties too (a few distinct values), including zeros and negatives.
    levels = [0.0, 0.5, 1.25, 2.0, -0.25]
    bm25 = {mid: rng.choice(levels) for mid in lexical}
    cosine = {mid: rng.choice([*levels, rng.random()]) for mid in vector}
    assert fused_order(rank, bm25, cosine) == _reference(rank, bm25, cosine)


def test_empty() -> None:
    assert fused_order({}, {}, {}) == []


def test_ties_broken_by_text_then_vector_then_id() -> None:
    rank = {"b": 0.5, "a": 0.5, "c": 0.5, "d": 0.9}
    bm25 = {"c": 1.0}
    cosine = {"b": 0.3}
    assert fused_order(rank, bm25, cosine) == ["d", "c", "b", "a"]
