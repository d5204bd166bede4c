"""The pure consolidation core: memories in, next memories and audit events out.

No Redis, no Celery, no network. The distributed pass (``memcore.consolidate.passes``) runs the
same three phases with the model calls fanned out:

1. :func:`plan` partitions the live set into exact-duplicate groups (merged with no
   model call), centroid clusters above the merge threshold, and borderline pairs;
2. the :class:`~memcore.core.interfaces.Merger` writes one merged text per cluster and
   judges the borderline pairs (one call per batch of clusters);
3. :func:`reduce` applies merges, contradictions, expiry, support promotion,
   summarize-before-delete, the floor and the cap, returning one audit event per change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from memcore.core.compare import supersessions
from memcore.core.config import ConsolidationConfig
from memcore.core.interfaces import ClusterOutcome, ClusterRequest, Merger, Verdict
from memcore.core.models import (
    Actor,
    AuditAction,
    AuditEvent,
    Kind,
    Memory,
    Status,
    new_id,
    union_metadata,
)
from memcore.core.partition import (
    EXACT_PAIRS_BELOW,
    CellIndex,
    Pairs,
    centroid_clusters,
    similar_pairs,
)
from memcore.core.scoring import (
    DAY,
    HOUR,
    capped_strength,
    effective_confidence,
    half_life_days,
    reinforced_confidence,
)
from memcore.core.table import KINDS, NONE_TIME, STATUSES, MemoryTable, ids_array, to_micros
from memcore.core.text import content_hash, texts_conflict


@dataclass
class ClusterWork:
    """One unit of model work: a cluster to merge and/or borderline pairs to judge."""

    members: list[str]
    pairs: list[tuple[str, str]] = field(default_factory=list)

    def request(self, by_id: Mapping[str, Memory]) -> ClusterRequest:
        """The merger request, built from the members' ORIGINAL texts (no drift)."""
        texts: list[str] = []
        for mid in self.members:
            texts.extend(original_texts(by_id[mid]))
        pair_texts = [(by_id[a].text, by_id[b].text) for a, b in self.pairs]
        return ClusterRequest(texts=_unique(texts) if len(self.members) > 1 else [],
                              pair_texts=pair_texts)

    def ids(self) -> list[str]:
        """Every memory id this work reads."""
        return _unique([*self.members, *(m for p in self.pairs for m in p)])


@dataclass
class Plan:
    """What a pass will do before any model call."""

    exact_groups: list[list[str]]
    clusters: list[ClusterWork]
    index: CellIndex | None = field(default=None, repr=False, compare=False)
    """The cell index the pairs came from (kept for the next incremental pass)."""

    def ids(self) -> list[str]:
        """Every memory id the plan names."""
        return _unique([*(i for g in self.exact_groups for i in g),
                        *(i for w in self.clusters for i in w.ids())])


@dataclass
class ConsolidationResult:
    """The next memory set (same ids plus new summaries) and one event per change."""

    memories: list[Memory]
    events: list[AuditEvent]

    def live(self) -> list[Memory]:
        """Candidate and active memories."""
        return [m for m in self.memories if m.live]


@dataclass
class PassChanges:
    """What a pass over a :class:`MemoryTable` changed: the changed and new memories (in
    row order, new summaries last), one event per change, and the record version each
    changed memory had when it was read (effects up to it are already inside)."""

    changed: list[Memory]
    events: list[AuditEvent]
    read_versions: dict[str, int] = field(default_factory=dict)


Loader = Callable[[Sequence[str]], Sequence[Memory | None]]
"""Full records of some ids (None for one that vanished); the reducer changes them."""


def original_texts(memory: Memory) -> list[str]:
    """The texts of the original facts behind a memory (its own text if never merged)."""
    return list(memory.member_texts) if memory.member_texts else [memory.text]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _survivor_order(table: MemoryTable, rows: np.ndarray) -> np.ndarray:
    """``rows`` sorted strongest first, then oldest, then by id: the survivor of a merge
    keeps its id (stable references)."""
    if rows.size < 2:
        return rows
    ids = ids_array(table.ids[r] for r in rows.tolist())
    return rows[np.lexsort((ids, table.created_at[rows], -table.strength[rows]))]


def plan(memories: Sequence[Memory], config: ConsolidationConfig,
         changed: set[str] | None = None) -> Plan:
    """Partition the live set into exact-duplicate groups, clusters and borderline pairs.

    ``changed``: ids written since the last pass; when given, only those are searched
    against the rest (an incremental pass), so the cost follows what changed.
    """
    table = MemoryTable.from_memories(memories)
    mask = None
    if changed is not None:
        mask = np.fromiter((mid in changed for mid in table.ids), dtype=bool, count=len(table))
    return plan_table(table, config, changed=mask)


