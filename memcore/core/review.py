"""Precision review (docs/design.md): label a sample of active facts, measure, advise.

A person (or a script) labels sampled facts correct / incorrect / out of date;
precision is ``correct / (correct + incorrect + out of date)``. Below 90 % the
memory does more harm than good, so :func:`advise` says which thresholds to
raise and by how much, derived from the labelled facts' own properties (their
support, whether they were merged, how old their last support is).

Everything here is pure: the CLI (``memcore review``) does the I/O. Saved review
records hold ids, labels and numbers, never fact texts, so an erase never has to
look inside them.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memcore.core.config import ConsolidationConfig
from memcore.core.models import Memory, Status
from memcore.core.scoring import DAY, effective_confidence, half_life_days, profile_standing

TARGET_PRECISION = 0.9
MAX_SUPPORT_STEP = 3
"""How far above the current ``min_support`` the what-if search looks."""
MERGE_STEP = 0.02
BORDERLINE_STEP = 0.05


class Label(StrEnum):
    """One answer of the review."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    OUT_OF_DATE = "out_of_date"
    SKIP = "skip"


KEYS: dict[str, Label] = {"c": Label.CORRECT, "i": Label.INCORRECT, "o": Label.OUT_OF_DATE,
                          "s": Label.SKIP}
_ALIASES: dict[str, Label] = {
    **KEYS, **{label.value: label for label in Label},
    "out-of-date": Label.OUT_OF_DATE, "out of date": Label.OUT_OF_DATE,
    "outdated": Label.OUT_OF_DATE, "stale": Label.OUT_OF_DATE, "wrong": Label.INCORRECT,
}


def parse_label(value: str) -> Label:
    """A label from a key (``c``/``i``/``o``/``s``) or a name; ValueError names the value."""
    label = _ALIASES.get(str(value).strip().lower())
    if label is None:
        raise ValueError(f"label: {value!r} is not one of c, i, o, s "
                         "(correct, incorrect, out_of_date, skip)")
    return label


def parse_labels(text: str) -> dict[str, Label]:
    """Labels from a JSON object ``{memory_id: label}`` or JSONL lines
    ``{"id": ..., "label": ...}`` (``memory_id`` is accepted for ``id``)."""
    stripped = text.strip()
    if not stripped:
        return {}
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, Mapping):
        if not {"id", "memory_id"} & set(whole):  # a mapping id -> label
            return {str(k): parse_label(str(v)) for k, v in whole.items()}
        rows: list[Any] = [whole]
    else:
        rows = []
        for n, line in enumerate(stripped.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"labels line {n}: not JSON ({exc.msg})") from exc
    out: dict[str, Label] = {}
    for n, row in enumerate(rows, 1):
        if not isinstance(row, Mapping):
            raise ValueError(f"labels line {n}: expected an object with id and label")
        memory_id = row.get("id", row.get("memory_id"))
        if not memory_id or "label" not in row:
            raise ValueError(f"labels line {n}: needs 'id' and 'label'")
        out[str(memory_id)] = parse_label(str(row["label"]))
    return out


@dataclass(frozen=True)
class LabelledFact:
    """A reviewed fact: its label and the properties the advice looks at (no text)."""

    id: str
    label: Label
    kind: str
    support: int
    confidence: float
    """Effective (decayed) confidence at review time."""
    base_confidence: float
    """Stored confidence at ``last_supported``."""
    days_since_support: float
    merged: bool
    explicit: bool = False
    pinned: bool = False


def describe(memory: Memory, label: Label, now: datetime,
             config: ConsolidationConfig) -> LabelledFact:
    """The properties of ``memory`` that :func:`advise` needs."""
    since = memory.last_supported or memory.last_used
    return LabelledFact(
        id=memory.id, label=label, kind=memory.kind.value, support=len(set(memory.sources)),
        confidence=effective_confidence(memory, now, config),
        base_confidence=memory.confidence,
        days_since_support=max(0.0, (now - since).total_seconds() / DAY),
        merged=len(memory.member_texts) > 1 or memory.derived_level > 0,
        explicit=memory.explicit, pinned=memory.pinned)


def sample_facts(memories: Iterable[Memory], size: int, seed: int | None = None, *,
                 now: datetime | None = None, config: ConsolidationConfig | None = None
                 ) -> list[Memory]:
    """Up to ``size`` active facts chosen at random (reproducible with ``seed``).

    With ``now`` and ``config``, facts whose standing in the profile has decayed below
    ``min_confidence`` are left out (:func:`~memcore.core.scoring.profile_standing`):
    they are no longer in the profile.
    """
    if size < 1:
        raise ValueError(f"sample: must be at least 1, got {size}")
    active = sorted((m for m in memories if m.status is Status.ACTIVE
                     and (now is None or config is None
                          or profile_standing(m, now, config) >= config.min_confidence)),
                    key=lambda m: m.id)
    rng = random.Random(seed)
    return rng.sample(active, min(size, len(active)))


