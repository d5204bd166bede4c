"""Audit entries to queued hook events: the one place events come from.

A namespace's audit log is read from its dispatch position on; each entry's events
(memcore.core.hooks.drafts_of) get the namespace's next sequence numbers and go to the
lane of every hook that wants them, and the position moves, in one atomic commit per
chunk (docs/design.md, Webhooks). A chunk dispatched twice by two tasks is committed
once: the commit checks the position did not move.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memcore.core.hooks import EventDraft, HookEventType, drafts_of
from memcore.core.models import AuditEvent, as_utc, utcnow
from memcore.store import MemoryStore
from memcore.store.hooks import Hook, lane_name

CHUNK = 500
"""Audit entries per dispatch commit."""
_MAX_SEQ = 18446744073709551615  # the largest sequence part of a stream id


def _id(entry_id: str) -> tuple[int, int]:
    ms, _, n = entry_id.partition("-")
    return int(ms), int(n or 0)


def _ms(at: datetime) -> int:
    return int(as_utc(at).timestamp() * 1000)


def event_record(namespace: str, seq: int, draft: EventDraft, *, action: str, actor: str,
                 at: datetime, audit_id: str | None) -> dict[str, Any]:
    """The queued form of one event: what is posted, minus the text (read at delivery
    from audit entry ``audit_id``), the attempt and the timestamp."""
    return {"id": f"{namespace}:{seq}", "type": draft.type.value, "namespace": namespace,
            "seq": seq, "memory_id": draft.memory_id, "action": action, "actor": actor,
            "occurred_at": as_utc(at).isoformat(), "data": dict(draft.data),
            "audit_id": audit_id if draft.with_text else None}


def pass_finished(report: Mapping[str, Any]) -> dict[str, Any]:
    """A ``pass.finished`` event's data from a pass's report (numbers and ids only)."""
    keep = ("pass_id", "from_version", "to_version", "events", "failed_batches", "skipped")
    return {k: report[k] for k in keep if k in report}


def dispatch(store: MemoryStore, namespace: str, *,
             extra: Sequence[Mapping[str, Any]] = (), now: datetime | None = None
             ) -> list[str]:
    """Queue the events of ``namespace``'s audit entries not dispatched yet, then the
    ``extra`` events (``{"type": "pass.finished", "data": {...}}``); returns the lanes
    that got events (their delivery tasks are to be started). A hook gets only events
    of entries written after it was added."""
    store.hooks.dispatch_started(namespace)
    hooks = [h for h in store.hooks.registered() if any(h.wants(t, namespace) for t in h.events)]
    if not hooks:
        return []
    floor = min(_ms(h.created_at) for h in hooks)
    extras = list(extra)
    lanes: set[str] = set()
    while True:
        cursor, seq = store.hooks.position(namespace)
        start = cursor if cursor and _id(cursor) >= (floor, 0) else f"{floor - 1}-{_MAX_SEQ}"
        entries = store.audit.after(namespace, start, CHUNK)
        last = len(entries) < CHUNK
        queued: list[tuple[str, str]] = []
        for entry_id, event in entries:
            seq = _queue_entry(queued, hooks, namespace, seq, entry_id, event)
        if last:
            seq = _queue_extras(queued, hooks, namespace, seq, extras, now)
        if not entries and not (last and extras):
            if start != cursor:  # nothing since the oldest hook: skip the older log for good
                store.hooks.commit(namespace, cursor, start, seq, [])
            return sorted(lanes)
        new_cursor = entries[-1][0] if entries else cursor
        if store.hooks.commit(namespace, cursor, new_cursor, seq, queued):
            lanes.update(lane for lane, _ in queued)
            if last:
                return sorted(lanes)


def _queue_extras(queued: list[tuple[str, str]], hooks: Sequence[Hook], namespace: str,
                  seq: int, extras: Sequence[Mapping[str, Any]], now: datetime | None) -> int:
    """Queue the ``extra`` events of :func:`dispatch` (no audit entry behind them) for
    the hooks that want them; the last sequence number used."""
    for item in extras:
        seq += 1
        draft = EventDraft(HookEventType(item["type"]), None, dict(item.get("data", {})))
        record = event_record(namespace, seq, draft, action="", actor="consolidation",
                              at=now or utcnow(), audit_id=None)
        queued += [(lane_name(h.id, None), json.dumps(record)) for h in hooks
                   if h.wants(draft.type, namespace)]
    return seq


def _queue_entry(queued: list[tuple[str, str]], hooks: Sequence[Hook], namespace: str,
                 seq: int, entry_id: str, event: AuditEvent) -> int:
    written = _id(entry_id)[0]
    for draft in drafts_of(event):
        takers = [h for h in hooks
                  if h.wants(draft.type, namespace) and _ms(h.created_at) <= written]
        if not takers:
            continue
        seq += 1
        record = json.dumps(event_record(namespace, seq, draft, action=event.action.value,
                                         actor=event.actor.value, at=event.at,
                                         audit_id=entry_id))
        queued += [(lane_name(h.id, draft.memory_id), record) for h in takers]
    return seq


def behind(store: MemoryStore) -> tuple[list[str], list[tuple[str, str]]]:
    """What the periodic sweep restarts: namespaces in some hook's scope whose audit log
    has entries past their dispatch position, and every lane with queued events (a
    lane whose task holds the lease ignores the extra task)."""
    hooks = store.hooks.registered()
    if not hooks:
        return [], []
    stale = []
    for namespace in store.records.namespaces():
        if any(h.wants(t, namespace) for h in hooks for t in h.events):
            last = store.audit.last_id(namespace)
            if last and _id(last) > _id(store.hooks.position(namespace)[0] or "0-0"):
                stale.append(namespace)
    lanes = [(ns, lane) for ns in store.hooks.namespaces() for lane in store.hooks.lanes(ns)]
    return stale, lanes
