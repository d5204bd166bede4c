"""Hybrid search over one namespace.

Vector neighbours (FAISS) and BM25 over the memories' text are fused by reciprocal rank,
filtered before ranking, lifted a little by retention and cut to a character budget. The
per-process index caches live here; they are rebuilt from the store's order log.
"""

from __future__ import annotations

import heapq
import logging
import numbers
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from memcore.adapters import Models
from memcore.core.config import ConsolidationConfig, Settings
from memcore.core.filters import Filterable, FilterFields, Predicate, compile_filter
from memcore.core.models import (
    LIVE_STATUSES,
    Memory,
    Status,
    as_instant,
    utcnow,
    validate_namespace,
)
from memcore.core.scoring import effective_relation_weight, memory_score
from memcore.core.timehint import resolve_time
from memcore.core.timeline import earlier_values, expired, predecessors, valid_at
from memcore.index import retrieval
from memcore.index.vector_index import IndexCache, NamespaceLRU, VectorIndex
from memcore.language import text_rules
from memcore.store import MemoryStore, NamespaceState, RecordMemo

log = logging.getLogger(__name__)

SCAN_SHARE = 0.25
"""A filtered search over-fetches neighbours up to this share of the namespace; rarer
matches are found by ranking the matching ids exactly (one cheap scan of the records)."""

Admit = Callable[[Filterable | None], bool]
"""Whether a memory (or its filter fields) may be returned by this search."""


@dataclass(frozen=True)
class SearchHit:
    """One search result: the memory, its similarity and the combined score."""

    memory: Memory
    similarity: float
    score: float
    earlier: tuple[Memory, ...] = ()
    """With ``include_history``: the values this fact replaced, oldest first."""


@dataclass(frozen=True)
class ReadGuard:
    """A precondition of a search read with the namespace's state (same round trip):
    ``check`` gets the value of the string key ``key`` (None: missing, or not read
    because the search failed before its first read: the check then reads what it
    needs itself) and raises to stop the search before any record read with it is
    decoded or used. The HTTP API
    confirms a cached API key this way (the key revision) instead of with a round trip
    of its own."""

    key: str
    check: Callable[[bytes | None], None]


@dataclass(frozen=True)
class Ranking:
    """Candidates best first, with the evidence each rank came from."""

    order: list[str]
    rank: dict[str, float]
    bm25: dict[str, float]
    cosine: dict[str, float]


def retention_lift(retention_weight: float, config: ConsolidationConfig) -> float:
    """The largest factor ``1 + retention_weight * keep`` can scale a fused rank by: a
    memory's retention ``keep`` (:func:`~memcore.core.scoring.memory_score`, or
    :func:`~memcore.core.scoring.effective_relation_weight` for a relation) is at most
    its importance, the floor of a pinned memory, a relation's weight or the relation
    floor: never above ``max(1, floor)``, and never below 0. With a negative weight the
    factor is at most 1. Rounding keeps the bound: every step is monotonic."""
    if retention_weight <= 0:
        return 1.0
    return 1.0 + retention_weight * max(1.0, config.floor, config.relation_weight_floor)


def fused_order(rank: Mapping[str, float], bm25: Mapping[str, float],
                cosine: Mapping[str, float]) -> list[str]:
    """The ids of ``rank`` best first: by fused rank, equal ranks (common with RRF: ~40
    runs of ties among ~160 candidates on bench queries) to the stronger text match,
    then the closer vector, then by id. The keys are built once and compared as tuples
    in C (a key function per id is a Python call per comparison step)."""
    keys = [(-value, -bm25.get(mid, 0.0), -cosine.get(mid, 0.0), mid)
            for mid, value in rank.items()]
    keys.sort()
    return [key[3] for key in keys]


def fit_budget(hits: Sequence[SearchHit], k: int, max_chars: int) -> list[SearchHit]:
    """The best ``k`` hits whose texts fit in ``max_chars`` together (the first one
    always: a hard cap on the rest, never an empty answer)."""
    chosen: list[SearchHit] = []
    used = 0
    for hit in hits[:k]:
        if used + len(hit.memory.text) > max_chars and chosen:
            break
        chosen.append(hit)
        used += len(hit.memory.text)
    return chosen


