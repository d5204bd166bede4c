"""The erase fences around the write path (memcore.store.fences, memcore.store.erased).

An ingest task carries the namespace's erase counts from when its turns were accepted:
how many times it was erased whole, and how many single erases (a memory, a turn, a
forget request) it had. :func:`ingest_fenced` runs the task's write path so that an
erase made after the turns were accepted wins, whenever it lands:

* the namespace was erased whole since: the turns are dropped (never stored) and the
  drop is audited once per task, without their text (:func:`drop_if_erased`);
* single erases since: the turns and facts they removed are left out
  (memcore.ingest.erased), audited as a count;
* an erase *during* the write path: every write is fenced on the counts read at the
  start (memcore.store.guard), checked in the write's own script, so a write after
  the erase is refused and the task runs again from the top, where the two cases
  above see the erase. What it wrote before the erase, the erase removed.

A redelivered task is compared again, so an erase also beats a task whose first
delivery stored its turns before the erase and died before its acknowledgement.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from memcore.core.models import Actor, AuditAction, AuditEvent, as_utc
from memcore.ingest.write_path import IngestPipeline, IngestReport
from memcore.messaging.payloads import IngestPayload
from memcore.store import MemoryStore
from memcore.store.errors import ErasedMeanwhile
from memcore.store.guard import Guard

log = logging.getLogger(__name__)

MAX_RACES = 20
"""Runs of one task an erase may cut short before the task fails (each needs an erase
of the namespace landing during the run: never met in practice)."""


@dataclass(frozen=True)
class Dropped:
    """A task whose turns an erase of their namespace dropped."""

    turns: int
    accepted: int
    """The erase count the turns were accepted under."""
    fence: int
    """The erase count when the worker took the task."""
    audited: bool
    """False: a redelivery of a task whose drop was audited already."""


def drop_if_erased(store: MemoryStore, payload: IngestPayload, *, task_id: str | None,
                   now: datetime, keep_seconds: int, guard: Guard | None = None
                   ) -> Dropped | None:
    """None if the task's turns may be stored; else drop them (audited) and say so.
    ``guard``: the erase counts already read (else read now)."""
    fence = (guard or store.fences.accepted(payload.namespace)).fence
    if payload.erase_fence >= fence:
        return None
    turns = len(payload.episodes)
    audited = store.fences.record_drop(payload.namespace, turns=turns, accepted=payload.erase_fence,
                                fence=fence, task_id=task_id, now=now,
                                keep_seconds=keep_seconds)
    log.info("ingest task %s: %d turn(s) dropped, accepted before their namespace was "
             "erased (erase count %d, now %d)", task_id, turns, payload.erase_fence, fence)
    return Dropped(turns, payload.erase_fence, fence, audited)


def ingest_fenced(store: MemoryStore, pipeline: IngestPipeline, payload: IngestPayload, *,
                  task_id: str | None, now: datetime, keep_seconds: int
                  ) -> Dropped | IngestReport:
    """Run the write path for ``payload`` behind the erase fences (module docstring):
    the report, or :class:`Dropped` when an erase of the namespace came after the turns
    were accepted. Raises ErasedMeanwhile after :data:`MAX_RACES` runs cut short."""
    namespace = payload.namespace
    for run in range(MAX_RACES):
        guard = store.fences.accepted(namespace)
        dropped = drop_if_erased(store, payload, task_id=task_id, now=now,
                                 keep_seconds=keep_seconds, guard=guard)
        if dropped is not None:
            return dropped
        erased = store.erased.since(namespace, payload.erasures)
        try:
            with store.gateway.fenced(guard):
                report = pipeline.ingest(namespace, payload.episodes, infer=payload.infer,
                                         erased=erased)
        except ErasedMeanwhile:
            log.info("ingest task %s: an erase of %s landed during run %d: run again",
                     task_id, namespace, run + 1)
            continue
        _audit_left_out(store, payload, report, task_id, now)
        return report
    raise ErasedMeanwhile(f"ingest task {task_id}: {MAX_RACES} runs cut short by erases "
                          f"of {namespace!r}")


def _audit_left_out(store: MemoryStore, payload: IngestPayload, report: IngestReport,
                    task_id: str | None, now: datetime) -> None:
    """One DROP entry (counts, no text) when single erases left turns or facts out."""
    if not (report.erased_turns or report.erased_facts):
        return
    reason = (f"{report.erased_turns} turn(s) and {report.erased_facts} fact(s) left out, "
              f"not stored: erased after they were accepted (single-erase count "
              f"{payload.erasures} when accepted)" + (f"; task {task_id}" if task_id else ""))
    store.audit.append([AuditEvent(action=AuditAction.DROP, namespace=payload.namespace,
                                   reason=reason, actor=Actor.INGEST, at=as_utc(now))])
    log.info("ingest task %s: %s", task_id, reason)
