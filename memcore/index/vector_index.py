"""Nearest-neighbour index for the write path: exact numpy when small, FAISS HNSW when large.

FAISS is imported and configured lazily (never at import time, never in a Celery
master before fork: OpenMP can hang in a forked child). HNSW cannot remove ids, so
deleted, tombstoned or superseded ids are filtered at search time with over-fetch,
and an id added again simply shadows its older row.
"""

from __future__ import annotations

import io
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

THREADS_ENV = "MEMCORE_FAISS_THREADS"
# Below this many vectors an exact BLAS scan beats HNSW (measured on 2 cores, d=384:
# see notes/bench_scale.md); it also avoids paying the graph build for small namespaces.
EXACT_SEARCH_BELOW = 2_000
HNSW_M = 32
_threads_set = False


def faiss_module(threads: int | None = None) -> Any:
    """Import FAISS and bound its OpenMP threads (``MEMCORE_FAISS_THREADS``, default 1).

    Call only inside a worker process or task. An explicit ``threads`` always applies;
    the environment default is applied once per process.
    """
    global _threads_set
    import faiss

    if threads is not None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        faiss.omp_set_num_threads(threads)
        _threads_set = True
    elif not _threads_set:
        raw = os.environ.get(THREADS_ENV, "1")
        try:
            count = int(raw)
        except ValueError as exc:
            raise ValueError(f"{THREADS_ENV} must be an integer, got {raw!r}") from exc
        faiss.omp_set_num_threads(max(1, count))
        _threads_set = True
    return faiss


def as_matrix(vectors: Any, dim: int | None = None, field: str = "vectors") -> np.ndarray:
    """``vectors`` as a C-contiguous float32 (n, dim) matrix, or a ValueError naming ``field``."""
    arr = np.ascontiguousarray(vectors, dtype=np.float32)
    if arr.ndim == 1 and arr.size and dim is not None and arr.size == dim:
        arr = arr.reshape(1, dim)
    if arr.ndim != 2:
        raise ValueError(f"{field} must be a 2-D array, got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{field} must have {dim} columns, got {arr.shape[1]}")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{field} contains NaN or infinity")
    return arr


IndexT = TypeVar("IndexT")