def counts(facts: Iterable[LabelledFact]) -> dict[str, int]:
    """Number of facts per label (every label present)."""
    found = Counter(f.label for f in facts)
    return {label.value: found.get(label, 0) for label in Label}


def precision(facts: Iterable[LabelledFact]) -> float | None:
    """correct / (correct + incorrect + out of date); None when nothing was judged."""
    c = counts(facts)
    judged = c[Label.CORRECT] + c[Label.INCORRECT] + c[Label.OUT_OF_DATE]
    return None if judged == 0 else c[Label.CORRECT] / judged


def precision_interval(facts: Iterable[LabelledFact], z: float = 1.96
                       ) -> tuple[float, float] | None:
    """Wilson score interval of the precision (95 % by default); None when nothing was
    judged. With 30 facts the interval is wide: that is the point of showing it."""
    c = counts(facts)
    judged = c[Label.CORRECT] + c[Label.INCORRECT] + c[Label.OUT_OF_DATE]
    if judged == 0:
        return None
    p = c[Label.CORRECT] / judged
    denom = 1 + z * z / judged
    centre = (p + z * z / (2 * judged)) / denom
    half = z * math.sqrt(p * (1 - p) / judged + z * z / (4 * judged * judged)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Advice:
    """Raise (or lower, for half-lives) one setting: ``setting`` from ``current`` to
    ``suggested``, because ``reason``."""

    setting: str
    current: float
    suggested: float
    reason: str
    precision_after: float | None = None
    """Precision of the labelled sample if the change had applied (None: not estimable)."""

    def render(self) -> str:
        """One line for a terminal."""
        after = ("" if self.precision_after is None
                 else f" (sample precision would be {self.precision_after:.0%})")
        change = f"{_num(self.current)} -> {_num(self.suggested)}"
        return f"{self.setting}: {change}: {self.reason}{after}"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _judged(facts: Sequence[LabelledFact]) -> list[LabelledFact]:
    return [f for f in facts if f.label is not Label.SKIP]


def _support_advice(facts: Sequence[LabelledFact], config: ConsolidationConfig
                    ) -> Advice | None:
    """min_support: the smallest raise whose what-if precision reaches the target."""
    judged = _judged(facts)
    wrong_low = [f for f in judged if f.label is Label.INCORRECT and not (f.explicit or f.pinned)
                 and f.support < config.min_support + MAX_SUPPORT_STEP]
    incorrect = [f for f in judged if f.label is Label.INCORRECT]
    # Only when low support explains at least half of the incorrect facts.
    if not incorrect or 2 * len(wrong_low) < len(incorrect):
        return None
    best = _best_min_support(judged, config.min_support)
    if best is None:
        return None
    k, p = best
    below = sum(1 for f in incorrect if f.support < k and not (f.explicit or f.pinned))
    return Advice("min_support", config.min_support, k,
                  f"{below} of {len(incorrect)} incorrect facts had support < {k}", p)


def _best_min_support(judged: Sequence[LabelledFact], current: int
                      ) -> tuple[int, float] | None:
    """``(min_support, precision)``: the first raise that reaches the target precision,
    else the raise with the best what-if precision (None: nothing left to judge)."""
    best: tuple[int, float] | None = None
    for k in range(current + 1, current + MAX_SUPPORT_STEP + 1):
        kept = [f for f in judged if f.explicit or f.pinned or f.support >= k]
        p = precision(kept)
        if p is None:
            break
        if p >= TARGET_PRECISION:
            return k, p
        if best is None or p > best[1] + 1e-9:
            best = (k, p)
    return best


def _merge_advice(facts: Sequence[LabelledFact], config: ConsolidationConfig) -> list[Advice]:
    """merge / borderline thresholds when incorrect facts are mostly merged records."""
    incorrect = [f for f in facts if f.label is Label.INCORRECT]
    merged = [f for f in incorrect if f.merged]
    if not incorrect or 2 * len(merged) < len(incorrect):
        return []
    reason = f"{len(merged)} of {len(incorrect)} incorrect facts are merged records"
    merge_to = round(min(0.99, config.merge_threshold + MERGE_STEP), 2)
    border_to = round(min(merge_to - 0.01, config.borderline_threshold + BORDERLINE_STEP), 2)
    out = []
    if merge_to > config.merge_threshold:
        out.append(Advice("merge_threshold", config.merge_threshold, merge_to, reason))
    if border_to > config.borderline_threshold:
        out.append(Advice("borderline_threshold", config.borderline_threshold, border_to, reason))
    return out


def _half_life_needed(fact: LabelledFact, floor: float) -> float | None:
    """The half-life (days) under which ``fact`` would already have decayed below ``floor``."""
    if fact.base_confidence <= floor or fact.days_since_support <= 0:
        return None
    return fact.days_since_support / math.log2(fact.base_confidence / floor)


def _staleness_advice(facts: Sequence[LabelledFact], config: ConsolidationConfig
                      ) -> list[Advice]:
    """Half-lives per kind (and min_confidence) when many facts are out of date."""
    judged = _judged(facts)
    stale = [f for f in judged if f.label is Label.OUT_OF_DATE and not f.pinned]
    wrong = [f for f in judged if f.label is not Label.CORRECT]
    # "Many": at least a third of what was wrong, and at least one fact.
    if not stale or 3 * len(stale) < len(wrong):
        return []
    out: list[Advice] = []
    for kind in sorted({f.kind for f in stale}):
        advice = _half_life_advice(kind, [f for f in stale if f.kind == kind], judged, config)
        if advice is not None:
            out.append(advice)
    top = max(f.confidence for f in stale)
    target = min(0.95, math.ceil((top + 0.01) * 20) / 20)  # next 0.05 step above the stalest
    if target > config.min_confidence:
        kept = [f for f in judged if f.pinned or f.confidence >= target]
        out.append(Advice("min_confidence", config.min_confidence, target,
                          f"{len(stale)} out-of-date facts had confidence <= {top:.2f} "
                          "(alternative to shorter half-lives)", precision(kept)))
    return out


def _half_life_advice(kind: str, stale: Sequence[LabelledFact],
                      judged: Sequence[LabelledFact], config: ConsolidationConfig
                      ) -> Advice | None:
    """A shorter half-life for ``kind`` under which its ``stale`` facts would have
    decayed below the floor, with the correct facts of that kind it would also drop."""
    needed = [h for f in stale
              if (h := _half_life_needed(f, config.min_confidence)) is not None]
    if not needed:
        return None
    current = half_life_days(kind, config)
    suggested = max(1.0, float(math.floor(min(needed))))
    if suggested >= current:
        return None
    lost = sum(1 for f in judged if f.kind == kind and f.label is Label.CORRECT
               and (h := _half_life_needed(f, config.min_confidence)) is not None
               and h >= suggested)
    return Advice(
        f"half_lives_days.{kind}", current, suggested,
        f"{len(stale)} out-of-date {kind} facts were last supported "
        f"{min(f.days_since_support for f in stale):.0f}+ days ago"
        + (f"; would also drop {lost} correct {kind} facts" if lost else ""))


def advise(facts: Sequence[LabelledFact], config: ConsolidationConfig) -> list[Advice]:
    """Which thresholds to raise, and by how much; empty at or above 90 % precision."""
    p = precision(facts)
    if p is None or p >= TARGET_PRECISION:
        return []
    out: list[Advice] = []
    support = _support_advice(facts, config)
    if support is not None:
        out.append(support)
    out += _merge_advice(facts, config)
    out += _staleness_advice(facts, config)
    return out


@dataclass
class ReviewRecord:
    """One finished review, as saved for tracking precision over time (no texts)."""

    namespace: str
    at: str
    precision: float | None
    counts: dict[str, int]
    labels: dict[str, str]
    facts: list[dict[str, Any]] = field(default_factory=list)
    advice: list[dict[str, Any]] = field(default_factory=list)
    thresholds: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """Compact JSON of the record."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str | bytes) -> ReviewRecord:
        """Inverse of :meth:`to_json` (unknown fields are ignored)."""
        data = json.loads(raw)
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def make_record(namespace: str, facts: Sequence[LabelledFact], advice: Sequence[Advice],
                config: ConsolidationConfig, now: datetime) -> ReviewRecord:
    """The record to save for a review finished at ``now``."""
    return ReviewRecord(
        namespace=namespace, at=now.isoformat(), precision=precision(facts),
        counts=counts(facts), labels={f.id: f.label.value for f in facts},
        facts=[{**asdict(f), "label": f.label.value} for f in facts],
        advice=[asdict(a) for a in advice],
        thresholds={"min_support": config.min_support, "min_confidence": config.min_confidence,
                    "merge_threshold": config.merge_threshold,
                    "borderline_threshold": config.borderline_threshold,
                    "half_lives_days": dict(config.half_lives_days)})
