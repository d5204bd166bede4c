"""Pure record operations shared by the live write path and the pass replay.

Each function takes a memory and returns a new one (or None when nothing
changes); none touches Redis. ``commit_pass`` replays the delta log with exactly
these functions, so a write made during a pass lands in ``v+1`` the same way it
landed in ``v``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memcore.core.bounds import Capped, bound_record
from memcore.core.models import Memory, Status, as_utc, union_metadata
from memcore.core.text import content_hash
from memcore.index.table import from_micros
from memcore.store.base import DeltaOp

SUPPORT_STEP = 0.25


def _bump(memory: Memory, now: datetime, **changes: Any) -> Memory:
    changes.setdefault("updated_at", as_utc(now))
    changes["version"] = memory.version + 1
    return memory.model_copy(update=changes)


def _with_source(memory: Memory, source: str, now: datetime) -> dict[str, Any]:
    """Support bookkeeping for a source not seen before (empty when already present).

    The sources list grows past :data:`~memcore.core.bounds.MAX_SOURCES` here; the
    callers bound the new record (:func:`~memcore.core.bounds.bound_record`), which
    unlists the oldest while ``support`` keeps counting them."""
    if not source or source in memory.sources:
        return {}
    return {
        "sources": [*memory.sources, source],
        "support": memory.support + 1,
        "confidence": min(1.0, memory.confidence + SUPPORT_STEP),
        "last_supported": as_utc(now),
    }


def update(memory: Memory, *, text: str, vector: list[float] | None, source: str, now: datetime,
           strength_cap: float) -> Memory | None:
    """UPDATE: new text (and hash, and vector if given), strength +1 capped, source as support.

    None when ``source`` was already counted and the text is unchanged: a redelivered
    UPDATE must not count strength twice.
    """
    out = updated(memory, text=text, vector=vector, source=source, now=now,
                  strength_cap=strength_cap)
    return None if out is None else out[0]


def updated(memory: Memory, *, text: str, vector: list[float] | None, source: str,
            now: datetime, strength_cap: float) -> tuple[Memory, Capped] | None:
    """:func:`update`, with what bounding the new record dropped."""
    if source and source in memory.sources and \
            content_hash(text, memory.scope) == memory.content_hash:
        return None
    changes = _with_source(memory, source, now)
    changes.update(text=text, content_hash=content_hash(text, memory.scope),
                   strength=min(strength_cap, memory.strength + 1.0))
    if vector is not None:
        changes["vector"] = vector
    return bound_record(_bump(memory, now, **changes))


def reinforce(memory: Memory, *, source: str, now: datetime,
              metadata: dict[str, Any] | None = None) -> Memory | None:
    """NOOP-reinforce: support +1, confidence +0.25, the repeat's ``metadata`` joined to
    the memory's (:func:`union_metadata`); None if ``source`` was already counted (a
    memory's metadata is the union of its sources', each counted once). The record stays
    within its bounds (:mod:`memcore.core.bounds`): the oldest sources are unlisted, the
    oldest metadata values of a full key dropped."""
    out = reinforced(memory, source=source, now=now, metadata=metadata)
    return None if out is None else out[0]


def reinforced(memory: Memory, *, source: str, now: datetime,
               metadata: dict[str, Any] | None = None) -> tuple[Memory, Capped] | None:
    """:func:`reinforce`, with what bounding the new record dropped. Linear in the
    (bounded) record, so the 10,000th repeat costs what the 100th did."""
    changes = _with_source(memory, source, now)
    if changes and metadata:
        changes["metadata"] = union_metadata([memory.metadata or {}, metadata])
    if not changes:
        return None
    return bound_record(_bump(memory, now, **changes))


def close(memory: Memory, *, new_id: str, now: datetime) -> Memory:
    """Supersede: end the validity interval and point at the successor (never delete)."""
    return _bump(memory, now, valid_until=as_utc(now), status=Status.SUPERSEDED,
                 superseded_by=new_id)


def touch(memory: Memory, *, now: datetime, strength_cap: float, times: int = 1) -> Memory:
    """Recall bookkeeping for ``times`` recalls: last_used, strength +times capped,
    recall_count +times (one version bump, as the TOUCH script writes it)."""
    return memory.model_copy(update={
        "last_used": as_utc(now), "strength": min(strength_cap, memory.strength + times),
        "recall_count": memory.recall_count + times, "version": memory.version + 1})


def set_pinned(memory: Memory, *, pinned: bool, now: datetime) -> Memory:
    """Pin or unpin."""
    return _bump(memory, now, pinned=pinned)


def restore(memory: Memory, *, now: datetime) -> Memory:
    """Bring a tombstoned (or any) memory back to active. An expiry the caller gave that
    has passed goes with the tombstone: the restored memory would expire again at once."""
    if memory.expiry_given and memory.expires_at is not None \
            and as_utc(memory.expires_at) <= as_utc(now):
        return _bump(memory, now, status=Status.ACTIVE, expires_at=None, expiry_given=False)
    return _bump(memory, now, status=Status.ACTIVE)


def edit(memory: Memory, *, text: str | None, vector: list[float] | None,
         metadata: dict[str, Any] | None, now: datetime,
         expires_at: datetime | None = None) -> Memory:
    """A user's edit: new text (and hash and vector), new metadata (replaced whole) and/or
    a new expiry (``expires_at``: the caller's, see ``Memory.expiry_given``).

    Unlike :func:`update` it adds no support and no strength: the user corrected the
    record, nobody said it again."""
    changes: dict[str, Any] = {}
    if text is not None:
        changes.update(text=text, content_hash=content_hash(text, memory.scope))
        if vector is not None:
            changes["vector"] = vector
    if metadata is not None:
        changes["metadata"] = dict(metadata)
    if expires_at is not None:
        changes.update(expires_at=as_utc(expires_at), expiry_given=True)
    return _bump(memory, now, **changes)


def tombstone(memory: Memory, *, now: datetime) -> Memory:
    """A user's delete: tombstoned (kept, restorable with :func:`restore`), never erased."""
    return _bump(memory, now, status=Status.TOMBSTONED)


def drop_source(memory: Memory, *, source: str, now: datetime) -> Memory | None:
    """Erase support: remove ``source``; None when nothing else supports the memory."""
    if source not in memory.sources:
        return memory
    sources = [s for s in memory.sources if s != source]
    if not sources:
        return None
    return _bump(memory, now, sources=sources, support=max(1, memory.support - 1))


def apply(memory: Memory | None, op: DeltaOp, args: dict[str, Any], *, strength_cap: float,
          new: Memory | None = None) -> Memory | None:
    """Apply one logged op to one record; returns the new record (unchanged input if no-op).

    ``new`` is the record carried by ``add``/``supersede`` entries.
    """
    now = args.get("now")
    if op is DeltaOp.ADD:
        return new
    if memory is None:
        return None
    assert isinstance(now, datetime)
    if op is DeltaOp.UPDATE:
        return update(memory, text=args["text"], vector=args.get("vector"), source=args["source"],
                      now=now, strength_cap=strength_cap) or memory
    if op is DeltaOp.REINFORCE:
        return reinforce(memory, source=args["source"], now=now,
                         metadata=args.get("metadata")) or memory
    if op is DeltaOp.CLOSE:
        return close(memory, new_id=args["new_id"], now=now)
    if op is DeltaOp.TOUCH:
        return touch(memory, now=now, strength_cap=float(args.get("cap", strength_cap)),
                     times=int(args.get("times", 1)))
    if op in (DeltaOp.PIN, DeltaOp.UNPIN):
        return set_pinned(memory, pinned=op is DeltaOp.PIN, now=now)
    if op is DeltaOp.RESTORE:
        return restore(memory, now=now)
    if op is DeltaOp.TOMBSTONE:
        return tombstone(memory, now=now)
    if op is DeltaOp.EDIT:
        expires = args.get("expires_at")  # epoch microseconds in the log
        return edit(memory, text=args.get("text"), vector=args.get("vector"),
                    metadata=args.get("metadata"), now=now,
                    expires_at=None if expires is None else from_micros(int(expires)))
    raise ValueError(f"unknown op {op!r}")
