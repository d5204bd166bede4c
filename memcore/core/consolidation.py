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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memcore.core.config import ConsolidationConfig
from memcore.core.interfaces import ClusterOutcome, ClusterRequest, Merger, Verdict
from memcore.core.models import Actor, AuditAction, AuditEvent, Kind, Memory, Status, new_id
from memcore.core.partition import centroid_clusters, similar_pairs
from memcore.core.scoring import (
    capped_strength,
    effective_confidence,
    is_supported,
    memory_score,
    reinforced_confidence,
)
from memcore.core.text import content_hash, texts_conflict


@dataclass
class ClusterWork:
    """One unit of model work: a cluster to merge and/or borderline pairs to judge."""

    members: list[str]
    pairs: list[tuple[str, str]] = field(default_factory=list)

    def request(self, by_id: dict[str, Memory]) -> ClusterRequest:
        """The merger request, built from the members' ORIGINAL texts (no drift)."""
        texts: list[str] = []
        for mid in self.members:
            texts.extend(original_texts(by_id[mid]))
        pair_texts = [(by_id[a].text, by_id[b].text) for a, b in self.pairs]
        return ClusterRequest(texts=_unique(texts) if len(self.members) > 1 else [],
                              pair_texts=pair_texts)


@dataclass
class Plan:
    """What a pass will do before any model call."""

    exact_groups: list[list[str]]
    clusters: list[ClusterWork]


@dataclass
class ConsolidationResult:
    """The next memory set (same ids plus new summaries) and one event per change."""

    memories: list[Memory]
    events: list[AuditEvent]

    def live(self) -> list[Memory]:
        """Candidate and active memories."""
        return [m for m in self.memories if m.live]


def original_texts(memory: Memory) -> list[str]:
    """The texts of the original facts behind a memory (its own text if never merged)."""
    return list(memory.member_texts) if memory.member_texts else [memory.text]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _mergeable(memory: Memory) -> bool:
    return memory.live and not memory.pinned and memory.vector is not None


def plan(memories: Sequence[Memory], config: ConsolidationConfig,
         changed: set[str] | None = None) -> Plan:
    """Partition the live set into exact-duplicate groups, clusters and borderline pairs.

    ``changed``: ids written since the last pass; when given, only those are searched
    against the rest (an incremental pass), so the cost follows what changed.
    """
    live = [m for m in memories if m.live and not m.pinned]
    by_hash: dict[str, list[str]] = {}
    for m in sorted(live, key=_survivor_key):
        by_hash.setdefault(m.content_hash, []).append(m.id)
    exact_groups = [ids for ids in by_hash.values() if len(ids) > 1]
    absorbed = {mid for ids in exact_groups for mid in ids[1:]}

    pool = [m for m in live if _mergeable(m) and m.id not in absorbed]
    pool.sort(key=_survivor_key)
    if len(pool) < 2:
        return Plan(exact_groups, [])
    vectors = np.vstack([m.array for m in pool])
    weights = np.array([min(m.strength, config.strength_cap) for m in pool], dtype=np.float32)
    query_rows = None
    if changed is not None:
        query_rows = np.array([i for i, m in enumerate(pool) if m.id in changed], dtype=np.int64)
    # Exact blocked products below ~10^4 rows, an IVF index with an HNSW quantizer above.
    i_idx, j_idx, sims = similar_pairs(vectors, config.borderline_threshold,
                                       method="auto", query_rows=query_rows)
    # Negations and changed numbers sit close in embedding space: never auto-merge them.
    strong = sims >= config.merge_threshold
    for n in np.flatnonzero(strong):
        if texts_conflict(pool[int(i_idx[n])].text, pool[int(j_idx[n])].text):
            strong[n] = False
    groups = centroid_clusters(vectors, weights, (i_idx[strong], j_idx[strong], sims[strong]),
                               config.merge_threshold)
    cluster_of = {idx: g for g, members in enumerate(groups) for idx in members}
    works: dict[int, ClusterWork] = {}
    for g, members in enumerate(groups):
        if len(members) > 1:
            works[g] = ClusterWork([pool[i].id for i in sorted(members)])
    singles: list[ClusterWork] = []
    seen_pairs: set[tuple[int, int]] = set()
    # Every similar pair not inside one cluster (borderline, or strong but ejected by the
    # centroid re-check) is judged by the model rather than auto-merged.
    for a, b in zip(i_idx.tolist(), j_idx.tolist(), strict=True):
        a, b = min(a, b), max(a, b)
        if (a, b) in seen_pairs or cluster_of.get(a, -1 - a) == cluster_of.get(b, -1 - b):
            continue
        seen_pairs.add((a, b))
        pair = (pool[a].id, pool[b].id)
        home = works.get(cluster_of.get(a, -1))
        if home is None:
            home = works.get(cluster_of.get(b, -1))
        if home is not None:
            home.pairs.append(pair)
        else:
            singles.append(ClusterWork([], [pair]))
    clusters = list(works.values()) + singles
    return Plan(exact_groups, clusters)