def plan_table(table: MemoryTable, config: ConsolidationConfig,
               changed: np.ndarray | None = None, *, index: CellIndex | None = None) -> Plan:
    """:func:`plan` over columns. ``changed``: mask of rows written since the last pass.

    Below 10^4 candidates the pairs come from an exact product; above (or when ``index``,
    the cell index of the previous pass, is given) from a cell index over every table
    row, returned in ``Plan.index`` so the next pass only adds the new rows."""
    rows = _survivor_order(table, np.flatnonzero(table.live() & ~table.pinned))
    by_hash: dict[str, list[int]] = {}
    for r in rows.tolist():
        by_hash.setdefault(table.hashes[r], []).append(r)
    groups_rows = [rs for rs in by_hash.values() if len(rs) > 1]
    exact_groups = [[table.ids[r] for r in rs] for rs in groups_rows]
    absorbed = np.zeros(len(table), dtype=bool)
    for rs in groups_rows:
        absorbed[rs[1:]] = True
    pool = rows[table.vectors.present[rows] & ~absorbed[rows]]
    if pool.size < 2:
        return Plan(exact_groups, [], index=index)
    weights = np.minimum(table.strength, config.strength_cap).astype(np.float32)
    if index is None and pool.size < EXACT_PAIRS_BELOW:
        vectors, space = table.vectors.take(pool), pool  # the matrix's rows are pool rows
        query_rows = None if changed is None else np.flatnonzero(changed[pool]).astype(np.int64)
        i_idx, j_idx, sims = similar_pairs(vectors, config.borderline_threshold,
                                           method="exact", query_rows=query_rows)
    else:  # the matrix's rows are table rows (no second copy of a million vectors)
        index, vectors, (i_idx, j_idx, sims) = _cell_pairs(table, pool, config, changed, index)
        space = np.arange(len(table))
    # Memories of two scopes are never merged nor judged against each other.
    i_idx, j_idx, sims = same_scope([table.scopes[r] for r in pool.tolist()],
                                    (i_idx, j_idx, sims))
    ids = [table.ids[r] for r in pool.tolist()]
    # Negations and changed numbers sit close in embedding space: never auto-merge them.
    strong = sims >= config.merge_threshold
    for n in np.flatnonzero(strong).tolist():
        a, b = int(pool[i_idx[n]]), int(pool[j_idx[n]])
        if texts_conflict(table.texts[a], table.texts[b]):
            strong[n] = False
    rank = np.empty(len(table), dtype=np.int64)  # table row -> matrix row
    rank[space] = np.arange(space.size)
    at = np.full(len(table), -1, dtype=np.int64)  # table row -> pool position
    at[pool] = np.arange(pool.size)
    pairs = (rank[pool[i_idx[strong]]], rank[pool[j_idx[strong]]], sims[strong])
    groups = [[int(at[space[r]]) for r in g] for g in
              centroid_clusters(vectors, weights[space], pairs, config.merge_threshold)]
    del vectors
    cluster_of = {idx: g for g, members in enumerate(groups) for idx in members}
    works: dict[int, ClusterWork] = {}
    for g, members in enumerate(groups):
        if len(members) > 1:
            works[g] = ClusterWork([ids[i] for i in sorted(members)])
    is_changed = (np.ones(pool.size, dtype=bool) if changed is None
                  else np.asarray(changed, dtype=bool)[pool])
    # Every similar pair not inside one cluster (borderline, or strong but ejected by the
    # centroid re-check) is judged by the model rather than auto-merged; each changed
    # memory sends only its most similar few, and its pairs travel as one unit of work.
    singles: dict[int, ClusterWork] = {}
    budget = np.zeros(pool.size, dtype=np.int64)
    limit = config.max_pairs_per_memory
    seen_pairs: set[tuple[int, int]] = set()
    order = np.lexsort((j_idx, i_idx, -sims))
    for a, b in zip(i_idx[order].tolist(), j_idx[order].tolist(), strict=True):
        a, b = min(a, b), max(a, b)
        if (a, b) in seen_pairs or cluster_of.get(a, -1 - a) == cluster_of.get(b, -1 - b):
            continue
        owners = [r for r in (a, b) if is_changed[r] and budget[r] < limit]
        if not owners:
            continue  # both ends have their closest partners judged already
        seen_pairs.add((a, b))
        for r in (a, b):
            budget[r] += bool(is_changed[r])
        pair = (ids[a], ids[b])
        home = works.get(cluster_of.get(a, -1))
        if home is None:
            home = works.get(cluster_of.get(b, -1))
        if home is None:
            home = singles.setdefault(owners[0], ClusterWork([]))
        home.pairs.append(pair)
    clusters = list(works.values()) + list(singles.values())
    return Plan(exact_groups, clusters, index=index)


