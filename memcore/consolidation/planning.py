"""Planning a pass: exact-duplicate groups, centroid clusters and borderline pairs
over the live set (no model calls)."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from memcore.core.config import ConsolidationConfig
from memcore.core.interfaces import ClusterRequest
from memcore.core.models import Memory
from memcore.core.text_rules import PLAIN, TextRules
from memcore.index.partition import (
    EXACT_PAIRS_BELOW,
    CellIndex,
    Pairs,
    centroid_clusters,
    similar_pairs,
)
from memcore.index.table import MemoryTable, ids_array


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
        return ClusterRequest(texts=unique_in_order(texts) if len(self.members) > 1 else [],
                              pair_texts=pair_texts)

    def ids(self) -> list[str]:
        """Every memory id this work reads."""
        return unique_in_order([*self.members, *(m for p in self.pairs for m in p)])


@dataclass
class Plan:
    """What a pass will do before any model call."""

    exact_groups: list[list[str]]
    clusters: list[ClusterWork]
    index: CellIndex | None = field(default=None, repr=False, compare=False)
    """The cell index the pairs came from (kept for the next incremental pass)."""

    def ids(self) -> list[str]:
        """Every memory id the plan names."""
        return unique_in_order([*(i for g in self.exact_groups for i in g),
                        *(i for w in self.clusters for i in w.ids())])


Loader = Callable[[Sequence[str]], Sequence[Memory | None]]
"""Full records of some ids (None for one that vanished); the reducer changes them."""


def original_texts(memory: Memory) -> list[str]:
    """The texts of the original facts behind a memory (its own text if never merged)."""
    return list(memory.member_texts) if memory.member_texts else [memory.text]


def unique_in_order(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _survivor_order(table: MemoryTable, rows: np.ndarray) -> np.ndarray:
    """``rows`` sorted strongest first, then oldest, then by id: the survivor of a merge
    keeps its id (stable references)."""
    if rows.size < 2:
        return rows
    ids = ids_array(table.ids[r] for r in rows.tolist())
    return rows[np.lexsort((ids, table.created_at[rows], -table.strength[rows]))]


def plan(memories: Sequence[Memory], config: ConsolidationConfig,
         changed: set[str] | None = None, *, rules: TextRules = PLAIN) -> Plan:
    """Partition the live set into exact-duplicate groups, clusters and borderline pairs.

    ``changed``: ids written since the last pass; when given, only those are searched
    against the rest (an incremental pass), so the cost follows what changed.
    ``rules``: the language's text rules (two near-identical texts they see conflict
    are never merged without a judgment).
    """
    table = MemoryTable.from_memories(memories)
    mask = None
    if changed is not None:
        mask = np.fromiter((mid in changed for mid in table.ids), dtype=bool, count=len(table))
    return plan_table(table, config, changed=mask, rules=rules)


def plan_table(table: MemoryTable, config: ConsolidationConfig,
               changed: np.ndarray | None = None, *, index: CellIndex | None = None,
               rules: TextRules = PLAIN) -> Plan:
    """:func:`plan` over columns. ``changed``: mask of rows written since the last pass.

    Below 10^4 candidates the pairs come from an exact product; above (or when ``index``,
    the cell index of the previous pass, is given) from a cell index over every table
    row, returned in ``Plan.index`` so the next pass only adds the new rows. Then only
    the rows in a pair are put in survivor order and read as vectors, so an incremental
    pass costs what changed (plus a few column operations over the table)."""
    free = table.live() & ~table.pinned
    exact_groups, absorbed = _exact_groups(table, free)
    in_pool = free & table.vectors.present & ~absorbed
    size = int(in_pool.sum())
    if size < 2:
        return Plan(exact_groups, [], index=index)
    weights = np.minimum(table.strength, config.strength_cap).astype(np.float32)
    if index is None and size < EXACT_PAIRS_BELOW:
        pool = _survivor_order(table, np.flatnonzero(in_pool))
        vectors, space = table.vectors.take(pool), pool  # the matrix's rows are pool rows
        query_rows = None if changed is None else np.flatnonzero(changed[pool]).astype(np.int64)
        i_idx, j_idx, sims = similar_pairs(vectors, config.borderline_threshold,
                                           method="exact", query_rows=query_rows)
    else:  # pairs over table rows; the pool is then only the rows in a pair
        index, (rows_i, rows_j, sims) = _cell_pairs(table, in_pool, config, changed, index)
        pool = _survivor_order(table, np.unique(np.concatenate([rows_i, rows_j])))
        pos = np.full(len(table), -1, dtype=np.int64)
        pos[pool] = np.arange(pool.size)
        a, b = pos[rows_i], pos[rows_j]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        order = np.lexsort((hi, lo))
        i_idx, j_idx, sims = lo[order], hi[order], sims[order]
        space = np.sort(pool)  # table order, as when the matrix held every table row
        vectors = table.vectors.rows()[space]
    # Memories of two scopes are never merged nor judged against each other.
    i_idx, j_idx, sims = same_scope([table.scopes[r] for r in pool.tolist()],
                                    (i_idx, j_idx, sims))
    strong = _strong_pairs(table, pool, (i_idx, j_idx, sims), config.merge_threshold, rules)
    rank = np.empty(len(table), dtype=np.int64)  # table row -> matrix row
    rank[space] = np.arange(space.size)
    at = np.full(len(table), -1, dtype=np.int64)  # table row -> pool position
    at[pool] = np.arange(pool.size)
    pairs = (rank[pool[i_idx[strong]]], rank[pool[j_idx[strong]]], sims[strong])
    groups = [[int(at[space[r]]) for r in g] for g in
              centroid_clusters(vectors, weights[space], pairs, config.merge_threshold)]
    del vectors
    is_changed = (np.ones(pool.size, dtype=bool) if changed is None
                  else np.asarray(changed, dtype=bool)[pool])
    ids = [table.ids[r] for r in pool.tolist()]
    clusters = _cluster_works(ids, groups, (i_idx, j_idx, sims), is_changed,
                              config.max_pairs_per_memory)
    return Plan(exact_groups, clusters, index=index)


def _exact_groups(table: MemoryTable, free: np.ndarray
                  ) -> tuple[list[list[str]], np.ndarray]:
    """Groups of ids of ``free`` rows (live, unpinned) with the same content hash, each in
    survivor order (survivor first) and ordered by their survivors, and a mask of the
    table rows they absorb (every member but the survivor). Only rows whose hash occurs
    twice are ordered (a C-level count over every hash finds them)."""
    absorbed = np.zeros(len(table), dtype=bool)
    rows = np.flatnonzero(free)
    hashes = operator.itemgetter(*rows.tolist())(table.hashes) if rows.size > 1 else ()
    if len(set(hashes)) == len(hashes):
        return [], absorbed  # the usual case, found by one C-level set
    twice = {h for h, count in Counter(hashes).items() if count > 1}
    if not twice:
        return [], absorbed
    shared = np.fromiter((h in twice for h in hashes), dtype=bool, count=rows.size)
    by_hash: dict[str, list[int]] = {}
    for r in _survivor_order(table, rows[shared]).tolist():
        by_hash.setdefault(table.hashes[r], []).append(r)
    groups_rows = list(by_hash.values())
    for rs in groups_rows:
        absorbed[rs[1:]] = True
    return [[table.ids[r] for r in rs] for rs in groups_rows], absorbed


def _strong_pairs(table: MemoryTable, pool: np.ndarray, pairs: Pairs,
                  merge_threshold: float, rules: TextRules) -> np.ndarray:
    """Mask of the pairs similar enough to merge without a model call; negations and
    changed numbers sit close in embedding space, so conflicting texts never auto-merge."""
    i_idx, j_idx, sims = pairs
    strong = sims >= merge_threshold
    for n in np.flatnonzero(strong).tolist():
        a, b = int(pool[i_idx[n]]), int(pool[j_idx[n]])
        if rules.conflict(table.texts[a], table.texts[b]):
            strong[n] = False
    return strong


def _cluster_works(ids: list[str], groups: list[list[int]], pairs: Pairs,
                   is_changed: np.ndarray, limit: int) -> list[ClusterWork]:
    """One unit of model work per cluster of two or more, carrying the similar pairs that
    are not inside one cluster (borderline, or strong but ejected by the centroid
    re-check): those are judged by the model rather than auto-merged. Each changed memory
    sends only its ``limit`` most similar partners; a pair travels with a cluster of one
    of its ends, or alone."""
    cluster_of = {idx: g for g, members in enumerate(groups) for idx in members}
    works: dict[int, ClusterWork] = {}
    for g, members in enumerate(groups):
        if len(members) > 1:
            works[g] = ClusterWork([ids[i] for i in sorted(members)])
    i_idx, j_idx, sims = pairs
    singles: dict[int, ClusterWork] = {}
    budget = np.zeros(len(ids), dtype=np.int64)
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
        home = works.get(cluster_of.get(a, -1))
        if home is None:
            home = works.get(cluster_of.get(b, -1))
        if home is None:
            home = singles.setdefault(owners[0], ClusterWork([]))
        home.pairs.append((ids[a], ids[b]))
    return list(works.values()) + list(singles.values())


def _cell_pairs(table: MemoryTable, in_pool: np.ndarray, config: ConsolidationConfig,
                changed: np.ndarray | None, index: CellIndex | None
                ) -> tuple[CellIndex, Pairs]:
    """Similar pairs of pool rows (``in_pool``) as table rows, through a cell index over
    every table row. The index lists table rows, whose order never changes between
    passes (new memories are appended), so the next pass can reuse it and add only new
    rows. The vectors are read from the table's stored codes as needed."""
    x = table.vectors.rows()
    n = len(table)
    if index is None or index.ntotal > n or index.centroids.shape[1] != x.shape[1]:
        # Trained on a sample of the pool in survivor order (the sample depends on it).
        index = CellIndex.train(x, rows=_survivor_order(table, np.flatnonzero(in_pool)))
        index.store_vectors = False  # the table holds the vectors; FAISS needs no copy
        index.add(x)
    elif index.ntotal < n:
        index.add(x[index.ntotal:])
    query = None
    if changed is not None:
        query = np.flatnonzero(changed & in_pool).astype(np.int64)
    i, j, s = index.pairs(x, config.borderline_threshold, query_rows=query)
    keep = in_pool[i] & in_pool[j]
    return index, (i[keep], j[keep], s[keep])


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


def copies_loader(memories: Sequence[Memory]) -> Loader:
    """A loader over in-memory records that hands out deep copies (the reducer edits them)."""
    by_id = {m.id: m for m in memories}

    def load(ids: Sequence[str]) -> list[Memory | None]:
        return [by_id[i].model_copy(deep=True) if i in by_id else None for i in ids]

    return load
