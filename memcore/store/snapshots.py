"""Versioned snapshots: begin/commit a pass, list, roll back, garbage-collect, index blobs.

A pass reads version ``v``, writes its result completely under a fresh version
number (a bulk load of keys nobody else reads yet), replays the write-path ops logged
in the delta stream since it began (with the same pure functions the live path uses,
committed with the store's commit primitive), and swaps the pointer with a
compare-and-swap script that also checks no op arrived after the replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from memcore.core.models import (
    Actor,
    AuditAction,
    AuditEvent,
    Memory,
    Status,
    as_utc,
    new_id,
    validate_identifier,
    validate_namespace,
)
from memcore.store import keys, ops
from memcore.store.audit import AuditLog
from memcore.store.base import (
    BATCH,
    DeltaOp,
    PassView,
    StoreConflict,
    VersionInfo,
    decode_args,
)
from memcore.store.changes import Change, queue_changes
from memcore.store.gateway import Gateway
from memcore.store.records import dequantize, pack_memory, unpack_memory

INDEX_CHUNK = 64 * 1024 * 1024
REPLAY_CHUNK = 500
"""Changes per commit when a pass replays the delta log into its new version."""


class Replay:
    """Applies delta entries to the in-memory state of a pass."""

    def __init__(self, state: dict[str, Memory], view: PassView, strength_cap: float) -> None:
        self.state = state
        self.seen = view.record_versions
        self.cap = strength_cap
        live_before = {m.id for m in view.memories if m.live}
        # Ids the pass absorbed (live in v, superseded in v+1): ops on them go to the survivor.
        self.absorbed = {i for i in live_before
                         if i in state and state[i].status is Status.SUPERSEDED
                         and state[i].superseded_by}

    def _target(self, memory_id: str) -> str:
        hops = 0
        while memory_id in self.absorbed and hops < 64:
            nxt = self.state[memory_id].superseded_by
            if not nxt:
                break
            memory_id, hops = nxt, hops + 1
        return memory_id

    def run(self, ns: str, entries: Sequence[tuple[bytes, dict[bytes, bytes]]]
            ) -> list[Change]:
        """Apply ``entries``; returns the record changes to write into the new version."""
        prior: dict[str, Memory | None] = {}
        reindex: set[str] = set()

        def remember(memory_id: str) -> None:
            prior.setdefault(memory_id, self.state.get(memory_id))

        for _, f in entries:
            mid, op = f[b"id"].decode(), DeltaOp(f[b"op"].decode())
            args = decode_args(f[b"args"])
            if op is DeltaOp.ERASE:
                remember(mid)
                self.state.pop(mid, None)
                continue
            if op is DeltaOp.ERASE_SOURCE:
                for other in list(self.state.values()):
                    if args["source"] in other.sources:
                        remember(other.id)
                        kept = ops.drop_source(other, source=args["source"], now=args["now"])
                        if kept is None:
                            self.state.pop(other.id)
                        else:
                            self.state[other.id] = kept
                continue
            if mid in self.seen and int(f[b"ver"]) <= self.seen[mid]:
                continue  # the pass already read this effect
            if b"vec" in f:
                vec, _ = dequantize(f[b"vec"])
                args["vector"] = None if vec is None else vec.tolist()
            record = unpack_memory(f[b"rec"], ns, mid) if b"rec" in f else None
            target = mid if op is DeltaOp.ADD else self._target(mid)
            if op is DeltaOp.ADD and target in self.state:
                continue
            cur = self.state.get(target)
            new = ops.apply(cur, op, args, strength_cap=self.cap, new=record)
            if new is not None and new is not cur:
                remember(target)
                self.state[target] = new
                if op in (DeltaOp.UPDATE, DeltaOp.EDIT) and args.get("vector") is not None:
                    reindex.add(target)
        return [Change(old, self.state.get(i), reindex=i in reindex)
                for i, old in prior.items() if old is not None or i in self.state]


class Snapshots:
    """begin_pass / commit_pass / versions / rollback / gc / index blobs."""

    def __init__(self, gateway: Gateway, audit: AuditLog) -> None:
        self._gw = gateway
        self._audit = audit
        self._r = gateway.client

    def begin_pass(self, ns: str) -> PassView:
        """Start a pass: from now on write-path ops are logged; read version ``v`` whole."""
        validate_namespace(ns)
        token = new_id()
        cur, pend = self._gw.begin_pass(
            keys=[keys.delta(ns), keys.pass_token(ns), keys.current(ns), keys.pending(ns)],
            args=[token, int(self._gw.pass_ttl_seconds * 1000)])
        version = int(cur) if cur is not None else 0
        memories = self._gw.version_memories(ns, version)
        return PassView(version=version, delta_cursor="0-0", memories=memories, token=token,
                        pending_importance=float(pend or 0.0),
                        record_versions={m.id: m.version for m in memories})

    def _write_full(self, ns: str, version: int, memories: Iterable[Memory],
                    now: datetime) -> None:
        """Write every record, hash key, order log and status count of a new version."""
        pipe = self._r.pipeline(transaction=False)
        order: list[str] = []
        counts: dict[str | bytes, int] = {}
        for memory in memories:
            pipe.set(keys.memory(ns, version, memory.id), pack_memory(memory))
            if memory.live:
                pipe.set(keys.by_hash(ns, version, memory.content_hash), memory.id)
            order.append(memory.id)
            status = memory.status.value
            counts[status] = counts.get(status, 0) + 1
            if len(pipe) >= BATCH:
                pipe.execute()
        for start in range(0, len(order), keys.ORDER_CHUNK):
            ids = order[start : start + keys.ORDER_CHUNK]
            chunk_key = keys.order_chunk(ns, version, start // keys.ORDER_CHUNK)
            for sub in range(0, len(ids), BATCH * 10):
                pipe.rpush(chunk_key, *ids[sub : sub + BATCH * 10])
        pipe.set(keys.order_len(ns, version), len(order))
        if counts:
            pipe.hset(keys.stats(ns, version), mapping=counts)
        pipe.hset(keys.meta(ns, version), "created_at", now.timestamp())
        pipe.execute()

    def commit_pass(self, ns: str, view: PassView, memories: Sequence[Memory],
                    events: Sequence[AuditEvent], *, now: datetime) -> int:
        """Write the pass result as a new version, replay ops logged since ``view``, swap the
        pointer (compare-and-swap from ``view.version``), audit. Returns the new version
        number (``v+1`` unless versions were rolled back or a pass failed before).

        Raises StoreConflict if the pointer moved or another pass took over."""
        validate_namespace(ns)
        now = as_utc(now)
        state: dict[str, Memory] = {}
        for m in memories:
            if m.namespace != ns:
                raise ValueError(f"namespace: memory {m.id} belongs to {m.namespace!r}")
            validate_identifier(m.id)
            keys.check_hash(m.content_hash)
            seen = view.record_versions.get(m.id, 0)
            state[m.id] = m if m.version >= seen else m.model_copy(update={"version": seen})
        new_version = int(self._r.incr(keys.vseq(ns)))
        if new_version <= view.version:  # vseq lost (e.g. restored dump): skip past
            new_version = int(self._r.incr(keys.vseq(ns), view.version + 1 - new_version))
        self._r.zadd(keys.building(ns), {str(new_version): now.timestamp()})
        self._write_full(ns, new_version, state.values(), now)
        replay = Replay(state, view, self._gw.strength_cap)
        owners: dict[str, str | None] = {m.content_hash: m.id for m in state.values() if m.live}
        cursor = view.delta_cursor
        while True:
            entries = self._r.xrange(keys.delta(ns), "(" + cursor, "+")
            if entries:
                changes = replay.run(ns, entries)
                for start in range(0, len(changes), REPLAY_CHUNK):
                    # v+1 is private until the swap: no pointer or token check needed
                    batch = self._gw.batch(ns)
                    queue_changes(batch, ns, new_version, changes[start:start + REPLAY_CHUNK],
                                  owners, passing=False)
                    self._gw.commit(ns, batch)
                for ch in changes:
                    if ch.new is not None and ch.new.live:
                        owners[ch.new.content_hash] = ch.new.id
                cursor = entries[-1][0].decode()
            res = int(self._gw.cas_commit(
                keys=[keys.current(ns), keys.pass_token(ns), keys.delta(ns), keys.versions(ns),
                      keys.building(ns)],
                args=[view.version, new_version, view.token, cursor, now.timestamp()]))
            if res == 1:
                break
            if res < 0:
                self.drop_version(ns, new_version)
                why = "the pointer moved" if res == -1 else "another pass took over"
                raise StoreConflict(f"commit of pass on {ns!r} v{view.version} failed: {why}")
        pipe = self._r.pipeline(transaction=False)
        pipe.hset(keys.meta(ns, view.version), "retired_at", now.timestamp())
        pipe.set(keys.last_pass(ns), now.timestamp())
        pipe.incrbyfloat(keys.pending(ns), -view.pending_importance)
        pipe.execute()
        if float(self._r.get(keys.pending(ns)) or 0.0) < 0:
            self._r.set(keys.pending(ns), 0)
        self._audit.append(events)
        return new_version

    def versions(self, ns: str) -> list[VersionInfo]:
        """Committed versions, oldest first."""
        validate_namespace(ns)
        out = []
        for raw, created in self._r.zrange(keys.versions(ns), 0, -1, withscores=True):
            version = int(raw)
            counts = self._r.hvals(keys.stats(ns, version))
            out.append(VersionInfo(version, datetime.fromtimestamp(created, UTC),
                                   sum(int(c) for c in counts)))
        return out

    def rollback(self, ns: str, version: int, now: datetime, reason: str = "rollback") -> None:
        """Point ``ns`` back at committed ``version`` (cancels a pass in progress), audited."""
        validate_namespace(ns)
        now = as_utc(now)
        if self._r.zscore(keys.versions(ns), str(version)) is None:
            raise ValueError(f"version: {version} is not a committed version of {ns!r}")
        while True:
            old = self._gw.current_version(ns)
            batch = self._gw.batch(ns)
            batch.set(keys.current(ns), str(version))
            batch.delete(keys.pass_token(ns))
            batch.delete(keys.delta(ns))
            batch.hset(keys.meta(ns, old), "retired_at", now.timestamp())
            self._audit.queue(batch, [AuditEvent(
                action=AuditAction.ROLLBACK, namespace=ns,
                reason=f"{reason}: v{old} -> v{version}", actor=Actor.USER, at=now)])
            if self._gw.commit(ns, batch, version=old):  # a pass swapped meanwhile: again
                return

    def drop_version(self, ns: str, version: int) -> None:
        """Delete every key of one version."""
        batch: list[bytes] = []
        for key in self._r.scan_iter(match=keys.vprefix(ns, version) + "*", count=1000):
            batch.append(key)
            if len(batch) >= BATCH:
                self._r.unlink(*batch)
                batch = []
        if batch:
            self._r.unlink(*batch)
        pipe = self._r.pipeline()
        pipe.zrem(keys.versions(ns), str(version))
        pipe.zrem(keys.building(ns), str(version))
        pipe.execute()

    def gc(self, ns: str, now: datetime, grace_days: float = 7.0) -> list[int]:
        """Delete versions retired (or abandoned passes started) more than ``grace_days`` ago;
        never the current one. Returns the deleted version numbers."""
        validate_namespace(ns)
        cutoff = (as_utc(now) - timedelta(days=grace_days)).timestamp()
        current = self._gw.current_version(ns)
        dropped = []
        for raw, created in self._r.zrange(keys.versions(ns), 0, -1, withscores=True):
            version = int(raw)
            if version == current:
                continue
            retired = self._r.hget(keys.meta(ns, version), "retired_at")
            if (float(retired) if retired is not None else created) < cutoff:
                self.drop_version(ns, version)
                dropped.append(version)
        for raw, started in self._r.zrange(keys.building(ns), 0, -1, withscores=True):
            if started < cutoff and int(raw) != current:
                self.drop_version(ns, int(raw))
                dropped.append(int(raw))
        return sorted(dropped)

    def store_index_blob(self, ns: str, version: int, blob: bytes) -> None:
        """Store a built index with a version, in chunks of at most 64 MB."""
        validate_namespace(ns)
        old = int(self._r.hget(keys.meta(ns, version), "idx_chunks") or 0)
        count = max(1, -(-len(blob) // INDEX_CHUNK))
        pipe = self._r.pipeline()
        for i in range(count):
            pipe.set(keys.index_chunk(ns, version, i), blob[i * INDEX_CHUNK:(i + 1) * INDEX_CHUNK])
        for i in range(count, old):
            pipe.delete(keys.index_chunk(ns, version, i))
        pipe.hset(keys.meta(ns, version), "idx_chunks", count)
        pipe.execute()

    def load_index_blob(self, ns: str, version: int) -> bytes | None:
        """The stored index of ``version``, or None."""
        validate_namespace(ns)
        count = int(self._r.hget(keys.meta(ns, version), "idx_chunks") or 0)
        if not count:
            return None
        parts = self._r.mget([keys.index_chunk(ns, version, i) for i in range(count)])
        if any(p is None for p in parts):
            return None
        return b"".join(p for p in parts if p is not None)

    def drop_index_blobs(self, ns: str, version: int) -> None:
        """Delete the stored index of ``version`` (workers rebuild it)."""
        count = int(self._r.hget(keys.meta(ns, version), "idx_chunks") or 0)
        if count:
            self._r.delete(*[keys.index_chunk(ns, version, i) for i in range(count)])
            self._r.hdel(keys.meta(ns, version), "idx_chunks")