class VectorIndex:
    """Inner-product (cosine on unit vectors) index of string ids.

    Rows are kept in a growable float32 buffer; an HNSW graph is built lazily once
    the index holds ``exact_below`` vectors and kept in sync afterwards.
    """

    def __init__(self, dim: int, *, exact_below: int = EXACT_SEARCH_BELOW,
                 ef_search: int = 64) -> None:
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.dim = dim
        self.exact_below = exact_below
        self.ef_search = ef_search
        self._ids: list[str] = []
        self._latest: dict[str, int] = {}  # id -> its newest row; older rows are shadowed
        self._buf = np.empty((0, dim), dtype=np.float32)
        self._shadowed = np.zeros(0, dtype=bool)  # row -> a later row has its id
        self._n = 0
        self._hnsw: Any = None

    def __len__(self) -> int:
        """Number of distinct ids (shadowed rows not counted)."""
        return len(self._latest)

    @property
    def rows(self) -> int:
        """Number of stored rows, including ones shadowed by a later add of the same id."""
        return self._n

    def __contains__(self, item: object) -> bool:
        return item in self._latest

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Append ``vectors`` under ``ids``; re-adding an id replaces its vector."""
        if isinstance(ids, str):
            raise ValueError("ids must be a sequence of strings, not a single string")
        mat = as_matrix(vectors, self.dim)
        if len(ids) != mat.shape[0]:
            raise ValueError(f"ids has {len(ids)} entries but vectors has {mat.shape[0]} rows")
        if not mat.shape[0]:
            return
        need = self._n + mat.shape[0]
        if need > self._buf.shape[0]:
            grown = np.empty((max(need, 2 * self._buf.shape[0], 64), self.dim), dtype=np.float32)
            grown[: self._n] = self._buf[: self._n]
            self._buf = grown
        self._buf[self._n : need] = mat
        if need > self._shadowed.shape[0]:
            flags = np.zeros(self._buf.shape[0], dtype=bool)
            flags[: self._n] = self._shadowed[: self._n]
            self._shadowed = flags
        for offset, ident in enumerate(ids):
            if not isinstance(ident, str):
                raise ValueError(f"ids[{offset}] must be a string")
            self._ids.append(ident)
            before = self._latest.get(ident)
            if before is not None:
                self._shadowed[before] = True
            self._latest[ident] = self._n + offset
        self._n = need
        if self._hnsw is not None:
            self._hnsw.add(mat)

    def ids_from(self, row: int) -> list[str]:
        """The ids of rows ``row`` onwards, in the order they were added."""
        if row < 0:
            raise ValueError(f"row must be >= 0, got {row}")
        return self._ids[row : self._n]

    def vector_of(self, ident: str) -> np.ndarray | None:
        """The newest vector stored under ``ident`` (a view; do not modify), or None."""
        row = self._latest.get(ident)
        return None if row is None else self._buf[row]

    def vectors(self) -> np.ndarray:
        """All stored rows (a view; do not modify)."""
        return self._buf[: self._n]

    def _ensure_graph(self) -> Any:
        if self._hnsw is None:
            faiss = faiss_module()
            index = faiss.IndexHNSWFlat(self.dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            if self._n:
                index.add(self._buf[: self._n])
            self._hnsw = index
        return self._hnsw

    @property
    def uses_graph(self) -> bool:
        """True once searches go through the HNSW graph."""
        return self._n >= self.exact_below

    def _raw_search(self, queries: np.ndarray, fetch: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``fetch`` rows per query as (scores, rows); rows are -1 where missing."""
        if self.uses_graph:
            index = self._ensure_graph()
            index.hnsw.efSearch = max(self.ef_search, fetch)
            scores, rows = index.search(queries, fetch)
            return scores, rows.astype(np.int64)
        sims = queries @ self._buf[: self._n].T
        fetch = min(fetch, self._n)
        part = np.argpartition(-sims, fetch - 1, axis=1)[:, :fetch]
        part_scores = np.take_along_axis(sims, part, axis=1)
        # Ties by row: lexsort on (row, -score).
        order = np.lexsort((part, -part_scores), axis=1)
        return np.take_along_axis(part_scores, order, axis=1), np.take_along_axis(
            part, order, axis=1
        )

    def search(
        self, vectors: np.ndarray, k: int, exclude: Callable[[str], bool] | None = None
    ) -> list[list[tuple[str, float]]]:
        """The ``k`` nearest live ids of each query as ``(id, cosine)``, best first.

        ``exclude(id) -> True`` drops an id (tombstoned, superseded); the search then
        over-fetches, doubling until ``k`` survivors are found or the index is exhausted.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        queries = as_matrix(vectors, self.dim)
        results: list[list[tuple[str, float]]] = [[] for _ in range(queries.shape[0])]
        if not self._n or not queries.shape[0]:
            return results
        pending = np.arange(queries.shape[0])
        shadowed = self._n - len(self._latest)
        fetch = min(self._n, k + shadowed + (k if exclude else 0))
        while pending.size:
            scores, rows = self._raw_search(queries[pending], fetch)
            retry = []
            for qi, row_scores, row_ids in zip(pending, scores, rows, strict=True):
                # Missing and shadowed rows dropped in numpy, then one pass in Python.
                keep = row_ids >= 0
                keep[keep] = ~self._shadowed[row_ids[keep]]
                found = zip(row_ids[keep].tolist(), row_scores[keep].tolist(), strict=True)
                names = self._ids
                if exclude is None:
                    hits = [(names[row], score) for row, score in found][:k]
                else:
                    hits = []
                    for row, score in found:
                        if not exclude(names[row]):
                            hits.append((names[row], score))
                            if len(hits) == k:
                                break
                results[qi] = hits
                if len(hits) < k and fetch < self._n:
                    retry.append(qi)
            pending = np.asarray(retry, dtype=np.int64)
            fetch = min(self._n, fetch * 2)
        return results

    def search_among(self, vector: np.ndarray, ids: Sequence[str], k: int
                     ) -> list[tuple[str, float]]:
        """Exact top-``k`` of one query among ``ids`` only (ids not in the index are
        skipped): the fallback of a filtered search whose matches are too rare for
        over-fetching to find."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        query = as_matrix(vector, self.dim, "vector")[0]
        known = [i for i in dict.fromkeys(ids) if i in self._latest]
        if not known:
            return []
        rows = np.fromiter((self._latest[i] for i in known), dtype=np.int64, count=len(known))
        sims = self._buf[rows] @ query
        top = np.argsort(-sims, kind="stable")[:k]
        return [(known[int(j)], float(sims[int(j)])) for j in top]

    def to_bytes(self) -> bytes:
        """Serialize ids, rows and (if built) the HNSW graph; no pickle."""
        parts: dict[str, np.ndarray] = {
            "dim": np.asarray([self.dim, self.exact_below, self.ef_search], dtype=np.int64),
            "ids": np.asarray(self._ids, dtype=np.str_),
        }
        if self._hnsw is not None:
            # The graph's storage already holds the rows: store them once.
            parts["faiss"] = faiss_module().serialize_index(self._hnsw)
        else:
            parts["vectors"] = self._buf[: self._n]
        out = io.BytesIO()
        np.savez(out, **parts)  # type: ignore[arg-type]
        return out.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> VectorIndex:
        """Rebuild an index written by :meth:`to_bytes`."""
        try:
            loaded = np.load(io.BytesIO(data), allow_pickle=False)
            dim, exact_below, ef_search = (int(x) for x in loaded["dim"])
            ids = [str(x) for x in loaded["ids"]]
        except Exception as exc:  # corrupt or foreign bytes
            raise ValueError(f"data is not a serialized VectorIndex: {exc}") from exc
        index = cls(dim, exact_below=exact_below, ef_search=ef_search)
        if "faiss" in loaded.files:
            faiss = faiss_module()
            graph = faiss.deserialize_index(loaded["faiss"])
            vectors = graph.reconstruct_n(0, graph.ntotal) if graph.ntotal else None
            index._hnsw = graph
        else:
            vectors = loaded["vectors"]
        if vectors is not None and len(ids):
            hnsw, index._hnsw = index._hnsw, None  # rows are in the graph already
            index.add(ids, vectors)
            index._hnsw = hnsw
        return index


