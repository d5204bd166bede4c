"""VectorIndex (exact and HNSW paths) and IndexCache against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.index.vector_index import IndexCache, VectorIndex


def unit(n: int, d: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def brute(x: np.ndarray, q: np.ndarray, k: int) -> list[list[int]]:
    sims = q @ x.T
    return [list(np.argsort(-row, kind="stable")[:k]) for row in sims]


@pytest.mark.parametrize("exact_below", [10_000, 50])
def test_search_matches_brute_force(exact_below: int) -> None:
    x, q = unit(600, 32), unit(20, 32, seed=1)
    index = VectorIndex(32, exact_below=exact_below)
    index.add([f"m{i}" for i in range(len(x))], x)
    assert len(index) == 600 and index.uses_graph == (exact_below == 50)
    got = index.search(q, 5)
    want = brute(x, q, 5)
    hits = sum(
        len({f"m{i}" for i in w} & {h for h, _ in g}) for g, w in zip(got, want, strict=True)
    )
    assert hits / (5 * len(q)) >= (1.0 if exact_below > 600 else 0.9)
    for qi, row in enumerate(got):
        scores = [s for _, s in row]
        assert scores == sorted(scores, reverse=True)
        for ident, score in row:
            assert score == pytest.approx(float(q[qi] @ x[int(ident[1:])]), abs=1e-4)


@pytest.mark.parametrize("exact_below", [10_000, 50])
def test_exclude_over_fetches(exact_below: int) -> None:
    x = unit(300, 16)
    index = VectorIndex(16, exact_below=exact_below)
    index.add([f"m{i}" for i in range(300)], x)
    # Exclude the 40 true nearest neighbours: the search must dig past them.
    near = {f"m{i}" for i in brute(x, x[:1], 40)[0]}
    got = index.search(x[:1], 5, exclude=lambda ident: ident in near)[0]
    assert len(got) == 5
    assert not {h for h, _ in got} & near
    everything = index.search(x[:1], 5, exclude=lambda ident: True)[0]
    assert everything == []


def test_readd_shadows_old_vector() -> None:
    x = unit(10, 8)
    index = VectorIndex(8)
    index.add([f"m{i}" for i in range(10)], x)
    index.add(["m0"], -x[:1])
    assert len(index) == 10 and index.rows == 11
    top = index.search(x[:1], 10)[0]
    assert [h for h, _ in top].count("m0") == 1
    assert dict(top)["m0"] == pytest.approx(-1.0, abs=1e-5)


@pytest.mark.parametrize("exact_below", [10_000, 50])
def test_serialize_round_trip(exact_below: int) -> None:
    x = unit(200, 16)
    index = VectorIndex(16, exact_below=exact_below)
    index.add([f"m{i}" for i in range(200)], x)
    before = index.search(x[:3], 4)
    copy = VectorIndex.from_bytes(index.to_bytes())
    assert len(copy) == 200 and copy.dim == 16
    assert copy.search(x[:3], 4) == before
    copy.add(["new"], x[:1])
    assert copy.search(x[:1], 1)[0][0][1] == pytest.approx(1.0, abs=1e-5)


def test_bad_input_names_field() -> None:
    index = VectorIndex(8)
    with pytest.raises(ValueError, match="vectors"):
        index.add(["a"], np.ones((1, 9), np.float32))
    with pytest.raises(ValueError, match="ids"):
        index.add(["a", "b"], np.ones((1, 8), np.float32))
    with pytest.raises(ValueError, match="k"):
        index.search(np.ones((1, 8), np.float32), 0)
    with pytest.raises(ValueError, match="VectorIndex"):
        VectorIndex.from_bytes(b"junk")
    assert index.search(np.ones((1, 8), np.float32), 3) == [[]]


def test_index_cache_syncs_incrementally_and_rebuilds_on_version() -> None:
    x = unit(50, 8)
    log: dict[tuple[str, int], list[tuple[str, np.ndarray]]] = {
        ("ns", 1): [(f"a{i}", x[i]) for i in range(20)],
    }
    calls: list[tuple[str, int, int]] = []

    def fetch(ns: str, version: int, offset: int) -> tuple[list[str], np.ndarray, int]:
        calls.append((ns, version, offset))
        rows = log.get((ns, version), [])[offset : offset + 8]  # paginated
        vecs = np.asarray([v for _, v in rows], np.float32).reshape(-1, 8)
        return [i for i, _ in rows], vecs, offset + len(rows)

    cache = IndexCache(fetch, 8)
    first = cache.get("ns", 1)
    assert len(first) == 20
    log[("ns", 1)] += [(f"a{i}", x[i]) for i in range(20, 25)]
    calls.clear()
    again = cache.get("ns", 1)
    assert again is first and len(again) == 25
    assert calls[0] == ("ns", 1, 20)  # only the new tail was fetched
    log[("ns", 2)] = [(f"b{i}", x[i]) for i in range(30, 33)]
    rebuilt = cache.get("ns", 2)
    assert rebuilt is not first and len(rebuilt) == 3
    assert rebuilt.search(x[30:31], 1)[0][0][0] == "b30"
    cache.invalidate("ns")
    assert len(cache) == 0


def test_index_cache_skips_the_fetch_at_a_known_length_and_rebuilds_on_epoch() -> None:
    x = unit(10, 8)
    log = [(f"a{i}", x[i]) for i in range(4)]
    calls: list[int] = []

    def fetch(ns: str, version: int, offset: int) -> tuple[list[str], np.ndarray, int]:
        calls.append(offset)
        rows = log[offset:]
        vecs = np.asarray([v for _, v in rows], np.float32).reshape(-1, 8)
        return [i for i, _ in rows], vecs, offset + len(rows)

    cache = IndexCache(fetch, 8, drains=True)
    assert len(cache.get("empty", 0, length=0)) == 0 and calls == []  # nothing to read
    first = cache.get("ns", 0, length=4)
    assert len(first) == 4 and calls == [0]
    assert cache.get("ns", 0, length=4) is first and calls == [0]  # known length: no fetch
    log.append(("a4", x[4]))
    assert len(cache.get("ns", 0, length=5)) == 5 and calls == [0, 4]
    # Erased elsewhere and refilled to the same length: only the epoch tells.
    log[:] = [(f"b{i}", x[5 + i]) for i in range(5)]
    fresh = cache.get("ns", 0, epoch="e1", length=5)
    assert fresh is not first and calls[-1] == 0
    assert fresh.search(x[5:6], 1)[0][0][0] == "b0" and "a0" not in fresh
    # A log shorter than the cached position (erased, epoch not yet read) also rebuilds.
    log[:] = log[:2]
    assert len(cache.get("ns", 0, epoch="e1", length=2)) == 2
