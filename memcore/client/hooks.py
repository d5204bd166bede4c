"""Producer side of webhooks: start a dispatch after a change made in this process, and
requeue dead letters (docs/operations.md, Webhooks). The events themselves come from the audit log
(memcore.hooks.dispatch); nothing here builds one."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from memcore.messaging.task_names import HOOKS_DELIVER, HOOKS_DISPATCH, HOOKS_QUEUE
from memcore.store import MemoryStore

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger(__name__)


class Producer(Protocol):
    """What sending webhook tasks needs of a producer (:class:`memcore.Client` is one):
    its store, and its Celery app, read only when a task is sent (importing Celery is
    slow). A protocol, so that the Client can use this module without it importing the
    Client back."""

    @property
    def store(self) -> MemoryStore: ...

    @property
    def celery(self) -> Celery: ...


def notify(client: Producer, namespace: str) -> None:
    """Queue a dispatch of ``namespace``'s new audit entries, if any hook exists and no
    dispatch is waiting already. Never raises: the change stands, and the beat sweep
    dispatches what a lost task missed."""
    try:
        hooks = client.store.hooks
        if hooks.exist() and hooks.claim_dispatch(namespace):
            client.celery.send_task(HOOKS_DISPATCH, args=[namespace, []], queue=HOOKS_QUEUE)
    except Exception as exc:
        log.warning("webhook dispatch of %s not queued: %s", namespace, exc)


def retry_dead(client: Producer, ids: Sequence[str] | None = None,
               hook_id: str | None = None) -> int:
    """Put dead letters (all, the ``ids`` given, or those of ``hook_id``) back in their
    lanes and start their delivery; returns how many were requeued."""
    moved = client.store.hooks.requeue_dead(ids, hook_id)
    for namespace, lane in dict.fromkeys(moved):
        client.celery.send_task(HOOKS_DELIVER, args=[namespace, lane], queue=HOOKS_QUEUE)
    return len(moved)