Fetch = Callable[[str, int, int], tuple[Sequence[str], np.ndarray, int]]


class NamespaceLRU(Generic[IndexT]):
    """A lock and a bounded, least-recently-used map of namespace -> (generation, position,
    index): what every per-process index cache shares. A generation is ``(epoch,
    version)``: the namespace's erase epoch (``MemoryStore.namespace_state``; changed by a
    whole-namespace erase in any process) and its snapshot version."""

    def __init__(self, max_namespaces: int) -> None:
        if max_namespaces < 1:
            raise ValueError(f"max_namespaces must be >= 1, got {max_namespaces}")
        self.max_namespaces = max_namespaces
        self._entries: OrderedDict[str, tuple[tuple[str, int], int, IndexT]] = OrderedDict()
        self._lock = threading.Lock()

    def _remember(self, namespace: str, generation: tuple[str, int], position: int,
                  index: IndexT) -> None:
        """Keep ``namespace``'s entry as the most recent; evict the oldest past the bound
        (call with the lock held)."""
        self._entries[namespace] = (generation, position, index)
        self._entries.move_to_end(namespace)
        while len(self._entries) > self.max_namespaces:
            self._entries.popitem(last=False)

    def invalidate(self, namespace: str | None = None) -> None:
        """Drop one namespace's index, or all of them."""
        with self._lock:
            if namespace is None:
                self._entries.clear()
            else:
                self._entries.pop(namespace, None)

    def __len__(self) -> int:
        return len(self._entries)


class IndexCache(NamespaceLRU[VectorIndex]):
    """Per-process cache of one :class:`VectorIndex` per (namespace, epoch, snapshot
    version).

    ``fetch(namespace, version, offset) -> (ids, vectors, new_offset)`` returns the
    vectors written at or after ``offset`` (``Records.vectors_since``). Each
    :meth:`get` pulls only what is new (nothing at all when the caller read the log's
    length and the index already reaches it); a new version or epoch starts afresh.
    """

    def __init__(self, fetch: Fetch, dim: int, *, max_namespaces: int = 64,
                 drains: bool = False) -> None:
        """``drains=True``: one ``fetch`` returns everything written so far (as
        ``Records.vectors_since`` does without a limit), so :meth:`get` makes one call
        instead of calling again to see that nothing more is there."""
        super().__init__(max_namespaces)
        self._fetch = fetch
        self.drains = drains
        self.dim = dim

    def peek(self, namespace: str) -> tuple[str, int, int, VectorIndex] | None:
        """The cached index of ``namespace`` as it is, without asking the store whether it
        is current: ``(epoch, version, log length covered, index)``, or None."""
        with self._lock:
            entry = self._entries.get(namespace)
        if entry is None:
            return None
        (epoch, version), offset, index = entry
        return epoch, version, offset, index

    def get(self, namespace: str, version: int, *, epoch: str = "",
            length: int | None = None) -> VectorIndex:
        """The index of ``namespace`` at ``version`` (and erase ``epoch``), synced with
        everything written so far; ``length``: the order log's length read by the caller
        (no fetch when the index already covers it)."""
        generation = (epoch, version)
        with self._lock:
            entry = self._entries.get(namespace)
            if entry is None or entry[0] != generation or (
                    length is not None and entry[1] > length):
                entry = (generation, 0, VectorIndex(self.dim))
            _, offset, index = entry
            if length is not None and offset == length:
                self._remember(namespace, generation, offset, index)
                return index
            # Loop so a paginated fetch is drained; stop when the offset stops moving.
            while True:
                ids, vectors, new_offset = self._fetch(namespace, version, offset)
                if len(ids):
                    index.add(list(ids), vectors)
                if new_offset == offset or not len(ids) or self.drains:
                    offset = new_offset
                    break
                offset = new_offset
            self._remember(namespace, generation, offset, index)
            return index
