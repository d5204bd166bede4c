"""Hybrid retrieval: BM25 over memory text fused with vector similarity.

Pure (no Redis): :class:`TextIndex` is an incremental BM25 index of string ids;
:func:`fuse` combines ranked lists by reciprocal rank fusion (RRF). A vector ranking
alone misses a question whose words the memory shares but whose embedding drifts
(names, rare words with the hashing embedder); BM25 alone misses paraphrases. RRF
needs no score calibration between the two, so it works for every embedder.

Terms and query terms come from a language's :class:`~memcore.core.text_rules.TextRules`
(English stems words and expands a query with broader words; without a language the
words are the terms).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from memcore.core.text_rules import PLAIN, TextRules
from memcore.index.vector_index import NamespaceLRU, VectorIndex

RRF_K = 10
"""The RRF constant: 60 in Cormack et al. (2009); 10 ranked LoCoMo evidence best with
both the hashing and the MiniLM embedder (notes/benchmarks.md), i.e. the top few ranks
of each list count for more."""

DEPTH = 100
"""How many candidates each ranking contributes to the fusion (per query)."""

_CONTRIB_CACHE = 4096
"""At most this many (term, weight) contribution arrays are kept per text index."""

_RANK_MIN, _RANK_SLACK = 64, 16
"""The ids' ranks are recomputed (an argsort of all ids) when a search meets a new id and
at least max(_RANK_MIN, ranked ids / _RANK_SLACK) are new; until then such a search
sorts by the ids' bytes."""


def _grown(array: np.ndarray, size: int, dtype: np.dtype[Any] | None = None) -> np.ndarray:
    """``array`` copied into zeros of ``size`` (and ``dtype``, if given)."""
    grown = np.zeros(size, dtype=array.dtype if dtype is None else dtype)
    grown[: array.shape[0]] = array
    return grown


