"""The maintenance run beat schedules: every namespace, with the retention settings.

Idempotent (a second run at the same time finds nothing left to do), so two beats or a
redelivered task cost time, not correctness.
"""

from __future__ import annotations

import logging
from datetime import datetime

from memcore.core.config import Settings
from memcore.store import MaintenanceReport, MemoryStore

log = logging.getLogger(__name__)


def run_maintenance(store: MemoryStore, settings: Settings, now: datetime
                    ) -> list[MaintenanceReport]:
    """Maintain every namespace: versions retired longer than ``snapshot_grace_days`` go,
    tombstones older than ``consolidation.tombstone_grace_days`` are purged, audit events
    older than ``audit_retention_days`` are trimmed. One AOF rewrite at the end if
    anything was purged, so the purged bytes leave the disk too."""
    reports = []
    for ns in store.namespaces():
        report = store.maintain(
            ns, now, snapshot_grace_days=settings.snapshot_grace_days,
            tombstone_grace_days=settings.consolidation.tombstone_grace_days,
            audit_retention_days=settings.audit_retention_days)
        if report.versions_dropped or report.tombstones_purged or report.audit_trimmed:
            log.info("maintenance of %s: %d versions dropped, %d tombstones purged, "
                     "%d audit events trimmed", ns, len(report.versions_dropped),
                     len(report.tombstones_purged), report.audit_trimmed)
        reports.append(report)
    if any(r.tombstones_purged for r in reports):
        store.rewrite_files()
    return reports