def _survivor_key(m: Memory) -> tuple[float, datetime, str]:
    # Strongest first, then oldest, then id: the survivor keeps its id (stable references).
    return (-m.strength, m.created_at, m.id)


def resolve(plan_: Plan, by_id: dict[str, Memory], merger: Merger,
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


class _Reducer:
    """Applies one round of changes to a working copy, recording an event per change."""

    def __init__(self, memories: Sequence[Memory], now: datetime, config: ConsolidationConfig,
                 actor: Actor) -> None:
        self.by_id = {m.id: m.model_copy(deep=True) for m in memories}
        self.order = [m.id for m in memories]
        self.now = now
        self.config = config
        self.actor = actor
        self.events: list[AuditEvent] = []
        self.namespace = memories[0].namespace if memories else "default"

    def event(self, action: AuditAction, before: list[str], after: list[str], reason: str,
              decision: str | None = None, text: str | None = None) -> None:
        self.events.append(AuditEvent(action=action, namespace=self.namespace, before=before,
                                      after=after, reason=reason, actor=self.actor,
                                      decision=decision, text=text, at=self.now))

    def touched(self, m: Memory) -> None:
        m.updated_at = self.now

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
        # Without a written merge (exact duplicates, a pair judged the same), keep the
        # most informative of the texts rather than whichever record survives.
        head.text = text or max((m.text for m in members), key=lambda t: (len(t.split()), t))
        head.content_hash = content_hash(head.text)
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
        a, b = self.by_id.get(a_id), self.by_id.get(b_id)
        if a is None or b is None or not (a.live and b.live):
            return
        newer, older = (a, b) if _event_time(a) >= _event_time(b) else (b, a)
        older.status = Status.SUPERSEDED
        older.valid_until = max(_event_time(newer), older.valid_from or _event_time(newer))
        older.superseded_by = newer.id
        self.touched(older)
        self.event(AuditAction.SUPERSEDE, [older.id], [newer.id], reason,
                   decision=Verdict.CONTRADICTS.value)

    def expire(self) -> None:
        for m in self.live():
            if m.expires_at is not None and m.expires_at <= self.now and not m.pinned:
                m.status = Status.SUPERSEDED
                m.valid_until = m.expires_at
                self.touched(m)
                self.event(AuditAction.EXPIRE, [m.id], [], f"expired at {m.expires_at.isoformat()}")

    def promote(self) -> None:
        for m in self.live():
            if m.status is Status.CANDIDATE and is_supported(m, self.config.min_support):
                m.status = Status.ACTIVE
                self.touched(m)
                why = "stated explicitly" if m.explicit else f"{len(set(m.sources))} episodes"
                self.event(AuditAction.PROMOTE, [m.id], [m.id], f"support: {why}")

    def live(self) -> list[Memory]:
        return [self.by_id[i] for i in self.order if self.by_id[i].live]

    def add(self, memory: Memory) -> None:
        self.by_id[memory.id] = memory
        self.order.append(memory.id)


def _event_time(m: Memory) -> datetime:
    return m.valid_from or m.created_at


def _weak(m: Memory, now: datetime, config: ConsolidationConfig) -> str | None:
    """Why a memory falls below the floor, or None if it stays."""
    if m.pinned or m.kind is Kind.RELATION or m.relation is not None:
        return None  # pinned never decay; relation edges lose weight instead
    score = memory_score(m, now, config)
    if score < config.floor:
        return f"retention {score:.4f} below floor {config.floor}"
    conf = effective_confidence(m, now, config)
    if conf < config.min_confidence:
        return f"confidence {conf:.3f} below {config.min_confidence}"
    return None


def _summarize_doomed(red: _Reducer, doomed: list[Memory],
                      summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None) -> None:
    """Summarize before forget: collapse groups of similar doomed episodic memories."""
    cfg = red.config
    pool = [m for m in doomed if m.derived_level == 0 and m.vector is not None]
    if summarize is None or len(pool) < cfg.summary_min_group:
        return
    vectors = np.vstack([m.array for m in pool])
    weights = np.ones(len(pool), dtype=np.float32)
    pairs = similar_pairs(vectors, cfg.summary_threshold, method="exact")
    groups = [g for g in centroid_clusters(vectors, weights, pairs, cfg.summary_threshold)
              if len(g) >= cfg.summary_min_group]
    if not groups:
        return
    members = [[pool[i] for i in sorted(g)] for g in groups]
    try:
        texts = summarize([_unique(t for m in ms for t in original_texts(m)) for ms in members])
    except Exception:  # no summary is better than a failed pass
        return
    for ms, text in zip(members, texts, strict=False):
        # A summary carries the pooled value of what it replaces; one that would itself
        # fall below the floor is not worth keeping.
        importance = min(1.0, sum(m.importance for m in ms))
        if not text or importance < cfg.floor:
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
        )
        red.add(summary)
        for m in ms:
            m.status = Status.TOMBSTONED
            m.superseded_by = summary.id
            red.touched(m)
        red.event(AuditAction.SUMMARIZE, [m.id for m in ms], [summary.id],
                  f"{len(ms)} fading memories summarized before forgetting", text=text)


