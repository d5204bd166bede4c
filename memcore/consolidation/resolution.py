"""Resolving one cluster: which member survives a merge, the union of metadata, and the
merged record's lists within their bounds (memcore.core.bounds)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memcore.consolidation.planning import Plan, original_texts, unique_in_order
from memcore.core.bounds import (
    Capped,
    bound_member_texts,
    bound_metadata,
    bound_sources,
    unlisted_count,
)
from memcore.core.interfaces import ClusterOutcome, Merger
from memcore.core.models import Memory, union_metadata


def merge_metadata(members: Sequence[Memory]) -> dict[str, Any]:
    """The metadata of a merged memory, ``members`` strongest first (the survivor first):
    see :func:`~memcore.core.models.union_metadata`, within one add's limits
    (:func:`~memcore.core.bounds.bound_metadata`: the oldest values go first)."""
    return bound_metadata(union_metadata([m.metadata or {} for m in members]))[0]


@dataclass
class MergedLists:
    """The per-record lists of a merged memory, bounded, and what the bounds dropped."""

    sources: list[str]
    """The newest ``MAX_SOURCES`` of the members' sources (in member order)."""
    support: int
    """Every distinct listed source plus what each member counted but no longer listed."""
    member_texts: list[str]
    metadata: dict[str, Any]
    capped: Capped


def merge_lists(members: Sequence[Memory]) -> MergedLists:
    """Sources, support, member texts and metadata of the memory ``members`` (strongest
    first) merge into. Linear in the members' (bounded) lists."""
    joined = unique_in_order(s for m in members for s in m.sources)
    sources, unlisted = bound_sources(joined)
    texts, dropped_texts = bound_member_texts(
        unique_in_order(t for m in members for t in original_texts(m)))
    metadata, values = bound_metadata(union_metadata([m.metadata or {} for m in members]))
    return MergedLists(sources, len(joined) + sum(unlisted_count(m) for m in members), texts,
                       metadata, Capped(unlisted, values, dropped_texts))


def survivor_key(m: Memory) -> tuple[float, datetime, str]:
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
