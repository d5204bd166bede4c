"""The maintenance run beat schedules: every namespace, with the retention settings.

Idempotent (a second run at the same time finds nothing left to do), so two beats or a
redelivered task cost time, not correctness.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from memcore.core.config import Settings
from memcore.core.models import LIVE_STATUSES
from memcore.store import MaintenanceReport, MemoryStore

log = logging.getLogger(__name__)


def run_maintenance(store: MemoryStore, settings: Settings, now: datetime
                    ) -> list[MaintenanceReport]:
    """Maintain every namespace: memories whose caller-given expiry passed are tombstoned
    (audited EXPIRE, restorable for ``consolidation.tombstone_grace_days``), versions
    retired longer than ``snapshot_grace_days`` go, tombstones older than
    ``consolidation.tombstone_grace_days`` are purged, audit events older than
    ``audit_retention_days`` are trimmed. One AOF rewrite at the end if anything was
    purged, so the purged bytes leave the disk too."""
    reports = []
    for ns in store.records.namespaces():
        expired = expire_due(store, ns, now)
        report = replace(store.maintenance.run(
            ns, now, snapshot_grace_days=settings.snapshot_grace_days,
            tombstone_grace_days=settings.consolidation.tombstone_grace_days,
            audit_retention_days=settings.audit_retention_days), expired=expired)
        if report.versions_dropped or report.tombstones_purged or report.audit_trimmed \
                or expired:
            log.info("maintenance of %s: %d expired, %d versions dropped, %d tombstones "
                     "purged, %d audit events trimmed", ns, len(expired),
                     len(report.versions_dropped), len(report.tombstones_purged),
                     report.audit_trimmed)
        reports.append(report)
    if any(r.tombstones_purged for r in reports):
        store.eraser.rewrite_files()
    return reports


def expire_due(store: MemoryStore, namespace: str, now: datetime) -> list[str]:
    """Tombstone the live memories of ``namespace`` whose caller-given expiry is at or
    before ``now`` (one scan of the filter fields); the ids tombstoned. A memory restored
    or edited meanwhile is left alone (the write re-checks it)."""
    due = [f.id for f in store.records.iter_filter_fields(namespace)
           if f.status in LIVE_STATUSES and f.expiry_given and f.expires_at is not None
           and f.expires_at <= now]
    return [mid for mid in due if store.writes.expire(namespace, mid, now) is not None]