def reduce(memories: Sequence[Memory], plan_: Plan, outcomes: Sequence[ClusterOutcome | None],
           now: datetime, config: ConsolidationConfig, *,
           summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None = None,
           actor: Actor = Actor.CONSOLIDATION) -> ConsolidationResult:
    """Apply a planned round and the merger's outcomes, then expiry, support, floor, cap."""
    red = _Reducer(memories, now, config, actor)
    _apply_merges(red, plan_, outcomes)
    _finish(red, summarize)
    return ConsolidationResult([red.by_id[i] for i in red.order], red.events)


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


def _finish(red: _Reducer, summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None,
            ) -> None:
    cfg, now = red.config, red.now
    red.expire()
    red.promote()
    doomed: list[tuple[Memory, str]] = []
    for m in red.live():
        why = _weak(m, now, cfg)
        if why:
            doomed.append((m, why))
    _summarize_doomed(red, [m for m, _ in doomed], summarize)
    for m, why in doomed:
        if m.live:
            m.status = Status.TOMBSTONED
            red.touched(m)
            red.event(AuditAction.TOMBSTONE, [m.id], [], why)
    ranked = sorted((m for m in red.live() if not m.pinned),
                    key=lambda m: (-memory_score(m, now, cfg), m.created_at, m.id))
    room = max(0, cfg.cap - sum(1 for m in red.live() if m.pinned))
    for m in ranked[room:]:
        m.status = Status.TOMBSTONED
        red.touched(m)
        red.event(AuditAction.TOMBSTONE, [m.id], [],
                  f"over the cap of {cfg.cap} (score {memory_score(m, now, cfg):.4f})")


def consolidate(memories: Sequence[Memory], now: datetime, config: ConsolidationConfig,
                merger: Merger, *, max_rounds: int = 8,
                actor: Actor = Actor.CONSOLIDATION) -> ConsolidationResult:
    """One complete pass in process: merge rounds until stable, then decay, floor and cap.

    Merging moves centroids, which can bring two survivors above the threshold; the
    rounds repeat (bounded) until nothing merges, so consolidating the result again
    at the same ``now`` changes nothing.
    """
    current = list(memories)
    events: list[AuditEvent] = []
    for _ in range(max_rounds):
        p = plan(current, config)
        by_id = {m.id: m for m in current}
        outcomes = resolve(p, by_id, merger)
        red = _Reducer(current, now, config, actor)
        changed = _apply_merges(red, p, outcomes)
        current = [red.by_id[i] for i in red.order]
        events.extend(red.events)
        if not changed:
            break
    red = _Reducer(current, now, config, actor)
    _finish(red, merger.summarize)
    events.extend(red.events)
    return ConsolidationResult([red.by_id[i] for i in red.order], events)


def profile(memories: Iterable[Memory], now: datetime, config: ConsolidationConfig) -> list[Memory]:
    """The profile: active facts ranked by confidence, at most ``profile_size``."""
    active = [m for m in memories if m.status is Status.ACTIVE
              and effective_confidence(m, now, config) >= config.min_confidence]
    active.sort(key=lambda m: (-effective_confidence(m, now, config), m.created_at, m.id))
    return active[: config.profile_size]