def _cell_pairs(table: MemoryTable, pool: np.ndarray, config: ConsolidationConfig,
                changed: np.ndarray | None, index: CellIndex | None
                ) -> tuple[CellIndex, np.ndarray, Pairs]:
    """Similar pairs of ``pool`` (as pool positions) through a cell index over every
    table row. The index lists table rows, whose order never changes between passes
    (new memories are appended), so the next pass can reuse it and add only new rows."""
    x = table.vectors.take_all()
    n = len(table)
    if index is None or index.ntotal > n or index.centroids.shape[1] != x.shape[1]:
        index = CellIndex.train(x[pool])
        index.store_vectors = False  # the matrix is ours; a second copy would double memory
        index.add(x)
    elif index.ntotal < n:
        index.add(x[index.ntotal:])
    query = None
    if changed is not None:
        query = np.flatnonzero(changed & np.isin(np.arange(n), pool)).astype(np.int64)
    i, j, s = index.pairs(x, config.borderline_threshold, query_rows=query)
    pos = np.full(n, -1, dtype=np.int64)
    pos[pool] = np.arange(pool.size)
    keep = (pos[i] >= 0) & (pos[j] >= 0)
    a, b = pos[i[keep]], pos[j[keep]]
    lo, hi, s = np.minimum(a, b), np.maximum(a, b), s[keep]
    order = np.lexsort((hi, lo))
    return index, x, (lo[order], hi[order], s[order])


def same_scope(scopes: Sequence[str], pairs: Pairs) -> Pairs:
    """Only the pairs whose two rows (``scopes[i]`` is row i's ``Memory.scope``) share
    user, agent and run: memories of two scopes are never merged, summarized together
    or judged against each other."""
    i_idx, j_idx, sims = pairs
    if len(set(scopes)) <= 1:
        return pairs
    keep = np.fromiter((scopes[i] == scopes[j] for i, j in zip(i_idx.tolist(), j_idx.tolist(),
                                                                strict=True)),
                       dtype=bool, count=len(i_idx))
    return i_idx[keep], j_idx[keep], sims[keep]


def merge_metadata(members: Sequence[Memory]) -> dict[str, Any]:
    """The metadata of a merged memory, ``members`` strongest first (the survivor first):
    see :func:`~memcore.core.models.union_metadata`."""
    return union_metadata([m.metadata or {} for m in members])


def _survivor_key(m: Memory) -> tuple[float, datetime, str]:
    # Strongest first, then oldest, then id: the survivor keeps its id (stable references).
    return (-m.strength, m.created_at, m.id)


def resolve(plan_: Plan, by_id: Mapping[str, Memory], merger: Merger,
            batch_size: int = 32) -> list[ClusterOutcome | None]:
    """Run the merger over every cluster, ``batch_size`` clusters per call.

    A failing batch leaves its clusters unmerged (``None``), never the whole pass.
    """
    outcomes: list[ClusterOutcome | None] = []
    for start in range(0, len(plan_.clusters), batch_size):
        batch = plan_.clusters[start:start + batch_size]
        try:
            answers = merger.merge([work.request(by_id) for work in batch])
        except Exception:  # a model failure must not fail the pass
            answers = []
        if len(answers) != len(batch):
            outcomes.extend([None] * len(batch))
        else:
            outcomes.extend(answers)
    return outcomes


class _Records(Mapping[str, Memory]):
    """Working copies of a table's memories, materialized from the loader on first use
    (a pass at 10^6 materializes only what it changes)."""

    def __init__(self, table: MemoryTable, load: Loader) -> None:
        self.table = table
        self.load = load
        self.cache: dict[str, Memory] = {}
        self.read_versions: dict[str, int] = {}
        self.gone: set[str] = set()

    def fetch(self, ids: Iterable[str]) -> None:
        """Materialize ``ids`` (batched) that are not materialized yet."""
        todo = [i for i in _unique(ids) if i not in self.cache and i not in self.gone
                and self.table.row(i) is not None]
        for start in range(0, len(todo), 1000):
            chunk = todo[start:start + 1000]
            for mid, memory in zip(chunk, self.load(chunk), strict=True):
                if memory is None:  # erased since the table was read
                    self.gone.add(mid)
                else:
                    self.cache[mid] = memory
                    self.read_versions[mid] = memory.version

    def __getitem__(self, memory_id: str) -> Memory:
        if memory_id not in self.cache:
            self.fetch([memory_id])
        return self.cache[memory_id]

    def __contains__(self, memory_id: object) -> bool:
        if not isinstance(memory_id, str):
            return False
        if memory_id not in self.cache:
            self.fetch([memory_id])
        return memory_id in self.cache

    def __iter__(self) -> Iterator[str]:
        return iter(self.table.ids)

    def __len__(self) -> int:
        return len(self.table)


