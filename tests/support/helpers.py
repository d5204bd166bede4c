"""Small builders shared by the tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from memcore.core.interfaces import ClusterOutcome, ClusterRequest, Verdict
from memcore.core.models import Memory

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def hours(h: float) -> datetime:
    """EPOCH + ``h`` hours (the seed's test counts time in hours)."""
    return EPOCH + timedelta(hours=h)


def make_memory(text: str, vector: Sequence[float] | None, importance: float = 0.5,
                last_used_h: float = 0.0, **fields: object) -> Memory:
    """A memory in namespace ``t`` created at ``last_used_h``."""
    at = hours(last_used_h)
    base: dict[str, object] = dict(
        namespace="t", text=text, vector=list(vector) if vector is not None else None,
        importance=importance, last_used=at, created_at=at, updated_at=at,
        sources=[f"ep-{abs(hash(text)) % 10**8}"],
    )
    base.update(fields)
    return Memory.model_validate(base)


class JoinMerger:
    """The seed's stand-in merge: texts joined with '; '; a fixed verdict for pairs."""

    def __init__(self, verdict: Verdict = Verdict.DISTINCT) -> None:
        self.verdict = verdict
        self.calls = 0
        self.seen: list[ClusterRequest] = []

    def merge(self, clusters: Sequence[ClusterRequest]) -> list[ClusterOutcome]:
        self.calls += 1
        self.seen.extend(clusters)
        return [ClusterOutcome("; ".join(c.texts) if c.texts else None,
                               [self.verdict] * len(c.pair_texts)) for c in clusters]

    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str]:
        return ["Summary: " + " / ".join(g) for g in groups]