class TouchBatcher:
    """Recall bookkeeping written in batches: touches queued by concurrent searches are
    sent by one background thread every ``delay`` seconds, one script call per
    namespace, instead of one write per search (a server answering hundreds of searches
    a second). A touch is thus recorded up to ``delay`` later; :meth:`flush` (and
    :meth:`close`) write what waits now."""

    def __init__(self, store: MemoryStore, strength_cap: float, delay: float) -> None:
        if delay <= 0:
            raise ValueError(f"delay must be > 0, got {delay}")
        self.store = store
        self.strength_cap = strength_cap
        self.delay = delay
        self._pending: dict[str, tuple[list[str], datetime]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memcore-touches", daemon=True)
        self._thread.start()

    def add(self, namespace: str, ids: Sequence[str], now: datetime) -> None:
        """Queue a touch of ``ids`` at ``now``."""
        with self._lock:
            queued, latest = self._pending.get(namespace, ([], now))
            queued.extend(ids)  # an id found twice is touched twice, as two searches do
            self._pending[namespace] = (queued, max(latest, now))

    def flush(self) -> None:
        """Write every queued touch now."""
        with self._lock:
            pending, self._pending = self._pending, {}
        for namespace, (ids, now) in pending.items():
            try:
                self.store.writes.touch(namespace, ids, now, self.strength_cap)
            except Exception:  # never kill the thread; a lost touch is only bookkeeping
                log.exception("touch of %d memories in %s failed", len(ids), namespace)

    def _run(self) -> None:
        while not self._stop.wait(self.delay):
            self.flush()

    def close(self) -> None:
        """Stop the thread after a last flush."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.flush()


class FilterFieldsCache(NamespaceLRU[list[FilterFields]]):
    """What filters read of every memory, per namespace, for a filtered search whose
    matches are too rare for over-fetching: kept in memory and reused while the
    namespace's (generation, version, record-change count) in Redis is unchanged,
    instead of reading every record from Redis for each such search."""

    def __init__(self, max_namespaces: int = 8) -> None:
        super().__init__(max_namespaces)

    def get(self, store: MemoryStore, namespace: str, state: NamespaceState
            ) -> list[FilterFields]:
        """The filter fields of ``namespace`` as of ``state`` (or newer: read after it)."""
        generation = (state.epoch, state.version)
        writes = int(float(state.writes or 0))
        with self._lock:
            entry = self._entries.get(namespace)
            if entry is not None and entry[0] == generation and entry[1] == writes:
                self._entries.move_to_end(namespace)
                return entry[2]
        # Read outside the lock; what is read is at least as new as ``state`` (read first).
        fields = list(store.records.iter_filter_fields(namespace))
        with self._lock:
            self._remember(namespace, generation, writes, fields)
        return fields


def _checked_search(namespace: str, query: str, k: int, filters: Mapping[str, Any] | None,
                    as_of: datetime | str | None, include_history: bool, time_hint: bool
                    ) -> tuple[datetime | None, Predicate]:
    """A search's arguments checked (a ValueError names the bad one): the instant of
    ``as_of`` (None: now) and the compiled filter."""
    validate_namespace(namespace)
    instant = as_instant(as_of, "as_of") if as_of is not None else None
    for flag, value in (("include_history", include_history), ("time_hint", time_hint)):
        if not isinstance(value, bool):
            raise ValueError(f"{flag}: expected a boolean, got {value!r}")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query: must be a non-empty string")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        # "5" from a form or a CLI wrapper used to end in a bare TypeError
        raise ValueError(f"k: expected an integer of at least 1, got {k!r}")
    return instant, compile_filter(filters)  # a bad filter fails before any read


def _admission(wanted: Predicate, instant: datetime | None,
               include_inactive: bool, now: datetime) -> Admit:
    """Which memories a search may return: those valid at ``instant`` (the set valid then
    replaces the live set), else the live ones (any with ``include_inactive``) not
    expired at ``now``; either way only those the filter ``wanted`` accepts."""
    def admit(memory: Filterable | None) -> bool:
        if memory is None:
            return False
        if instant is not None:
            return valid_at(memory, instant) and wanted(memory)
        return (include_inactive or memory.status in LIVE_STATUSES) \
            and not expired(memory, now) and wanted(memory)

    return admit


@dataclass
class _TopK:
    """The ``k`` best scores so far (a min-heap) of a search that stops early: no
    candidate whose fused rank times ``lift`` (the largest lift retention can give)
    stays below them can enter the top ``k``. ``lift`` None: no early stop."""

    k: int
    lift: float | None
    best: list[float] = field(default_factory=list)

    def out_of_reach(self, rank: float) -> bool:
        """Can a candidate of fused rank ``rank`` no longer enter the top ``k``?"""
        return self.lift is not None and len(self.best) == self.k \
            and rank * self.lift < self.best[0]

    def push(self, score: float) -> None:
        """Count one hit's score."""
        if self.lift is not None:
            (heapq.heappush if len(self.best) < self.k else heapq.heappushpop)(self.best, score)


@dataclass(frozen=True)
class _Scorer:
    """Scores a search's admitted records: similarity from the index's vector, and the
    rank or similarity lifted by retention."""

    ranking: Ranking
    index: VectorIndex
    query_vec: np.ndarray
    now: datetime
    cfg: ConsolidationConfig
    retention_weight: float
    hybrid: bool

    def hit(self, mid: str, memory: Memory) -> SearchHit:
        """The scored hit of one record."""
        keep = (effective_relation_weight(memory, self.now, self.cfg)
                if memory.relation is not None else memory_score(memory, self.now, self.cfg))
        stored = self.index.vector_of(mid)
        sim = float(self.query_vec @ stored) if stored is not None else 0.0
        # Cosine is additive with retention; a fused rank score is scaled by it.
        score = (self.ranking.rank[mid] * (1.0 + self.retention_weight * keep) if self.hybrid
                 else sim + self.retention_weight * keep)
        return SearchHit(memory, sim, score)


def _score_in_order(ids: Sequence[str], records: Sequence[Memory | None], admit: Admit,
                    scorer: _Scorer, top: _TopK, hits: list[SearchHit]) -> bool:
    """Score the admitted ``records`` into ``hits`` in rank order; False when it stopped
    early (neither a candidate nor any after it can make the top ``k``)."""
    for mid, memory in zip(ids, records, strict=True):
        if top.out_of_reach(scorer.ranking.rank[mid]):
            return False
        if memory is None or not admit(memory):
            continue
        hit = scorer.hit(mid, memory)
        hits.append(hit)
        top.push(hit.score)
    return True


class Searcher:
    """Searches the namespaces of one store; holds this process's index caches."""

    def __init__(self, store: MemoryStore, settings: Settings,
                 models: Callable[[], Models]) -> None:
        self.store = store
        self.settings = settings
        self._models = models  # built on first use: a producer that never searches skips it
        self._vectors: IndexCache | None = None
        self._texts = retrieval.TextIndexCache(self._texts_of,
                                                rules=text_rules(settings.language))
        self._records = RecordMemo()
        self._fields = FilterFieldsCache()
        self._touches: TouchBatcher | None = None
        # Stop reading a chunk once the rest cannot make the top k (see _score); False
        # reads whole chunks (the tests compare both).
        self.prune = True

    def defer_touches(self, delay: float) -> None:
        """Write recall bookkeeping in batches every ``delay`` seconds (see
        :class:`TouchBatcher`); ``0`` writes it with each search again."""
        if self._touches is not None:
            self._touches.close()
            self._touches = None
        if delay > 0:
            self._touches = TouchBatcher(self.store, self.settings.consolidation.strength_cap,
                                         delay)

    def close(self) -> None:
        """Write the touches still queued and stop their thread."""
        self.defer_touches(0)

    @property
    def vectors(self) -> IndexCache:
        """The vector index cache (one FAISS index per namespace version)."""
        if self._vectors is None:
            self._vectors = IndexCache(self.store.records.vectors_since,
                                       self._models().embedder.dim,
                                       drains=True)
        return self._vectors

    def invalidate(self, namespace: str | None = None) -> None:
        """Forget this process's indexes of ``namespace`` (of every namespace without
        one), e.g. after it was erased whole: its order log starts again from empty."""
        if self._vectors is not None:
            self._vectors.invalidate(namespace)
        self._texts.invalidate(namespace)
        self._fields.invalidate(namespace)

    def search(self, namespace: str, query: str, k: int = 10, *, max_chars: int = 4000,
               include_inactive: bool = False, now: datetime | str | None = None,
               touch: bool = True, retention_weight: float = 0.05,
               hybrid: bool = True, filters: Mapping[str, Any] | None = None,
               guard: ReadGuard | None = None, as_of: datetime | str | None = None,
               include_history: bool = False, time_hint: bool = False) -> list[SearchHit]:
        """See :meth:`memcore.Client.search`."""
        try:
            instant, wanted = _checked_search(namespace, query, k, filters, as_of,
                                              include_history, time_hint)
        except ValueError:
            if guard is not None:  # the guard still comes first (a revoked key: 401)
                guard.check(None)
            raise
        # Retention is scored as it stood at ``as_of``.
        now = as_instant(now, "now") if now is not None else instant or utcnow()
        hint = resolve_time(query, now) if time_hint else None
        if hint is not None:  # "last week": a filter on event_at, chosen before ranking
            filters = hint.filter() if filters is None else {"and": [dict(filters),
                                                                     hint.filter()]}
            wanted, query = compile_filter(filters), hint.query
        admit = _admission(wanted, instant, include_inactive, now)
        hits, state, vec = None, None, None
        filtered = filters is not None or instant is not None
        if not filtered:
            hits, state, vec = self._search_cached(namespace, query, k, admit, now,
                                                   retention_weight, hybrid, guard)
        if hits is None:
            hits = self._search_checked(namespace, query, k, admit, now, retention_weight,
                                        hybrid, guard, filtered, state, vec)
        chosen = fit_budget(hits, k, max_chars)
        if include_history and chosen:
            chosen = self._with_history(namespace, chosen)
        # A question about the past recalls nothing now: no recall bookkeeping.
        if touch and instant is None:
            self._recall(namespace, chosen, now, hybrid)
        return chosen

    def _recall(self, namespace: str, chosen: Sequence[SearchHit], now: datetime,
                hybrid: bool) -> None:
        """Recall strengthens a memory: only hits the query matched count as recalled (a
        hybrid search returns no others; one by cosine alone may: a search for "pets"
        recalls no pork diet)."""
        recalled = [h for h in chosen if (h.score > 0 if hybrid else h.similarity > 0)]
        if not recalled:
            return
        ids = [h.memory.id for h in recalled]
        if self._touches is not None:
            self._touches.add(namespace, ids, now)
        else:
            self.store.writes.touch(namespace, ids, now,
                                    self.settings.consolidation.strength_cap)

    def _with_history(self, namespace: str, hits: list[SearchHit]) -> list[SearchHit]:
        """``hits`` with the values each fact replaced (one scan of the superseded)."""
        before = predecessors(self.store.records.iter_memories(namespace, {Status.SUPERSEDED},
                                                       vectors=False))
        return [replace(h, earlier=tuple(earlier_values(h.memory.id, before))) for h in hits]

    def _search_cached(self, namespace: str, query: str, k: int, admit: Admit,
                       now: datetime, retention_weight: float, hybrid: bool,
                       guard: ReadGuard | None
                       ) -> tuple[list[SearchHit] | None, NamespaceState | None,
                                  np.ndarray | None]:
        """One round trip: rank on this process's cached index, then read the namespace's
        state, the guard's key and the first records to score in one go. Returns the hits,
        or (no index cached, or the state read shows it is stale: a write or an erase
        since) None with what was read for :meth:`_search_checked` to go on from."""
        cached = self.vectors.peek(namespace)
        if cached is None or len(cached[3]) == 0:
            return None, None, None
        epoch, version, length, index = cached
        assumed = NamespaceState(version=version, epoch=epoch, order_length=length)
        vec = self._embed(query)
        ranking = self._rank(namespace, assumed, index, query, vec, k, None, hybrid)
        first = ranking.order[:self._first_read(k, hybrid)]
        state, records = self.store.records.search_read(
            namespace, first, self._records, guard.key if guard is not None else None,
            guard.check if guard is not None else None)
        if (state.epoch, state.version, state.order_length) != (epoch, version, length):
            return None, state, vec
        return self._score(namespace, ranking, index, vec, k, admit, now, retention_weight,
                           hybrid, dict(zip(first, records, strict=True))), state, vec

    def _search_checked(self, namespace: str, query: str, k: int, admit: Admit,
                        now: datetime, retention_weight: float, hybrid: bool,
                        guard: ReadGuard | None, filtered: bool,
                        state: NamespaceState | None = None,
                        vec: np.ndarray | None = None) -> list[SearchHit]:
        """State first (one round trip says whether the cached indexes are current:
        version, erase epoch, log length; it reads the guard's key too; skipped when
        ``state`` was read, guard checked, by :meth:`_search_cached`), indexes brought up
        to date, then ranking and records."""
        if state is None:
            state = self._read_state(namespace, guard)
        index = self.vectors.get(namespace, state.version, epoch=state.epoch,
                                 length=state.order_length)
        if len(index) == 0:
            return []
        if vec is None:
            vec = self._embed(query)
        ranking = self._rank(namespace, state, index, query, vec, k,
                             admit if filtered else None, hybrid)
        return self._score(namespace, ranking, index, vec, k, admit, now, retention_weight,
                           hybrid)

    def _read_state(self, namespace: str, guard: ReadGuard | None) -> NamespaceState:
        """The namespace's state (one round trip), the guard's key read and checked."""
        if guard is None:
            return self.store.namespace_state(namespace)
        state, (guarded,) = self.store.namespace_state_and(namespace, [guard.key])
        guard.check(guarded)
        return state

    def _first_read(self, k: int, hybrid: bool) -> int:
        """How many ranked records :meth:`_score` reads first: the head of its first
        chunk (``2 k`` of ``max(4 k, 20)`` when it prunes, the whole chunk otherwise)."""
        return 2 * k if hybrid and self.prune else max(k * 4, 20)

    def _embed(self, query: str) -> np.ndarray:
        roles = self._models().instrumented
        try:
            return roles.embedder.embed([query])
        finally:
            # Counted and logged by the instrumentation; a read has no audit entry to write.
            roles.instruments.drain_errors()

    def _rank(self, namespace: str, state: NamespaceState, index: VectorIndex, query: str,
              vec: np.ndarray, k: int, admit: Admit | None, hybrid: bool) -> Ranking:
        """Vector neighbours (and BM25 matches when ``hybrid``) fused into one order;
        with ``admit``, only admitted memories compete (filtered before ranking)."""
        depth = max(k * 4, retrieval.DEPTH if hybrid else 20)
        if admit is None:
            (row,) = index.search(vec, depth)
        else:
            row = self._matching_neighbours(namespace, state, index, vec, depth, admit)
        cosine = dict(row)
        if not hybrid:
            rank = {mid: float(sim) for mid, sim in row}
            return Ranking(sorted(rank, key=lambda mid: (-rank[mid], mid)), rank, {}, cosine)
        lexical = self._texts.get(namespace, state.version, index,
                                  epoch=state.epoch).search(query, depth)
        if admit is not None:
            lexical = self._only(namespace, lexical, admit)
        # A cosine <= 0 shares nothing with the query (the hashing embedder gives exact
        # zeros): such a rank is noise, not evidence. A memory that matches neither its
        # words nor its meaning is no hit: fewer than k come back rather than padding.
        rank = retrieval.fuse([[mid for mid, sim in row if sim > 0],
                               [mid for mid, _ in lexical]])
        bm25 = dict(lexical)
        return Ranking(fused_order(rank, bm25, cosine), rank, bm25, cosine)

    def _score(self, namespace: str, ranking: Ranking, index: VectorIndex, vec: np.ndarray,
               k: int, admit: Admit, now: datetime, retention_weight: float, hybrid: bool,
               read: Mapping[str, Memory | None] | None = None) -> list[SearchHit]:
        """Read the ranked records a chunk at a time until ``k`` admitted ones are found;
        score each with its retention. Records come without vectors (decoded once per
        change, :class:`RecordMemo`); the similarity uses the index's copy of the vector,
        the same quantized vector the record holds. ``read``: records already read with
        the namespace's state (the first :meth:`_first_read` of the order).

        A hybrid search reads a chunk's first ``2 k`` records first and stops early once
        ``k`` hits score more than the next candidate could reach (its fused rank times
        the largest lift retention can give, :func:`retention_lift`): the candidates
        are in fused-rank order, so none of the rest could enter the top ``k`` and the
        answer is the one the whole chunk gives. Under ``bench api`` that reads 20
        records instead of 40 and scores 10-13 of them."""
        cfg = self.settings.consolidation
        scorer = _Scorer(ranking, index, np.asarray(vec, dtype=np.float32).reshape(-1), now,
                         cfg, retention_weight, hybrid)
        hits: list[SearchHit] = []
        step = max(k * 4, 20)
        top = _TopK(k, retention_lift(retention_weight, cfg) if hybrid and self.prune else None)
        for start in range(0, len(ranking.order), step):
            chunk = ranking.order[start:start + step]
            head = 2 * k if top.lift is not None else len(chunk)
            for ids in (chunk[:head], chunk[head:]):
                if not ids or top.out_of_reach(ranking.rank[ids[0]]):
                    break
                records = ([read[mid] for mid in ids] if read is not None
                           and all(mid in read for mid in ids)
                           else self.store.records.get_many(namespace, ids, memo=self._records))
                if not _score_in_order(ids, records, admit, scorer, top, hits):
                    break
            if len(hits) >= k:
                break
        # Equal fused ranks (common with RRF) go to the stronger text match.
        hits.sort(key=lambda h: (-h.score, -ranking.bm25.get(h.memory.id, 0.0),
                                 -h.similarity, h.memory.id))
        return hits

    def _texts_of(self, namespace: str, ids: Sequence[str]) -> list[str | None]:
        memories = self.store.records.get_many(namespace, ids, vectors=False)
        return [None if m is None else m.text for m in memories]

    def _only(self, namespace: str, ranked: list[tuple[str, float]],
              keep: Admit) -> list[tuple[str, float]]:
        """The entries of ``ranked`` whose memory ``keep`` accepts (order kept)."""
        ids = [mid for mid, _ in ranked]
        ok = {mid for mid, m in zip(ids, self.store.records.filter_fields_many(namespace, ids),
                                     strict=True) if keep(m)}
        return [(mid, score) for mid, score in ranked if mid in ok]

    def _matching_neighbours(self, namespace: str, state: NamespaceState, index: VectorIndex,
                             vec: np.ndarray, want: int, keep: Admit
                             ) -> list[tuple[str, float]]:
        """The ``want`` nearest memories that ``keep`` accepts (fewer only if fewer
        exist): over-fetch from the index, sized by the share of matches seen so far; when
        matches are too rare for that (the fetch would pass ``SCAN_SHARE`` of the index),
        rank exactly among the ids that match (one pass over the filter fields, kept in
        memory until the namespace changes: :class:`FilterFieldsCache`)."""
        fetch = want
        while True:
            (row,) = index.search(vec, min(fetch, len(index)))
            found = self._only(namespace, row, keep)
            if len(found) >= want or fetch >= len(index):
                return found[:want]
            if not found:
                break
            fetch = max(2 * fetch, int(fetch * want / len(found) * 1.25) + 1)
            if fetch > SCAN_SHARE * len(index):
                break
        ids = [f.id for f in self._fields.get(self.store, namespace, state) if keep(f)]
        return index.search_among(vec[0], ids, want)
