"""Maintenance that keeps a namespace bounded: drop expired versions, purge old
tombstones, trim the audit stream. Beat runs it for every namespace (see
``memcore.consolidate.maintenance``); each step is idempotent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memcore.core.models import Status, as_utc, validate_namespace
from memcore.store.audit import AuditLog
from memcore.store.codec import unpack_memory
from memcore.store.erase import Eraser
from memcore.store.gateway import Gateway
from memcore.store.snapshots import Snapshots


@dataclass
class MaintenanceReport:
    """What one maintenance run did to one namespace."""

    namespace: str
    versions_dropped: list[int] = field(default_factory=list)
    tombstones_purged: list[str] = field(default_factory=list)
    audit_trimmed: int = 0
    expired: list[str] = field(default_factory=list)
    """Memories whose caller-given expiry passed, tombstoned by this run."""


class Maintenance:
    """gc of versions, tombstone purge, audit retention."""

    def __init__(self, gateway: Gateway, snapshots: Snapshots, eraser: Eraser,
                 audit: AuditLog) -> None:
        self._gw = gateway
        self._snapshots = snapshots
        self._eraser = eraser
        self._audit = audit

    def expired_tombstones(self, namespace: str, now: datetime, grace_days: float) -> list[str]:
        """Ids tombstoned in the current version longer than ``grace_days`` ago (by the
        record's ``updated_at``, which the pass that tombstoned it set)."""
        validate_namespace(namespace)
        cutoff = as_utc(now) - timedelta(days=grace_days)
        ids = self._gw.live_ids(namespace)
        out = []
        for memory_id, raw in zip(ids, self._gw.load_raw(namespace, ids), strict=True):
            if raw is None:
                continue
            memory = unpack_memory(raw, namespace, memory_id, vector=False)
            if memory.status is Status.TOMBSTONED and memory.updated_at < cutoff:
                out.append(memory_id)
        return out

    def purge_tombstones(self, namespace: str, now: datetime, grace_days: float) -> list[str]:
        """Hard-delete tombstones older than ``grace_days`` (see :meth:`Eraser.purge`)."""
        expired = self.expired_tombstones(namespace, now, grace_days)
        if not expired:
            return []
        reason = (f"tombstoned more than {grace_days:g} days ago (tombstone_grace_days): "
                  "text and vector deleted")
        return sorted(self._eraser.purge(namespace, expired, now, reason))

    def run(self, namespace: str, now: datetime, *, snapshot_grace_days: float,
            tombstone_grace_days: float, audit_retention_days: float) -> MaintenanceReport:
        """Drop versions retired longer than ``snapshot_grace_days``, purge tombstones older
        than ``tombstone_grace_days``, trim audit events older than
        ``audit_retention_days`` (0 keeps every event)."""
        validate_namespace(namespace)
        now = as_utc(now)
        report = MaintenanceReport(namespace)
        report.versions_dropped = self._snapshots.gc(namespace, now, snapshot_grace_days)
        report.tombstones_purged = self.purge_tombstones(namespace, now, tombstone_grace_days)
        if audit_retention_days > 0:
            report.audit_trimmed = self._audit.trim(
                namespace, now - timedelta(days=audit_retention_days))
        return report
