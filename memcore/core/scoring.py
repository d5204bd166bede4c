"""The scoring rules of docs/design.md as small pure functions.

Every decay here is tested for its direction (stronger, more recent, more
important scores higher); MemoryBank's exp(-t / 5*S) precedence bug is the
warning.
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np

from memcore.core.config import ConsolidationConfig
from memcore.core.frames import is_standing
from memcore.core.models import Kind, Memory

HOUR = 3600.0
DAY = 86400.0


def hours_between(earlier: datetime, later: datetime) -> float:
    """Hours from ``earlier`` to ``later``, never negative."""
    return max(0.0, (later - earlier).total_seconds() / HOUR)


def retention(importance: float, hours_since_use: float, strength: float,
              tau_hours: float) -> float:
    """Ebbinghaus retention ``importance * exp(-t / (strength * tau))``."""
    return importance * math.exp(-max(0.0, hours_since_use) / (max(strength, 1.0) * tau_hours))


def memory_score(memory: Memory, now: datetime, config: ConsolidationConfig) -> float:
    """Retention score of a memory at ``now``; pinned memories never decay."""
    if memory.pinned:
        return max(memory.importance, config.floor)
    return retention(
        memory.importance,
        hours_between(memory.last_used, now),
        min(memory.strength, config.strength_cap),
        config.tau_hours,
    )


def half_life_days(kind: Kind | str, config: ConsolidationConfig) -> float:
    """Confidence half-life of a kind in days (``half_lives_days``; unknown kinds
    use the preference half-life)."""
    return config.half_lives_days.get(str(kind), config.half_lives_days["preference"])


def decayed_confidence(base: float, days_since_support: float, half_life: float) -> float:
    """``base * 0.5 ** (days / half_life)``: confidence halves every half-life."""
    return base * 0.5 ** (max(0.0, days_since_support) / half_life)


def effective_confidence(memory: Memory, now: datetime, config: ConsolidationConfig) -> float:
    """Confidence of a memory at ``now``, decayed since it was last supported.

    The stored ``confidence`` is the value at ``last_supported``; decay is computed,
    never written back, so consolidating twice at the same ``now`` changes nothing.
    """
    if memory.pinned:
        return memory.confidence
    since = memory.last_supported or memory.last_used
    days = (now - since).total_seconds() / DAY
    return decayed_confidence(memory.confidence, days, half_life_days(memory.kind, config))


def profile_standing(memory: Memory, now: datetime, config: ConsolidationConfig) -> float:
    """How strongly a memory stands in the profile at ``now``: its decayed confidence,
    and for a fact a language pack read and found no frame in (``frame_read``: a remark,
    news, an episode; not a verbatim turn or a memory added as given) of at
    most ``unframed_profile_max_importance``, at most its confidence decayed on
    ``unframed_profile_half_life_days`` since it was last said or used. Such a fact
    leaves the profile sooner than a name, a job or a home does, but it is not
    forgotten: search still finds it (seed 002: decay the weight, do not drop).

    A standing order or name said explicitly (:func:`memcore.core.frames.is_standing`:
    "always use metric units", "call me Lena") does not fade at all: it holds until a
    later fact withdraws or changes it, which retires it."""
    if memory.explicit and is_standing(memory.frame):
        return memory.confidence
    confidence = effective_confidence(memory, now, config)
    half_life = config.unframed_profile_half_life_days
    if (not memory.frame_read or half_life is None or memory.pinned or memory.frame is not None
            or memory.relation is not None
            or memory.importance > config.unframed_profile_max_importance):
        return confidence
    since = max(t for t in (memory.last_supported, memory.last_used, memory.created_at)
                if t is not None)
    days = (now - since).total_seconds() / DAY
    return min(confidence, decayed_confidence(memory.confidence, days, half_life))


def reinforced_confidence(confidence: float, new_supports: int, step: float = 0.25) -> float:
    """Confidence after ``new_supports`` new supporting episodes: +step each, capped at 1."""
    return min(1.0, confidence + step * max(0, new_supports))


def capped_strength(strength: float, cap: float) -> float:
    """Strength bounded by ``cap`` (the rich-get-richer pitfall)."""
    return min(max(1.0, strength), cap)


def is_supported(memory: Memory, min_support: int) -> bool:
    """Support rule: >= ``min_support`` distinct episodes, or stated explicitly."""
    return memory.explicit or memory.pinned or len(set(memory.sources)) >= min_support


def recency_factor(hours_since_use: float, tau_hours: float) -> float:
    """``exp(-t / tau)``: 1 for just used, towards 0 for long unused."""
    return math.exp(-max(0.0, hours_since_use) / tau_hours)


def recall_factor(recall_count: int) -> float:
    """Grows with how often a memory was recalled, with diminishing returns (1 at 0)."""
    return 1.0 + math.log1p(max(0, recall_count))


def distinctiveness(vector: np.ndarray, others: np.ndarray) -> float:
    """1 - the highest cosine to any other memory (unit vectors); 1 if alone."""
    if others.size == 0:
        return 1.0
    return float(max(0.0, 1.0 - float(np.max(others @ vector))))


def hygiene_retention(importance: float, hours_since_use: float, recall_count: int,
                      distinct: float, tau_hours: float) -> float:
    """Retention score: importance x recency x recall x distinctiveness."""
    return importance * recency_factor(hours_since_use, tau_hours) * recall_factor(
        recall_count) * max(0.0, distinct)


def relation_weight(weight: float, days_since_support: float, half_life: float) -> float:
    """A relation edge's weight decays by half-life instead of the edge being dropped."""
    return decayed_confidence(weight, days_since_support, half_life)


def effective_relation_weight(memory: Memory, now: datetime, config: ConsolidationConfig) -> float:
    """A relation edge's weight at ``now``: decays by its kind's half-life since it was last
    supported, never below ``relation_weight_floor`` (the edge stays, ranked lower)."""
    if memory.relation is None:
        return 0.0
    since = memory.last_supported or memory.last_used
    days = (now - since).total_seconds() / DAY
    weight = relation_weight(memory.relation.weight, days, half_life_days(memory.kind, config))
    return max(config.relation_weight_floor, weight)
