"""Audit log: one Redis Stream per namespace, one entry per change.

The stream entry holds the non-sensitive part (action, ids, actor, decision,
time). Text and reason live in a per-day side hash keyed by the entry id, so an
erase can overwrite them with a redaction marker: stream entries cannot be
edited, and XDEL leaves their bytes in the stream's nodes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from memcore.core.models import (
    Actor,
    AuditAction,
    AuditEvent,
    validate_identifier,
    validate_namespace,
)
from memcore.store import keys
from memcore.store.base import BATCH
from memcore.store.codec import micros_time, to_micros
from memcore.store.commit import ScriptBatch
from memcore.store.gateway import Gateway

REDACTED = "[erased]"
PURGED = "[purged]"
APPEND_CHUNK = 500
"""Events per commit when appending many (a pass's events)."""


def _day(entry_id: str) -> int:
    return int(entry_id.split("-", 1)[0]) // 86_400_000


def _fields(event: AuditEvent) -> list[str | int]:
    return ["a", event.action.value, "b", ",".join(event.before), "f", ",".join(event.after),
            "ac", event.actor.value, "d", event.decision or "", "at", to_micros(event.at)]


def _payload(event: AuditEvent) -> str:
    if event.text is None and not event.reason:
        return ""
    return json.dumps({"text": event.text, "reason": event.reason}, separators=(",", ":"))


class AuditLog:
    """Append, read, follow, trim and redact the audit stream."""

    def __init__(self, gateway: Gateway) -> None:
        self._gw = gateway

    @staticmethod
    def queue(batch: ScriptBatch, events: Sequence[AuditEvent]) -> None:
        """Queue ``events`` on ``batch`` (they commit with the change they describe)."""
        for event in events:
            ns = event.namespace
            batch.audit(keys.audit(ns), keys.prefix(ns) + "audit:p:", _payload(event),
                        _fields(event))

    def append(self, events: Sequence[AuditEvent]) -> None:
        """Append events to their namespaces' audit streams (in order, a few commits)."""
        by_ns: dict[str, list[AuditEvent]] = {}
        for event in events:
            by_ns.setdefault(event.namespace, []).append(event)
        for ns, group in by_ns.items():
            for start in range(0, len(group), APPEND_CHUNK):  # bounded script calls
                batch = self._gw.batch(ns)
                self.queue(batch, group[start : start + APPEND_CHUNK])
                self._gw.commit(ns, batch)

    def _decode(self, namespace: str, entries: list[tuple[bytes, dict[bytes, bytes]]]
                ) -> list[tuple[str, AuditEvent]]:
        pipe = self._gw.client.pipeline(transaction=False)
        ids = [e[0].decode() for e in entries]
        for entry_id in ids:
            pipe.hget(keys.audit_payload(namespace, _day(entry_id)), entry_id)
        payloads = pipe.execute() if ids else []
        out = []
        for entry_id, (_, f), raw in zip(ids, entries, payloads, strict=True):
            extra: dict[str, Any] = json.loads(raw) if raw else {}
            before = f.get(b"b", b"").decode()
            after = f.get(b"f", b"").decode()
            event = AuditEvent.model_construct(
                action=AuditAction(f[b"a"].decode()), namespace=namespace,
                before=before.split(",") if before else [],
                after=after.split(",") if after else [],
                reason=extra.get("reason") or "", actor=Actor(f[b"ac"].decode()),
                decision=f.get(b"d", b"").decode() or None, text=extra.get("text"),
                at=micros_time(int(f[b"at"])))
            out.append((entry_id, event))
        return out

    def scan(self, namespace: str) -> Iterator[tuple[str, AuditEvent]]:
        """Every audit entry, oldest first, in batches."""
        start = "-"
        while True:
            entries = self._gw.client.xrange(keys.audit(namespace), start, "+", count=BATCH)
            if not entries:
                return
            yield from self._decode(namespace, entries)
            if len(entries) < BATCH:
                return
            start = "(" + entries[-1][0].decode()

    def after(self, namespace: str, start: str, count: int = BATCH
              ) -> list[tuple[str, AuditEvent]]:
        """Up to ``count`` entries with ids after ``start`` ('' = from the first), oldest
        first: how the webhook dispatcher follows the log (memcore.hooks.dispatch)."""
        validate_namespace(namespace)
        entries = self._gw.client.xrange(keys.audit(namespace), f"({start}" if start else "-",
                                         "+", count=count)
        return self._decode(namespace, entries)

    def last_id(self, namespace: str) -> str:
        """Id of the newest entry ('' when the log is empty)."""
        validate_namespace(namespace)
        newest = self._gw.client.xrevrange(keys.audit(namespace), "+", "-", count=1)
        return newest[0][0].decode() if newest else ""

    def text(self, namespace: str, entry_id: str) -> str | None:
        """The text of entry ``entry_id`` as stored now: None when it had none, was
        trimmed, or was erased or purged (the redaction markers read as None)."""
        validate_namespace(namespace)
        try:
            day = _day(entry_id)
        except ValueError:
            raise ValueError(f"invalid audit entry id {entry_id!r}") from None
        raw = self._gw.client.hget(keys.audit_payload(namespace, day), entry_id)
        if not raw:
            return None
        text = json.loads(raw).get("text")
        return None if text in (None, REDACTED, PURGED) else str(text)

    def tail(self, namespace: str, count: int = 20) -> list[AuditEvent]:
        """The last ``count`` events, oldest first."""
        validate_namespace(namespace)
        entries = self._gw.client.xrevrange(keys.audit(namespace), "+", "-", count=count)
        return [e for _, e in reversed(self._decode(namespace, entries))]

    def history(self, namespace: str, memory_id: str) -> list[AuditEvent]:
        """Events of ``memory_id``, its predecessors (merged or superseded into it) and
        successors (what it was merged or superseded into), oldest first."""
        validate_namespace(namespace)
        validate_identifier(memory_id)
        events = [e for _, e in self.scan(namespace)]
        forward: dict[str, set[str]] = {}
        backward: dict[str, set[str]] = {}
        for event in events:
            before, after = set(event.before), set(event.after)
            for b in before - after:
                forward.setdefault(b, set()).update(after - before)
            for a in after - before:
                backward.setdefault(a, set()).update(before - after)
        related = {memory_id}
        for links in (forward, backward):
            todo = [memory_id]
            while todo:
                for nxt in links.get(todo.pop(), ()):
                    if nxt not in related:
                        related.add(nxt)
                        todo.append(nxt)
        return [e for e in events if related & (set(e.before) | set(e.after))]

    def trim(self, namespace: str, older_than: datetime) -> int:
        """Delete events whose time is before ``older_than``; returns how many."""
        validate_namespace(namespace)
        cutoff = to_micros(older_than)
        old = [eid for eid, e in self.scan(namespace) if to_micros(e.at) < cutoff]
        for start in range(0, len(old), BATCH):
            chunk = old[start : start + BATCH]
            pipe = self._gw.client.pipeline(transaction=False)
            pipe.xdel(keys.audit(namespace), *chunk)
            for eid in chunk:
                pipe.hdel(keys.audit_payload(namespace, _day(eid)), eid)
            pipe.execute()
        return len(old)

    def redact(self, namespace: str, memory_ids: set[str], *, keep_reason: bool = False,
               marker: str = REDACTED, uncited_model_errors: bool = False) -> int:
        """Replace the text (and, unless ``keep_reason``, the reason) of events mentioning
        ``memory_ids`` with ``marker``; ERASE and PURGE events stay as they are.
        ``uncited_model_errors``: also every MODEL_ERROR citing no turn or memory (its
        reason may quote what a model made of anything erased)."""
        def hit(e: AuditEvent) -> bool:
            cited = set(e.before) | set(e.after)
            return bool(memory_ids & cited) or (
                uncited_model_errors and e.action is AuditAction.MODEL_ERROR and not cited)
        hits = [(eid, e) for eid, e in self.scan(namespace)
                if e.action not in (AuditAction.ERASE, AuditAction.PURGE) and hit(e)]
        pipe = self._gw.client.pipeline(transaction=False)
        for eid, event in hits:
            reason = event.reason if keep_reason else marker
            text = None if event.text is None and keep_reason else marker
            pipe.hset(keys.audit_payload(namespace, _day(eid)), eid,
                      json.dumps({"text": text, "reason": reason}, separators=(",", ":")))
        pipe.execute()
        return len(hits)
