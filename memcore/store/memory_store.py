"""MemoryStore: the Redis store of memcore, the small repositories on one connection.

Each repository owns one kind of data and shares the store's :class:`Gateway` (one
connection, the registered scripts and the one commit primitive). Callers use the
repositories directly (``store.records.get(...)``, ``store.snapshots.begin_pass(...)``):

* ``records`` (reads.py): consistent reads of the current version
* ``writes`` (writes.py): the write-path ops on records
* ``episodes`` (episodes.py): raw conversation turns
* ``audit`` (audit.py): the audit stream and its redactable payloads
* ``snapshots`` (snapshots.py): passes, versions, rollback, gc, index blobs
* ``eraser`` (erase.py): the right to be forgotten, and the purge of old tombstones
* ``fences`` (fences.py): each namespace's erase count, so an erase beats queued turns
* ``erased`` (erased.py): what single erases removed (hashes and turn ids, no text), so
  a turn accepted before such an erase does not store it again
* ``backlog`` (backlog.py): the ingest turns each namespace has queued and not finished
* ``maintenance`` (maintenance.py): gc of versions, tombstone purge, audit retention
* ``coordination`` (coordination.py): pass locks, plans, done markers, schedule claims,
  pass triggers and usage counters
* ``usage`` (usage.py): model calls and tokens per namespace and operation
* ``reviews`` (reviews.py): stored precision reviews
* ``imports`` (imports.py): export files written back, resumably (portable.py: format)
* ``ingest_marks`` (ingest_marks.py): how far ``memcore ingest`` got into a chat file
* ``rate_limits`` (rate_limits.py): per-API-key request and model-call limits
* ``hooks`` (hooks.py): webhooks, their delivery lanes and dead letters
* ``api_keys`` (api_keys.py) and ``task_log`` (task_log.py): the HTTP service's keys and
  its record of which task belongs to which namespace

The store itself keeps only what spans them: the connection (``ping``, ``close``, the
durability check) and each namespace's state (version pointer, erase epoch, order log),
which every repository's reads depend on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis

from memcore.store.api_keys import ApiKeyRepository
from memcore.store.audit import AuditLog
from memcore.store.backlog import Backlog
from memcore.store.base import NamespaceState
from memcore.store.connect import connect
from memcore.store.coordination import Coordination
from memcore.store.episodes import Episodes
from memcore.store.erase import Eraser
from memcore.store.erased import Erased
from memcore.store.fences import Fences
from memcore.store.gateway import Gateway
from memcore.store.hooks import HookRepository
from memcore.store.imports import Importer
from memcore.store.ingest_marks import IngestMarks
from memcore.store.maintenance import Maintenance
from memcore.store.rate_limits import RateLimits
from memcore.store.reads import Records
from memcore.store.reviews import Reviews
from memcore.store.snapshots import Snapshots
from memcore.store.task_log import TaskLog
from memcore.store.usage import UsageCounters
from memcore.store.writes import Writes


class MemoryStore:
    """Namespaced, versioned, audited memory storage on Redis."""

    def __init__(self, client: redis.Redis, *, check_durability: bool = True,
                 strength_cap: float = 10.0, pass_ttl_seconds: int = 6 * 3600) -> None:
        """Wrap ``client``; refuse a server whose eviction policy could drop keys."""
        self.gateway = Gateway(client, check_durability=check_durability,
                               strength_cap=strength_cap, pass_ttl_seconds=pass_ttl_seconds)
        self.audit = AuditLog(self.gateway)
        self.records = Records(self.gateway)
        self.writes = Writes(self.gateway, self.audit)
        self.episodes = Episodes(self.gateway)
        self.snapshots = Snapshots(self.gateway, self.audit)
        self.fences = Fences(self.gateway)
        self.erased = Erased(self.gateway)
        self.backlog = Backlog(self.gateway.client)
        self.eraser = Eraser(self.gateway, self.snapshots, self.episodes, self.audit,
                             self.fences, self.erased)
        self.maintenance = Maintenance(self.gateway, self.snapshots, self.eraser, self.audit)
        self.coordination = Coordination(self.gateway)
        self.usage = UsageCounters(self.gateway)
        self.reviews = Reviews(self.gateway)
        self.imports = Importer(self.gateway, self.audit, self.episodes)
        self.ingest_marks = IngestMarks(client)
        self.rate_limits = RateLimits(client)
        self.api_keys = ApiKeyRepository(client)
        self.task_log = TaskLog(client)
        self.hooks = HookRepository(client)

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> MemoryStore:
        """A store on a new client for ``url`` (``redis+cluster://h:p,...`` for a cluster)."""
        return cls(connect(url), **kw)

    @property
    def client(self) -> redis.Redis:
        """The underlying Redis client (for the store's own tests and tools; code outside
        ``memcore.store`` goes through the repositories)."""
        return self.gateway.client

    @property
    def strength_cap(self) -> float:
        """Cap of a memory's strength used by writes and replays."""
        return self.gateway.strength_cap

    def ping(self) -> bool:
        """True if the data Redis answers (raises the connection error otherwise)."""
        return bool(self.gateway.client.ping())

    def close(self) -> None:
        """Release the connection pool."""
        self.gateway.client.close()

    def check_durability(self) -> None:
        """Raise DurabilityError unless ``maxmemory-policy`` is ``noeviction``."""
        self.gateway.check_durability()

    def current_version(self, namespace: str) -> int:
        """The current snapshot version (0 before any pass)."""
        return self.gateway.current_version(namespace)

    def namespace_state(self, namespace: str) -> NamespaceState:
        """Version, erase epoch and order-log length in one round trip: what a reader's
        caches compare to know whether anything they hold is stale."""
        return self.gateway.namespace_state(namespace)

    def namespace_state_and(self, namespace: str, extra: Sequence[str]
                            ) -> tuple[NamespaceState, list[bytes | None]]:
        """:meth:`namespace_state` plus the values of the string keys ``extra`` (e.g. the
        API key revision), in the same round trip on a standalone Redis."""
        return self.gateway.namespace_state_and(namespace, extra)
