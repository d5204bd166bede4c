"""Memories at an instant: what ``as_of`` reads and what ``include_history`` shows (pure).

The store keeps every fact's validity interval (``valid_from`` .. ``valid_until``) and
never deletes a superseded fact: supersession closes the old memory's interval and
points it at its successor (``superseded_by``), see docs/design.md. So the set that was
valid at an instant is a filter over the records, with no second copy of history:

- the memory was stored by then (``created_at <= instant``): a fact learnt later is not
  shown, even when it says it was already true (transaction time, as the caller saw it);
- its validity interval covers the instant: ``valid_from`` (if any) at or before it,
  ``valid_until`` (if any) after it, and ``expires_at`` (if any) after it;
- it is live, or superseded with a closed interval (the value it had before it was
  replaced), or tombstoned by the expiry the caller gave it (it held until then).
  Other tombstoned memories are left out: a tombstone is a user's delete, a merge
  (the survivor carries the fact) or forgetting, and none of them records when the
  memory left, so an ``as_of`` answer could not say whether it was still there; a
  deleted memory must not come back through a question about the past either.

A superseded memory with no ``valid_until`` (never written so; defensive) is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from memcore.core.filters import Filterable
from memcore.core.models import LIVE_STATUSES, Memory, Status, as_instant, as_utc


def valid_at(memory: Filterable, instant: datetime) -> bool:
    """Whether ``memory`` belonged to the memory set valid at ``instant`` (see the module)."""
    instant = as_utc(instant)
    if memory.status not in LIVE_STATUSES and not closed(memory):
        return False
    if as_utc(memory.created_at) > instant:
        return False
    if memory.valid_from is not None and as_utc(memory.valid_from) > instant:
        return False
    for end in (memory.valid_until, memory.expires_at):
        if end is not None and as_utc(end) <= instant:
            return False
    return True


def closed(memory: Filterable) -> bool:
    """Not live, but with a known end: superseded (``valid_until``), or tombstoned by
    the caller's expiry (at or after ``expires_at``; a delete before it is a delete)."""
    if memory.status is Status.SUPERSEDED:
        return memory.valid_until is not None
    return (memory.status is Status.TOMBSTONED and memory.expiry_given
            and memory.expires_at is not None
            and as_utc(memory.expires_at) <= as_utc(memory.updated_at))


def predecessors(memories: Iterable[Memory]) -> dict[str, list[Memory]]:
    """Successor id -> the superseded memories that point at it."""
    out: dict[str, list[Memory]] = {}
    for m in memories:
        if m.status is Status.SUPERSEDED and m.superseded_by:
            out.setdefault(m.superseded_by, []).append(m)
    return out


def earlier_values(memory_id: str, before: Mapping[str, list[Memory]]) -> list[Memory]:
    """The values the fact ``memory_id`` replaced, through chains of supersessions,
    oldest first (by when each became valid, then id): "Paris 2019-2024" before the
    current "Berlin"."""
    seen = {memory_id}
    found: list[Memory] = []
    todo = [memory_id]
    while todo:
        for older in before.get(todo.pop(), ()):
            if older.id not in seen:
                seen.add(older.id)
                found.append(older)
                todo.append(older.id)
    found.sort(key=lambda m: (as_utc(m.event_at), m.id))
    return found


def version_at(memory_id: str, records: Mapping[str, Memory],
               before: Mapping[str, list[Memory]], instant: datetime) -> Memory | None:
    """The memory of ``memory_id``'s fact (itself, an earlier value or a later one along
    ``superseded_by``) that was valid at ``instant``; None if none was."""
    chain: list[Memory] = []
    current = records.get(memory_id)
    seen: set[str] = set()
    while current is not None and current.id not in seen:  # forward: what replaced it
        seen.add(current.id)
        chain.append(current)
        current = records.get(current.superseded_by) if current.superseded_by else None
    start = chain[-1].id if chain else memory_id
    every = {m.id: m for m in [*chain, *earlier_values(start, before)]}
    valid = [m for m in every.values() if valid_at(m, instant)]
    valid.sort(key=lambda m: (as_utc(m.event_at), m.id))
    return valid[-1] if valid else None


def expired(memory: Filterable, now: datetime) -> bool:
    """Whether the expiry the caller gave ``memory`` has passed at ``now``: it is out of
    search and profile from then on, before maintenance tombstones it."""
    return memory.expiry_given and memory.expires_at is not None \
        and as_utc(memory.expires_at) <= as_utc(now)


MAX_TTL_SECONDS = 100 * 365 * 86400
"""Longest ``ttl_seconds`` accepted (a century; longer is a mistake, not a plan)."""


def expiry_of(expires_at: datetime | str | None, ttl_seconds: float | None,
              start: datetime) -> datetime | None:
    """The expiry a caller asked for: ``expires_at`` as given, or ``start`` plus
    ``ttl_seconds``; None for neither. A ValueError names the field at fault."""
    if expires_at is not None and ttl_seconds is not None:
        raise ValueError("ttl_seconds: give expires_at or ttl_seconds, not both")
    if expires_at is not None:
        return as_instant(expires_at, "expires_at")
    if ttl_seconds is None:
        return None
    if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int | float) \
            or not 0 < ttl_seconds <= MAX_TTL_SECONDS:
        raise ValueError(f"ttl_seconds: expected a number of seconds above 0 and at most "
                         f"{MAX_TTL_SECONDS}, got {ttl_seconds!r}")
    return as_utc(start) + timedelta(seconds=float(ttl_seconds))