class _Reducer:
    """Applies one round of changes to working copies, recording an event per change."""

    def __init__(self, table: MemoryTable, load: Loader, now: datetime,
                 config: ConsolidationConfig, actor: Actor) -> None:
        self.table = table
        self.by_id = _Records(table, load)
        self.now = now
        self.config = config
        self.actor = actor
        self.events: list[AuditEvent] = []
        self.namespace = table.namespace
        self.dirty: dict[str, None] = {}  # changed ids, in order of first change
        self.unsynced: set[str] = set()
        self.added: list[Memory] = []

    def event(self, action: AuditAction, before: list[str], after: list[str], reason: str,
              decision: str | None = None, text: str | None = None) -> None:
        self.events.append(AuditEvent(action=action, namespace=self.namespace, before=before,
                                      after=after, reason=reason, actor=self.actor,
                                      decision=decision, text=text, at=self.now))

    def touched(self, m: Memory) -> None:
        m.updated_at = self.now
        self.dirty[m.id] = None
        self.unsynced.add(m.id)

    def sync(self) -> None:
        """Write the changed memories back into the table's columns."""
        for mid in self.unsynced:
            row = self.table.row(mid)
            if row is not None:
                self.table.set_row(row, self.by_id.cache[mid])
        self.unsynced.clear()

    def record(self, row: int) -> Memory | None:
        """The working copy of ``row`` (None if it vanished)."""
        mid = self.table.ids[row]
        return self.by_id.get(mid)

    def merge(self, ids: Sequence[str], text: str | None, reason: str) -> str | None:
        members = [self.by_id[i] for i in ids if i in self.by_id and self.by_id[i].live]
        if len(members) < 2:
            return None
        members.sort(key=_survivor_key)
        head, rest = members[0], members[1:]
        cfg = self.config
        if all(m.vector is not None for m in members):
            weights = np.array([min(m.strength, cfg.strength_cap) for m in members], np.float32)
            centroid = (np.vstack([m.array for m in members]) * weights[:, None]).sum(axis=0)
            norm = float(np.linalg.norm(centroid))
            if norm > 1e-9:
                head.vector = [float(x) for x in centroid / norm]
        sources = _unique(s for m in members for s in m.sources)
        best = max(members, key=lambda m: (m.confidence, len(m.sources)))
        extra = len(sources) - len(set(best.sources))
        head.member_texts = _unique(t for m in members for t in original_texts(m))
        head.metadata = merge_metadata(members)
        # Without a written merge (exact duplicates, a pair judged the same), keep the
        # most informative of the texts rather than whichever record survives.
        head.text = text or max((m.text for m in members), key=lambda t: (len(t.split()), t))
        head.content_hash = content_hash(head.text, head.scope)
        head.importance = max(m.importance for m in members)
        head.last_used = max(m.last_used for m in members)
        head.last_supported = max((m.last_supported or m.last_used) for m in members)
        head.strength = capped_strength(sum(m.strength for m in members), cfg.strength_cap)
        head.sources = sources
        head.support = len(sources)
        head.confidence = reinforced_confidence(best.confidence, extra, cfg.support_step)
        head.explicit = any(m.explicit for m in members)
        head.recall_count = sum(m.recall_count for m in members)
        head.derived_level = max(m.derived_level for m in members)
        froms = [m.valid_from for m in members if m.valid_from]
        head.valid_from = min(froms) if froms else None
        expiries = [m.expires_at for m in members]
        head.expires_at = max(e for e in expiries if e) if all(expiries) else None
        self.touched(head)
        for m in rest:
            m.status = Status.TOMBSTONED
            m.superseded_by = head.id
            self.touched(m)
        self.event(AuditAction.MERGE, [m.id for m in members], [head.id], reason, text=head.text)
        return head.id

    def contradict(self, a_id: str, b_id: str, reason: str) -> None:
        if a_id not in self.by_id or b_id not in self.by_id:
            return
        a, b = self.by_id[a_id], self.by_id[b_id]
        if not (a.live and b.live):
            return
        newer, older = (a, b) if _event_time(a) >= _event_time(b) else (b, a)
        self.supersede(older, newer, reason)

    def supersede(self, older: Memory, newer: Memory, reason: str) -> None:
        """Close ``older``'s validity where ``newer`` starts; ``newer`` replaces it."""
        older.status = Status.SUPERSEDED
        older.valid_until = max(_event_time(newer), older.valid_from or _event_time(newer))
        older.superseded_by = newer.id
        self.touched(older)
        self.event(AuditAction.SUPERSEDE, [older.id], [newer.id], reason,
                   decision=Verdict.CONTRADICTS.value)

    def add(self, memories: Sequence[Memory]) -> None:
        """New memories (summaries): rows at the end of the table."""
        for memory in memories:
            self.by_id.cache[memory.id] = memory
            self.dirty[memory.id] = None
        self.added.extend(memories)
        self.table.append(memories)

    def changes(self) -> PassChanges:
        """The changed and new memories in row order, with the events."""
        rows = sorted((self.table.row(mid) or 0, mid) for mid in self.dirty)
        return PassChanges([self.by_id.cache[mid] for _, mid in rows], list(self.events),
                           {mid: self.by_id.read_versions[mid] for mid in self.dirty
                            if mid in self.by_id.read_versions})


