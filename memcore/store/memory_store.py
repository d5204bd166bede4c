"""MemoryStore: the Redis store of memcore, a facade over small repositories.

Each repository owns one kind of data and shares the store's :class:`Gateway` (one
connection, the registered scripts and the one commit primitive):

* ``records`` (reads.py): consistent reads of the current version
* ``writes`` (writes.py): the write-path ops on records
* ``episodes`` (episodes.py): raw conversation turns
* ``audit`` (audit.py): the audit stream and its redactable payloads
* ``snapshots`` (snapshots.py): passes, versions, rollback, gc, index blobs
* ``eraser`` (erase.py): the right to be forgotten, and the purge of old tombstones
* ``fences`` (fences.py): each namespace's erase count, so an erase beats queued turns
* ``backlog`` (backlog.py): ingest tasks accepted and not yet finished (back-pressure)
* ``maintenance`` (maintenance.py): gc of versions, tombstone purge, audit retention
* ``coordination`` (coordination.py): pass locks, plans, done markers, schedule claims,
  pass triggers and usage counters
* ``reviews`` (reviews.py): stored precision reviews
* ``api_keys`` (api_keys.py) and ``task_log`` (task_log.py): the HTTP service's keys and
  its record of which task belongs to which namespace

The facade's methods keep the names and signatures callers use; each delegates.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import redis

from memcore.core.filters import FilterFields
from memcore.core.models import Actor, AuditEvent, Episode, Memory, Status
from memcore.index.table import MemoryTable
from memcore.store.api_keys import ApiKeyRepository
from memcore.store.audit import AuditLog
from memcore.store.backlog import Backlog, Depth
from memcore.store.base import NamespaceState, PassView, VersionInfo
from memcore.store.connect import connect
from memcore.store.coordination import Coordination
from memcore.store.episodes import Episodes
from memcore.store.erase import Eraser, EraseReport
from memcore.store.fences import Fences
from memcore.store.gateway import Gateway
from memcore.store.locks import RenewedLock
from memcore.store.maintenance import Maintenance, MaintenanceReport
from memcore.store.reads import Records
from memcore.store.records import RecordMemo
from memcore.store.reviews import Reviews
from memcore.store.snapshots import Snapshots
from memcore.store.task_log import TaskLog
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
        self.backlog = Backlog(self.gateway.client)
        self.eraser = Eraser(self.gateway, self.snapshots, self.episodes, self.audit,
                             self.fences)
        self.maintenance = Maintenance(self.gateway, self.snapshots, self.eraser, self.audit)
        self.coordination = Coordination(self.gateway)
        self.reviews = Reviews(self.gateway)
        self.api_keys = ApiKeyRepository(client)
        self.task_log = TaskLog(client)

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> MemoryStore:
        """A store on a new client for ``url`` (``redis+cluster://h:p,...`` for a cluster)."""
        return cls(connect(url), **kw)

    @property
    def client(self) -> redis.Redis:
        """The underlying Redis client (for the store's own tests and tools; code outside
        ``memcore.store`` goes through the methods below)."""
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

    # --- records: reads ---------------------------------------------------------------
    def namespaces(self) -> list[str]:
        """Every namespace that has data, sorted."""
        return self.records.namespaces()

    def has_namespace(self, namespace: str) -> bool:
        """True if ``namespace`` has data (a typo'd name has none)."""
        return self.records.has_namespace(namespace)

    def get(self, namespace: str, memory_id: str) -> Memory | None:
        """A memory of the current version, or None."""
        return self.records.get(namespace, memory_id)

    def get_many(self, namespace: str, ids: Sequence[str], *, vectors: bool = True,
                 memo: RecordMemo | None = None) -> list[Memory | None]:
        """Memories of the current version (one atomic round trip; ``vectors=False``
        leaves ``vector`` None; ``memo``: no vectors, records decoded before and unchanged
        since are reused, see :class:`RecordMemo`)."""
        return self.records.get_many(namespace, ids, vectors=vectors, memo=memo)

    def search_read(self, namespace: str, ids: Sequence[str], memo: RecordMemo,
                    extra: str | None = None,
                    check: Callable[[bytes | None], None] | None = None,
                    ) -> tuple[NamespaceState, list[Memory | None]]:
        """:meth:`namespace_state` and :meth:`get_many` (with ``memo``) of ``ids`` in one
        round trip: a search that ranked on its cached index reads both at once. With
        ``extra``, ``check(its value)`` runs before any record is decoded (a server's
        API key revision, read in the same round trip on a standalone Redis)."""
        return self.records.search_read(namespace, ids, memo, extra, check)

    def get_many_packed(self, namespace: str, ids: Sequence[str]
                        ) -> list[tuple[Memory, bytes] | None]:
        """:meth:`get_many` with each vector left packed (memory without it, packed
        bytes): what a pass loads, decoding only the vectors of what it changes."""
        return self.records.get_many_packed(namespace, ids)

    def find_by_hash(self, namespace: str, content_hash: str) -> str | None:
        """Id of a live memory whose normalized text has ``content_hash``."""
        return self.records.find_by_hash(namespace, content_hash)

    def find_by_hashes(self, namespace: str, hashes: Sequence[str]) -> list[str | None]:
        """For each content hash, the id of a live memory with that text (or None)."""
        return self.records.find_by_hashes(namespace, hashes)

    def find_by_hashes_at(self, namespace: str, hashes: Sequence[str]
                          ) -> tuple[int, list[str | None]]:
        """:meth:`find_by_hashes` and the current version it read them from."""
        return self.records.find_by_hashes_at(namespace, hashes)

    def iter_memories(self, namespace: str, statuses: Collection[Status] | None = None, *,
                      vectors: bool = True) -> Iterator[Memory]:
        """Memories of the current version (one version throughout), optionally by status
        (``vectors=False``: vectors left undecoded)."""
        return self.records.iter_memories(namespace, statuses, vectors=vectors)

    def filter_fields_many(self, namespace: str, ids: Sequence[str]) -> list[FilterFields | None]:
        """What filters read of ``ids`` (current version, one round trip)."""
        return self.records.filter_fields_many(namespace, ids)

    def iter_filter_fields(self, namespace: str) -> Iterator[FilterFields]:
        """What filters read of every memory of the current version (a cheap scan)."""
        return self.records.iter_filter_fields(namespace)

    def count_by_status(self, namespace: str) -> dict[str, int]:
        """Status -> number of memories in the current version (every status present)."""
        return self.records.count_by_status(namespace)

    def vectors_since(self, namespace: str, version: int, offset: int, limit: int | None = None
                      ) -> tuple[list[str], np.ndarray, int]:
        """Ids and vectors appended to ``version``'s order log from ``offset``."""
        return self.records.vectors_since(namespace, version, offset, limit)

    # --- records: writes --------------------------------------------------------------
    def add(self, namespace: str, memory: Memory, *, actor: Actor, reason: str,
            decision: str | None = None) -> Memory:
        """ADD ``memory`` (idempotent by id; a live twin by content hash is reinforced)."""
        return self.writes.add(namespace, memory, actor=actor, reason=reason, decision=decision)

    def add_new(self, namespace: str, memories: Sequence[Memory], *, actor: Actor,
                reason: str) -> int:
        """Bulk ADD of memories with new ids and content hashes, one commit (loaders)."""
        return self.writes.add_new(namespace, memories, actor=actor, reason=reason)

    def update(self, namespace: str, memory_id: str, *, text: str, vector: list[float] | None,
               source: str, now: datetime, reason: str, decision: str | None = None,
               actor: Actor = Actor.INGEST) -> Memory:
        """UPDATE: new text (+hash, +vector), strength +1 capped, source counts as support."""
        return self.writes.update(namespace, memory_id, text=text, vector=vector, source=source,
                                  now=now, reason=reason, decision=decision, actor=actor)

    def supersede(self, namespace: str, old_id: str, new_memory: Memory, *, now: datetime,
                  reason: str, decision: str | None = None,
                  actor: Actor = Actor.INGEST) -> Memory:
        """Add ``new_memory`` and close ``old_id`` (never deletes)."""
        return self.writes.supersede(namespace, old_id, new_memory, now=now, reason=reason,
                                     decision=decision, actor=actor)

    def reinforce(self, namespace: str, memory_id: str, *, source: str, now: datetime, reason: str,
                  actor: Actor = Actor.INGEST, decision: str | None = None,
                  metadata: Mapping[str, object] | None = None) -> Memory:
        """NOOP-reinforce: support +1, confidence +0.25, ``metadata`` joined (idempotent
        per source)."""
        return self.writes.reinforce(namespace, memory_id, source=source, now=now, reason=reason,
                                     actor=actor, decision=decision, metadata=metadata)

    def pin(self, namespace: str, memory_id: str, now: datetime, reason: str = "pinned") -> Memory:
        """Pin a memory (exempt from decay and the cap), audited."""
        return self.writes.pin(namespace, memory_id, now, reason)

    def unpin(self, namespace: str, memory_id: str, now: datetime,
              reason: str = "unpinned") -> Memory:
        """Unpin a memory, audited."""
        return self.writes.unpin(namespace, memory_id, now, reason)

    def restore(self, namespace: str, memory_id: str, now: datetime,
                reason: str = "restored") -> Memory:
        """Bring a tombstoned memory back to active, audited."""
        return self.writes.restore(namespace, memory_id, now, reason)

    def tombstone(self, namespace: str, memory_id: str, now: datetime,
                  reason: str = "deleted by the user") -> Memory:
        """A user's delete (restorable); a deleted or unknown memory raises."""
        return self.writes.tombstone(namespace, memory_id, now, reason)

    def edit(self, namespace: str, memory_id: str, *, now: datetime, text: str | None = None,
             vector: list[float] | None = None, metadata: Mapping[str, object] | None = None,
             reason: str = "edited by the user", expires_at: datetime | None = None) -> Memory:
        """A user's edit of text (with its vector), metadata and/or expiry, audited."""
        return self.writes.edit(namespace, memory_id, now=now, text=text, vector=vector,
                                metadata=metadata, reason=reason, expires_at=expires_at)

    def expire(self, namespace: str, memory_id: str, now: datetime) -> Memory | None:
        """Tombstone a memory whose caller-given expiry passed, audited EXPIRE (None: no
        longer due)."""
        return self.writes.expire(namespace, memory_id, now)

    def touch(self, namespace: str, ids: Sequence[str], now: datetime,
              strength_cap: float = 10.0) -> None:
        """Recall bookkeeping for ``ids`` in one round trip (not audited)."""
        self.writes.touch(namespace, ids, now, strength_cap)

    # --- episodes ---------------------------------------------------------------------
    def add_episodes(self, episodes: Sequence[Episode]) -> list[bool]:
        """Store episodes; True = newly stored, False = that id was already there."""
        return self.episodes.add_episodes(episodes)

    def get_episode(self, namespace: str, episode_id: str) -> Episode | None:
        """One episode by id, or None."""
        return self.episodes.get_episode(namespace, episode_id)

    def iter_episodes(self, namespace: str) -> Iterator[Episode]:
        """Every stored episode in arrival order."""
        return self.episodes.iter_episodes(namespace)

    # --- audit ------------------------------------------------------------------------
    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        """Append events to their namespaces' audit streams."""
        self.audit.append(events)

    def audit_tail(self, namespace: str, count: int = 20) -> list[AuditEvent]:
        """The last ``count`` events, oldest first."""
        return self.audit.tail(namespace, count)

    def history(self, namespace: str, memory_id: str) -> list[AuditEvent]:
        """Events of ``memory_id``, its predecessors and successors, oldest first."""
        return self.audit.history(namespace, memory_id)

    def trim_audit(self, namespace: str, older_than: datetime) -> int:
        """Delete events whose time is before ``older_than``; returns how many."""
        return self.audit.trim(namespace, older_than)

    # --- snapshots --------------------------------------------------------------------
    def begin_pass(self, namespace: str, *, columns: bool = False,
                   read: bool = True) -> PassView:
        """Start a pass: write-path ops are logged from now on; read version ``v`` whole
        (``columns=True``: as a MemoryTable in ``view.table``; ``read=False``: nothing)."""
        return self.snapshots.begin_pass(namespace, columns=columns, read=read)

    def generation(self, namespace: str) -> str:
        """Token replaced by erase, purge and rollback (see ``Snapshots.generation``)."""
        return self.snapshots.generation(namespace)

    def changed_since(self, namespace: str, version: int) -> set[str] | None:
        """Ids that may have changed since a read at ``version`` (None: unknown; see
        ``Snapshots.changed_since``)."""
        return self.snapshots.changed_since(namespace, version)

    def read_rows(self, namespace: str, ids: Sequence[str]) -> tuple[MemoryTable, list[str]]:
        """The records of ``ids`` as a table, and the ids without a record."""
        return self.snapshots.read_rows(namespace, ids)

    @property
    def last_commit_delta_ids(self) -> set[str]:
        """Ids the write-path ops replayed by this store's last pass commit named (what
        changed between that pass's ``begin_pass`` and its swap)."""
        return set(self.snapshots.last_delta_ids)

    @property
    def last_commit_versions(self) -> list[int]:
        """Versions this store's last pass commit created, in order (a pass that changed
        more records than one swap moves commits several; see ``commit_changes``)."""
        return list(self.snapshots.last_versions)

    def read_table(self, namespace: str) -> MemoryTable:
        """Every record of ``namespace`` as columns (a consolidation pass's view)."""
        return self.snapshots.read_table(namespace)

    def commit_changes(self, namespace: str, view: PassView, changed: Sequence[Memory],
                       events: Sequence[AuditEvent], *, now: datetime,
                       read_versions: dict[str, int] | None = None) -> int:
        """Commit only the records a pass changed as the next version (the rest is shared).

        Raises StoreConflict if the pointer moved or another pass took over."""
        return self.snapshots.commit_changes(namespace, view, changed, events, now=now,
                                             read_versions=read_versions)

    def commit_pass(self, namespace: str, view: PassView, memories: Sequence[Memory],
                    events: Sequence[AuditEvent], *, now: datetime) -> int:
        """Commit a pass result as a new version (only records that differ from ``view`` are
        written), replay, swap the pointer; the new number.

        Raises StoreConflict if the pointer moved or another pass took over."""
        return self.snapshots.commit_pass(namespace, view, memories, events, now=now)

    def versions(self, namespace: str) -> list[VersionInfo]:
        """Committed versions, oldest first."""
        return self.snapshots.versions(namespace)

    def rollback(self, namespace: str, version: int, now: datetime,
                 reason: str = "rollback") -> None:
        """Point ``namespace`` back at committed ``version``,
        cancelling a pass in progress; audited."""
        self.snapshots.rollback(namespace, version, now, reason)

    def gc(self, namespace: str, now: datetime, grace_days: float = 7.0) -> list[int]:
        """Delete versions retired more than ``grace_days`` ago; the deleted numbers."""
        return self.snapshots.gc(namespace, now, grace_days)

    def store_index_blob(self, namespace: str, version: int, blob: bytes) -> None:
        """Store a built index with a version."""
        self.snapshots.store_index_blob(namespace, version, blob)

    def load_index_blob(self, namespace: str, version: int) -> bytes | None:
        """The stored index of ``version``, or None."""
        return self.snapshots.load_index_blob(namespace, version)

    def move_index_blob(self, namespace: str, old: int, new: int) -> bool:
        """Move the stored index of version ``old`` to version ``new`` (inside Redis)."""
        return self.snapshots.move_index_blob(namespace, old, new)

    def drop_index_blobs(self, namespace: str, version: int) -> None:
        """Delete the stored index of ``version``."""
        self.snapshots.drop_index_blobs(namespace, version)

    # --- erase ------------------------------------------------------------------------
    def erase_memory(self, namespace: str, memory_id: str, now: datetime,
                     reason: str = "erase requested") -> int:
        """Erase one memory everywhere; how many memory ids were removed."""
        return self.eraser.erase_memory(namespace, memory_id, now, reason)

    def erase_memory_and_sources(self, namespace: str, memory_id: str, now: datetime,
                                 reason: str = "erase requested") -> EraseReport:
        """Erase one memory everywhere and the turns it came from (other memories from
        those turns stay and are reported when no source turn of theirs is left)."""
        return self.eraser.erase_memory_and_sources(namespace, memory_id, now, reason)

    def erase_episode(self, namespace: str, episode_id: str, now: datetime,
                      reason: str = "erase requested") -> int:
        """Erase an episode and what it alone supports."""
        return self.eraser.erase_episode(namespace, episode_id, now, reason)

    def erase_namespace(self, namespace: str, now: datetime,
                        reason: str = "erase requested", *, missing_ok: bool = False) -> int:
        """Delete every key of ``namespace``; only an ERASE audit event remains. The
        erase fence advances first: turns accepted before and still queued are dropped.
        A namespace without any key (fenced all the same) raises NamespaceNotFound unless
        ``missing_ok``."""
        return self.eraser.erase_namespace(namespace, now, reason, missing_ok=missing_ok)

    def fence_namespace(self, namespace: str) -> int:
        """Advance the erase fence of ``namespace`` without erasing anything stored: its
        turns accepted before now and still queued are dropped. The new erase count."""
        return self.fences.advance(namespace)

    def erase_fence(self, namespace: str) -> int:
        """How many times ``namespace`` was erased whole: producers stamp ingest tasks
        with it, workers drop a task stamped lower (memcore.store.fences)."""
        return self.fences.current(namespace)

    def record_drop(self, namespace: str, *, turns: int, accepted: int, fence: int,
                    task_id: str | None, now: datetime, keep_seconds: int) -> bool:
        """Audit (once per task id) that turns accepted before an erase were dropped."""
        return self.fences.record_drop(namespace, turns=turns, accepted=accepted, fence=fence,
                                       task_id=task_id, now=now, keep_seconds=keep_seconds)

    def reserve_backlog(self, namespace: str, task_ids: Sequence[str], *,
                        namespace_limit: int, total_limit: int,
                        stale_seconds: float) -> Depth | None:
        """Count ingest tasks about to be sent into the backlog, unless a limit (0: none)
        would be passed: then the depth found, and nothing counted (backlog.py)."""
        return self.backlog.reserve(namespace, task_ids, namespace_limit=namespace_limit,
                                    total_limit=total_limit, stale_seconds=stale_seconds)

    def release_backlog(self, namespace: str, task_ids: Sequence[str]) -> None:
        """Take finished (or unsent) ingest tasks out of the backlog."""
        self.backlog.release(namespace, task_ids)

    def backlog_depth(self, namespace: str | None = None) -> Depth:
        """Ingest tasks accepted and not finished, of ``namespace`` and of all."""
        return self.backlog.depth(namespace)

    def rewrite_aof(self, wait: float = 30.0) -> bool:
        """Ask Redis to rewrite its append-only file, so erased bytes leave the disk too."""
        return self.eraser.rewrite_aof(wait)

    def rewrite_files(self, wait: float = 30.0) -> None:
        """Rewrite the AOF and, where RDB snapshots are kept, ``dump.rdb``: what every
        erase does, so erased bytes leave the disk too."""
        self.eraser.rewrite_files(wait)

    # --- maintenance ------------------------------------------------------------------
    def maintain(self, namespace: str, now: datetime, *, snapshot_grace_days: float,
                 tombstone_grace_days: float, audit_retention_days: float
                 ) -> MaintenanceReport:
        """Drop expired versions, purge old tombstones, trim the audit (0 days: keep)."""
        return self.maintenance.run(namespace, now, snapshot_grace_days=snapshot_grace_days,
                                    tombstone_grace_days=tombstone_grace_days,
                                    audit_retention_days=audit_retention_days)

    def purge_tombstones(self, namespace: str, now: datetime, grace_days: float) -> list[str]:
        """Hard-delete tombstones older than ``grace_days``; the purged ids."""
        return self.maintenance.purge_tombstones(namespace, now, grace_days)

    def purged_at(self, namespace: str, memory_id: str) -> datetime | None:
        """When maintenance purged ``memory_id`` (None: it was not purged)."""
        return self.eraser.purged_at(namespace, memory_id)

    # --- coordination -----------------------------------------------------------------
    def pass_lock(self, namespace: str, pass_id: str, ttl: float) -> RenewedLock:
        """The lock of the one pass running on ``namespace``, for ``pass_id``."""
        return self.coordination.pass_lock(namespace, pass_id, ttl)

    def pass_lock_holder(self, namespace: str) -> str | None:
        """The pass id holding the pass lock of ``namespace``, or None."""
        return self.coordination.pass_lock_holder(namespace)

    def stash_pass_plan(self, namespace: str, pass_id: str, body: str, ttl_seconds: int) -> None:
        """Keep a running pass's plan (JSON) where every worker of the pass can read it."""
        self.coordination.stash_pass_plan(namespace, pass_id, body, ttl_seconds)

    def pass_plan(self, namespace: str, pass_id: str) -> str | None:
        """The stashed plan of pass ``pass_id`` (None: expired or finished)."""
        return self.coordination.pass_plan(namespace, pass_id)

    def drop_pass_plan(self, namespace: str, pass_id: str) -> None:
        """Forget the stashed plan of a finished pass."""
        self.coordination.drop_pass_plan(namespace, pass_id)

    def mark_pass_done(self, namespace: str, pass_id: str, ttl_seconds: int) -> None:
        """Remember for ``ttl_seconds`` that pass ``pass_id`` finished."""
        self.coordination.mark_pass_done(namespace, pass_id, ttl_seconds)

    def pass_done(self, namespace: str, pass_id: str) -> bool:
        """True if pass ``pass_id`` finished (within the remembered time)."""
        return self.coordination.pass_done(namespace, pass_id)

    def claim_schedule(self, namespace: str, slot: int, ttl_seconds: int) -> bool:
        """True for the first scheduler claiming ``namespace`` in interval ``slot``."""
        return self.coordination.claim_schedule(namespace, slot, ttl_seconds)

    def pending_importance(self, namespace: str) -> float:
        """Summed importance (1-10 scale) of memories written since the last pass."""
        return self.coordination.pending_importance(namespace)

    def last_pass_at(self, namespace: str) -> datetime | None:
        """When the last pass committed, or None."""
        return self.coordination.last_pass_at(namespace)

    def incr_counters(self, namespace: str, counts: Mapping[str, float]) -> None:
        """Add to usage counters (model calls, tokens, embeddings, decisions...)."""
        self.coordination.incr_counters(namespace, counts)

    def counters(self, namespace: str) -> dict[str, float]:
        """All usage counters of ``namespace``."""
        return self.coordination.counters(namespace)

    # --- reviews ----------------------------------------------------------------------
    def add_review(self, namespace: str, line: str) -> None:
        """Append one precision review record (JSON) to the history of ``namespace``."""
        self.reviews.add_review(namespace, line)

    def review_history(self, namespace: str) -> list[str]:
        """Every stored precision review record of ``namespace``, oldest first."""
        return self.reviews.reviews(namespace)
