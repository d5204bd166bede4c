"""Record changes and how they are queued on a commit batch.

The write path, a pass's replay and erase all describe what they do as a list of
:class:`Change` and queue it with :func:`queue_changes`, so every record, content-hash
key, status count and order-log entry is written by the same code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memcore.core.models import Memory
from memcore.store import keys
from memcore.store.base import DeltaEntry
from memcore.store.codec import pack_memory
from memcore.store.commit import ScriptBatch

if TYPE_CHECKING:
    import redis


@dataclass
class Change:
    """One record going from ``old`` to ``new`` (None = removed)."""

    old: Memory | None
    new: Memory | None
    entries: list[DeltaEntry] = field(default_factory=list)
    reindex: bool = False


def queue_changes(batch: ScriptBatch, namespace: str, version: int, changes: Sequence[Change],
                  owners: Mapping[str, str | None], passing: bool, *, undo: bool = True
                  ) -> None:
    """Queue records, hash index, status counts, order log and (while a pass runs,
    ``passing``) delta entries. ``owners`` maps each content hash read to its owner id:
    a hash key is deleted only when it still names the record losing it. ``version`` is
    the current version: with ``undo`` (and ``version > 0``) its undo hash keeps each
    record's bytes from before its first change since that version, for rollback;
    erase and rollback itself keep none."""
    reindex: list[str] = []
    for ch in changes:
        old, new = ch.old, ch.new
        mid = (new or old).id  # type: ignore[union-attr]
        _queue_record(batch, namespace, mid, new, version if undo else 0)
        _queue_hash(batch, namespace, old, new, owners)
        _queue_status(batch, namespace, old, new)
        if new is not None and (old is None or ch.reindex):
            reindex.append(mid)
        if passing:
            for entry in ch.entries:
                batch.xadd(keys.delta(namespace), entry.fields())
    if changes:
        # What filter-field caches compare; one per record change, as the key says (a bulk
        # add and the same adds one by one leave the same count).
        batch.incrbyfloat(keys.writes(namespace), len(changes))
    if reindex:
        batch.order(keys.order_len(namespace), keys.order_prefix(namespace), keys.ORDER_CHUNK,
                    reindex)


def _queue_record(batch: ScriptBatch, namespace: str, mid: str, new: Memory | None,
                  undo_version: int) -> None:
    """The record's bytes (deleted when ``new`` is None), kept first in the undo hash
    of ``undo_version`` (none when 0)."""
    key = keys.memory(namespace, mid)
    if undo_version > 0:
        batch.undo(key, keys.undo(namespace, undo_version), mid)
    if new is None:
        batch.delete(key)
    else:
        batch.set(key, pack_memory(new))


def _queue_hash(batch: ScriptBatch, namespace: str, old: Memory | None, new: Memory | None,
                owners: Mapping[str, str | None]) -> None:
    """The content-hash key: a live record owns its hash; one that stops being live or
    changes its text gives it up (only if it still owns it)."""
    gives_up, takes = hash_moves(old, new)
    if gives_up and old is not None and owners.get(old.content_hash) == old.id:
        batch.delete(keys.by_hash(namespace, old.content_hash))
    if takes and new is not None:
        batch.set(keys.by_hash(namespace, new.content_hash), new.id)


def hash_moves(old: Memory | None, new: Memory | None) -> tuple[bool, bool]:
    """``(gives_up, takes)``: does the record going from ``old`` to ``new`` give up
    ``old``'s content hash (it stops being live or changes its text), and does it take
    ``new``'s (it becomes live or changes its text)?"""
    old_live = old is not None and old.live
    new_live = new is not None and new.live
    same_hash = old is not None and new is not None and old.content_hash == new.content_hash
    return old_live and not (new_live and same_hash), new_live and not (old_live and same_hash)


def status_move(old: Memory | None, new: Memory | None) -> tuple[str | None, str | None]:
    """``(before, after)``: the status the record leaves and the one it enters (None:
    none, or the status did not change)."""
    before = old.status.value if old is not None else None
    after = new.status.value if new is not None else None
    return (None, None) if before == after else (before, after)


def _queue_status(batch: ScriptBatch, namespace: str, old: Memory | None,
                  new: Memory | None) -> None:
    """The per-status counts: one less of the old status, one more of the new."""
    before, after = status_move(old, new)
    if before:
        batch.hincrby(keys.stats(namespace), before, -1)
    if after:
        batch.hincrby(keys.stats(namespace), after, 1)


def hash_owners(client: redis.Redis, namespace: str, hashes: Sequence[str]
                ) -> tuple[list[bytes | None], dict[str, str | None]]:
    """The content-hash keys of ``hashes`` as read (for :func:`check_reads`) and the
    id each names (None: none)."""
    raws = client.mget([keys.by_hash(namespace, h) for h in hashes]) if hashes else []
    return raws, {h: (r.decode() if r else None) for h, r in zip(hashes, raws, strict=True)}


def check_reads(batch: ScriptBatch, namespace: str, ids: Sequence[str],
                raws: Sequence[bytes | None], hashes: Sequence[str],
                owner_raws: Sequence[bytes | None]) -> None:
    """Make the batch's commit refuse if a record or content-hash key it read (``raws``,
    ``owner_raws``) has changed since."""
    for memory_id, raw in zip(ids, raws, strict=True):
        batch.check(keys.memory(namespace, memory_id), raw)
    for h, raw in zip(hashes, owner_raws, strict=True):
        batch.check(keys.by_hash(namespace, h), raw)
