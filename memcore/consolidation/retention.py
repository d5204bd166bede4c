"""Retention and confidence scores of memories, vectorized over a table."""

from __future__ import annotations

import functools
import math
from datetime import datetime

import numpy as np

from memcore.core.config import ConsolidationConfig
from memcore.core.models import Memory
from memcore.core.scoring import DAY, HOUR, half_life_days
from memcore.index.table import KINDS, MemoryTable, to_micros

_HALF_POW = functools.partial(pow, 0.5)  # 0.5 ** x, mapped in C (math.exp likewise)


def event_time(m: Memory) -> datetime:
    return m.valid_from or m.created_at


def _hours_since(table: MemoryTable, rows: np.ndarray, now_us: int,
                 column: np.ndarray) -> np.ndarray:
    # Same float steps as timedelta.total_seconds() / 3600, so scores equal the scalar ones.
    return ((now_us - column[rows]).astype(np.float64) / 1e6) / HOUR


def retention_scores(table: MemoryTable, rows: np.ndarray, now: datetime,
                     config: ConsolidationConfig) -> np.ndarray:
    """:func:`~memcore.core.scoring.memory_score` of ``rows``, bit for bit."""
    now_us = to_micros(now)
    hours = np.maximum(0.0, _hours_since(table, rows, now_us, table.last_used))
    strength = np.maximum(np.minimum(table.strength[rows], config.strength_cap), 1.0)
    exponent = -hours / (strength * config.tau_hours)
    decay = np.fromiter(map(math.exp, exponent.tolist()), dtype=np.float64, count=rows.size)
    scores = table.importance[rows] * decay
    pinned = table.pinned[rows]
    if pinned.any():
        scores[pinned] = np.maximum(table.importance[rows][pinned], config.floor)
    return scores


def confidences(table: MemoryTable, rows: np.ndarray, now: datetime,
                config: ConsolidationConfig) -> np.ndarray:
    """:func:`~memcore.core.scoring.effective_confidence` of ``rows``, bit for bit."""
    now_us = to_micros(now)
    days = ((now_us - table.since_micros()[rows]).astype(np.float64) / 1e6) / DAY
    half = np.array([half_life_days(k, config) for k in KINDS], dtype=np.float64)
    exponent = np.maximum(0.0, days) / half[table.kind[rows]]
    factor = np.fromiter(map(_HALF_POW, exponent.tolist()), dtype=np.float64, count=rows.size)
    conf = table.confidence[rows] * factor
    pinned = table.pinned[rows]
    conf[pinned] = table.confidence[rows][pinned]
    return conf
