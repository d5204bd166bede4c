"""Send again the accepted ingest tasks the broker lost.

A turn is accepted (202) once its task's message is in the broker's queue. Celery's Redis
transport can still lose that message: a worker pops it (``BRPOP``) and is killed before
it records it as taken in kombu's ``unacked`` hash (the reply may wait in the socket
buffer until the worker's loop reads it), or Redis dies between the two. Nothing then
brings it back, and the turns are silently gone (kombu#305, celery#4354; the chaos run
of ``tests/workers/test_chaos.py`` found it). So each message is kept in the outbox until its
task ends (:class:`memcore.store.backlog.Backlog`), and beat's tick calls
:func:`redeliver_lost`: a kept message last sent more than ``older_than`` seconds ago
that no queue holds and no worker has taken is sent again under the same task id. The
write path is idempotent and fenced against erases, so a task sent again that was not
lost after all (caught between the queue and the ``unacked`` hash) stores nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memcore.store.backlog import Backlog

log = logging.getLogger(__name__)

MAX_RESENDS = 5
"""A message lost this many times in a row is given up (logged as an error, released):
something other than a crash loses it, and sending it for ever would hide that."""

SWEEP_LIMIT = 500
"""Kept messages looked at per sweep (the oldest first); the next tick takes the rest."""


@dataclass
class Redelivery:
    """What one sweep found and did (task ids)."""

    looked_at: int = 0
    resent: list[str] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)


def redeliver_lost(backlog: Backlog, held: Callable[[Sequence[str]], set[str]],
                   send: Callable[[str, str, dict[str, Any]], None], *, older_than: float,
                   now: float, limit: int = SWEEP_LIMIT,
                   max_resends: int = MAX_RESENDS) -> Redelivery:
    """Send again each kept message sent more than ``older_than`` seconds before ``now``
    that the broker no longer holds.

    ``held(task_ids)`` says which of them the broker holds (queued, or taken and not
    acknowledged: every task is ``acks_late``, so a running one is held);
    ``send(task_id, queue, payload)`` sends one task."""
    out = Redelivery()
    due = backlog.sent_before(now - older_than, limit)
    out.looked_at = len(due)
    if not due:
        return out
    present = held(due)
    backlog.still_held([t for t in due if t in present], now)
    for task_id in due:
        if task_id in present:
            continue
        message = backlog.kept(task_id)
        if message is None:  # it ended meanwhile
            continue
        if message.resent >= max_resends:
            log.error("ingest task %s of namespace %r: its message was lost %d times in a "
                      "row; given up (its turns are not stored)", task_id,
                      message.namespace, message.resent + 1)
            backlog.release(message.namespace, [task_id])
            out.given_up.append(task_id)
            continue
        backlog.sent_again(message, now)
        send(task_id, message.queue, message.payload)
        log.warning("ingest task %s of namespace %r: the broker lost its message; sent "
                    "again", task_id, message.namespace)
        out.resent.append(task_id)
    return out
