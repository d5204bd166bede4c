"""Erase fences: an erase of a namespace wins over its turns still in the queue.

Each namespace has an erase count (``mc:fence:{ns}``, outside the namespace's keys so
erasing the namespace keeps it). A producer stamps every ingest task with the count it
read when it accepted the turns (:meth:`Fences.current`); erasing the namespace
increments the count before it deletes anything (:meth:`Fences.advance`). A worker
about to store a task's turns compares: a task stamped with a lower count was accepted
before an erase that has run since, so its turns are dropped, never stored, and the
drop is audited once (action DROP, actor ingest, no text: the number of turns, the
counts and the task id). The comparison is repeated inside each of the task's writes
(memcore.store.guard), so an erase between the worker's check and a write wins too.

Why a count and not a time: the producer and the eraser may run on hosts whose clocks
differ; a count read from the same Redis orders them exactly. An add that reads the
count while an erase is running and sends afterwards overlapped the erase: its turns
are dropped, which is one of the two orders the caller could have seen.
"""

from __future__ import annotations

from datetime import datetime

from memcore.core.models import Actor, AuditAction, AuditEvent, as_utc, validate_namespace
from memcore.store import keys
from memcore.store.audit import AuditLog
from memcore.store.gateway import Gateway
from memcore.store.guard import Guard


class Fences:
    """Read and advance a namespace's erase count; audit the turns it dropped."""

    def __init__(self, gateway: Gateway) -> None:
        self._gw = gateway
        self._r = gateway.client

    def current(self, namespace: str) -> int:
        """How many times ``namespace`` was erased whole (0: never)."""
        raw = self._r.get(keys.erase_fence(namespace))
        return int(raw) if raw is not None else 0

    def accepted(self, namespace: str) -> Guard:
        """The namespace's whole-erase and single-erase counts now, in one read: what a
        producer stamps a task with, and what a worker writes it fenced on
        (memcore.store.guard)."""
        return self._gw.read_guard(namespace)

    def advance(self, namespace: str) -> int:
        """Count one more erase of ``namespace`` (before its keys go); the new count."""
        return int(self._r.incr(keys.erase_fence(namespace)))

    def record_drop(self, namespace: str, *, turns: int, accepted: int, fence: int,
                    task_id: str | None, now: datetime, keep_seconds: int) -> bool:
        """Audit that ``turns`` turns of ``namespace`` accepted under erase count
        ``accepted`` were dropped because the count is now ``fence``. Once per task id
        (remembered ``keep_seconds``): True if this call wrote the entry, False for a
        redelivered task whose drop is already audited."""
        validate_namespace(namespace)
        reason = (f"{turns} turn(s) dropped, not stored: accepted before the namespace was "
                  f"erased (erase count {accepted} when accepted, {fence} now)"
                  + (f"; task {task_id}" if task_id else ""))
        event = AuditEvent(action=AuditAction.DROP, namespace=namespace, reason=reason,
                           actor=Actor.INGEST, at=as_utc(now))
        batch = self._gw.batch(namespace)
        marker = keys.dropped(namespace, task_id) if task_id else None
        if marker is not None:
            batch.check(marker, None)
            batch.set(marker, "1")
        AuditLog.queue(batch, [event])
        if not self._gw.commit(namespace, batch):
            return False  # the marker exists: this task's drop is audited already
        if marker is not None:
            self._r.expire(marker, max(1, int(keep_seconds)))
        return True