def _event_time(m: Memory) -> datetime:
    return m.valid_from or m.created_at


def _copies(memories: Sequence[Memory]) -> Loader:
    by_id = {m.id: m for m in memories}

    def load(ids: Sequence[str]) -> list[Memory | None]:
        return [by_id[i].model_copy(deep=True) if i in by_id else None for i in ids]

    return load


def _hours_since(table: MemoryTable, rows: np.ndarray, now_us: int,
                 column: np.ndarray) -> np.ndarray:
    # Same float steps as timedelta.total_seconds() / 3600, so scores equal the scalar ones.
    return ((now_us - column[rows]).astype(np.float64) / 1e6) / HOUR


def retention_scores(table: MemoryTable, rows: np.ndarray, now: datetime,
                     config: ConsolidationConfig) -> np.ndarray:
    """:func:`~memcore.core.scoring.memory_score` of ``rows``, bit for bit."""
    now_us = to_micros(now)
    hours = np.maximum(0.0, _hours_since(table, rows, now_us, table.last_used))
    strength = np.maximum(np.minimum(table.strength[rows], config.strength_cap), 1.0)
    exponent = -hours / (strength * config.tau_hours)
    decay = np.fromiter((math.exp(x) for x in exponent.tolist()), dtype=np.float64,
                        count=rows.size)
    scores = table.importance[rows] * decay
    pinned = table.pinned[rows]
    if pinned.any():
        scores[pinned] = np.maximum(table.importance[rows][pinned], config.floor)
    return scores


def confidences(table: MemoryTable, rows: np.ndarray, now: datetime,
                config: ConsolidationConfig) -> np.ndarray:
    """:func:`~memcore.core.scoring.effective_confidence` of ``rows``, bit for bit."""
    now_us = to_micros(now)
    days = ((now_us - table.since_micros()[rows]).astype(np.float64) / 1e6) / DAY
    half = np.array([half_life_days(k, config) for k in KINDS], dtype=np.float64)
    exponent = np.maximum(0.0, days) / half[table.kind[rows]]
    factor = np.fromiter((0.5 ** x for x in exponent.tolist()), dtype=np.float64,
                         count=rows.size)
    conf = table.confidence[rows] * factor
    pinned = table.pinned[rows]
    conf[pinned] = table.confidence[rows][pinned]
    return conf


def _weak_rows(red: _Reducer) -> list[tuple[int, str]]:
    """Live rows below the floor (retention or confidence), in row order, with why.
    Pinned memories and relation edges never decay here (edges lose weight instead)."""
    t, cfg = red.table, red.config
    rows = np.flatnonzero(t.live() & ~t.pinned & ~t.relation
                          & (t.kind != KINDS.index(Kind.RELATION)))
    scores = retention_scores(t, rows, red.now, cfg)
    low = scores < cfg.floor
    conf = np.full(rows.size, np.inf)
    rest = np.flatnonzero(~low)
    conf[rest] = confidences(t, rows[rest], red.now, cfg)
    out: list[tuple[int, str]] = []
    for pos in np.flatnonzero(low | (conf < cfg.min_confidence)).tolist():
        if low[pos]:
            out.append((int(rows[pos]), f"retention {scores[pos]:.4f} below floor {cfg.floor}"))
        else:
            out.append((int(rows[pos]),
                        f"confidence {conf[pos]:.3f} below {cfg.min_confidence}"))
    return out


