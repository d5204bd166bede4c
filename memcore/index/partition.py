"""Partition step of a consolidation pass: similar pairs, centroid clusters, borderline pairs.

Pairs are ``(i, j, sim)`` arrays with ``i < j`` (int64 row numbers) and ``sim`` the
cosine (inner product of unit vectors), sorted by ``(i, j)``.

Methods for finding every pair with cosine >= threshold:

* ``exact``: blocked matrix products (numpy BLAS), upper triangle only; the baseline.
* ``ivf``: an inverted file over spherical k-means centroids (FAISS ``Kmeans``);
  the coarse quantizer is a FAISS HNSW graph over the centroids, or a flat (BLAS)
  one, which measured 4x faster on 2 cores up to a few thousand centroids. Every
  vector is listed in its ``probes`` nearest cells, and each cell is joined with
  itself by one BLAS product, so a pair is found when its two rows share a cell.
  Near-duplicates almost always do. This beats FAISS's per-query list scans
  (IndexIVFFlat.range_search) by batching; see notes/bench_scale.md.
* ``hnsw``: a FAISS ``IndexHNSWFlat`` kNN graph search (``k`` neighbours per row);
  a row with more than ``k`` partners above the threshold loses some.
* ``auto``: ``exact`` below :data:`EXACT_PAIRS_BELOW` rows, else ``ivf``.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import numpy as np

from memcore.index.vector_index import HNSW_M, as_matrix, faiss_module

Method = Literal["auto", "exact", "ivf", "hnsw"]
Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]
# Below this many rows the exact all-pairs product is faster than training cells
# (measured on 2 cores, d=384; notes/bench_scale.md).
EXACT_PAIRS_BELOW = 10_000
_BLOCK = 2048
# Coarse quantizer: flat (one BLAS product) below this many cells, HNSW above.
FLAT_QUANTIZER_BELOW = 8_192
_COL_BLOCK = 16384


class Rows(Protocol):
    """Row vectors computed on demand (``rows[idx]``: a float32 matrix of the rows ``idx``,
    an int array or a slice), e.g. :meth:`memcore.index.table.Vectors.rows` over stored
    int8 codes: the cell index reads the rows it needs instead of a float32 copy of all."""

    @property
    def shape(self) -> tuple[int, int]: ...

    def __getitem__(self, index: Any) -> np.ndarray: ...


def _row_source(vectors: np.ndarray | Rows, dim: int) -> np.ndarray | Rows:
    """A matrix as :func:`as_matrix` checks it, or a row source whose width is ``dim``."""
    if isinstance(vectors, np.ndarray):
        return as_matrix(vectors, dim)
    if vectors.shape[1] != dim and vectors.shape[0]:
        raise ValueError(f"vectors must have {dim} columns, got {vectors.shape[1]}")
    return vectors


def empty_pairs() -> Pairs:
    """No pairs."""
    return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32)


def _check_threshold(threshold: float, field: str = "threshold") -> float:
    if not (-1.0 <= threshold <= 1.0) or math.isnan(threshold):
        raise ValueError(f"{field} must be in [-1, 1], got {threshold}")
    return float(threshold)


def _rows(query_rows: Sequence[int] | np.ndarray | None, n: int) -> np.ndarray | None:
    if query_rows is None:
        return None
    rows = np.unique(np.asarray(query_rows, dtype=np.int64))
    if rows.size and (rows[0] < 0 or rows[-1] >= n):
        raise ValueError(f"query_rows must be row numbers in [0, {n}), got {rows[0]}..{rows[-1]}")
    return rows


def _normalize(i: np.ndarray, j: np.ndarray, sim: np.ndarray, n: int) -> Pairs:
    """Orient pairs as i < j, drop self pairs and duplicates, sort by (i, j)."""
    keep = i != j
    i, j, sim = i[keep], j[keep], sim[keep]
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keys = lo * np.int64(n) + hi
    keys, first = np.unique(keys, return_index=True)
    return keys // n, keys % n, sim[first].astype(np.float32)


def _concat(chunks: list[Pairs], n: int, *, normalized: bool = False) -> Pairs:
    if not chunks:
        return empty_pairs()
    i = np.concatenate([c[0] for c in chunks]).astype(np.int64)
    j = np.concatenate([c[1] for c in chunks]).astype(np.int64)
    s = np.concatenate([c[2] for c in chunks]).astype(np.float32)
    if normalized:
        order = np.lexsort((j, i))
        return i[order], j[order], s[order]
    return _normalize(i, j, s, n)


def exact_pairs(
    vectors: np.ndarray, threshold: float, *, query_rows: Sequence[int] | np.ndarray | None = None
) -> Pairs:
    """Every pair with cosine >= ``threshold`` by blocked matrix products.

    Memory is bounded by one ``2048 x 16384`` float32 block. Without ``query_rows``
    only the upper triangle is computed (half the work of a full product).
    """
    x = as_matrix(vectors)
    threshold = _check_threshold(threshold)
    n = x.shape[0]
    rows = _rows(query_rows, n)
    chunks: list[Pairs] = []
    if rows is None:
        for a in range(0, n, _BLOCK):
            b = min(n, a + _BLOCK)
            for c in range(a, n, _COL_BLOCK):
                e = min(n, c + _COL_BLOCK)
                g = x[a:b] @ x[c:e].T
                hit_r, hit_c = np.nonzero(g >= threshold)
                keep = hit_c + c > hit_r + a
                hit_r, hit_c = hit_r[keep], hit_c[keep]
                chunks.append((hit_r + a, hit_c + c, g[hit_r, hit_c]))
        return _concat(chunks, n, normalized=True)
    for a in range(0, rows.size, _BLOCK):
        q = rows[a : a + _BLOCK]
        for c in range(0, n, _COL_BLOCK):
            e = min(n, c + _COL_BLOCK)
            g = x[q] @ x[c:e].T
            hit_r, hit_c = np.nonzero(g >= threshold)
            chunks.append((q[hit_r], hit_c + c, g[hit_r, hit_c]))
    return _concat(chunks, n)


class CellIndex:
    """IVF over spherical k-means cells with a FAISS HNSW coarse quantizer.

    Holds cell lists of row numbers, not vectors: the caller's matrix is passed to
    :meth:`add` and :meth:`pairs` (so a million rows are not stored twice). Kept
    between passes (:meth:`to_bytes`) so an incremental pass only assigns and
    searches the new rows.
    """

    def __init__(
        self,
        centroids: np.ndarray,
        *,
        probes: int = 2,
        ef_search: int = 32,
        quantizer: Literal["auto", "flat", "hnsw"] = "auto",
        store_vectors: bool = True,
    ) -> None:
        if probes < 1:
            raise ValueError(f"probes must be >= 1, got {probes}")
        if quantizer not in ("auto", "flat", "hnsw"):
            raise ValueError(f"quantizer must be auto, flat or hnsw, got {quantizer!r}")
        self.centroids = as_matrix(centroids, field="centroids")
        self.probes = min(probes, self.centroids.shape[0])
        self.ef_search = ef_search
        self.ntotal = 0
        self._cells: list[np.ndarray] = [
            np.empty(0, np.int64) for _ in range(self.centroids.shape[0])
        ]
        self._assign = np.empty((0, self.probes), np.int32)
        self._quantizer: Any = None
        # A FAISS IndexIVFFlat holding each row in its nearest cell: an incremental
        # query then reads ~probes cells per changed row instead of gathering every
        # touched cell (which at 10^6 rows is most of them). Not serialized.
        self.store_vectors = store_vectors
        self._ivf: Any = None
        if quantizer == "auto":
            quantizer = "flat" if self.centroids.shape[0] < FLAT_QUANTIZER_BELOW else "hnsw"
        self.quantizer = quantizer

    @property
    def nlist(self) -> int:
        """Number of cells."""
        return int(self.centroids.shape[0])

    @classmethod
    def train(
        cls,
        vectors: np.ndarray | Rows,
        *,
        nlist: int | None = None,
        probes: int = 2,
        seed: int = 0,
        niter: int = 10,
        quantizer: Literal["auto", "flat", "hnsw"] = "auto",
        rows: np.ndarray | None = None,
    ) -> CellIndex:
        """Train cells on a sample of ``vectors`` (not added: call :meth:`add`).

        ``rows``: train on ``vectors[rows]`` (the same cells as passing that matrix),
        reading only the sampled rows."""
        if rows is None and isinstance(vectors, np.ndarray):
            vectors = as_matrix(vectors)
        chosen = np.arange(vectors.shape[0]) if rows is None else np.asarray(rows, np.int64)
        n, d = chosen.size, vectors.shape[1]
        if n < 2:
            raise ValueError("vectors must have at least 2 rows to train cells")
        # ~4 sqrt(n) cells keeps cells near 2 sqrt(n) rows with 2 probes.
        nlist = nlist or max(1, min(n // 8, int(4 * math.sqrt(n))))
        nlist = max(1, min(nlist, n))
        sample_size = min(n, nlist * 16)
        if sample_size < n:
            picks = np.sort(np.random.default_rng(seed).choice(n, sample_size, replace=False))
            chosen = chosen[picks]
        if rows is None and sample_size == n and isinstance(vectors, np.ndarray):
            sample = vectors
        else:
            sample = as_matrix(vectors[chosen], d)
        faiss = faiss_module()
        km = faiss.Kmeans(
            d, nlist, niter=niter, spherical=True, seed=seed,
            min_points_per_centroid=1, max_points_per_centroid=16,
        )  # fmt: skip
        km.train(sample)
        centroids = np.asarray(km.centroids, dtype=np.float32)
        return cls(centroids, probes=probes, quantizer=quantizer)

    def _quantize(self, x: np.ndarray) -> np.ndarray:
        _, cells = self._coarse().search(x, self.probes)
        return np.asarray(cells, dtype=np.int32)

    def _coarse(self) -> Any:
        if self._quantizer is None:
            faiss = faiss_module()
            dim = self.centroids.shape[1]
            if self.quantizer == "hnsw":
                q = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
                q.hnsw.efSearch = max(self.ef_search, self.probes)
            else:
                q = faiss.IndexFlatIP(dim)
            q.add(self.centroids)
            self._quantizer = q
        return self._quantizer

    def add(self, vectors: np.ndarray | Rows) -> None:
        """List rows ``ntotal .. ntotal+len(vectors)`` in their nearest cells (a row
        source is read in chunks of 262,144 rows)."""
        x = _row_source(vectors, self.centroids.shape[1])
        if not x.shape[0]:
            return
        assign = np.empty((x.shape[0], self.probes), np.int32)
        for a in range(0, x.shape[0], 262_144):
            chunk = x[a : a + 262_144]
            assign[a : a + 262_144] = self._quantize(
                chunk if isinstance(x, np.ndarray) else as_matrix(chunk, x.shape[1]))
        if self.store_vectors and (self._ivf is not None or not self.ntotal):
            x = as_matrix(x[:], self.centroids.shape[1])  # FAISS keeps its own copy anyway
            faiss = faiss_module()
            if self._ivf is None:
                ivf = faiss.IndexIVFFlat(
                    self._coarse(), x.shape[1], self.nlist, faiss.METRIC_INNER_PRODUCT
                )
                ivf.is_trained = True
                self._ivf = ivf
            nearest = np.ascontiguousarray(assign[:, 0], dtype=np.int64)
            self._ivf.add_core(x.shape[0], faiss.swig_ptr(x), None, faiss.swig_ptr(nearest))
        rows = np.repeat(np.arange(self.ntotal, self.ntotal + x.shape[0]), self.probes)
        flat = assign.ravel()
        order = np.argsort(flat, kind="stable")
        cells, members = flat[order], rows[order]
        bounds = np.searchsorted(cells, np.arange(self.nlist + 1))
        for c in np.nonzero(np.diff(bounds))[0]:
            self._cells[c] = np.concatenate([self._cells[c], members[bounds[c] : bounds[c + 1]]])
        self._assign = np.concatenate([self._assign, assign])
        self.ntotal += x.shape[0]

    def pairs(
        self,
        vectors: np.ndarray | Rows,
        threshold: float,
        *,
        query_rows: Sequence[int] | np.ndarray | None = None,
    ) -> Pairs:
        """Pairs with cosine >= ``threshold`` among rows sharing a cell.

        ``vectors`` must be the matrix (or row source) whose rows were added. With
        ``query_rows`` only pairs touching those rows are searched (cost ~
        len(query_rows)).
        """
        x = _row_source(vectors, self.centroids.shape[1])
        threshold = _check_threshold(threshold)
        if x.shape[0] != self.ntotal:
            raise ValueError(f"vectors has {x.shape[0]} rows but the index lists {self.ntotal}")
        n = x.shape[0]
        rows = _rows(query_rows, n)
        chunks: list[Pairs] = []
        if rows is None:
            for members in self._cells:
                if members.size < 2:
                    continue
                block = x[members]
                g = block @ block.T
                hit_r, hit_c = np.nonzero(g >= threshold)
                keep = hit_c > hit_r
                hit_r, hit_c = hit_r[keep], hit_c[keep]
                if hit_r.size:
                    chunks.append((members[hit_r], members[hit_c], g[hit_r, hit_c]))
            return _concat(chunks, n)
        if not rows.size:
            return empty_pairs()
        if self._ivf is not None and self._ivf.ntotal == n:
            return self._ivf_pairs(x, threshold, rows)
        flat = self._assign[rows].ravel()
        qrows = np.repeat(rows, self.probes)
        order = np.argsort(flat, kind="stable")
        cells, qsorted = flat[order], qrows[order]
        bounds = np.searchsorted(cells, np.arange(self.nlist + 1))
        for c in np.nonzero(np.diff(bounds))[0]:
            members = self._cells[c]
            q = qsorted[bounds[c] : bounds[c + 1]]
            g = x[q] @ x[members].T
            hit_r, hit_c = np.nonzero(g >= threshold)
            if hit_r.size:
                chunks.append((q[hit_r], members[hit_c], g[hit_r, hit_c]))
        return _concat(chunks, n)

    def _ivf_pairs(self, x: np.ndarray | Rows, threshold: float, rows: np.ndarray) -> Pairs:
        """Range search of ``rows`` in the stored IVF (probing one cell more than the
        join lists, so a partner listed only in its nearest cell is still reached).
        Similarities are recomputed from ``x``: stored rows may be stale after a merge."""
        self._ivf.nprobe = min(self.nlist, self.probes + 1)
        chunks: list[Pairs] = []
        for a in range(0, rows.size, 65_536):
            q = rows[a : a + 65_536]
            lims, _, found = self._ivf.range_search(x[q], threshold * 0.98)
            qi = np.repeat(q, np.diff(lims.astype(np.int64)))
            found = found.astype(np.int64)
            sims = np.einsum("ij,ij->i", x[qi], x[found])
            keep = sims >= threshold
            chunks.append((qi[keep], found[keep], sims[keep]))
        return _concat(chunks, x.shape[0])

    def to_bytes(self) -> bytes:
        """Serialize centroids and cell assignments (no vectors, no pickle); a loaded
        index answers incremental queries by the cell join until rebuilt."""
        out = io.BytesIO()
        np.savez(
            out,
            centroids=self.centroids,
            assign=self._assign,
            meta=np.asarray([self.probes, self.ef_search, self.quantizer == "hnsw"], np.int64),
        )
        return out.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> CellIndex:
        """Rebuild a :class:`CellIndex` written by :meth:`to_bytes`."""
        try:
            loaded = np.load(io.BytesIO(data), allow_pickle=False)
            probes, ef_search, hnsw = (int(v) for v in loaded["meta"])
            centroids, assign = loaded["centroids"], loaded["assign"]
        except Exception as exc:
            raise ValueError(f"data is not a serialized CellIndex: {exc}") from exc
        quantizer: Literal["flat", "hnsw"] = "hnsw" if hnsw else "flat"
        index = cls(centroids, probes=probes, ef_search=ef_search, quantizer=quantizer)
        rows = np.repeat(np.arange(assign.shape[0]), index.probes)
        flat = assign.ravel()
        order = np.argsort(flat, kind="stable")
        bounds = np.searchsorted(flat[order], np.arange(index.nlist + 1))
        members = rows[order]
        index._cells = [members[bounds[c] : bounds[c + 1]] for c in range(index.nlist)]
        index._assign = assign.astype(np.int32)
        index.ntotal = int(assign.shape[0])
        return index


def hnsw_pairs(
    vectors: np.ndarray,
    threshold: float,
    *,
    k: int = 32,
    query_rows: Sequence[int] | np.ndarray | None = None,
    ef_search: int = 64,
) -> Pairs:
    """Pairs from a FAISS HNSW kNN search: each query row's ``k`` neighbours >= threshold."""
    x = as_matrix(vectors)
    threshold = _check_threshold(threshold)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n = x.shape[0]
    rows = _rows(query_rows, n)
    if n < 2:
        return empty_pairs()
    faiss = faiss_module()
    graph = faiss.IndexHNSWFlat(x.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = 64
    graph.add(x)
    graph.hnsw.efSearch = max(ef_search, k + 1)
    queries = np.arange(n) if rows is None else rows
    chunks: list[Pairs] = []
    for a in range(0, queries.size, 65_536):
        q = queries[a : a + 65_536]
        sims, nbrs = graph.search(x[q], min(n, k + 1))
        keep = (nbrs >= 0) & (sims >= threshold)
        qi = np.broadcast_to(q[:, None], nbrs.shape)[keep]
        chunks.append((qi, nbrs[keep].astype(np.int64), sims[keep]))
    return _concat(chunks, n)


def similar_pairs(
    vectors: np.ndarray,
    threshold: float,
    *,
    method: Method = "auto",
    k: int = 32,
    query_rows: Sequence[int] | np.ndarray | None = None,
    index: CellIndex | None = None,
) -> Pairs:
    """All pairs ``(i, j, sim)`` with ``i < j`` and cosine >= ``threshold``.

    ``query_rows`` restricts the search to pairs touching those rows (the
    incremental pass). ``index`` is a :class:`CellIndex` already holding every row
    of ``vectors`` (kept from the previous pass); without one, ``ivf`` trains one.
    """
    x = as_matrix(vectors)
    if method not in ("auto", "exact", "ivf", "hnsw"):
        raise ValueError(f"method must be auto, exact, ivf or hnsw, got {method!r}")
    if method == "auto":
        method = "ivf" if index is not None or x.shape[0] >= EXACT_PAIRS_BELOW else "exact"
    if method == "exact":
        return exact_pairs(x, threshold, query_rows=query_rows)
    if method == "hnsw":
        return hnsw_pairs(x, threshold, k=k, query_rows=query_rows)
    if index is None:
        if x.shape[0] < 2:
            return empty_pairs()
        index = CellIndex.train(x)
        index.add(x)
    return index.pairs(x, threshold, query_rows=query_rows)


def centroid_clusters(
    vectors: np.ndarray,
    weights: np.ndarray | Sequence[float],
    pairs: Pairs,
    merge_threshold: float,
) -> list[list[int]]:
    """Group rows into clusters against strength-weighted centroids (no chaining).

    Pairs are visited by descending similarity (ties by ``(i, j)``). Two free rows
    start a cluster; a free row joins its partner's cluster only if its cosine to the
    cluster's weighted centroid is >= ``merge_threshold``; clusters never fuse. Every
    member is then re-checked against the final centroid and ejected if below,
    until stable. Returns clusters of >= 2 sorted rows, sorted by first row.
    """
    x = as_matrix(vectors)
    merge_threshold = _check_threshold(merge_threshold, "merge_threshold")
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (x.shape[0],):
        raise ValueError(f"weights must have one entry per vector ({x.shape[0]}), got {w.shape}")
    if np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be finite and > 0")
    pi, pj, ps = (np.asarray(a) for a in pairs)
    keep = ps >= merge_threshold
    pi, pj, ps = pi[keep], pj[keep], ps[keep]
    order = np.lexsort((pj, pi, -ps))
    label: dict[int, int] = {}
    members: list[list[int]] = []
    sums: list[np.ndarray] = []
    for a, b in zip(pi[order].tolist(), pj[order].tolist(), strict=True):
        ca, cb = label.get(a), label.get(b)
        if ca is None and cb is None:
            cid = len(members)
            members.append([a, b])
            sums.append(w[a] * x[a].astype(np.float64) + w[b] * x[b])
            label[a] = label[b] = cid
            continue
        if ca is not None and cb is not None:
            continue  # never fuse clusters: that is chaining
        if ca is not None:
            cid, row = ca, b
        else:
            assert cb is not None
            cid, row = cb, a
        s = sums[cid]
        if float(x[row] @ s) / float(np.linalg.norm(s)) >= merge_threshold:
            members[cid].append(row)
            sums[cid] = s + w[row] * x[row]
            label[row] = cid
    clusters: list[list[int]] = []
    for group in members:
        rows = np.asarray(sorted(group), dtype=np.int64)
        while rows.size >= 2:
            centroid = (w[rows, None] * x[rows]).sum(axis=0)
            cos = x[rows] @ centroid / np.linalg.norm(centroid)
            ok = cos >= merge_threshold
            if ok.all():
                break
            rows = rows[ok]
        if rows.size >= 2:
            clusters.append(rows.tolist())
    clusters.sort(key=lambda c: c[0])
    return clusters


def cluster_labels(n: int, clusters: Sequence[Sequence[int]]) -> np.ndarray:
    """Row -> cluster number (index into ``clusters``), -1 for unclustered rows."""
    labels = np.full(n, -1, dtype=np.int64)
    for cid, group in enumerate(clusters):
        labels[np.asarray(group, dtype=np.int64)] = cid
    return labels


def borderline_pairs(
    pairs: Pairs,
    clusters: Sequence[Sequence[int]],
    merge_threshold: float,
    borderline_threshold: float,
    *,
    n: int | None = None,
    include_split: bool = False,
) -> Pairs:
    """Pairs with ``borderline <= sim < merge`` whose rows are not in one cluster.

    These go to the model (docs/design.md, thresholds). ``include_split`` also returns pairs at or
    above ``merge`` that the centroid rule kept apart (A-B and B-C similar, B in A's
    cluster, C not): they are as ambiguous as borderline ones. ``n`` is the row
    count (defaults to the largest row in ``pairs`` or ``clusters`` plus one).
    """
    merge_threshold = _check_threshold(merge_threshold, "merge_threshold")
    borderline_threshold = _check_threshold(borderline_threshold, "borderline_threshold")
    if borderline_threshold > merge_threshold:
        raise ValueError("borderline_threshold must not exceed merge_threshold")
    pi, pj, ps = (np.asarray(a) for a in pairs)
    if n is None:
        tops = [int(pi.max()) if pi.size else -1, int(pj.max()) if pj.size else -1]
        tops += [max(g) for g in clusters if len(g)]
        n = max(tops) + 1
    labels = cluster_labels(n, clusters)
    li, lj = labels[pi], labels[pj]
    in_range = ps >= borderline_threshold
    if not include_split:
        in_range &= ps < merge_threshold
    keep = in_range & ((li < 0) | (li != lj))
    return pi[keep].astype(np.int64), pj[keep].astype(np.int64), ps[keep].astype(np.float32)