class TextIndex:
    """Incremental Okapi BM25 over string ids; re-adding an id replaces its text.

    Each document has a slot (its row in the length array); each term keeps its
    postings as a dict (cheap incremental edits) and, once queried, as numpy arrays of
    slots and term frequencies rebuilt only after the term changed. Each (term, weight)'s
    BM25 contributions are kept until the next write, so between writes a query costs
    one weighted ``bincount`` over its terms' postings, a partial sort and a sort of the
    few candidates in C (the API's search budget is about a millisecond).
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75,
                 rules: TextRules = PLAIN) -> None:
        if k1 < 0:
            raise ValueError(f"k1 must be >= 0, got {k1}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must be in [0, 1], got {b}")
        self.k1 = k1
        self.b = b
        self.rules = rules
        self._docs: dict[str, Counter[str]] = {}
        self._slot: dict[str, int] = {}  # id -> slot; kept when the id is re-indexed
        self._names: list[str] = []  # slot -> id
        self._lengths = np.zeros(0, dtype=np.float64)  # slot -> length (0: removed)
        self._postings: dict[str, dict[int, int]] = {}  # term -> slot -> tf
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # term -> (slots, tfs)
        self._total_length = 0
        # (term, weight) -> (slots, weighted BM25 contributions), () for an absent term.
        # They depend on N and the average length, so every write ends by swapping in a
        # fresh dict: a search racing a write stores into the discarded one.
        self._contrib: dict[tuple[str, float], tuple[np.ndarray, np.ndarray] | tuple[()]] = {}
        # slot -> id as UTF-8 bytes: numpy sorts these in the order of the str ids
        # (UTF-8 preserves code point order), so ties sort in C. numpy pads with NULs,
        # so an id ending in NUL would compare equal to its prefix: then sort in Python.
        self._keys = np.zeros(0, dtype="S1")
        self._nul_ids = False
        # The position of each slot's id in str order among the first ``ranked`` slots
        # (new ids keep the others' order): an int sort key, cheaper than the bytes.
        self._rank: tuple[np.ndarray, int] = (np.zeros(0, dtype=np.int64), 0)
        self._name_array = np.zeros(0, dtype=object)  # slot -> id, to gather in C

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, item: object) -> bool:
        return item in self._docs

    def _slot_of(self, ident: str) -> int:
        slot = self._slot.get(ident)
        if slot is None:
            slot = len(self._names)
            if slot >= self._lengths.shape[0]:
                grown = np.zeros(max(64, 2 * self._lengths.shape[0]), dtype=np.float64)
                grown[: self._lengths.shape[0]] = self._lengths
                self._lengths = grown
            if slot >= self._name_array.shape[0]:
                self._name_array = _grown(self._name_array, self._lengths.shape[0])
            self._name_array[slot] = ident
            key = ident.encode("utf-8", "surrogatepass")
            width = self._keys.dtype.itemsize
            if len(key) > width:
                self._keys = _grown(self._keys, self._lengths.shape[0],
                                    np.dtype(f"S{max(len(key), 2 * width)}"))
            elif slot >= self._keys.shape[0]:
                self._keys = _grown(self._keys, self._lengths.shape[0])
            self._keys[slot] = key
            self._nul_ids = self._nul_ids or ident.endswith("\0")
            # Last: a search sees the slot once its key and name are in place.
            self._names.append(ident)
            self._slot[ident] = slot
        return slot

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Index ``texts`` under ``ids`` (an id already present is re-indexed)."""
        if isinstance(ids, str):
            raise ValueError("ids must be a sequence of strings, not a single string")
        if len(ids) != len(texts):
            raise ValueError(f"ids has {len(ids)} entries but texts has {len(texts)}")
        for i, (ident, text) in enumerate(zip(ids, texts, strict=True)):
            if not isinstance(ident, str):
                raise ValueError(f"ids[{i}] must be a string")
            if not isinstance(text, str):
                raise ValueError(f"texts[{i}] must be a string")
            self.remove(ident)
            counts = Counter(self.rules.terms(text))
            self._docs[ident] = counts
            slot = self._slot_of(ident)
            length = sum(counts.values())
            self._lengths[slot] = length
            self._total_length += length
            for term, tf in counts.items():
                self._postings.setdefault(term, {})[slot] = tf
                self._arrays.pop(term, None)
            self._contrib = {}

    def remove(self, ident: str) -> None:
        """Forget ``ident`` (no error if unknown)."""
        counts = self._docs.pop(ident, None)
        if counts is None:
            return
        slot = self._slot[ident]
        self._total_length -= int(self._lengths[slot])
        self._lengths[slot] = 0
        for term in counts:
            self._arrays.pop(term, None)
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(slot, None)
                if not posting:
                    del self._postings[term]
        self._contrib = {}

    def idf(self, term: str) -> float:
        """BM25's idf (the non-negative variant, ``log(1 + (N - df + .5) / (df + .5))``)."""
        df = len(self._postings.get(term, ()))
        n = len(self._docs)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            slots = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            tfs = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
            arrays = self._arrays[term] = (slots, tfs)
        return arrays

    def _contributions(self, term: str, weight: float, cache: dict[
            tuple[str, float], tuple[np.ndarray, np.ndarray] | tuple[()]],
            ) -> tuple[np.ndarray, np.ndarray] | tuple[()]:
        """``term``'s posting slots and their BM25 contributions times ``weight``
        (``()``: no document has ``term``), kept in ``cache`` for a float weight."""
        arrays = self._posting_arrays(term)
        if arrays is None:
            entry: tuple[np.ndarray, np.ndarray] | tuple[()] = ()
        else:
            slots, tfs = arrays
            avg = self._total_length / len(self._docs) or 1.0
            norm = self.k1 * (1 - self.b + self.b * self._lengths[slots] / avg)
            entry = (slots, (self.idf(term) * weight) * tfs * (self.k1 + 1) / (tfs + norm))
        # Only a float weight is a key: 1 == 1.0 == np.float32(1), but their products
        # with the idf may differ in type or rounding.
        if type(weight) is float:
            if len(cache) >= _CONTRIB_CACHE:
                cache.clear()
            cache[term, weight] = entry
        return entry

    def _dense(self, query: Mapping[str, float] | str) -> np.ndarray | None:
        """BM25 score per slot (None: no document shares a term with ``query``).

        A slot's score is the sum of its terms' contributions in the query's term order
        (``np.bincount`` adds its weights in input order), as adding term by term into a
        dense array did; each contribution is computed once per write generation."""
        weights = self.rules.query_terms(query) if isinstance(query, str) else query
        if not self._docs:
            return None
        cache = self._contrib
        slots: list[np.ndarray] = []
        contributions: list[np.ndarray] = []
        for term, weight in weights.items():
            entry = cache.get((term, weight)) if type(weight) is float else None
            if entry is None:
                entry = self._contributions(term, weight, cache)
            if entry:
                slots.append(entry[0])
                contributions.append(entry[1])
        if not slots:
            return None
        if len(slots) == 1:
            return np.bincount(slots[0], weights=contributions[0], minlength=len(self._names))
        return np.bincount(np.concatenate(slots), weights=np.concatenate(contributions),
                           minlength=len(self._names))

    def scores(self, query: Mapping[str, float] | str) -> dict[str, float]:
        """BM25 score of every document sharing a term with ``query`` (others score 0)."""
        dense = self._dense(query)
        if dense is None:
            return {}
        hit = np.flatnonzero(dense)
        return {self._names[s]: float(dense[s]) for s in hit.tolist()}

    def _ranks(self) -> tuple[np.ndarray, int]:
        """Every slot's rank in the str order of the ids (by their UTF-8 bytes)."""
        n = len(self._names)
        rank = np.empty(n, dtype=np.int64)
        rank[np.argsort(self._keys[:n])] = np.arange(n, dtype=np.int64)
        return rank, n

    def _hits(self, query: Mapping[str, float] | str, k: int,
              exclude: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """The score per slot of ``query`` with ``exclude`` zeroed, and the slots scoring
        above 0 (both empty when nothing matches)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        dense = self._dense(query)
        if dense is None:
            return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
        for ident in exclude:
            slot = self._slot.get(ident)
            if slot is not None:
                dense[slot] = 0.0
        return dense, np.flatnonzero(dense > 0)

    def search(self, query: Mapping[str, float] | str, k: int,
               exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
        """The ``k`` best ``(id, score)`` for ``query``, best first (ties by id)."""
        dense, hit = self._hits(query, k, exclude)
        if not hit.size:
            return []
        if hit.size > k:
            # Only the hits scoring at least the k-th best score can be among the k;
            # ties are common (short texts, shared terms), broken by id.
            scores = dense[hit]
            kth = np.partition(scores, hit.size - k)[hit.size - k]
            hit = hit[scores >= kth]
        if self._nul_ids:
            names = self._names
            scored = [(names[s], float(dense[s])) for s in hit.tolist()]
            scored.sort(key=lambda x: (-x[1], x[0]))
            return scored[:k]
        # Sort by (-score, id) in C: the last key is the primary one; the id's rank when
        # every candidate has one (hit is ascending), else its bytes.
        rank, ranked = self._rank
        if hit[-1] >= ranked and len(self._names) - ranked >= max(_RANK_MIN,
                                                                  ranked // _RANK_SLACK):
            rank, ranked = self._rank = self._ranks()
        ids = rank[hit] if hit[-1] < ranked else self._keys[hit]
        best = hit[np.lexsort((ids, -dense[hit]))[:k]]
        return list(zip(self._name_array[best].tolist(), dense[best].tolist(), strict=True))


_RRF_TABLES: dict[tuple[float, int], list[float]] = {}


def _rrf_table(weight: float, k: int, length: int) -> list[float]:
    """``[0.0 + weight / (k + rank) for rank in 1..length]`` (at least), shared across
    calls for a float weight and an int ``k``; ``0.0 +`` as when the first ranking adds
    to an empty sum (it turns -0.0 into 0.0)."""
    cacheable = type(weight) is float and type(k) is int and weight != 0.0
    table = _RRF_TABLES.get((weight, k)) if cacheable else None
    if table is None or len(table) < length:
        table = [0.0 + weight / (k + rank) for rank in range(1, max(length, DEPTH) + 1)]
        if cacheable:
            if len(_RRF_TABLES) >= 64:
                _RRF_TABLES.clear()
            _RRF_TABLES[weight, k] = table  # replaced, never changed in place (threads)
    return table


def _fuse_weights(rankings: Sequence[Sequence[str]], weights: Sequence[float] | None,
                  k: float) -> Sequence[float]:
    """:func:`fuse`'s weights (1 each by default), its arguments checked."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"weights has {len(weights)} entries for {len(rankings)} rankings")
    return weights


def fuse(rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None,
         k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion: ``sum_r w_r / (k + rank_r(id))`` over the rankings
    (rank 1 is best); an id missing from a ranking gets nothing from it."""
    out: dict[str, float] = {}
    get = out.get
    for ranking, weight in zip(rankings, _fuse_weights(rankings, weights, k), strict=True):
        if not isinstance(ranking, list | tuple):
            ranking = list(ranking)
        table = _rrf_table(weight, k, len(ranking))
        # The table's "0.0 +" changes no sum: a sum starts at 0.0 and is never -0.0.
        if not out:
            # Into an empty sum, in C (unless an id repeats: then rank by rank).
            out.update(zip(ranking, table, strict=False))  # the table may be longer
            if len(out) == len(ranking):
                continue
            out.clear()
        for ident, share in zip(ranking, table, strict=False):
            out[ident] = get(ident, 0.0) + share
    return out


FetchTexts = Callable[[str, Sequence[str]], Sequence[str | None]]


class TextIndexCache(NamespaceLRU[TextIndex]):
    """Per-process cache of one :class:`TextIndex` per namespace, kept in step with the
    namespace's :class:`~memcore.index.vector_index.VectorIndex`.

    Every memory write appends a row to the vector index (a rewritten memory appends
    its id again), so the rows added since the last call name exactly the memories
    whose text is new or changed; ``fetch_texts(namespace, ids)`` reads those texts
    (``None`` for a memory that is gone). A new snapshot version starts afresh.
    """

    def __init__(self, fetch_texts: FetchTexts, *, max_namespaces: int = 64,
                 rules: TextRules = PLAIN) -> None:
        super().__init__(max_namespaces)
        self._fetch = fetch_texts
        self.rules = rules

    def get(self, namespace: str, version: int, vectors: VectorIndex, *,
            epoch: str = "") -> TextIndex:
        """The text index of ``namespace`` at ``version`` (and erase ``epoch``) covering
        every row of ``vectors``."""
        generation = (epoch, version)
        with self._lock:
            entry = self._entries.get(namespace)
            if entry is None or entry[0] != generation or entry[1] > vectors.rows:
                entry = (generation, 0, TextIndex(rules=self.rules))
            _, seen, index = entry
            ids = list(dict.fromkeys(vectors.ids_from(seen)))
            if ids:
                texts = self._fetch(namespace, ids)
                if len(texts) != len(ids):
                    raise ValueError(f"fetch_texts returned {len(texts)} texts for {len(ids)} ids")
                for ident, text in zip(ids, texts, strict=True):
                    if text is None:
                        index.remove(ident)
                    else:
                        index.add([ident], [text])
            self._remember(namespace, generation, vectors.rows, index)
            return index
