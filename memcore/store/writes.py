"""Write-path operations on records: optimistic, record-versioned, audited.

Each operation reads the pointer, the pass token and the records it changes with one
script (``READ_FOR_WRITE``), computes the new records with the pure functions of
``ops`` (a :class:`WritePlan`), and commits records, indexes, audit and (while a pass
runs) delta entries with the store's commit primitive (:meth:`Gateway.commit`). If
anything it read changed meanwhile nothing is written and the op plans again on fresh
data, so a write based on a stale read is never applied and never lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import redis

from memcore.core.bounds import Capped, unlisted_count
from memcore.core.errors import MemoryNotFound, MemoryStateError
from memcore.core.models import (
    Actor,
    AuditAction,
    AuditEvent,
    Memory,
    Status,
    as_utc,
    validate_identifier,
    validate_metadata,
    validate_namespace,
)
from memcore.core.text import content_hash as hash_of
from memcore.store import keys, ops
from memcore.store.audit import AuditLog
from memcore.store.base import DeltaEntry, DeltaOp, PurgedError
from memcore.store.changes import Change, queue_changes
from memcore.store.codec import to_micros, unpack_memory
from memcore.store.commit import ScriptBatch
from memcore.store.gateway import Gateway
from memcore.store.unlisted import unlisted_key

TOUCH_CHUNK = 128
"""Memories per TOUCH script call. A script blocks Redis while it runs; a server's batch
of touches (hundreds of memories every 0.2 s) in one call held every other client's
search for milliseconds (up to 40 ms in ``bench api``'s Redis slowlog)."""


@dataclass
class WritePlan:
    """What one write op commits: its result, record changes, audit events, and the
    importance it adds to the consolidation trigger."""

    result: Memory
    changes: list[Change] = field(default_factory=list)
    events: list[AuditEvent] = field(default_factory=list)
    pending: float = 0.0
    unlisted: dict[str, list[str]] = field(default_factory=dict)
    """Memory id -> source ids its new record no longer lists (memcore.store.unlisted)."""


class Reader:
    """Reads of one write op, all from one version; every key read is checked at commit.

    ``prefetch`` holds what the ``READ_FOR_WRITE`` script already returned (records by
    id, owners by content hash); anything else is read with a GET of that version.
    """

    def __init__(self, client: redis.Redis, namespace: str, version: int,
                 records: Mapping[str, bytes | None] | None = None,
                 owners: Mapping[str, bytes | None] | None = None) -> None:
        self.client, self.ns, self.version = client, namespace, version
        self.raw: dict[str, bytes | None] = dict(records or {})
        self.raw_owners: dict[str, bytes | None] = dict(owners or {})
        self.lazy = 0  # reads made after the prefetch
        self._memories: dict[str, Memory | None] = {}

    @property
    def owners(self) -> dict[str, str | None]:
        """Content hash -> owner id, for every hash read."""
        return {h: None if raw is None else raw.decode() for h, raw in self.raw_owners.items()}

    def get(self, memory_id: str) -> Memory | None:
        """The record of ``memory_id`` (checked at commit)."""
        if memory_id not in self._memories:
            if memory_id not in self.raw:
                self.lazy += 1
                self.raw[memory_id] = self.client.get(
                    keys.memory(self.ns, memory_id))
            raw = self.raw[memory_id]
            self._memories[memory_id] = (None if raw is None
                                         else unpack_memory(raw, self.ns, memory_id))
        return self._memories[memory_id]

    def need(self, memory_id: str) -> Memory:
        """Like :meth:`get` but raises KeyError naming the memory when it is missing
        (:class:`PurgedError` when maintenance purged it)."""
        memory = self.get(memory_id)
        if memory is None:
            purged = self.client.hget(keys.purged(self.ns), memory_id)
            if purged is not None:
                when = datetime.fromtimestamp(float(purged), UTC).strftime("%Y-%m-%d %H:%M UTC")
                raise PurgedError(
                    f"memory {memory_id!r} of namespace {self.ns!r} was purged on {when}: it "
                    "was a tombstone past its grace period (tombstone_grace_days), its text "
                    "and vector are deleted and it cannot be restored")
            raise MemoryNotFound(f"memory {memory_id!r} not found in namespace {self.ns!r}")
        return memory

    def owner(self, content_hash: str) -> str | None:
        """The live memory id registered for ``content_hash`` (checked at commit)."""
        if content_hash not in self.raw_owners:
            self.lazy += 1
            self.raw_owners[content_hash] = self.client.get(
                keys.by_hash(self.ns, content_hash))
        raw = self.raw_owners[content_hash]
        return None if raw is None else raw.decode()

    def counted(self, memory: Memory, source: str) -> bool:
        """Has ``memory`` counted ``source`` already? Listed sources are checked in the
        record; a capped record (support counts more than it lists) also asks the set of
        its unlisted ids. That set only changes in a commit that changes the record, so
        the record's check at commit covers this read too."""
        if not source or source in memory.sources:
            return bool(source)
        if not unlisted_count(memory):
            return False
        self.lazy += 1
        return bool(self.client.sismember(unlisted_key(self.ns, memory.id), source))

    def check_all(self, batch: ScriptBatch) -> None:
        """Add a check for every key read."""
        for memory_id, raw in self.raw.items():
            batch.check(keys.memory(self.ns, memory_id), raw)
        for content_hash, raw in self.raw_owners.items():
            batch.check(keys.by_hash(self.ns, content_hash), raw)


class Writes:
    """ADD, UPDATE, supersede, reinforce, touch, pin/unpin, restore."""

    def __init__(self, gateway: Gateway, audit: AuditLog) -> None:
        self._gw = gateway
        self._audit = audit

    def transact(self, namespace: str, plan: Callable[[Reader], WritePlan], ids: Sequence[str] = (),
                 hashes: Sequence[str] = ()) -> Memory:
        """Read (one script: pointer, pass token, records ``ids``, owners of ``hashes`` and
        their records), plan in Python, commit with the compare-and-write primitive; a
        conflict (anything read changed meanwhile) plans again on fresh data."""
        validate_namespace(namespace)
        for memory_id in ids:  # the script builds keys from them: validate first
            validate_identifier(memory_id)
        for content_hash in hashes:
            keys.check_hash(content_hash)
        gw = self._gw
        gw.register(namespace)
        cur, tok = keys.current(namespace), keys.pass_token(namespace)
        while True:
            res = gw.read_for_write(keys=[cur, tok],
                                    args=[keys.prefix(namespace), len(ids), *ids, *hashes])
            version, token = int(res[0]), res[1]
            records = dict(zip(ids, res[2 : 2 + len(ids)], strict=True))
            owners: dict[str, bytes | None] = {}
            for pos, content_hash in enumerate(hashes):
                owner, record = res[2 + len(ids) + 2 * pos : 4 + len(ids) + 2 * pos]
                owners[content_hash] = owner
                if owner is not None:
                    records.setdefault(owner.decode(), record)
            reader = Reader(gw.client, namespace, version, records, owners)
            result = plan(reader)
            for change in result.changes:  # check the hash keys we may delete
                old, new = change.old, change.new
                if old is not None and old.live and not (
                        new is not None and new.live and new.content_hash == old.content_hash):
                    reader.owner(old.content_hash)
            batch = gw.batch(namespace)
            queue_changes(batch, namespace, version, result.changes, reader.owners,
                          token is not None)
            for memory_id, sources in result.unlisted.items():
                batch.sadd(unlisted_key(namespace, memory_id), sources)
            self._audit.queue(batch, result.events)
            if result.pending:
                batch.incrbyfloat(keys.pending(namespace), result.pending)
            if version == 0 and batch.writes:
                now = result.result.updated_at.timestamp()
                batch.zadd(keys.versions(namespace), {"0": now}, nx=True)
            if not batch.writes and not reader.lazy:
                return result.result  # nothing to write; everything read in one moment
            reader.check_all(batch)  # lazy reads with nothing to write: checks only
            if gw.commit(namespace, batch, version=version, token=token):
                return result.result

    # --- operations --------------------------------------------------------------------
    def add(self, namespace: str, memory: Memory, *, actor: Actor, reason: str,
            decision: str | None = None) -> Memory:
        """ADD ``memory``. Idempotent by id; if a live memory already has the same content
        hash, the new sources reinforce it instead and that memory is returned."""
        if memory.namespace != namespace:
            raise ValueError(
                f"namespace: memory belongs to {memory.namespace!r}, not {namespace!r}")
        keys.check_hash(memory.content_hash)

        def plan(rd: Reader) -> WritePlan:
            existing = rd.get(memory.id)
            if existing is not None:  # redelivered task: already stored
                return WritePlan(existing)
            owner = rd.owner(memory.content_hash)
            twin = rd.get(owner) if owner and owner != memory.id else None
            if twin is not None and twin.live:
                return self._plan_duplicate(rd, twin, memory, actor, reason, decision)
            new = memory.model_copy(update={"version": memory.version + 1})
            event = AuditEvent(action=AuditAction.ADD, namespace=namespace, after=[new.id],
                               reason=reason,
                               actor=actor, decision=decision, text=new.text, at=new.updated_at)
            return WritePlan(new, [Change(None, new, [DeltaEntry(new.id, DeltaOp.ADD, new.version,
                                                            record=new)])],
                        [event], pending=new.importance * 10)

        return self.transact(namespace, plan, ids=[memory.id], hashes=[memory.content_hash])

    def add_new(self, namespace: str, memories: Sequence[Memory], *, actor: Actor,
                reason: str) -> int:
        """Bulk ADD: one commit for ``memories`` whose ids and content hashes are new (a
        loader's fast path). It queues exactly what :meth:`add` queues for a new memory
        (record, hash key, status count, order log, ADD audit entry, pending importance,
        delta entry during a pass) and checks every id and hash key is still absent; if
        one is not, each memory goes through :meth:`add` instead. Returns how many."""
        validate_namespace(namespace)
        for memory in memories:
            if memory.namespace != namespace:
                raise ValueError(f"namespace: memory belongs to {memory.namespace!r}, "
                                 f"not {namespace!r}")
            validate_identifier(memory.id)
            keys.check_hash(memory.content_hash)
        if len({m.content_hash for m in memories}) < len(memories):
            raise ValueError("memories: two have the same content hash (use add)")
        gw = self._gw
        gw.register(namespace)
        version = gw.current_version(namespace)
        token = gw.client.get(keys.pass_token(namespace))
        news = [m.model_copy(update={"version": m.version + 1}) for m in memories]
        changes = [Change(None, m, [DeltaEntry(m.id, DeltaOp.ADD, m.version, record=m)])
                   for m in news]
        batch = gw.batch(namespace)
        queue_changes(batch, namespace, version, changes, {}, token is not None)
        self._audit.queue(batch, [AuditEvent(action=AuditAction.ADD, namespace=namespace,
                                             after=[m.id], reason=reason, actor=actor,
                                             text=m.text, at=m.updated_at) for m in news])
        batch.incrbyfloat(keys.pending(namespace), sum(m.importance * 10 for m in news))
        if version == 0 and news:
            batch.zadd(keys.versions(namespace), {"0": news[0].updated_at.timestamp()}, nx=True)
        for m in news:
            batch.check(keys.memory(namespace, m.id), None)
            batch.check(keys.by_hash(namespace, m.content_hash), None)
        if gw.commit(namespace, batch, version=version, token=token):
            return len(news)
        for memory in memories:  # something changed or exists already: one by one
            self.add(namespace, memory, actor=actor, reason=reason)
        return len(memories)

    def _plan_duplicate(self, rd: Reader, twin: Memory, memory: Memory, actor: Actor,
                        reason: str, decision: str | None) -> WritePlan:
        cur = twin
        entries = []
        capped = Capped()
        meta = memory.metadata or None
        for source in memory.sources:
            if rd.counted(cur, source):
                continue
            out = ops.reinforced(cur, source=source, now=memory.updated_at, metadata=meta)
            if out is not None:
                cur, step = out
                capped.add(step)
                args: dict[str, object] = {"source": source, "now": memory.updated_at}
                if meta:
                    args["metadata"] = meta
                entries.append(DeltaEntry(cur.id, DeltaOp.REINFORCE, cur.version, args))
        if not entries:
            return WritePlan(twin)
        event = AuditEvent(action=AuditAction.NOOP, namespace=rd.ns, before=[twin.id],
                           after=[twin.id],
                           reason=_noted(f"same text as {twin.id}: {reason}", capped),
                           actor=actor, decision=decision, at=memory.updated_at)
        return WritePlan(cur, [Change(twin, cur, entries)], [event],
                         unlisted=_unlisted(twin.id, capped))

    def update(self, namespace: str, memory_id: str, *, text: str, vector: list[float] | None,
               source: str, now: datetime, reason: str, decision: str | None = None,
               actor: Actor = Actor.INGEST) -> Memory:
        """UPDATE: new text (+hash, +vector), strength +1 capped, new source counts as support."""
        probe = Memory.model_validate({**_PROBE, "text": text, "vector": vector})
        vector = probe.vector  # normalized, and bad input fails with the field named
        now = as_utc(now)

        def plan(rd: Reader) -> WritePlan:
            old = rd.need(memory_id)
            # A source the record counted but no longer lists counts as listed would.
            seen = source not in old.sources and rd.counted(old, source)
            if seen and hash_of(text, old.scope) == old.content_hash:
                return WritePlan(old)  # redelivered: this source already updated it
            out = ops.updated(old, text=text, vector=vector, source="" if seen else source,
                              now=now, strength_cap=self._gw.strength_cap)
            if out is None:  # redelivered: this source already updated it to this text
                return WritePlan(old)
            new, capped = out
            entry = DeltaEntry(memory_id, DeltaOp.UPDATE, new.version,
                               {"text": text, "vector": new.vector, "source": source, "now": now})
            event = AuditEvent(action=AuditAction.UPDATE, namespace=namespace, before=[memory_id],
                               after=[memory_id], reason=_noted(reason, capped), actor=actor,
                               decision=decision, text=text, at=now)
            return WritePlan(new, [Change(old, new, [entry], reindex=vector is not None)], [event],
                             pending=new.importance * 10, unlisted=_unlisted(memory_id, capped))

        return self.transact(namespace, plan, ids=[memory_id])

    def supersede(self, namespace: str, old_id: str, new_memory: Memory, *, now: datetime,
                  reason: str, decision: str | None = None,
                  actor: Actor = Actor.INGEST) -> Memory:
        """Add ``new_memory`` and close ``old_id`` (valid_until=now, superseded); never deletes."""
        if new_memory.namespace != namespace:
            raise ValueError(
                f"namespace: memory belongs to {new_memory.namespace!r}, not {namespace!r}")
        keys.check_hash(new_memory.content_hash)
        now = as_utc(now)

        def plan(rd: Reader) -> WritePlan:
            old = rd.need(old_id)
            existing = rd.get(new_memory.id)
            if existing is not None:  # redelivered
                return WritePlan(existing)
            new = new_memory.model_copy(update={"version": new_memory.version + 1})
            closed = ops.close(old, new_id=new.id, now=now)
            event = AuditEvent(action=AuditAction.SUPERSEDE, namespace=namespace, before=[old_id],
                               after=[new.id], reason=reason, actor=actor, decision=decision,
                               text=new.text, at=now)
            return WritePlan(new, [
                Change(old, closed, [DeltaEntry(old_id, DeltaOp.CLOSE, closed.version,
                                                {"new_id": new.id, "now": now})]),
                Change(None, new, [DeltaEntry(new.id, DeltaOp.ADD, new.version, record=new)]),
            ], [event], pending=new.importance * 10)

        return self.transact(namespace, plan, ids=[old_id, new_memory.id])

    def reinforce(self, namespace: str, memory_id: str, *, source: str, now: datetime, reason: str,
                  actor: Actor = Actor.INGEST, decision: str | None = None,
                  metadata: Mapping[str, object] | None = None) -> Memory:
        """NOOP-reinforce: support +1, confidence +0.25 (cap 1), source added, the repeat's
        ``metadata`` joined to the memory's.

        Idempotent per source: a source already counted changes nothing."""
        now = as_utc(now)
        meta = validate_metadata(dict(metadata)) if metadata else None

        def plan(rd: Reader) -> WritePlan:
            old = rd.need(memory_id)
            if rd.counted(old, source):
                return WritePlan(old)
            out = ops.reinforced(old, source=source, now=now, metadata=meta)
            if out is None:
                return WritePlan(old)
            new, capped = out
            args: dict[str, object] = {"source": source, "now": now}
            if meta:
                args["metadata"] = meta
            entry = DeltaEntry(memory_id, DeltaOp.REINFORCE, new.version, args)
            event = AuditEvent(action=AuditAction.NOOP, namespace=namespace, before=[memory_id],
                               after=[memory_id], reason=_noted(reason, capped), actor=actor,
                               decision=decision, at=now)
            return WritePlan(new, [Change(old, new, [entry])], [event],
                             unlisted=_unlisted(memory_id, capped))

        return self.transact(namespace, plan, ids=[memory_id])

    def _simple(self, namespace: str, memory_id: str, op: DeltaOp, action: AuditAction,
                now: datetime,
                reason: str, refuse_deleted: str = "", refuse_live: bool = False) -> Memory:
        """One user op on one record; ``refuse_deleted`` (a verb) makes a tombstoned
        record, ``refuse_live`` a live one, an error instead of a silent success."""
        now = as_utc(now)

        def plan(rd: Reader) -> WritePlan:
            old = rd.need(memory_id)
            if refuse_deleted:
                _refuse_deleted(old, refuse_deleted)
            if refuse_live and old.live:
                raise MemoryStateError(f"memory {memory_id!r} is {old.status.value}, not "
                                       "deleted: nothing to restore")
            new = ops.apply(old, op, {"now": now}, strength_cap=self._gw.strength_cap)
            assert new is not None
            event = AuditEvent(action=action, namespace=namespace, before=[memory_id],
                               after=[memory_id], reason=reason, actor=Actor.USER, at=now)
            return WritePlan(new, [Change(old, new, [DeltaEntry(memory_id, op, new.version,
                                                           {"now": now})])], [event])

        return self.transact(namespace, plan, ids=[memory_id])

    def pin(self, namespace: str, memory_id: str, now: datetime, reason: str = "pinned") -> Memory:
        """Pin a memory (exempt from decay and the cap), audited."""
        return self._simple(namespace, memory_id, DeltaOp.PIN, AuditAction.PIN, now, reason, "pin")

    def unpin(self, namespace: str, memory_id: str, now: datetime,
              reason: str = "unpinned") -> Memory:
        """Unpin a memory, audited."""
        return self._simple(namespace, memory_id, DeltaOp.UNPIN, AuditAction.UNPIN, now, reason)

    def tombstone(self, namespace: str, memory_id: str, now: datetime,
                  reason: str = "deleted by the user") -> Memory:
        """A user's delete: the memory is tombstoned (kept, restorable), audited. Deleting
        a deleted memory raises MemoryStateError; an unknown one MemoryNotFound."""
        return self._simple(namespace, memory_id, DeltaOp.TOMBSTONE, AuditAction.TOMBSTONE, now,
                            reason, "delete")

    def edit(self, namespace: str, memory_id: str, *, now: datetime, text: str | None = None,
             vector: list[float] | None = None, metadata: Mapping[str, object] | None = None,
             reason: str = "edited by the user", expires_at: datetime | None = None) -> Memory:
        """A user's edit of text (with its new vector), metadata (replaced whole) and/or
        expiry, audited as an UPDATE by the user; a deleted memory must be restored first."""
        if text is None and metadata is None and expires_at is None:
            raise ValueError("give text, metadata or an expiry to change")
        if expires_at is not None:
            expires_at = as_utc(expires_at)
            reason = f"{reason}; expires at {expires_at.isoformat()}"
        if text is not None:
            probe = Memory.model_validate({**_PROBE, "text": text, "vector": vector})
            vector = probe.vector
        meta = None if metadata is None else validate_metadata(dict(metadata))
        now = as_utc(now)

        def plan(rd: Reader) -> WritePlan:
            old = rd.need(memory_id)
            _refuse_deleted(old, "edit")
            new = ops.edit(old, text=text, vector=vector, metadata=meta, now=now,
                           expires_at=expires_at)
            args: dict[str, object] = {"text": text, "vector": vector, "metadata": meta,
                                       "now": now}
            if expires_at is not None:
                args["expires_at"] = expires_at
            entry = DeltaEntry(memory_id, DeltaOp.EDIT, new.version, args)
            event = AuditEvent(action=AuditAction.UPDATE, namespace=namespace, before=[memory_id],
                               after=[memory_id], reason=reason, actor=Actor.USER,
                               decision="EDIT", text=new.text, at=now)
            return WritePlan(new, [Change(old, new, [entry], reindex=vector is not None)],
                             [event])

        return self.transact(namespace, plan, ids=[memory_id])

    def expire(self, namespace: str, memory_id: str, now: datetime) -> Memory | None:
        """Tombstone a live memory whose caller-given expiry has passed (restorable within
        the tombstone grace period), audited EXPIRE; None when it is no longer due (it
        was restored, edited or deleted since it was found)."""
        now = as_utc(now)

        def plan(rd: Reader) -> WritePlan:
            old = rd.need(memory_id)
            if not (old.live and old.expiry_given and old.expires_at is not None
                    and as_utc(old.expires_at) <= now):
                raise _NotDue
            new = ops.tombstone(old, now=now)
            event = AuditEvent(action=AuditAction.EXPIRE, namespace=namespace,
                               before=[memory_id], after=[], actor=Actor.CONSOLIDATION,
                               reason=f"expired at {as_utc(old.expires_at).isoformat()} "
                                      "(expiry given by the caller): tombstoned, restorable",
                               at=now)
            return WritePlan(new, [Change(old, new, [DeltaEntry(memory_id, DeltaOp.TOMBSTONE,
                                                                new.version, {"now": now})])],
                             [event])

        try:
            return self.transact(namespace, plan, ids=[memory_id])
        except (_NotDue, MemoryNotFound, PurgedError):
            return None

    def restore(self, namespace: str, memory_id: str, now: datetime,
                reason: str = "restored") -> Memory:
        """Bring a tombstoned (or superseded) memory back to active, audited. Restoring a
        live one raises MemoryStateError: it would audit a no-op, or promote a candidate
        to active past the support rule."""
        return self._simple(namespace, memory_id, DeltaOp.RESTORE, AuditAction.RESTORE, now,
                            reason, refuse_live=True)

    def touch(self, namespace: str, ids: Sequence[str], now: datetime,
              strength_cap: float = 10.0) -> None:
        """Recall bookkeeping for ``ids``: last_used=now, strength +1 capped, recall_count
        +1 per occurrence (an id listed twice was recalled twice). Not audited (it is not
        a content change). Each memory is written once, atomically, but a long list is
        written in chunks of :data:`TOUCH_CHUNK` memories, one script call each."""
        validate_namespace(namespace)
        for memory_id in ids:
            validate_identifier(memory_id)
        recalls = list(Counter(ids).items())
        names = [keys.current(namespace), keys.pass_token(namespace), keys.delta(namespace)]
        head: list[str | int | float] = [keys.prefix(namespace), to_micros(as_utc(now)),
                                         float(strength_cap)]
        for lo in range(0, len(recalls), TOUCH_CHUNK):
            args: list[str | int | float] = list(head)
            for memory_id, times in recalls[lo:lo + TOUCH_CHUNK]:
                args += [memory_id, times]
            self._gw.touch(keys=names, args=args)


class _NotDue(Exception):
    """A memory found expired was changed before it could be tombstoned."""


def _noted(reason: str, capped: Capped) -> str:
    """An audit reason, plus what bounding the record dropped (never silently)."""
    return f"{reason}; {capped.note()}" if capped else reason


def _unlisted(memory_id: str, capped: Capped) -> dict[str, list[str]]:
    return {memory_id: capped.sources} if capped.sources else {}


def _refuse_deleted(memory: Memory, verb: str) -> None:
    if memory.status is Status.TOMBSTONED:
        already = "already " if verb == "delete" else ""
        hint = "" if verb == "delete" else "; restore it first"
        raise MemoryStateError(f"memory {memory.id!r} is {already}deleted (tombstoned): "
                               f"cannot {verb} it{hint}")


_PROBE = {"namespace": "probe", "last_used": datetime(2000, 1, 1),
          "created_at": datetime(2000, 1, 1), "updated_at": datetime(2000, 1, 1),
          "status": Status.ACTIVE}
