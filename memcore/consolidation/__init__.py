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

from memcore.consolidation.outcome import ConsolidationResult, PassChanges
from memcore.consolidation.pipeline import consolidate, profile
from memcore.consolidation.planning import (
    ClusterWork,
    Loader,
    Plan,
    original_texts,
    plan,
    plan_table,
    same_scope,
)
from memcore.consolidation.reducer import reduce, reduce_table
from memcore.consolidation.resolution import merge_metadata, resolve
from memcore.consolidation.retention import confidences, retention_scores

__all__ = [
    "ClusterWork",
    "ConsolidationResult",
    "Loader",
    "PassChanges",
    "Plan",
    "confidences",
    "consolidate",
    "merge_metadata",
    "original_texts",
    "plan",
    "plan_table",
    "profile",
    "reduce",
    "reduce_table",
    "resolve",
    "retention_scores",
    "same_scope",
]
