"""Which namespaces are due for a consolidation pass (beat's decision).

Due: the summed importance (1-10 scale) written since the last pass reached the
threshold (Generative Agents reflects at 150), or the last pass is older than the
maximum interval. A claim per interval slot (a Redis ``SET NX`` in the store) makes
two beat processes schedule each namespace once.
"""

from __future__ import annotations

from datetime import datetime

from memcore.core.config import Settings
from memcore.store import MemoryStore


def is_due(store: MemoryStore, namespace: str, settings: Settings, now: datetime) -> bool:
    """True if ``namespace`` needs a pass at ``now``."""
    pending = store.coordination.pending_importance(namespace)
    if pending >= settings.consolidation_importance_threshold:
        return True
    last = store.coordination.last_pass_at(namespace)
    if last is None:
        return pending > 0
    hours = (now - last).total_seconds() / 3600
    return hours >= settings.consolidation_max_interval_hours and pending > 0


def due_namespaces(store: MemoryStore, settings: Settings, now: datetime) -> list[str]:
    """Namespaces due now that no other scheduler claimed in this interval slot."""
    slot = int(now.timestamp() // settings.beat_interval_seconds)
    ttl = max(1, int(settings.beat_interval_seconds * 2))
    due = []
    for ns in store.records.namespaces():
        if not is_due(store, ns, settings, now):
            continue
        if store.coordination.claim_schedule(ns, slot, ttl):
            due.append(ns)
    return due
