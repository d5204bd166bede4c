"""Direction and constants of every scoring rule (MemoryBank's bug is the warning)."""

from __future__ import annotations

import math

import numpy as np

from memcore.core.config import ConsolidationConfig
from memcore.core.models import Kind
from memcore.core.scoring import (
    capped_strength,
    decayed_confidence,
    distinctiveness,
    effective_confidence,
    half_life_days,
    hygiene_retention,
    memory_score,
    reinforced_confidence,
    retention,
)
from tests.support.helpers import hours, make_memory


def test_retention_formula_matches_seed() -> None:
    assert math.isclose(retention(0.6, 100, 1, 72), 0.6 * math.exp(-100 / 72))
    assert math.isclose(retention(0.8, 110, 2, 72), 0.8 * math.exp(-110 / 144))


def test_retention_direction() -> None:
    base = retention(0.5, 48, 1, 72)
    assert retention(0.5, 48, 3, 72) > base  # stronger fades slower
    assert retention(0.5, 24, 1, 72) > base  # more recent scores higher
    assert retention(0.9, 48, 1, 72) > base  # more important scores higher
    assert retention(0.5, 0, 1, 72) == 0.5  # no time, no decay


def test_confidence_reinforcement_and_cap() -> None:
    assert reinforced_confidence(0.5, 1) == 0.75
    assert reinforced_confidence(0.5, 2) == 1.0
    assert reinforced_confidence(0.9, 3) == 1.0


def test_half_lives_by_kind() -> None:
    cfg = ConsolidationConfig()
    assert [half_life_days(k, cfg) for k in ("preference", "knowledge", "goal", "temporary")] == [
        180, 365, 90, 14]
    for days in (14, 90, 180, 365):
        assert math.isclose(decayed_confidence(0.8, days, days), 0.4)
    assert decayed_confidence(0.8, 10, 14) < decayed_confidence(0.8, 10, 365)


def test_effective_confidence_decays_from_last_support_and_pinned_does_not() -> None:
    cfg = ConsolidationConfig()
    m = make_memory("x", [1, 0], kind=Kind.TEMPORARY, confidence=0.8)
    assert math.isclose(effective_confidence(m, hours(14 * 24), cfg), 0.4)
    pinned = m.model_copy(update={"pinned": True})
    assert effective_confidence(pinned, hours(1000 * 24), cfg) == 0.8


def test_pinned_never_decays() -> None:
    cfg = ConsolidationConfig(floor=0.05)
    m = make_memory("allergic to peanuts", [1, 0], importance=0.1, pinned=True)
    assert memory_score(m, hours(10**6), cfg) >= cfg.floor


def test_strength_cap() -> None:
    assert capped_strength(50, 10) == 10
    assert capped_strength(0.2, 10) == 1.0


def test_hygiene_retention_direction() -> None:
    base = hygiene_retention(0.5, 24 * 60, 0, 0.5, 24 * 30)
    assert hygiene_retention(0.5, 24 * 10, 0, 0.5, 24 * 30) > base
    assert hygiene_retention(0.5, 24 * 60, 5, 0.5, 24 * 30) > base
    assert hygiene_retention(0.5, 24 * 60, 0, 0.9, 24 * 30) > base
    assert hygiene_retention(0.9, 24 * 60, 0, 0.5, 24 * 30) > base


def test_distinctiveness() -> None:
    v = np.array([1.0, 0.0], dtype=np.float32)
    assert distinctiveness(v, np.empty((0, 2), np.float32)) == 1.0
    near = np.array([[0.99, 0.141]], dtype=np.float32)
    far = np.array([[0.0, 1.0]], dtype=np.float32)
    assert distinctiveness(v, far) > distinctiveness(v, near)


def test_relation_weight_decays_but_never_below_its_floor() -> None:
    from memcore.core.models import Relation
    from memcore.core.scoring import effective_relation_weight

    cfg = ConsolidationConfig()
    m = make_memory("Alice works at Acme", [1, 0], kind=Kind.KNOWLEDGE,
                    relation=Relation(subject="alice", predicate="works_at", object="acme"))
    fresh = effective_relation_weight(m, hours(0), cfg)
    year = effective_relation_weight(m, hours(365 * 24), cfg)
    assert fresh == 1.0 and math.isclose(year, 0.5)
    assert effective_relation_weight(m, hours(100 * 365 * 24), cfg) == cfg.relation_weight_floor
