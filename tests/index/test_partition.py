"""Partition step: similar pairs (exact / ivf / hnsw), centroid clusters, borderline pairs."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.index.partition import (
    CellIndex,
    borderline_pairs,
    centroid_clusters,
    exact_pairs,
    similar_pairs,
)
from memcore_bench.synthetic import synthetic_vectors


def brute_pairs(x: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    sims = x @ x.T
    i, j = np.nonzero(np.triu(sims >= threshold, 1))
    return set(zip(i.tolist(), j.tolist(), strict=True))


def as_set(pairs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> set[tuple[int, int]]:
    return set(zip(pairs[0].tolist(), pairs[1].tolist(), strict=True))


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return synthetic_vectors(3_000, 64, seed=3)


def test_exact_matches_brute_force_and_is_sorted(data: np.ndarray) -> None:
    i, j, s = exact_pairs(data, 0.8)
    assert as_set((i, j, s)) == brute_pairs(data, 0.8)
    assert np.all(i < j)
    assert np.all(np.diff(i * len(data) + j) > 0)
    np.testing.assert_allclose(s, np.einsum("ij,ij->i", data[i], data[j]), atol=1e-5)


@pytest.mark.parametrize("method", ["ivf", "hnsw"])
def test_approximate_recall(data: np.ndarray, method: str) -> None:
    truth = brute_pairs(data, 0.8)
    got = as_set(similar_pairs(data, 0.8, method=method))  # type: ignore[arg-type]
    assert got <= truth  # never invents a pair
    assert len(got & truth) / len(truth) >= 0.95


def test_query_rows_restricts_to_touching_pairs(data: np.ndarray) -> None:
    rows = np.arange(2_900, 3_000)
    truth = {p for p in brute_pairs(data, 0.8) if p[0] >= 2_900 or p[1] >= 2_900}
    assert as_set(exact_pairs(data, 0.8, query_rows=rows)) == truth
    # Incremental: cells trained on the first rows, the new rows added later.
    index = CellIndex.train(data[:2_900], seed=1)
    index.add(data[:2_900])
    index.add(data[2_900:])
    got = as_set(similar_pairs(data, 0.8, query_rows=rows, index=index))
    assert got <= truth and len(got) / len(truth) >= 0.95
    copy = CellIndex.from_bytes(index.to_bytes())
    assert as_set(copy.pairs(data, 0.8, query_rows=rows)) == got


def test_auto_is_exact_when_small(data: np.ndarray) -> None:
    assert as_set(similar_pairs(data[:500], 0.8)) == brute_pairs(data[:500], 0.8)


def test_bad_input() -> None:
    x = np.eye(4, dtype=np.float32)
    with pytest.raises(ValueError, match="threshold"):
        similar_pairs(x, 1.5)
    with pytest.raises(ValueError, match="method"):
        similar_pairs(x, 0.5, method="lsh")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query_rows"):
        similar_pairs(x, 0.5, query_rows=[7])
    with pytest.raises(ValueError, match="weights"):
        centroid_clusters(x, [1.0, 1.0], exact_pairs(x, 0.5), 0.9)


def chain() -> np.ndarray:
    """A-B and B-C at cosine ~0.95, A-C ~0.80: a chain."""
    angles = np.radians([0.0, 18.0, 36.0])
    return np.stack([np.cos(angles), np.sin(angles), np.zeros(3)], axis=1).astype(np.float32)


def test_no_chaining() -> None:
    x = chain()
    pairs = exact_pairs(x, 0.5)
    assert as_set(pairs) == {(0, 1), (1, 2), (0, 2)}
    clusters = centroid_clusters(x, np.ones(3), pairs, 0.93)
    assert len(clusters) == 1
    assert not {0, 2} <= set(clusters[0])
    assert clusters == [[0, 1]]  # tie 0-1 / 1-2 broken by index
    # 1-2 (0.95) was split by the centroid rule: only reported with include_split.
    assert as_set(borderline_pairs(pairs, clusters, 0.93, 0.75)) == {(0, 2)}
    split = borderline_pairs(pairs, clusters, 0.93, 0.75, include_split=True)
    assert as_set(split) == {(0, 2), (1, 2)}


def test_weighted_centroid_ejects_outlier() -> None:
    # A heavy member pulls the centroid away: the light far member is re-checked out.
    angles = np.radians([0.0, 4.0, 9.0])
    x = np.stack([np.cos(angles), np.sin(angles), np.zeros(3)], axis=1).astype(np.float32)
    pairs = exact_pairs(x, 0.5)
    assert centroid_clusters(x, [1.0, 1.0, 1.0], pairs, 0.99) == [[0, 1, 2]]
    # 0-1 form first; heavy 2 joins (7 deg from centroid) and drags it to ~8.9 deg.
    assert centroid_clusters(x, [1.0, 1.0, 100.0], pairs, 0.99) == [[1, 2]]


def test_clusters_deterministic_and_disjoint(data: np.ndarray) -> None:
    pairs = exact_pairs(data, 0.8)
    w = np.linspace(1, 3, len(data))
    a = centroid_clusters(data, w, pairs, 0.92)
    shuffled = np.random.default_rng(0).permutation(pairs[0].size)
    b = centroid_clusters(data, w, tuple(p[shuffled] for p in pairs), 0.92)  # type: ignore[arg-type]
    assert a == b and a
    rows = [r for c in a for r in c]
    assert len(rows) == len(set(rows))
    for c in a:
        centroid = (w[c, None] * data[c]).sum(axis=0)
        cos = data[c] @ centroid / np.linalg.norm(centroid)
        assert np.all(cos >= 0.92)


def test_hnsw_quantizer_matches_flat(data: np.ndarray) -> None:
    flat = CellIndex.train(data, seed=2, quantizer="flat")
    hnsw = CellIndex(flat.centroids, quantizer="hnsw")
    for index in (flat, hnsw):
        index.add(data)
    got_flat, got_hnsw = as_set(flat.pairs(data, 0.8)), as_set(hnsw.pairs(data, 0.8))
    assert len(got_flat ^ got_hnsw) <= 0.02 * len(got_flat)
    assert CellIndex.from_bytes(hnsw.to_bytes()).quantizer == "hnsw"
