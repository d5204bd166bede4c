"""The erase fence at the entry of the write path (memcore.store.fences).

An ingest task carries the namespace's erase count from when its turns were accepted.
Before anything of the task is written, the worker compares it with the count now: if
the namespace was erased since, the turns are dropped (never stored) and the drop is
audited once per task, without their text. A redelivered task is compared again and
dropped again, so an erase also beats a task whose first delivery stored its turns
before the erase and died before its acknowledgement.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from memcore.messaging.payloads import IngestPayload
from memcore.store import MemoryStore

log = logging.getLogger(__name__)


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
                   now: datetime, keep_seconds: int) -> Dropped | None:
    """None if the task's turns may be stored; else drop them (audited) and say so."""
    fence = store.fences.current(payload.namespace)
    if payload.erase_fence >= fence:
        return None
    turns = len(payload.episodes)
    audited = store.fences.record_drop(payload.namespace, turns=turns, accepted=payload.erase_fence,
                                fence=fence, task_id=task_id, now=now,
                                keep_seconds=keep_seconds)
    log.info("ingest task %s: %d turn(s) dropped, accepted before their namespace was "
             "erased (erase count %d, now %d)", task_id, turns, payload.erase_fence, fence)
    return Dropped(turns, payload.erase_fence, fence, audited)