def _chunks(rows: list[int], most: int, least: int) -> list[list[int]]:
    """``rows`` cut into near-equal chunks of at most ``most``; none if fewer than ``least``."""
    n = -(-len(rows) // most)
    base, extra = divmod(len(rows), n)
    out, start = [], 0
    for i in range(n):
        size = base + (i < extra)
        out.append(rows[start:start + size])
        start += size
    return [c for c in out if len(c) >= least]


def _idle_rows(red: _Reducer, doomed: list[tuple[int, str]]) -> list[int]:
    """Unsupported, low-importance candidates unused for ``summary_idle_days`` (a heap
    of similar low-value facts that accumulated, docs/design.md); they join the summaries'
    pool. Important or supported facts keep accumulating support instead."""
    t, cfg = red.table, red.config
    if cfg.summary_idle_days <= 0:
        return []
    cutoff = to_micros(red.now - timedelta(days=cfg.summary_idle_days))
    rows = (t.live() & ~t.pinned & ~t.relation & (t.derived_level == 0)
            & (t.status == STATUSES.index(Status.CANDIDATE)) & (t.last_used < cutoff)
            & (t.importance <= cfg.summary_idle_max_importance + 1e-9))
    rows[[r for r, _ in doomed]] = False
    return np.flatnonzero(rows).tolist()


def _summarize_doomed(red: _Reducer, doomed: list[int],
                      summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None) -> None:
    """Summarize before forget: collapse groups of similar doomed episodic memories."""
    cfg, t = red.config, red.table
    pool = np.array([r for r in doomed if t.derived_level[r] == 0 and t.vectors.present[r]],
                    dtype=np.int64)
    if summarize is None or pool.size < cfg.summary_min_group:
        return
    vectors = t.vectors.take(pool)
    weights = np.ones(pool.size, dtype=np.float32)
    pairs = same_scope([t.scopes[r] for r in pool.tolist()],
                       similar_pairs(vectors, cfg.summary_threshold, method="exact"))
    groups = [chunk for g in centroid_clusters(vectors, weights, pairs, cfg.summary_threshold)
              for chunk in _chunks(sorted(g), cfg.summary_max_group, cfg.summary_min_group)]
    if not groups:
        return
    red.by_id.fetch(t.ids[int(pool[i])] for g in groups for i in g)
    members = [[m for m in (red.record(int(pool[i])) for i in sorted(g)) if m is not None]
               for g in groups]
    try:
        texts = summarize([_unique(t for m in ms for t in original_texts(m)) for ms in members])
    except Exception:  # no summary is better than a failed pass
        return
    summaries: list[Memory] = []
    for ms, text in zip(members, texts, strict=False):
        # A summary carries the pooled value of what it replaces; one that would itself
        # fall below the floor is not worth keeping.
        importance = min(1.0, sum(m.importance for m in ms))
        if not ms or not text or importance < cfg.floor:
            continue
        centroid = np.vstack([m.array for m in ms]).sum(axis=0)
        sources = _unique(s for m in ms for s in m.sources)
        summary = Memory(
            id=new_id(), namespace=red.namespace, text=text,
            vector=[float(x) for x in centroid / max(float(np.linalg.norm(centroid)), 1e-9)],
            importance=importance, last_used=red.now, last_supported=red.now,
            strength=capped_strength(sum(m.strength for m in ms), cfg.strength_cap),
            confidence=max(cfg.new_confidence, max(m.confidence for m in ms)),
            kind=Kind.SUMMARY, sources=sources, support=len(sources), status=Status.ACTIVE,
            derived_level=1, created_at=red.now, updated_at=red.now,
            member_texts=_unique(t for m in ms for t in original_texts(m)),
            metadata=merge_metadata(sorted(ms, key=_survivor_key)),
            user_id=ms[0].user_id, agent_id=ms[0].agent_id, run_id=ms[0].run_id,
        )
        summaries.append(summary)
        for m in ms:
            m.status = Status.TOMBSTONED
            m.superseded_by = summary.id
            red.touched(m)
        red.event(AuditAction.SUMMARIZE, [m.id for m in ms], [summary.id],
                  f"{len(ms)} fading memories summarized before forgetting", text=text)
    red.add(summaries)


def reduce(memories: Sequence[Memory], plan_: Plan, outcomes: Sequence[ClusterOutcome | None],
           now: datetime, config: ConsolidationConfig, *,
           summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None = None,
           actor: Actor = Actor.CONSOLIDATION) -> ConsolidationResult:
    """Apply a planned round and the merger's outcomes, then expiry, support, floor, cap."""
    changes = reduce_table(MemoryTable.from_memories(memories), _copies(memories), plan_,
                           outcomes, now, config, summarize=summarize, actor=actor)
    return ConsolidationResult(_overlay(memories, changes.changed), changes.events)


def reduce_table(table: MemoryTable, load: Loader, plan_: Plan,
                 outcomes: Sequence[ClusterOutcome | None], now: datetime,
                 config: ConsolidationConfig, *,
                 summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None = None,
                 actor: Actor = Actor.CONSOLIDATION) -> PassChanges:
    """:func:`reduce` over columns: only the memories it changes are materialized (with
    ``load``) and returned. ``table`` is updated in place."""
    red = _Reducer(table, load, now, config, actor)
    red.by_id.fetch(plan_.ids())
    _apply_merges(red, plan_, outcomes)
    _finish(red, summarize)
    return red.changes()


def _overlay(memories: Sequence[Memory], changed: Sequence[Memory]) -> list[Memory]:
    """``memories`` with the changed ones replaced and new ones appended."""
    by_id = {m.id: m for m in changed}
    out = [by_id.pop(m.id, m) for m in memories]
    return out + list(by_id.values())


def _apply_merges(red: _Reducer, plan_: Plan, outcomes: Sequence[ClusterOutcome | None]) -> int:
    changes = 0
    for ids in plan_.exact_groups:
        if red.merge(ids, None, "exact duplicate (same normalized text)"):
            changes += 1
    for work, outcome in zip(plan_.clusters, outcomes, strict=True):
        if outcome is None:
            continue  # the model call failed: leave the cluster for the next pass
        if len(work.members) > 1 and outcome.merged_text and red.merge(
                work.members, outcome.merged_text, outcome.reason or "near-duplicates"):
            changes += 1
        for (a, b), verdict in zip(work.pairs, outcome.verdicts, strict=False):
            a, b = _follow(red, a), _follow(red, b)
            if a == b:
                continue
            if verdict is Verdict.SAME:
                if red.merge([a, b], None, "judged the same fact"):
                    changes += 1
            elif verdict is Verdict.CONTRADICTS:
                red.contradict(a, b, outcome.reason or "contradiction: newer fact kept")
                changes += 1
    red.sync()
    return changes


def _follow(red: _Reducer, mid: str) -> str:
    """Follow merge pointers to the surviving memory."""
    seen = set()
    while mid in red.by_id and red.by_id[mid].status is Status.TOMBSTONED and mid not in seen:
        seen.add(mid)
        nxt = red.by_id[mid].superseded_by
        if nxt is None:
            break
        mid = nxt
    return mid


def _retire_changed(red: _Reducer) -> None:
    """Supersede facts a newer fact changed or ended, whatever their vector similarity.

    The write path only compares a new fact with its nearest neighbours; "moved to
    Porto" and "lives in Lisbon" are rarely near each other, so the pass checks the
    live facts against the newer ones by the text rules of :func:`supersessions`
    (slots only on rows flagged as filling one; change phrases behind a keyword filter).
    """
    t = red.table
    rows = np.flatnonzero(t.live() & ~t.pinned & (t.derived_level == 0))
    if rows.size < 2:
        return
    row_list = rows.tolist()
    # A fact re-stated later is current as of its last support ("back in Barcelona").
    asserted = np.maximum(t.created_at[rows], t.last_supported[rows])
    found = supersessions([t.ids[r] for r in row_list], [t.texts[r] for r in row_list],
                          asserted.tolist(), t.relation[rows].tolist())
    red.by_id.fetch(mid for pair in found for mid in pair[:2])
    for old_id, newer_id, reason in found:
        if old_id not in red.by_id or newer_id not in red.by_id:
            continue
        old, new = red.by_id[old_id], red.by_id[newer_id]
        if old.live and new.live:
            red.supersede(old, new, reason)
    red.sync()


def _finish(red: _Reducer, summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None,
            ) -> None:
    """Expiry, support promotion, summarize-before-forget, floor and cap, vectorized over
    the table; only the rows that change are materialized."""
    t, cfg, now = red.table, red.config, red.now
    red.sync()
    _retire_changed(red)
    now_us = to_micros(now)
    expired = np.flatnonzero(t.live() & ~t.pinned & (t.expires_at != NONE_TIME)
                             & (t.expires_at <= now_us))
    red.by_id.fetch(t.ids[r] for r in expired.tolist())
    for r in expired.tolist():
        m = red.record(r)
        if m is None or m.expires_at is None:
            continue
        m.status = Status.SUPERSEDED
        m.valid_until = m.expires_at
        red.touched(m)
        red.event(AuditAction.EXPIRE, [m.id], [], f"expired at {m.expires_at.isoformat()}")
    red.sync()
    candidate = STATUSES.index(Status.CANDIDATE)
    supported = t.explicit | t.pinned | (t.n_sources >= cfg.min_support)
    promoted = np.flatnonzero((t.status == candidate) & supported)
    red.by_id.fetch(t.ids[r] for r in promoted.tolist())
    for r in promoted.tolist():
        m = red.record(r)
        if m is None:
            continue
        m.status = Status.ACTIVE
        red.touched(m)
        why = "stated explicitly" if m.explicit else f"{len(set(m.sources))} episodes"
        red.event(AuditAction.PROMOTE, [m.id], [m.id], f"support: {why}")
    red.sync()
    doomed = _weak_rows(red)
    _summarize_doomed(red, [r for r, _ in doomed] + _idle_rows(red, doomed), summarize)
    red.by_id.fetch(t.ids[r] for r, _ in doomed)
    for r, why in doomed:
        m = red.record(r)
        if m is not None and m.live:
            m.status = Status.TOMBSTONED
            red.touched(m)
            red.event(AuditAction.TOMBSTONE, [m.id], [], why)
    red.sync()
    live = t.live()
    room = max(0, cfg.cap - int((live & t.pinned).sum()))
    ranked = np.flatnonzero(live & ~t.pinned)
    if ranked.size <= room:
        return
    scores = retention_scores(t, ranked, now, cfg)
    order = np.lexsort((ids_array(t.ids[r] for r in ranked.tolist()), t.created_at[ranked],
                        -scores))
    over = order[room:]
    red.by_id.fetch(t.ids[int(ranked[p])] for p in over.tolist())
    for p in over.tolist():
        m = red.record(int(ranked[p]))
        if m is None:
            continue
        m.status = Status.TOMBSTONED
        red.touched(m)
        red.event(AuditAction.TOMBSTONE, [m.id], [],
                  f"over the cap of {cfg.cap} (score {scores[p]:.4f})")
    red.sync()


def consolidate(memories: Sequence[Memory], now: datetime, config: ConsolidationConfig,
                merger: Merger, *, max_rounds: int = 8,
                actor: Actor = Actor.CONSOLIDATION) -> ConsolidationResult:
    """One complete pass in process: merge rounds until stable, then decay, floor and cap.

    Merging moves centroids, which can bring two survivors above the threshold; the
    rounds repeat (bounded) until nothing merges, so consolidating the result again
    at the same ``now`` changes nothing.
    """
    table = MemoryTable.from_memories(memories)
    red = _Reducer(table, _copies(memories), now, config, actor)
    changed: np.ndarray | None = None
    judged: set[tuple[str, str]] = set()
    for _ in range(max_rounds):
        p = plan_table(table, config, changed=changed)
        red.by_id.fetch(p.ids())
        p = _unjudged(p, red.by_id, judged)
        outcomes = resolve(p, red.by_id, merger)
        start = len(red.events)
        if not _apply_merges(red, p, outcomes):
            break
        # Only what this round merged moved: the next round searches just those, so no
        # pair is sent to the model twice.
        moved = {mid for e in red.events[start:] for mid in e.after}
        changed = np.fromiter((mid in moved for mid in table.ids), dtype=bool,
                              count=len(table))
    _finish(red, merger.summarize)
    changes = red.changes()
    return ConsolidationResult(_overlay(memories, changes.changed), changes.events)


def _unjudged(plan_: Plan, by_id: Mapping[str, Memory], judged: set[tuple[str, str]]) -> Plan:
    """``plan_`` without the pairs whose two texts an earlier round already judged (a
    verdict depends on the texts only); records the remaining pairs in ``judged``."""
    works = []
    for work in plan_.clusters:
        pairs = []
        for a, b in work.pairs:
            key = (by_id[a].text, by_id[b].text)
            if key not in judged and key[::-1] not in judged:
                judged.add(key)
                pairs.append((a, b))
        if len(work.members) > 1 or pairs:
            works.append(ClusterWork(work.members, pairs))
    return Plan(plan_.exact_groups, works, index=plan_.index)


def profile(memories: Iterable[Memory], now: datetime, config: ConsolidationConfig) -> list[Memory]:
    """The profile: active facts ranked by confidence, at most ``profile_size``."""
    # Summaries digest many memories; they are found by search, not listed as facts.
    active = [m for m in memories if m.status is Status.ACTIVE and m.kind is not Kind.SUMMARY
              and effective_confidence(m, now, config) >= config.min_confidence]
    active.sort(key=lambda m: (-effective_confidence(m, now, config), m.created_at, m.id))
    return active[: config.profile_size]
