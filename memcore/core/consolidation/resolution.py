"""Resolving one cluster: which member survives a merge, and the union of metadata."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memcore.core.consolidation.planning import Plan
from memcore.core.interfaces import ClusterOutcome, Merger
from memcore.core.models import Memory, union_metadata


def merge_metadata(members: Sequence[Memory]) -> dict[str, Any]:
    """The metadata of a merged memory, ``members`` strongest first (the survivor first):
    see :func:`~memcore.core.models.union_metadata`."""
    return union_metadata([m.metadata or {} for m in members])


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
