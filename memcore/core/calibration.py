"""Per-embedder thresholds from labelled duplicate / not-duplicate pairs (docs/design.md).

The cosine that means "same fact" differs per embedding model, so memcore derives
its thresholds from a labelled set (``memcore/data/calibration_pairs.jsonl`` ships
one, with negations and changed numbers among the negatives):

- ``merge``: auto-merge only above every non-duplicate that the cheap conflict
  guard (negation, changed numbers) does not already catch;
- ``borderline``: 90 % of true duplicates and 90 % of contradictions (negation,
  changed number, changed value of the same attribute) lie at or above it; pairs
  between the two go to the model, and on the write path a fact whose nearest
  memory is below it is ADDed with no model call.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memcore.core.interfaces import Embedder
from memcore.core.text_rules import PLAIN, TextRules

BORDERLINE_RECALL = 0.9
CONTRADICTION_KINDS = frozenset({"negation", "number", "value"})


class LabelledPair(BaseModel):
    """Two fact texts and whether they state the same fact."""

    model_config = ConfigDict(extra="ignore")

    a: str = Field(min_length=1)
    b: str = Field(min_length=1)
    duplicate: bool
    why: str = ""


@dataclass(frozen=True)
class Calibration:
    """Thresholds and how well they separate the labelled pairs."""

    embedder: str
    merge: float
    borderline: float
    pairs: int
    auto_merge_precision: float
    auto_merge_recall: float
    borderline_recall: float
    contradiction_recall: float
    unrelated_above_borderline: float

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return dict(self.__dict__)


def load_pairs(path: str | Path | None = None) -> list[LabelledPair]:
    """Read JSONL pairs (the shipped set when ``path`` is None); errors name the line."""
    if path is None:
        text = resources.files("memcore.data").joinpath("calibration_pairs.jsonl").read_text()
    else:
        text = Path(path).read_text()
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                pairs.append(LabelledPair.model_validate(json.loads(line)))
            except (ValueError, json.JSONDecodeError) as exc:
                raise ValueError(f"line {number}: {exc}") from exc
    if not any(p.duplicate for p in pairs) or all(p.duplicate for p in pairs):
        raise ValueError("pairs: need both duplicate and not-duplicate examples")
    return pairs


def _floor2(x: float) -> float:
    return math.floor(x * 100) / 100


def _ceil2(x: float) -> float:
    return math.ceil(x * 100 + 1e-9) / 100


def calibrate(embedder: Embedder, pairs: Sequence[LabelledPair], *,
              rules: TextRules = PLAIN) -> Calibration:
    """Derive merge and borderline thresholds for ``embedder`` from labelled pairs
    (``rules``: the language's merge guard, which the thresholds work beside)."""
    va = embedder.embed([p.a for p in pairs])
    vb = embedder.embed([p.b for p in pairs])
    sims = np.einsum("ij,ij->i", va, vb).astype(float)
    dup = np.array([p.duplicate for p in pairs])
    guarded = np.array([rules.conflict(p.a, p.b) for p in pairs])
    unguarded_neg = sims[~dup & ~guarded]
    merge = _ceil2(float(unguarded_neg.max()) + 0.005) if unguarded_neg.size else 0.9
    merge = min(max(merge, 0.5), 0.99)
    contra = np.array([p.why in CONTRADICTION_KINDS for p in pairs])
    unrelated = ~dup & ~contra
    borderline = _floor2(min(float(np.quantile(sims[dup], 1 - BORDERLINE_RECALL)),
                             float(np.quantile(sims[contra], 1 - BORDERLINE_RECALL))
                             if contra.any() else 1.0))
    borderline = min(borderline, round(merge - 0.01, 2))
    # An interpolated quantile rounded to 0.01 can leave fewer than 90 % above it.
    while borderline > -1.0 and (
            float((sims[dup] >= borderline).mean()) < BORDERLINE_RECALL
            or (contra.any() and float((sims[contra] >= borderline).mean()) < BORDERLINE_RECALL)):
        borderline = round(borderline - 0.01, 2)
    auto = (sims >= merge) & ~guarded
    precision = float(dup[auto].mean()) if auto.any() else 1.0
    return Calibration(
        embedder=embedder.name, merge=merge, borderline=borderline, pairs=len(pairs),
        auto_merge_precision=precision,
        auto_merge_recall=float(auto[dup].mean()),
        borderline_recall=float((sims[dup] >= borderline).mean()),
        contradiction_recall=float((sims[contra] >= borderline).mean()) if contra.any() else 1.0,
        unrelated_above_borderline=float((sims[unrelated] >= borderline).mean())
        if unrelated.any() else 0.0,
    )
