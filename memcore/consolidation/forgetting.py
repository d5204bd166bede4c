"""Which memories fade: rows below the floor and idle candidates, and the summaries
that replace the fading ones before they are forgotten (summarize-before-forget).

Free functions over the table, the settings and the pass time: the reducer
(:mod:`memcore.consolidation.reducer`) calls them and applies what they return."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import numpy as np

from memcore.consolidation.planning import same_scope
from memcore.consolidation.resolution import merge_lists, survivor_key
from memcore.consolidation.retention import confidences, retention_scores
from memcore.core.bounds import text_fits
from memcore.core.config import ConsolidationConfig
from memcore.core.models import Kind, Memory, Status, new_id
from memcore.core.scoring import capped_strength
from memcore.core.text_rules import TextRules
from memcore.index.partition import centroid_clusters, similar_pairs
from memcore.index.table import KINDS, NONE_TIME, STATUSES, MemoryTable, to_micros


def weak_rows(t: MemoryTable, now: datetime, cfg: ConsolidationConfig
              ) -> list[tuple[int, str]]:
    """Live rows below the floor (retention or confidence), in row order, with why.
    Pinned memories and relation edges never decay here (edges lose weight instead).

    History (a live fact whose validity ended: a dated event or plan whose date passed)
    is held to the retention floor and the cap only. Confidence says how sure the store
    is that a fact is still true now; history is already out of the profile for that
    reason, and "Gina lost her job at Door Dash (January 2023)" does not become less
    true with time. Retention decay and the cap still forget it.

    So is an important explicit statement (:func:`kept_as_history`) whose confidence
    faded: it leaves the profile, which lists only facts above the confidence floor,
    but search still finds what the user said."""
    rows = np.flatnonzero(t.live() & ~t.pinned & ~t.relation
                          & (t.kind != KINDS.index(Kind.RELATION)))
    scores = retention_scores(t, rows, now, cfg)
    low = scores < cfg.floor
    conf = np.full(rows.size, np.inf)
    until = t.valid_until[rows]
    history = ((until != NONE_TIME) & (until <= to_micros(now))) | kept_as_history(
        t, rows, cfg.history_min_importance)
    rest = np.flatnonzero(~low & ~history)
    conf[rest] = confidences(t, rows[rest], now, cfg)
    out: list[tuple[int, str]] = []
    for pos in np.flatnonzero(low | (conf < cfg.min_confidence)).tolist():
        if low[pos]:
            out.append((int(rows[pos]), f"retention {scores[pos]:.4f} below floor {cfg.floor}"))
        else:
            out.append((int(rows[pos]),
                        f"confidence {conf[pos]:.3f} below {cfg.min_confidence}"))
    return out


def kept_as_history(t: MemoryTable, rows: np.ndarray, min_importance: float) -> np.ndarray:
    """Which ``rows`` are explicit statements not forgotten when their confidence fades
    (only the retention floor and the cap forget them; the profile leaves them out,
    except a standing order or name: memcore.core.scoring.profile_standing).

    The confidence floor keeps the list of current facts short: a goal not re-stated for
    months is no longer believed current. Forgetting what the user said is another
    matter: deleting by age loses context whose value compounded, and importance must be
    able to keep the rare critical fact (docs/design.md, Support and confidence). The
    extractor scores an explicit statement of a life fact (job, home, family, health, adoption:
    its important cue) at least 0.8 (``min_importance``); a plain goal ("wants to run a
    marathon") scores less and is still forgotten, or summarized with its like.
    Summarizing the important one instead would keep its words in a digest but not the
    statement itself. A statement a language pack read a frame in is kept too (a name, an
    instruction, a home, a job: a value of a known attribute, which a later value or a
    withdrawal retires; "always use metric units" said ten months ago is not withdrawn
    by time)."""
    return t.explicit[rows] & ((t.importance[rows] >= min_importance - 1e-9)
                               | t.framed[rows])


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


def idle_rows(t: MemoryTable, now: datetime, cfg: ConsolidationConfig,
              doomed: list[tuple[int, str]], rules: TextRules) -> list[int]:
    """Unsupported, low-importance, short candidates unused for ``summary_idle_days`` (a
    heap of low-value remarks that accumulated, docs/design.md); the pass forgets them
    without a summary. Important or supported facts keep accumulating support instead,
    and a remark of more than ``summary_idle_max_terms`` content terms is distinctive
    enough to keep ("user said hi" goes first: docs/design.md, Retention)."""
    if cfg.summary_idle_days <= 0:
        return []
    cutoff = to_micros(now - timedelta(days=cfg.summary_idle_days))
    most = cfg.summary_idle_max_terms
    terms = rules.canonical_terms
    short = t.text_flags(f"{rules.name}:terms<={most}", lambda text: len(terms(text)) <= most)
    rows = (t.live() & ~t.pinned & ~t.relation & (t.derived_level == 0)
            & (t.status == STATUSES.index(Status.CANDIDATE)) & (t.last_used < cutoff)
            & (t.importance <= cfg.summary_idle_max_importance + 1e-9) & short)
    rows[[r for r, _ in doomed]] = False
    return np.flatnonzero(rows).tolist()


def summary_groups(t: MemoryTable, cfg: ConsolidationConfig, doomed: list[int]
                   ) -> list[list[int]]:
    """Summarize before forget: the groups (table rows, ascending) of similar doomed
    episodic memories that one summary each replaces."""
    pool = np.array([r for r in doomed if t.derived_level[r] == 0 and t.vectors.present[r]],
                    dtype=np.int64)
    if pool.size < cfg.summary_min_group:
        return []
    vectors = t.vectors.take(pool)
    weights = np.ones(pool.size, dtype=np.float32)
    pairs = same_scope([t.scopes[r] for r in pool.tolist()],
                       similar_pairs(vectors, cfg.summary_threshold, method="exact"))
    return [[int(pool[i]) for i in chunk]
            for g in centroid_clusters(vectors, weights, pairs, cfg.summary_threshold)
            for chunk in _chunks(sorted(g), cfg.summary_max_group, cfg.summary_min_group)]


def summary_of(members: Sequence[Memory], text: str, *, namespace: str, now: datetime,
               cfg: ConsolidationConfig, vector_of: Callable[[Memory], np.ndarray]
               ) -> tuple[Memory, str] | None:
    """The summary memory that replaces ``members`` under ``text``, with the audit
    reason, or None when it is not worth keeping. ``vector_of``: a member's stored
    vector (read only for a summary that is kept)."""
    # A summary carries the pooled value of what it replaces; one that would itself
    # fall below the floor is not worth keeping.
    importance = min(1.0, sum(m.importance for m in members))
    if not members or not text or not text_fits(text) or importance < cfg.floor:
        return None
    centroid = np.vstack([vector_of(m) for m in members]).sum(axis=0)
    lists = merge_lists(sorted(members, key=survivor_key))  # bounded (memcore.core.bounds)
    summary = Memory(
        id=new_id(), namespace=namespace, text=text,
        vector=[float(x) for x in centroid / max(float(np.linalg.norm(centroid)), 1e-9)],
        importance=importance, last_used=now, last_supported=now,
        strength=capped_strength(sum(m.strength for m in members), cfg.strength_cap),
        confidence=max(cfg.new_confidence, max(m.confidence for m in members)),
        kind=Kind.SUMMARY, sources=lists.sources, support=lists.support,
        status=Status.ACTIVE, derived_level=1, created_at=now, updated_at=now,
        member_texts=lists.member_texts, metadata=lists.metadata,
        user_id=members[0].user_id, agent_id=members[0].agent_id, run_id=members[0].run_id,
    )
    note = lists.capped.note()
    return summary, (f"{len(members)} fading memories summarized before forgetting"
                     + (f"; {note}" if note else ""))
